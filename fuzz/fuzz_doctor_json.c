/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes ascend-doctor's reader of kubectl JSON and its scheduling rules:
 * the input is up to three documents separated by a line "---" (the pod,
 * the nodes, the pods); with fewer, the last one given stands for the rest.
 * Whatever comes in, the result is a verdict or a refusal that says why. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "explain.h"
#include "report.h"
#include "fuzz/fuzz_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size, SIZE_MAX - 1);
	if (!text)
		return 0;
	const char *parts[3] = { text, NULL, NULL };
	size_t n = 1;
	for (char *p = text; n < 3 && (p = strstr(p, "\n---\n")) != NULL;) {
		*p = '\0';
		p += 5;
		parts[n++] = p;
	}
	for (size_t i = n; i < 3; i++)
		parts[i] = parts[n - 1];

	struct report report;
	struct json_object *doc = NULL;
	char why[1024] = "";
	report_init(&report);
	int r = explain_texts(parts[0], strlen(parts[0]), parts[1], strlen(parts[1]), parts[2], strlen(parts[2]), NULL,
			      NULL, size % 2 ? NULL : "ascend.com/npu", &report, &doc, why, sizeof(why));
	if (r < 0) {
		if (why[0] == '\0' || doc)
			abort();
	} else {
		/* A verdict: at least the request line, and a document to print. */
		if (report.count == 0 || !doc || !json_object_to_json_string(doc))
			abort();
		int code = report_exit_code(&report);
		if (code < 0 || code > 2)
			abort();
	}
	json_object_put(doc);
	report_clear(&report);
	free(text);
	return 0;
}
