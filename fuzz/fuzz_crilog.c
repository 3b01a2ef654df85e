/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes kubelet-sim's reader of CRI container logs
 * (tools/kubelet-sim/crilog.c): every line it gives is within the limit,
 * from a known stream, and made of bytes of the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/kubelet-sim/crilog.h"

struct seen {
	const char *data;
	size_t len;
};

static void check(void *ctx, const struct crilog_line *l)
{
	const struct seen *s = ctx;
	if (l->len > CRILOG_LINE_MAX)
		abort();
	if (strcmp(l->stream, "stdout") != 0 && strcmp(l->stream, "stderr") != 0)
		abort();
	/* Joined text holds no newline: records end at one. */
	if (memchr(l->text, '\n', l->len))
		abort();
	if (l->len > s->len)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seen s = { (const char *)data, size };
	size_t skipped;
	crilog_read((const char *)data, size, check, &s, &skipped);
	return 0;
}
