/* SPDX-License-Identifier: Apache-2.0 */
#include "plugin/probe.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "deviceplugin_api.h"
#include "grpc/client.h"

int probe_plugin(const char *socket_path, char *why, size_t why_size)
{
	struct gc_channel *ch;
	struct gc_result res = { 0 };
	int r = gc_channel_open(socket_path, &ch);
	if (r < 0) {
		snprintf(why, why_size, "%s: %s", socket_path, strerror(-r));
		return r;
	}
	r = gc_unary(ch, DP_METHOD_GET_OPTIONS, NULL, 0, PROBE_TIMEOUT_MS, &res);
	if (r < 0) {
		/* The failed call wrote no result: nothing to clear. */
		snprintf(why, why_size, "%s: %s", socket_path, strerror(-r));
	} else {
		if (res.status != GRPC_STATUS_OK) {
			snprintf(why, why_size, "%s: status %d: %s", socket_path, res.status, res.details);
			r = -EIO;
		}
		gc_result_clear(&res);
	}
	gc_channel_close(ch);
	return r;
}
