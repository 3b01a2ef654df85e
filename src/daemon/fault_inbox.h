/* SPDX-License-Identifier: Apache-2.0 */
/* DCMI's fault events, handed from DCMI's thread to the loop: the vendor's
 * thread copies the event and wakes the loop, nothing more; the loop takes
 * the last event and how many came since it last looked. Bounded: a storm
 * of events is one count and one wakeup. */
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

/* The loop: the last fault event and how many came since the last take
 * (0: none, *ret_last untouched). */
unsigned fault_inbox_take(struct fault_inbox *inbox, struct dcmi_dms_fault_event *ret_last);
