/* SPDX-License-Identifier: Apache-2.0 */
#include "dra/checkpoint.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/file.h"
#include "base/json_put.h"
#include "base/parse.h"

#define CHECKPOINT_JSON_DEPTH 8

struct dra_prepared *dra_prepared_new(size_t n_devices)
{
	if (n_devices > DRA_CLAIM_RESULTS_MAX)
		return NULL;
	struct dra_prepared *p = calloc(1, sizeof(*p) + n_devices * sizeof(p->devices[0]));
	if (p)
		p->n_devices = n_devices;
	return p;
}

void dra_checkpoint_clear(struct dra_checkpoint *cp)
{
	for (size_t i = 0; i < cp->count; i++)
		free(cp->claims[i]);
	cp->count = 0;
}

static size_t index_of(const struct dra_checkpoint *cp, const char *uid)
{
	for (size_t i = 0; i < cp->count; i++)
		if (strcmp(cp->claims[i]->uid, uid) == 0)
			return i;
	return cp->count;
}

struct dra_prepared *dra_checkpoint_find(const struct dra_checkpoint *cp, const char *uid)
{
	size_t i = index_of(cp, uid);
	return i < cp->count ? cp->claims[i] : NULL;
}

int dra_checkpoint_put(struct dra_checkpoint *cp, struct dra_prepared *entry)
{
	size_t i = index_of(cp, entry->uid);
	if (i < cp->count) {
		free(cp->claims[i]);
		cp->claims[i] = entry;
		return 0;
	}
	if (cp->count == DRA_CHECKPOINT_MAX_CLAIMS)
		return -ENOSPC;
	cp->claims[cp->count++] = entry;
	return 0;
}

bool dra_checkpoint_drop(struct dra_checkpoint *cp, const char *uid)
{
	size_t i = index_of(cp, uid);
	if (i == cp->count)
		return false;
	free(cp->claims[i]);
	/* Order kept: the file lists claims in the order they were prepared. */
	memmove(&cp->claims[i], &cp->claims[i + 1], (cp->count - i - 1) * sizeof(cp->claims[0]));
	cp->count--;
	return true;
}

/* --- reading -------------------------------------------------------------- */

/* Copies the string member key of obj into dst; what names obj in why. */
static int copy_member(json_object *obj, const char *what, const char *key, bool required, char *dst, size_t size,
		       char *why, size_t why_size)
{
	json_object *v;
	if (!json_object_object_get_ex(obj, key, &v)) {
		if (!required)
			return 0;
		return why_invalid(why, why_size, "%s.%s is missing", what, key);
	}
	if (!json_object_is_type(v, json_type_string))
		return why_invalid(why, why_size, "%s.%s is not a string", what, key);
	if (required && json_object_get_string_len(v) == 0)
		return why_invalid(why, why_size, "%s.%s is empty", what, key);
	if (str_copy(dst, size, json_object_get_string(v)) < 0)
		return why_invalid(why, why_size, "%s.%s is longer than %zu characters", what, key, size - 1);
	return 0;
}

/* The optional "vnpu": {"id": N, "created": bool} of a device: N a vNPU id
 * of some chip (DRA_VNPU_ID_FIRST and above). */
static int parse_vnpu(json_object *d, const char *what, struct dra_result *res, char *why, size_t why_size)
{
	json_object *v, *id, *created;
	if (!json_object_object_get_ex(d, "vnpu", &v))
		return 0;
	if (!json_object_is_type(v, json_type_object) || !json_object_object_get_ex(v, "id", &id) ||
	    !json_object_is_type(id, json_type_int) || !json_object_object_get_ex(v, "created", &created) ||
	    !json_object_is_type(created, json_type_boolean))
		return why_invalid(why, why_size, "%s.vnpu is not {\"id\": N, \"created\": bool}", what);
	int64_t n = json_object_get_int64(id);
	if (n < DRA_VNPU_ID_FIRST || n > DRA_VNPU_ID_LAST)
		return why_invalid(why, why_size, "%s.vnpu.id %" PRId64 " is not a vNPU id (%d-%d)", what, n,
				   DRA_VNPU_ID_FIRST, DRA_VNPU_ID_LAST);
	res->vnpu_id = (uint32_t)n;
	res->vnpu_created = json_object_get_boolean(created);
	return 0;
}

/* The optional "adminAccess": true of a device. */
static int parse_admin(json_object *d, const char *what, struct dra_result *res, char *why, size_t why_size)
{
	json_object *v;
	if (!json_object_object_get_ex(d, "adminAccess", &v))
		return 0;
	if (!json_object_is_type(v, json_type_boolean))
		return why_invalid(why, why_size, "%s.adminAccess is not a boolean", what);
	res->admin_access = json_object_get_boolean(v);
	return 0;
}

static int parse_claim(json_object *item, size_t i, struct dra_prepared **ret, char *why, size_t why_size)
{
	char what[64], dwhat[96];
	snprintf(what, sizeof(what), "claims[%zu]", i);
	if (!json_object_is_type(item, json_type_object))
		return why_invalid(why, why_size, "%s is not an object", what);
	json_object *devices;
	if (!json_object_object_get_ex(item, "devices", &devices) || !json_object_is_type(devices, json_type_array))
		return why_invalid(why, why_size, "%s.devices is not an array", what);
	size_t n = json_object_array_length(devices);
	if (n > DRA_CLAIM_RESULTS_MAX)
		return why_invalid(why, why_size, "%s has more than %d devices", what, DRA_CLAIM_RESULTS_MAX);
	struct dra_prepared *p = dra_prepared_new(n);
	if (!p)
		return -ENOMEM;
	int r;
	if ((r = copy_member(item, what, "uid", true, p->uid, sizeof(p->uid), why, why_size)) < 0 ||
	    (r = copy_member(item, what, "namespace", false, p->namespace, sizeof(p->namespace), why, why_size)) < 0 ||
	    (r = copy_member(item, what, "name", false, p->name, sizeof(p->name), why, why_size)) < 0 ||
	    (r = copy_member(item, what, "podClaim", false, p->pod_claim, sizeof(p->pod_claim), why, why_size)) < 0)
		goto fail;
	if (p->pod_claim[0] && !dra_pod_claim_name_ok(p->pod_claim)) {
		r = why_invalid(why, why_size, "%s.podClaim is not a DNS label", what);
		goto fail;
	}
	for (size_t j = 0; j < n; j++) {
		json_object *d = json_object_array_get_idx(devices, j);
		struct dra_result *res = &p->devices[j];
		snprintf(dwhat, sizeof(dwhat), "%s.devices[%zu]", what, j);
		if (!json_object_is_type(d, json_type_object)) {
			r = why_invalid(why, why_size, "%s is not an object", dwhat);
			goto fail;
		}
		if ((r = copy_member(d, dwhat, "request", true, res->request, sizeof(res->request), why, why_size)) < 0 ||
		    (r = copy_member(d, dwhat, "pool", true, res->pool, sizeof(res->pool), why, why_size)) < 0 ||
		    (r = copy_member(d, dwhat, "device", true, res->device, sizeof(res->device), why, why_size)) < 0 ||
		    (r = parse_vnpu(d, dwhat, res, why, why_size)) < 0 || (r = parse_admin(d, dwhat, res, why, why_size)) < 0)
			goto fail;
	}
	*ret = p;
	return 0;
fail:
	free(p);
	return r;
}

static int parse_tree(json_object *root, struct dra_checkpoint *cp, char *why, size_t why_size)
{
	json_object *v, *claims;
	if (!json_object_is_type(root, json_type_object))
		return why_invalid(why, why_size, "not a JSON object");
	if (!json_object_object_get_ex(root, "version", &v) || !json_object_is_type(v, json_type_int))
		return why_invalid(why, why_size, "version is missing");
	if (json_object_get_int64(v) != DRA_CHECKPOINT_VERSION)
		return why_invalid(why, why_size, "version %" PRId64 " is not %d", (int64_t)json_object_get_int64(v),
				   DRA_CHECKPOINT_VERSION);
	if (!json_object_object_get_ex(root, "claims", &claims) || !json_object_is_type(claims, json_type_array))
		return why_invalid(why, why_size, "claims is not an array");
	size_t n = json_object_array_length(claims);
	if (n > DRA_CHECKPOINT_MAX_CLAIMS)
		return why_invalid(why, why_size, "more than %d claims", DRA_CHECKPOINT_MAX_CLAIMS);
	for (size_t i = 0; i < n; i++) {
		struct dra_prepared *p = NULL;
		int r = parse_claim(json_object_array_get_idx(claims, i), i, &p, why, why_size);
		if (r < 0)
			return r;
		if (dra_checkpoint_find(cp, p->uid)) {
			r = why_invalid(why, why_size, "claims[%zu]: uid %s is listed twice", i, p->uid);
			free(p);
			return r;
		}
		cp->claims[cp->count++] = p;
	}
	return 0;
}

int dra_checkpoint_parse(const char *json, size_t len, struct dra_checkpoint *cp, char *why, size_t why_size)
{
	if (why_size)
		why[0] = '\0';
	if (len > DRA_CHECKPOINT_JSON_MAX) {
		snprintf(why, why_size, "larger than %d bytes", DRA_CHECKPOINT_JSON_MAX);
		return -E2BIG;
	}
	struct json_tokener *tok = json_tokener_new_ex(CHECKPOINT_JSON_DEPTH);
	if (!tok)
		return -ENOMEM;
	json_object *root = json_tokener_parse_ex(tok, json, (int)len);
	enum json_tokener_error err = json_tokener_get_error(tok);
	int r;
	/* Only a newline may follow: the file is written whole, so anything
	 * else means it is not what this driver wrote. */
	size_t end = root && err == json_tokener_success ? json_tokener_get_parse_end(tok) : 0;
	if (end < len && json[end] == '\n')
		end++;
	if (!root || err != json_tokener_success || end != len)
		r = why_invalid(why, why_size, "not JSON: %s",
				root && err == json_tokener_success ? "text after the object"
								   : json_tokener_error_desc(err));
	else
		r = parse_tree(root, cp, why, why_size);
	if (r < 0)
		dra_checkpoint_clear(cp);
	json_object_put(root);
	json_tokener_free(tok);
	return r;
}

int dra_checkpoint_load(const char *path, struct dra_checkpoint *cp, char *why, size_t why_size)
{
	char *text;
	size_t len;
	int r = file_read_bounded(path, DRA_CHECKPOINT_JSON_MAX, &text, &len, why, why_size);
	if (r < 0)
		return r;
	r = dra_checkpoint_parse(text, len, cp, why, why_size);
	free(text);
	return r;
}

/* --- writing -------------------------------------------------------------- */

int dra_checkpoint_render(const struct dra_checkpoint *cp, char **ret_json)
{
	struct json_put b = { 0 };
	json_object *root = json_object_new_object();
	json_put(&b, root, "version", json_object_new_int(DRA_CHECKPOINT_VERSION));
	json_object *claims = json_put(&b, root, "claims", json_object_new_array());
	for (size_t i = 0; i < cp->count; i++) {
		const struct dra_prepared *p = cp->claims[i];
		json_object *c = json_put(&b, claims, NULL, json_object_new_object());
		json_put_string(&b, c, "uid", p->uid);
		json_put_string(&b, c, "namespace", p->namespace);
		json_put_string(&b, c, "name", p->name);
		if (p->pod_claim[0])
			json_put_string(&b, c, "podClaim", p->pod_claim);
		json_object *devices = json_put(&b, c, "devices", json_object_new_array());
		for (size_t j = 0; j < p->n_devices; j++) {
			json_object *d = json_put(&b, devices, NULL, json_object_new_object());
			json_put_string(&b, d, "request", p->devices[j].request);
			json_put_string(&b, d, "pool", p->devices[j].pool);
			json_put_string(&b, d, "device", p->devices[j].device);
			if (p->devices[j].admin_access)
				json_put(&b, d, "adminAccess", json_object_new_boolean(1));
			if (p->devices[j].vnpu_id) {
				json_object *v = json_put(&b, d, "vnpu", json_object_new_object());
				json_put(&b, v, "id", json_object_new_int64(p->devices[j].vnpu_id));
				json_put(&b, v, "created", json_object_new_boolean(p->devices[j].vnpu_created));
			}
		}
	}
	int r = -ENOMEM;
	const char *text = b.failed ? NULL : json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
	size_t len = text ? strlen(text) : 0;
	char *json = text ? malloc(len + 2) : NULL;
	if (json) {
		memcpy(json, text, len);
		memcpy(json + len, "\n", 2);
		*ret_json = json;
		r = 0;
	}
	json_object_put(root);
	return r;
}

int dra_checkpoint_save(const char *path, const struct dra_checkpoint *cp, bool durable)
{
	char *json;
	int r = dra_checkpoint_render(cp, &json);
	if (r < 0)
		return r;
	r = file_write_atomic(path, json, strlen(json), 0600, durable ? FILE_WRITE_SYNC : 0);
	free(json);
	return r;
}
