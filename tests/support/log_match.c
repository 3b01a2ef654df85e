/* SPDX-License-Identifier: Apache-2.0 */
/* Matching the daemon's JSON log lines by event; see log_match.h. */
#include "support/log_match.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "base/parse.h"
#include "base/strbuf.h"

int log_match_init(struct log_match *m, const char *event, const char *const pairs[], unsigned n)
{
	if (n % 2 || n > 2 * LOG_MATCH_PAIRS_MAX)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	m->event = event;
	struct strbuf sb;
	strbuf_init(&sb, m->what, sizeof(m->what), "...");
	(void)strbuf_printf(&sb, "the event %s", event);
	for (unsigned i = 0; i < n; i += 2) {
		m->pairs[i] = pairs[i];
		m->pairs[i + 1] = pairs[i + 1];
		(void)strbuf_printf(&sb, "%s%s=%s", i ? ", " : " with ", pairs[i], pairs[i + 1]);
	}
	return 0;
}

static bool has(json_object *o, const char *key, const char *want)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !v)
		return false;
	const char *got = json_object_get_string(v);
	return got && strcmp(got, want) == 0;
}

bool log_match_line(const char *line, const void *arg)
{
	const struct log_match *m = arg;
	/* Not every line of stderr is the log's: a sanitizer's report, a
	 * library's own line, the errors printed before the log starts. */
	if (line[0] != '{')
		return false;
	json_object *o = json_tokener_parse(line);
	if (!o)
		return false;
	bool ok = json_object_get_type(o) == json_type_object && has(o, "event", m->event);
	for (size_t i = 0; ok && i < 2 * LOG_MATCH_PAIRS_MAX && m->pairs[i]; i += 2)
		ok = has(o, m->pairs[i], m->pairs[i + 1]);
	json_object_put(o);
	return ok;
}

struct proc_match log_match_proc(const struct log_match *m)
{
	return (struct proc_match){ .match = log_match_line, .arg = m, .what = m->what };
}

int log_line_field(const char *line, const char *key, char *buf, size_t size)
{
	json_object *o = line[0] == '{' ? json_tokener_parse(line) : NULL;
	json_object *v = NULL;
	int r = -ENOENT;
	if (o && json_object_get_type(o) == json_type_object && json_object_object_get_ex(o, key, &v) && v)
		r = str_copy(buf, size, json_object_get_string(v)) < 0 ? -ENOBUFS : 0;
	json_object_put(o);
	return r;
}
