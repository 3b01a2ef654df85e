/* SPDX-License-Identifier: Apache-2.0 */
/* The verdict list; see report.h. */
#include "report.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

void report_init(struct report *report)
{
	*report = (struct report){ 0 };
}

void report_clear(struct report *report)
{
	if (!report)
		return;
	free(report->checks);
	report_init(report);
}

/* Copies src into dst[size], cutting it with "..." when it does not fit. */
static void copy_cut(char *dst, size_t size, const char *src)
{
	size_t len = strlen(src);
	if (len < size) {
		memcpy(dst, src, len + 1);
		return;
	}
	memcpy(dst, src, size - 4);
	memcpy(dst + size - 4, "...", 4);
}

int report_add(struct report *report, enum verdict verdict, const char *name, const char *fix, const char *fmt, ...)
{
	if (report->count >= REPORT_MAX_CHECKS) {
		report->dropped++;
		if (verdict > report->worst_dropped)
			report->worst_dropped = verdict;
		return 0;
	}
	if (report->count == report->capacity) {
		size_t capacity = report->capacity ? report->capacity * 2 : 16;
		struct check *checks = realloc(report->checks, capacity * sizeof(*checks));
		if (!checks)
			return -ENOMEM;
		report->checks = checks;
		report->capacity = capacity;
	}
	struct check *c = &report->checks[report->count];
	*c = (struct check){ .verdict = verdict };
	copy_cut(c->name, sizeof(c->name), name);
	char found[4 * REPORT_TEXT_MAX];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(found, sizeof(found), fmt, ap);
	va_end(ap);
	if (n < 0)
		found[0] = '\0';
	copy_cut(c->found, sizeof(c->found), found);
	if (verdict != VERDICT_OK && fix)
		copy_cut(c->fix, sizeof(c->fix), fix);
	report->count++;
	return 0;
}

enum verdict report_worst(const struct report *report)
{
	enum verdict worst = report->dropped ? report->worst_dropped : VERDICT_OK;
	for (size_t i = 0; i < report->count; i++)
		if (report->checks[i].verdict > worst)
			worst = report->checks[i].verdict;
	return worst;
}

int report_exit_code(const struct report *report)
{
	switch (report_worst(report)) {
	case VERDICT_OK:
		return 0;
	case VERDICT_WARN:
		return 1;
	case VERDICT_FAIL:
		break;
	}
	return 2;
}

const char *verdict_name(enum verdict verdict)
{
	switch (verdict) {
	case VERDICT_OK:
		return "OK";
	case VERDICT_WARN:
		return "WARN";
	case VERDICT_FAIL:
		break;
	}
	return "FAIL";
}

void report_print(const struct report *report, FILE *out)
{
	for (size_t i = 0; i < report->count; i++) {
		const struct check *c = &report->checks[i];
		fprintf(out, "%s %s: %s\n", verdict_name(c->verdict), c->name, c->found);
		if (c->verdict != VERDICT_OK)
			fprintf(out, "  fix: %s\n", c->fix[0] ? c->fix : "see docs/troubleshooting.md");
	}
	if (report->dropped)
		fprintf(out, "WARN report: %zu more checks not shown\n  fix: narrow the run\n", report->dropped);
}

/* Adds key: string to obj; false without memory. */
static bool add_string(struct json_object *obj, const char *key, const char *value)
{
	struct json_object *s = json_object_new_string(value);
	if (!s)
		return false;
	if (json_object_object_add(obj, key, s) < 0) {
		json_object_put(s);
		return false;
	}
	return true;
}

struct json_object *report_to_json(const struct report *report, const char *command)
{
	struct json_object *doc = json_object_new_object();
	struct json_object *checks = json_object_new_array();
	if (!doc || !checks)
		goto fail;
	for (size_t i = 0; i < report->count; i++) {
		const struct check *c = &report->checks[i];
		struct json_object *o = json_object_new_object();
		if (!o)
			goto fail;
		if (json_object_array_add(checks, o) < 0) {
			json_object_put(o);
			goto fail;
		}
		if (!add_string(o, "check", c->name) || !add_string(o, "verdict", verdict_name(c->verdict)) ||
		    !add_string(o, "found", c->found))
			goto fail;
		if (c->verdict != VERDICT_OK && !add_string(o, "fix", c->fix))
			goto fail;
	}
	if (!add_string(doc, "command", command) || !add_string(doc, "verdict", verdict_name(report_worst(report))))
		goto fail;
	struct json_object *code = json_object_new_int(report_exit_code(report));
	if (!code || json_object_object_add(doc, "exit_code", code) < 0) {
		json_object_put(code);
		goto fail;
	}
	if (json_object_object_add(doc, "checks", checks) < 0)
		goto fail;
	return doc;
fail:
	json_object_put(checks);
	json_object_put(doc);
	return NULL;
}
