/* SPDX-License-Identifier: Apache-2.0 */
/* `ascend-doctor explain POD`: why a pod stays Pending, node by node. Reads
 * the pod, the nodes and the pods from `kubectl get -o json` files, or runs
 * kubectl for what is not given; the rules are fit.h's. */
#pragma once

#include <stddef.h>

#include "options.h"
#include "report.h"

struct json_object;

/* Evaluates pod_arg ("name" or "namespace/name"; may be NULL with a
 * --pod file) and fills report: a request line, one line per node, and the
 * scheduling verdict. *ret_doc gets the JSON document of docs/ascend-doctor.md
 * (a new reference). Returns 0, or with why when no verdict can be given:
 * -EINVAL without pod_arg and --pod (a usage error) or for JSON that is no
 * pod or node list, -ENOEXEC when kubectl is needed but not on PATH,
 * -ENOENT when the pod is not found, or what reading or kubectl failed with. */
int explain_run(const struct doctor_options *options, const char *pod_arg, struct report *report,
		struct json_object **ret_doc, char *why, size_t why_size);

/* The analysis alone, from JSON text already read: pod_text (a Pod, or a
 * List where pod_arg names it; NULL: find pod_arg in pods_text),
 * nodes_text and pods_text (may be NULL). resource NULL means: the one
 * extended resource the pod asks for, ascend.com/npu when it asks for none
 * or several. What explain_run does after reading, exposed for the fuzzer
 * and the tests. */
int explain_texts(const char *pod_text, size_t pod_len, const char *nodes_text, size_t nodes_len,
		  const char *pods_text, size_t pods_len, const char *pod_arg, const char *namespace,
		  const char *resource, struct report *report, struct json_object **ret_doc, char *why,
		  size_t why_size);
