/* SPDX-License-Identifier: Apache-2.0 */
#include "dra.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "base/parse.h"

V1__NodeWatchResourcesResponse *dra_health_next(struct gc_stream *st, int64_t deadline_ms)
{
	int64_t left = deadline_ms - now_ms();
	assert_true(left > 0);
	uint8_t *body = NULL;
	size_t len = 0;
	assert_int_equal(gc_stream_next(st, left, &body, &len), 0);
	V1__NodeWatchResourcesResponse *resp = v1__node_watch_resources_response__unpack(NULL, len, body);
	free(body);
	assert_non_null(resp);
	return resp;
}
