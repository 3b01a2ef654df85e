/* SPDX-License-Identifier: Apache-2.0 */
/* Loads DCMI (npu/dcmi.h's dcmi_lib_open: the trust check, dlopen with the
 * library's constructors, dcmi_init) on a thread of its own. Loading runs
 * vendor code that may block for as long as the driver likes; once the
 * library is loaded, every call has a deadline (npu/vendor_call.h), but the
 * load itself has none to give. So the event loop never waits for it past
 * a deadline of its choosing: it starts a load, looks whether it is done at
 * each refresh, and abandons it when it stops. One load, one thread; the
 * inventory starts no second while one runs. */
#pragma once

#include <stdint.h>

#include "npu/dcmi.h"

struct dcmi_load;

struct dcmi_load_result {
	struct dcmi_lib *lib; /* NULL when error < 0 */
	int error;            /* dcmi_lib_open's */
	char why[768];        /* why it failed */
};

/* Starts loading with search (copied). Returns 0, -ENOMEM or -EAGAIN. */
int dcmi_load_start(const struct dcmi_search *search, struct dcmi_load **ret_load);

/* Waits up to timeout_ms (0: not at all) for the load to end. Returns 0 with
 * its result, the load then freed; -EINPROGRESS while it runs. */
int dcmi_load_take(struct dcmi_load *load, int64_t timeout_ms, struct dcmi_load_result *ret_result);

/* Gives a load under way up: its thread frees what it made when (if ever)
 * the vendor code returns; a library it loaded stays mapped (see
 * dcmi_lib_close). Accepts NULL. */
void dcmi_load_abandon(struct dcmi_load *load);
