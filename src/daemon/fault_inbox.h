/* SPDX-License-Identifier: Apache-2.0 */
/* DCMI's fault events, handed from DCMI's thread to the loop: the vendor's
 * thread copies the event and wakes the loop, nothing more; the loop takes
 * the last event and how many came since it last looked, and says it. Bounded:
 * a storm of events is one count and one wakeup. Part of the top level: it
 * logs. */
#pragma once

#include <pthread.h>

#include "loop/loop.h"
#include "npu/dcmi.h"

struct fault_inbox {
	pthread_mutex_t lock;
	struct dcmi_dms_fault_event last;
	unsigned count;
	struct loop_async *wake; /* the loop's handler takes the events */
};

/* wake must outlive the inbox's use. */
void fault_inbox_init(struct fault_inbox *inbox, struct loop_async *wake);
void fault_inbox_fini(struct fault_inbox *inbox);

/* DCMI's thread: keeps a fault event and wakes the loop (any event wakes
 * it: a recovery is news too). */
void fault_inbox_post(struct fault_inbox *inbox, const struct dcmi_event *event);

/* The loop: says the last fault event since the last call, and whether more
 * came (one line however many: a storm is not a flood of lines). */
void fault_inbox_report(struct fault_inbox *inbox);
