/* SPDX-License-Identifier: Apache-2.0 */
/* --log-format json: each line one JSON object with time, level, msg and,
 * when given, resource and device; quotes, backslashes and control
 * characters escaped; a message too long for a line cut with "..." while
 * the object stays valid; text stays the default. Lines go to stderr
 * (direct mode), which the test points at a pipe. */
#include <errno.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/log.h"

static int pipe_fds[2];
static int saved_stderr;

static int setup(void **state)
{
	(void)state;
	assert_int_equal(pipe(pipe_fds), 0);
	saved_stderr = dup(STDERR_FILENO);
	dup2(pipe_fds[1], STDERR_FILENO);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	dup2(saved_stderr, STDERR_FILENO);
	close(saved_stderr);
	close(pipe_fds[0]);
	close(pipe_fds[1]);
	log_set_format(LOG_FORMAT_TEXT);
	return 0;
}

/* One line written in direct mode is in the pipe when log_msg returns. */
static char *read_line(void)
{
	static char buf[LOG_LINE_MAX + 1];
	ssize_t n = read(pipe_fds[0], buf, LOG_LINE_MAX);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_int_equal(buf[n - 1], '\n');
	assert_null(strchr(buf, '\n') + 1 < buf + n ? strchr(buf, '\n') + 1 : NULL); /* one line */
	return buf;
}

static json_object *parse(const char *line)
{
	json_object *o = json_tokener_parse(line);
	if (!o)
		fail_msg("not JSON: %s", line);
	return o;
}

static const char *field(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

static void test_text_is_the_default(void **state)
{
	(void)state;
	log_msg(LOG_LEVEL_WARN, "plain %d", 1);
	const char *line = read_line();
	assert_non_null(strstr(line, "Z warn  plain 1\n"));
	assert_true(line[0] >= '2' && line[0] <= '9'); /* a timestamp, not "{" */
}

static void test_json_fields_and_escapes(void **state)
{
	(void)state;
	log_set_format(LOG_FORMAT_JSON);
	log_msg(LOG_LEVEL_INFO, "say \"hi\" \\ tab\there\x01");
	json_object *o = parse(read_line());
	assert_string_equal(field(o, "level"), "info");
	assert_string_equal(field(o, "msg"), "say \"hi\" \\ tab\there\x01");
	const char *time = field(o, "time");
	assert_non_null(time);
	assert_int_equal(strlen(time), strlen("2026-12-02T01:20:39.296Z"));
	assert_null(field(o, "device"));
	json_object_put(o);

	log_msg_fields(LOG_LEVEL_WARN, &(struct log_fields){ .resource = "ascend.com/npu", .device = "npu-3" },
		       "npu-3 is Unhealthy: %s", "DCMI health 2 (major)");
	o = parse(read_line());
	assert_string_equal(field(o, "level"), "warn");
	assert_string_equal(field(o, "resource"), "ascend.com/npu");
	assert_string_equal(field(o, "device"), "npu-3");
	assert_string_equal(field(o, "msg"), "npu-3 is Unhealthy: DCMI health 2 (major)");
	json_object_put(o);
}

static void test_json_long_message_is_cut_but_valid(void **state)
{
	(void)state;
	log_set_format(LOG_FORMAT_JSON);
	/* Quotes double in JSON: the escaped message is far over the line. */
	char *msg = malloc(LOG_LINE_MAX);
	memset(msg, '"', LOG_LINE_MAX - 1);
	msg[LOG_LINE_MAX - 1] = '\0';
	log_msg_fields(LOG_LEVEL_ERROR, &(struct log_fields){ .device = "npu-0" }, "%s", msg);
	free(msg);
	const char *line = read_line();
	assert_true(strlen(line) <= LOG_LINE_MAX);
	json_object *o = parse(line);
	const char *m = field(o, "msg");
	assert_non_null(m);
	assert_true(strlen(m) > 1000);
	assert_string_equal(m + strlen(m) - 3, "...");
	assert_string_equal(field(o, "device"), "npu-0");
	json_object_put(o);
}

/* An event line: the name beside the message and the fields, strings
 * escaped and numbers as numbers, with members left out as log.h says; in
 * the text format the same call writes the message alone. */
static void test_event_name_and_fields(void **state)
{
	(void)state;
	log_set_format(LOG_FORMAT_JSON);
	const struct log_fields f = { .device = "npu-2",
				      .more = { LOG_STR("fault_level", "Restart\"NPU\""), LOG_NUM("attempt", -3),
						LOG_STR("empty", ""), LOG_STR("none", NULL) } };
	log_event(LOG_LEVEL_WARN, LOG_EVENT_RESET_STARTED, &f, "npu-2: resetting the chip (%s)", "RestartNPU");
	json_object *o = parse(read_line());
	assert_string_equal(field(o, "event"), "reset.started");
	assert_string_equal(field(o, "msg"), "npu-2: resetting the chip (RestartNPU)");
	assert_string_equal(field(o, "device"), "npu-2");
	assert_string_equal(field(o, "fault_level"), "Restart\"NPU\"");
	json_object *v;
	assert_true(json_object_object_get_ex(o, "attempt", &v));
	assert_int_equal(json_object_get_type(v), json_type_int);
	assert_int_equal(json_object_get_int(v), -3);
	assert_null(field(o, "empty"));
	assert_null(field(o, "none"));
	assert_null(field(o, "resource"));
	json_object_put(o);

	log_event(LOG_LEVEL_INFO, LOG_EVENT_CONFIG_SIGHUP, NULL, "received SIGHUP");
	o = parse(read_line());
	assert_string_equal(field(o, "event"), "config.sighup");
	json_object_put(o);

	/* A line that says no event has no "event" key. */
	log_msg(LOG_LEVEL_INFO, "plain");
	o = parse(read_line());
	assert_null(field(o, "event"));
	json_object_put(o);

	log_set_format(LOG_FORMAT_TEXT);
	log_event(LOG_LEVEL_WARN, LOG_EVENT_RESET_STARTED, &f, "npu-2: resetting the chip (%s)", "RestartNPU");
	const char *line = read_line();
	assert_non_null(strstr(line, "Z warn  npu-2: resetting the chip (RestartNPU)\n"));
	assert_null(strstr(line, "reset.started"));
}

/* Every event has a name, each name once: the list is an interface. */
static void test_event_names(void **state)
{
	(void)state;
	static const char *const names[] = {
#define NAME(id, name) name,
		LOG_EVENTS(NAME)
#undef NAME
	};
	assert_null(log_event_name(LOG_EVENT_NONE));
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		assert_string_equal(log_event_name((enum log_event)(i + 1)), names[i]);
		for (const char *c = names[i]; *c; c++)
			assert_true((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '.' || *c == '-');
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(names[i], names[j]);
	}
	assert_null(log_event_name((enum log_event)(sizeof(names) / sizeof(names[0]) + 1)));
}

static void test_format_parse(void **state)
{
	(void)state;
	enum log_format f;
	assert_int_equal(log_format_parse("json", &f), 0);
	assert_int_equal(f, LOG_FORMAT_JSON);
	assert_int_equal(log_format_parse("text", &f), 0);
	assert_int_equal(f, LOG_FORMAT_TEXT);
	assert_int_equal(log_format_parse("JSON", &f), -EINVAL);
	assert_int_equal(log_format_parse("", &f), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_text_is_the_default, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_fields_and_escapes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_long_message_is_cut_but_valid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_event_name_and_fields, setup, teardown),
		cmocka_unit_test(test_event_names),
		cmocka_unit_test(test_format_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
