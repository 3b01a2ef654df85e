/* SPDX-License-Identifier: Apache-2.0 */
/* Building a JSON document with json-c without a check at every field: the
 * first failure (json-c runs out of memory) sticks in the builder, every
 * later step does nothing, and the caller judges the whole document once, at
 * the end, rather than writing one with nulls where values went missing.
 * Header-only, so that ascend_base itself does not need json-c: only the
 * modules that include it do. */
#pragma once

#include <stdbool.h>

#include <json-c/json.h>

struct json_put {
	bool failed;
};

/* Adds value to parent under key, or appends it to the array parent when key
 * is NULL, taking value's ownership either way (json-c leaves it to the
 * caller when adding fails). Returns value, or NULL once anything failed. */
static inline json_object *json_put(struct json_put *b, json_object *parent, const char *key, json_object *value)
{
	if (!b->failed && parent && value &&
	    (key ? json_object_object_add(parent, key, value) : json_object_array_add(parent, value)) == 0)
		return value;
	b->failed = true;
	json_object_put(value);
	return NULL;
}

static inline json_object *json_put_string(struct json_put *b, json_object *parent, const char *key, const char *s)
{
	return json_put(b, parent, key, json_object_new_string(s));
}
