/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/fault_inbox.h"

#include <stdio.h>

#include "base/log.h"

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

/* What an event's assertion says of its chip. */
static const char *assertion_word(unsigned char assertion)
{
	switch (assertion) {
	case DCMI_ASSERTION_RECOVERY:
		return "recovered";
	case DCMI_ASSERTION_OCCUR:
		return "fault";
	case DCMI_ASSERTION_ONE_OFF:
		return "one-off event"; /* e.g. a reset finished: no fault to clear */
	default:
		return "event of unknown assertion";
	}
}

void fault_inbox_report(struct fault_inbox *inbox)
{
	pthread_mutex_lock(&inbox->lock);
	unsigned count = inbox->count;
	struct dcmi_dms_fault_event ev = inbox->last;
	inbox->count = 0;
	pthread_mutex_unlock(&inbox->lock);
	if (count) {
		char id[16];
		(void)snprintf(id, sizeof(id), "%08X", ev.event_id);
		const struct log_fields f = { .more = { LOG_NUM("logic_id", ev.deviceid),
							LOG_STR("assertion", assertion_word(ev.assertion)),
							LOG_NUM("severity", ev.severity), LOG_STR("event_id", id) } };
		log_event(LOG_LEVEL_INFO, LOG_EVENT_DCMI_EVENT, &f,
			  "DCMI fault event: chip logic id %u %s, severity %u, event 0x%08X%s", ev.deviceid,
			  assertion_word(ev.assertion), ev.severity, ev.event_id, count > 1 ? " (and more)" : "");
	}
}
