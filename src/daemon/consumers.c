/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/consumers.h"

#include <errno.h>

int snapshot_consumers_add(struct snapshot_consumers *c, snapshot_consumer_fn fn, void *ctx)
{
	if (c->count == SNAPSHOT_CONSUMERS_MAX)
		return -ENOSPC;
	c->list[c->count].fn = fn;
	c->list[c->count].ctx = ctx;
	c->count++;
	return 0;
}

void snapshot_consumers_hand(const struct snapshot_consumers *c, const struct snapshot_news *news)
{
	for (size_t i = 0; i < c->count; i++)
		c->list[i].fn(c->list[i].ctx, news);
}
