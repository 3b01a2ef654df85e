/* SPDX-License-Identifier: Apache-2.0 */
/* The CRI container log reader; see crilog.h. */
#include "crilog.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A partial line being joined, one per stream. */
struct pending {
	const char *stream;
	char *buf;
	size_t len;
	bool cut;
	bool open;
};

static void emit(struct pending *p, crilog_fn fn, void *ctx)
{
	struct crilog_line line = { .stream = p->stream, .text = p->buf ? p->buf : "", .len = p->len, .cut = p->cut };
	fn(ctx, &line);
	p->len = 0;
	p->cut = false;
	p->open = false;
}

static void append(struct pending *p, const char *text, size_t len)
{
	size_t room = CRILOG_LINE_MAX - p->len;
	if (len > room) {
		len = room;
		p->cut = true;
	}
	memcpy(p->buf + p->len, text, len);
	p->len += len;
	p->open = true;
}

/* Splits one record; false when it is not one. */
static bool parse_record(const char *s, size_t len, size_t *ret_stream, const char **ret_text, size_t *ret_text_len,
			 bool *ret_partial)
{
	const char *end = s + len;
	const char *sp1 = memchr(s, ' ', len);
	if (!sp1 || sp1 == s)
		return false;
	const char *stream = sp1 + 1;
	const char *sp2 = memchr(stream, ' ', (size_t)(end - stream));
	if (!sp2)
		return false;
	size_t stream_len = (size_t)(sp2 - stream);
	if (stream_len == 6 && memcmp(stream, "stdout", 6) == 0)
		*ret_stream = 0;
	else if (stream_len == 6 && memcmp(stream, "stderr", 6) == 0)
		*ret_stream = 1;
	else
		return false;
	const char *tag = sp2 + 1;
	const char *sp3 = memchr(tag, ' ', (size_t)(end - tag));
	const char *tag_end = sp3 ? sp3 : end;
	/* Tags are `:`-separated; the first says full or partial. */
	if (tag_end == tag || (*tag != 'F' && *tag != 'P') || (tag + 1 != tag_end && tag[1] != ':'))
		return false;
	*ret_partial = *tag == 'P';
	*ret_text = sp3 ? sp3 + 1 : end;
	*ret_text_len = (size_t)(end - *ret_text);
	return true;
}

int crilog_read(const char *data, size_t len, crilog_fn fn, void *ctx, size_t *ret_skipped)
{
	struct pending streams[2] = { { .stream = "stdout" }, { .stream = "stderr" } };
	size_t skipped = 0;
	int r = 0;
	for (size_t i = 0; i < 2; i++) {
		streams[i].buf = malloc(CRILOG_LINE_MAX);
		if (!streams[i].buf) {
			r = -ENOMEM;
			goto out;
		}
	}

	const char *p = data, *end = data + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		size_t s;
		const char *text;
		size_t text_len;
		bool partial;
		if (parse_record(p, n, &s, &text, &text_len, &partial)) {
			append(&streams[s], text, text_len);
			if (!partial)
				emit(&streams[s], fn, ctx);
		} else if (n > 0) {
			skipped++;
		}
		p += n + (nl ? 1 : 0);
	}
	for (size_t i = 0; i < 2; i++)
		if (streams[i].open)
			emit(&streams[i], fn, ctx);
	*ret_skipped = skipped;

out:
	free(streams[0].buf);
	free(streams[1].buf);
	return r;
}
