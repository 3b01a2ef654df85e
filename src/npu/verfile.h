/* SPDX-License-Identifier: Apache-2.0 */
/* Readers of the Ascend version files, pure (no I/O): the driver's and the
 * firmware's version.info, CANN's ascend_toolkit_install.info and
 * /etc/ascend_install.info are all `key=value` lines; their compatibility
 * fields are lists of bracketed items, either release prefixes
 * (`[V100R001C15],[V100R001C17]`) or version ranges
 * (`[7.0.0,7.2.99]`, `[23.0.rc3,23.0.rc3.]`). Every function returns 0 or a
 * negative errno and writes its outputs only on success. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Version files are small; a larger one is not a version file. */
#define VERFILE_MAX_BYTES 65536
/* At most this many items in a compatibility list. */
#define VERLIST_MAX_ITEMS 256

/* The value of key in text[len]: the first line whose key equals key
 * (ASCII case-insensitively; spaces around key and value are dropped; a
 * CR before the newline too). -ENOENT when no line has it, -ENAMETOOLONG
 * when the value does not fit value[size], -EINVAL when it holds control
 * characters or text holds a NUL byte. */
int verfile_get(const char *text, size_t len, const char *key, char *value, size_t size);

/* Orders two dotted versions ("24.1.rc1", "7.1.0.11.220") component by
 * component: numbers numerically, a number after a word ("0" > "rc3", a
 * release after its candidates), words by their letters then their number;
 * a version with more components after equal ones is the greater. <0, 0, >0. */
int version_compare(const char *a, const char *b);

/* Whether version lies in one of the ranges of list, each `[low,high]`
 * (both inclusive); a high bound ending in "." covers every version that
 * starts with it ("23.0.rc3." covers 23.0.rc3.1). -EINVAL when list is not
 * such a list (empty, unbalanced, more than VERLIST_MAX_ITEMS). */
int verrange_contains(const char *list, const char *version, bool *ret_contains);

/* Whether one item of a `[A],[B]` list is a prefix of value (non-empty
 * items only). -EINVAL for a malformed list as above. */
int verlist_has_prefix_of(const char *list, const char *value, bool *ret_contains);

/* The release of an Innerversion: up to the C part, "V100R001C15SPC006B220"
 * -> "V100R001C15". -EINVAL when it does not start with V<d>R<d>C<d>,
 * -ENAMETOOLONG when it does not fit. */
int innerversion_release(const char *innerversion, char *release, size_t size);
