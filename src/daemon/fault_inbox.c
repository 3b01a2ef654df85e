/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/fault_inbox.h"

void fault_inbox_init(struct fault_inbox *inbox, struct loop_async *wake)
{
	*inbox = (struct fault_inbox){ .wake = wake };
	pthread_mutex_init(&inbox->lock, NULL);
}

void fault_inbox_fini(struct fault_inbox *inbox)
{
	pthread_mutex_destroy(&inbox->lock);
}

void fault_inbox_post(struct fault_inbox *inbox, const struct dcmi_event *event)
{
	if (event->type == DCMI_EVENT_TYPE_DMS_FAULT) {
		pthread_mutex_lock(&inbox->lock);
		inbox->last = event->event_t.dms_event;
		inbox->count++;
		pthread_mutex_unlock(&inbox->lock);
	}
	loop_async_send(inbox->wake);
}

unsigned fault_inbox_take(struct fault_inbox *inbox, struct dcmi_dms_fault_event *ret_last)
{
	pthread_mutex_lock(&inbox->lock);
	unsigned count = inbox->count;
	if (count)
		*ret_last = inbox->last;
	inbox->count = 0;
	pthread_mutex_unlock(&inbox->lock);
	return count;
}
