/* SPDX-License-Identifier: Apache-2.0 */
#include "dra/claim.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/parse.h"

/* A claim is metadata, spec and status a few levels deep; selectors and
 * config nest a little more. Deeper text is not a claim. */
#define CLAIM_JSON_DEPTH 32

/* The member key of obj as a string, or NULL when absent; -EINVAL in *r when
 * present but not a string. */
static const char *member_string(json_object *obj, const char *key, int *r)
{
	json_object *v;
	if (!obj || !json_object_object_get_ex(obj, key, &v) || json_object_is_type(v, json_type_null))
		return NULL;
	if (!json_object_is_type(v, json_type_string)) {
		*r = -EINVAL;
		return NULL;
	}
	return json_object_get_string(v);
}

/* The member key of obj when it is an object (NULL when absent or null). */
static json_object *member_object(json_object *obj, const char *key, const char *what, char *why, size_t why_size,
				  int *r)
{
	json_object *v;
	if (!obj || !json_object_object_get_ex(obj, key, &v) || json_object_is_type(v, json_type_null))
		return NULL;
	if (!json_object_is_type(v, json_type_object)) {
		*r = why_invalid(why, why_size, "%s is not an object", what);
		return NULL;
	}
	return v;
}

/* Copies a required string member of results[i] into dst. */
static int result_field(json_object *item, size_t i, const char *key, char *dst, size_t size, char *why,
			size_t why_size)
{
	int r = 0;
	const char *s = member_string(item, key, &r);
	if (r < 0)
		return why_invalid(why, why_size, "results[%zu].%s is not a string", i, key);
	if (!s || !s[0])
		return why_invalid(why, why_size, "results[%zu].%s is missing", i, key);
	if (str_copy(dst, size, s) < 0)
		return why_invalid(why, why_size, "results[%zu].%s is longer than %zu characters", i, key, size - 1);
	return 0;
}

/* The pod's name for a claim made from a template: it names a directory
 * in the container, so it must be a DNS label as the API requires. */
static int pod_claim_name(json_object *meta, struct dra_claim *c, char *why, size_t why_size)
{
	json_object *annotations, *v;
	c->pod_claim_name[0] = '\0';
	if (!json_object_object_get_ex(meta, "annotations", &annotations) ||
	    !json_object_is_type(annotations, json_type_object) ||
	    !json_object_object_get_ex(annotations, DRA_POD_CLAIM_ANNOTATION, &v))
		return 0;
	const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
	if (!s || !dra_pod_claim_name_ok(s))
		return why_invalid(why, why_size, "metadata.annotations[%s] is not a DNS label", DRA_POD_CLAIM_ANNOTATION);
	(void)str_copy(c->pod_claim_name, sizeof(c->pod_claim_name), s); /* checked above */
	return 0;
}

bool dra_pod_claim_name_ok(const char *s)
{
	size_t len = strlen(s);
	if (len == 0 || len > K8S_NAME_MAX || s[0] == '-' || s[len - 1] == '-')
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return true;
}

static int parse_tree(json_object *root, struct dra_claim *c, char *why, size_t why_size)
{
	int r = 0;
	if (!json_object_is_type(root, json_type_object))
		return why_invalid(why, why_size, "not a JSON object");

	json_object *meta = member_object(root, "metadata", "metadata", why, why_size, &r);
	if (r < 0)
		return r;
	const char *uid = member_string(meta, "uid", &r);
	if (r < 0)
		return why_invalid(why, why_size, "metadata.uid is not a string");
	if (!uid || !uid[0])
		return why_invalid(why, why_size, "metadata.uid is missing");
	if (str_copy(c->uid, sizeof(c->uid), uid) < 0)
		return why_invalid(why, why_size, "metadata.uid is longer than %d characters", DRA_UID_MAX - 1);
	if ((r = pod_claim_name(meta, c, why, why_size)) < 0)
		return r;

	json_object *status = member_object(root, "status", "status", why, why_size, &r);
	json_object *allocation = member_object(status, "allocation", "status.allocation", why, why_size, &r);
	json_object *devices = member_object(allocation, "devices", "status.allocation.devices", why, why_size, &r);
	if (r < 0)
		return r;
	c->allocated = allocation != NULL;

	json_object *results;
	if (!devices || !json_object_object_get_ex(devices, "results", &results) ||
	    json_object_is_type(results, json_type_null))
		return 0;
	if (!json_object_is_type(results, json_type_array))
		return why_invalid(why, why_size, "status.allocation.devices.results is not an array");
	size_t n = json_object_array_length(results);
	if (n > DRA_CLAIM_RESULTS_MAX)
		return why_invalid(why, why_size, "more than %d results", DRA_CLAIM_RESULTS_MAX);
	for (size_t i = 0; i < n; i++) {
		json_object *item = json_object_array_get_idx(results, i);
		struct dra_result *res = &c->results[i];
		if (!json_object_is_type(item, json_type_object))
			return why_invalid(why, why_size, "results[%zu] is not an object", i);
		if ((r = result_field(item, i, "request", res->request, sizeof(res->request), why, why_size)) < 0 ||
		    (r = result_field(item, i, "driver", res->driver, sizeof(res->driver), why, why_size)) < 0 ||
		    (r = result_field(item, i, "pool", res->pool, sizeof(res->pool), why, why_size)) < 0 ||
		    (r = result_field(item, i, "device", res->device, sizeof(res->device), why, why_size)) < 0)
			return r;
		json_object *admin;
		if (json_object_object_get_ex(item, "adminAccess", &admin) && !json_object_is_type(admin, json_type_null)) {
			if (!json_object_is_type(admin, json_type_boolean))
				return why_invalid(why, why_size, "results[%zu].adminAccess is not a boolean", i);
			res->admin_access = json_object_get_boolean(admin);
		}
	}
	c->n_results = n;
	return 0;
}

int dra_claim_parse(const char *json, size_t len, struct dra_claim *ret_claim, char *why, size_t why_size)
{
	if (why_size)
		why[0] = '\0';
	if (len > DRA_CLAIM_JSON_MAX) {
		snprintf(why, why_size, "larger than %d bytes", DRA_CLAIM_JSON_MAX);
		return -E2BIG;
	}
	struct json_tokener *tok = json_tokener_new_ex(CLAIM_JSON_DEPTH);
	struct dra_claim *c = calloc(1, sizeof(*c));
	json_object *root = NULL;
	int r = -ENOMEM;
	if (!tok || !c)
		goto out;
	root = json_tokener_parse_ex(tok, json, (int)len);
	enum json_tokener_error err = json_tokener_get_error(tok);
	/* Text after the value (or a value cut short) is not one claim;
	 * white space after it is. */
	size_t end = root && err == json_tokener_success ? json_tokener_get_parse_end(tok) : 0;
	while (end < len && (json[end] == ' ' || json[end] == '\n' || json[end] == '\r' || json[end] == '\t'))
		end++;
	if (!root || err != json_tokener_success || end != len) {
		r = why_invalid(why, why_size, "not JSON: %s",
				root && err == json_tokener_success ? "text after the object"
								   : json_tokener_error_desc(err));
		goto out;
	}
	r = parse_tree(root, c, why, why_size);
	if (r < 0)
		goto out;
	*ret_claim = *c;
out:
	json_object_put(root);
	if (tok)
		json_tokener_free(tok);
	free(c);
	return r;
}
