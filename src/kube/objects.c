/* SPDX-License-Identifier: Apache-2.0 */
/* Readers of the API server's answers (see objects.h). */
#include "kube/objects.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/parse.h"

int kube_json_parse(const char *body, size_t len, json_object **ret_object, char *why, size_t why_size)
{
	if (len > INT32_MAX)
		return why_fail(why, why_size, -EBADMSG, "answer too long");
	json_tokener *tok = json_tokener_new_ex(KUBE_JSON_MAX_DEPTH);
	if (!tok)
		return why_fail(why, why_size, -ENOMEM, "out of memory");
	json_object *o = json_tokener_parse_ex(tok, body, (int)len);
	enum json_tokener_error err = json_tokener_get_error(tok);
	size_t end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!o || err != json_tokener_success) {
		json_object_put(o);
		return why_fail(why, why_size, -EBADMSG, "not JSON: %s",
				err == json_tokener_continue ? "cut short" : json_tokener_error_desc(err));
	}
	for (; end < len; end++) {
		if (body[end] != ' ' && body[end] != '\n' && body[end] != '\r' && body[end] != '\t') {
			json_object_put(o);
			return why_fail(why, why_size, -EBADMSG, "not JSON: text after the object");
		}
	}
	if (!json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return why_fail(why, why_size, -EBADMSG, "not a JSON object");
	}
	*ret_object = o;
	return 0;
}

int kube_json_string(json_object *o, const char *key, char *out, size_t size, char *why, size_t why_size,
		     const char *where)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
		return -ENOENT;
	if (!json_object_is_type(v, json_type_string))
		return why_fail(why, why_size, -EBADMSG, "%s%s is not a string", where, key);
	size_t n = (size_t)json_object_get_string_len(v);
	const char *s = json_object_get_string(v);
	if (n + 1 > size || memchr(s, '\0', n))
		return why_fail(why, why_size, -EBADMSG, "%s%s is too long or holds a NUL", where, key);
	memcpy(out, s, n + 1);
	return 0;
}

static int meta_of(json_object *o, struct kube_meta *m, char *why, size_t why_size, const char *where)
{
	char at[48];
	json_object *meta;
	snprintf(at, sizeof(at), "%smetadata.", where);
	if (!json_object_object_get_ex(o, "metadata", &meta) || !json_object_is_type(meta, json_type_object))
		return why_fail(why, why_size, -EBADMSG, "%smetadata is missing or not an object", where);
	*m = (struct kube_meta){ 0 };
	int r = kube_json_string(meta, "name", m->name, sizeof(m->name), why, why_size, at);
	if (r == -ENOENT)
		r = why_fail(why, why_size, -EBADMSG, "%sname is missing", at);
	if (r < 0)
		return r;
	r = kube_json_string(meta, "uid", m->uid, sizeof(m->uid), why, why_size, at);
	if (r == -ENOENT)
		r = why_fail(why, why_size, -EBADMSG, "%suid is missing", at);
	if (r < 0)
		return r;
	r = kube_json_string(meta, "resourceVersion", m->resource_version, sizeof(m->resource_version), why, why_size,
			     at);
	if (r == -ENOENT)
		r = why_fail(why, why_size, -EBADMSG, "%sresourceVersion is missing", at);
	return r;
}

int kube_parse_meta(const char *body, size_t len, struct kube_meta *ret_meta, char *why, size_t why_size)
{
	json_object *o;
	struct kube_meta m;
	int r = kube_json_parse(body, len, &o, why, why_size);
	if (r < 0)
		return r;
	r = meta_of(o, &m, why, why_size, "");
	json_object_put(o);
	if (r == 0)
		*ret_meta = m;
	return r;
}

int kube_slice_item_of(json_object *slice, struct kube_slice_item *ret_item, char *why, size_t why_size,
		       const char *where)
{
	json_object *spec, *pool, *gen;
	struct kube_slice_item item;
	if (!json_object_is_type(slice, json_type_object))
		return why_fail(why, why_size, -EBADMSG, "%s: not an object", where[0] ? where : "the slice");
	int r = meta_of(slice, &item.meta, why, why_size, where);
	if (r < 0)
		return r;
	if (!json_object_object_get_ex(slice, "spec", &spec) || !json_object_is_type(spec, json_type_object) ||
	    !json_object_object_get_ex(spec, "pool", &pool) || !json_object_is_type(pool, json_type_object) ||
	    !json_object_object_get_ex(pool, "generation", &gen) || !json_object_is_type(gen, json_type_int))
		return why_fail(why, why_size, -EBADMSG, "%sspec.pool.generation is missing or not an integer", where);
	item.generation = json_object_get_int64(gen);
	*ret_item = item;
	return 0;
}

int kube_parse_slice_list(const char *body, size_t len, struct kube_slice_list *ret_list, char *why,
			  size_t why_size)
{
	json_object *o, *items, *meta;
	char version[KUBE_META_VERSION_MAX] = "";
	int r = kube_json_parse(body, len, &o, why, why_size);
	if (r < 0)
		return r;
	/* The answer can be big: build it in place only on success. */
	struct kube_slice_item tmp[KUBE_LIST_MAX_ITEMS];
	size_t n = 0;
	if (!json_object_object_get_ex(o, "items", &items) || json_object_is_type(items, json_type_null)) {
		/* An empty list may come without items. */
		r = 0;
		goto out;
	}
	if (!json_object_is_type(items, json_type_array)) {
		r = why_fail(why, why_size, -EBADMSG, "items is not a list");
		goto out;
	}
	n = json_object_array_length(items);
	if (n > KUBE_LIST_MAX_ITEMS) {
		r = why_fail(why, why_size, -E2BIG, "%zu slices listed, more than %d", n, KUBE_LIST_MAX_ITEMS);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		char where[32];
		json_object *item = json_object_array_get_idx(items, i);
		snprintf(where, sizeof(where), "items[%zu].", i);
		if (!json_object_is_type(item, json_type_object)) {
			r = why_fail(why, why_size, -EBADMSG, "items[%zu] is not an object", i);
			goto out;
		}
		r = kube_slice_item_of(item, &tmp[i], why, why_size, where);
		if (r < 0)
			goto out;
	}
	r = 0;
out:
	/* Where a watch of the same selection starts; a list without one
	 * (the server's always has it) leaves it "". */
	if (r == 0 && json_object_object_get_ex(o, "metadata", &meta) && json_object_is_type(meta, json_type_object)) {
		r = kube_json_string(meta, "resourceVersion", version, sizeof(version), why, why_size, "metadata.");
		if (r == -ENOENT)
			r = 0;
	}
	json_object_put(o);
	if (r == 0) {
		ret_list->count = n;
		memcpy(ret_list->items, tmp, n * sizeof(tmp[0]));
		memcpy(ret_list->resource_version, version, sizeof(version));
	}
	return r;
}

static void sanitized(const char *s, size_t len, char *out, size_t size)
{
	size_t o = 0;
	for (size_t i = 0; i < len && o + 1 < size; i++) {
		unsigned char ch = (unsigned char)s[i];
		out[o++] = ch < ' ' || ch == 0x7f ? ' ' : (char)ch;
	}
	out[o] = '\0';
}

void kube_status_message(const char *body, size_t len, char *out, size_t size)
{
	json_object *o, *msg;
	if (size == 0)
		return;
	out[0] = '\0';
	if (!body || len == 0)
		return;
	if (kube_json_parse(body, len, &o, NULL, 0) == 0) {
		if (json_object_object_get_ex(o, "message", &msg) && json_object_is_type(msg, json_type_string)) {
			sanitized(json_object_get_string(msg), (size_t)json_object_get_string_len(msg), out, size);
			json_object_put(o);
			return;
		}
		json_object_put(o);
	}
	sanitized(body, len, out, size);
}
