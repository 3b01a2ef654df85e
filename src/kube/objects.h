/* SPDX-License-Identifier: Apache-2.0 */
/* Reading what the API server answers, as far as this project needs it: an
 * object's metadata (a Node's uid, a slice's resourceVersion), a list of
 * ResourceSlices, and the message of a Status (the body of an error). The
 * body is the server's, so each reader takes any bytes: it parses them with
 * json-c (nesting bounded), checks every type it reads, and fails with
 * -EBADMSG and a cause rather than guessing. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

/* An object's name (a DNS subdomain), uid and resourceVersion, terminators included. */
#define KUBE_META_NAME_MAX 254
#define KUBE_META_UID_MAX 64
#define KUBE_META_VERSION_MAX 64
/* A node's slices of one driver: far more than a node of NPU_MAX_CHIPS
 * chips and NPU_MAX_VNPUS vNPUs makes at 64 devices per slice. */
#define KUBE_LIST_MAX_ITEMS 64
/* JSON nesting accepted from the server: a ResourceSlice is about 8 deep. */
#define KUBE_JSON_MAX_DEPTH 32

struct kube_meta {
	char name[KUBE_META_NAME_MAX];
	char uid[KUBE_META_UID_MAX];
	char resource_version[KUBE_META_VERSION_MAX];
};

struct kube_slice_item {
	struct kube_meta meta;
	int64_t generation; /* spec.pool.generation */
};

struct kube_slice_list {
	char resource_version[KUBE_META_VERSION_MAX]; /* the list's: a watch starts there ("": none said) */
	size_t count;
	struct kube_slice_item items[KUBE_LIST_MAX_ITEMS];
};

/* Parses len bytes as one JSON object (nothing but whitespace after it).
 * Returns 0 with *ret_object (the caller puts it), -EBADMSG (not JSON, not
 * an object, too deep) with why said, or -ENOMEM. */
int kube_json_parse(const char *body, size_t len, json_object **ret_object, char *why, size_t why_size);

/* o's string member key into out[size] (terminator included). Returns 0,
 * -ENOENT when it is absent or null, or -EBADMSG with why said (naming it
 * after where, "metadata." say) when it is not a string, does not fit or
 * holds a NUL. */
int kube_json_string(json_object *o, const char *key, char *out, size_t size, char *why, size_t why_size,
		     const char *where);

/* metadata.name, .uid and .resourceVersion of one object; each must be a
 * string that fits, uid and resourceVersion must be there. */
int kube_parse_meta(const char *body, size_t len, struct kube_meta *ret_meta, char *why, size_t why_size);

/* One ResourceSlice object (a list's item, a watch event's object): its
 * metadata and spec.pool.generation, where prefixing the members named in
 * why ("items[3]." say, or ""). */
int kube_slice_item_of(json_object *slice, struct kube_slice_item *ret_item, char *why, size_t why_size,
		       const char *where);

/* A ResourceSliceList: each item's metadata and spec.pool.generation, and
 * the list's metadata.resourceVersion. -E2BIG beyond KUBE_LIST_MAX_ITEMS
 * items. */
int kube_parse_slice_list(const char *body, size_t len, struct kube_slice_list *ret_list, char *why,
			  size_t why_size);

/* The "message" of a Status body, else the body's start with control
 * characters replaced, cut to fit out[size]; "" for an empty body. */
void kube_status_message(const char *body, size_t len, char *out, size_t size);
