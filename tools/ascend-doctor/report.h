/* SPDX-License-Identifier: Apache-2.0 */
/* The verdicts of one ascend-doctor run: an ordered list of checks, each
 * OK, WARN or FAIL with what was found and, unless OK, the fix; printed as
 * text lines (`OK|WARN|FAIL <check>: <found>` and `  fix: <fix>`) or as a
 * JSON document (docs/ascend-doctor.md has its schema). The exit code is the
 * worst verdict: 0 all OK, 1 a WARN, 2 a FAIL (3, usage errors, is main's). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct json_object;

enum verdict {
	VERDICT_OK,
	VERDICT_WARN,
	VERDICT_FAIL,
};

#define REPORT_EXIT_USAGE 3
/* A report keeps at most this many checks; more are counted, not kept. */
#define REPORT_MAX_CHECKS 1024
#define REPORT_NAME_MAX 64
#define REPORT_TEXT_MAX 1024

struct check {
	enum verdict verdict;
	char name[REPORT_NAME_MAX];
	char found[REPORT_TEXT_MAX];
	char fix[REPORT_TEXT_MAX]; /* empty for OK */
};

struct report {
	struct check *checks;
	size_t count;
	size_t capacity;
	size_t dropped; /* checks beyond REPORT_MAX_CHECKS */
	enum verdict worst_dropped;
};

void report_init(struct report *report);
void report_clear(struct report *report);

/* Appends a check; found is formatted, text cut to fit (marked "..."). fix
 * may be NULL for OK. Returns 0 or -ENOMEM; beyond REPORT_MAX_CHECKS the
 * check is counted in dropped (its verdict still counts) and 0 returned. */
int report_add(struct report *report, enum verdict verdict, const char *name, const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

enum verdict report_worst(const struct report *report);

/* 0, 1 or 2 for the worst verdict. */
int report_exit_code(const struct report *report);

const char *verdict_name(enum verdict verdict);

/* The text form, one line per check and a fix line unless OK. */
void report_print(const struct report *report, FILE *out);

/* {"command": command, "verdict": "OK|WARN|FAIL", "exit_code": N,
 *  "checks": [{"check", "verdict", "found", "fix"?}]} with a new reference,
 * or NULL without memory. */
struct json_object *report_to_json(const struct report *report, const char *command);
