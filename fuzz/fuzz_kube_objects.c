/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes the readers of the API server's answers (kube/objects.c): the input
 * is a response body, read as a ResourceSliceList, as one object's metadata
 * and for a Status message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/objects.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *body = (const char *)data;
	static struct kube_slice_list list;
	struct kube_meta meta;
	char why[256] = "", msg[160];
	list.count = 12345;
	if (kube_parse_slice_list(body, size, &list, why, sizeof(why)) < 0) {
		if (why[0] == '\0' || list.count != 12345)
			abort();
	} else {
		if (list.count > KUBE_LIST_MAX_ITEMS)
			abort();
		for (size_t i = 0; i < list.count; i++)
			if (!memchr(list.items[i].meta.name, '\0', KUBE_META_NAME_MAX) ||
			    !memchr(list.items[i].meta.resource_version, '\0', KUBE_META_VERSION_MAX))
				abort();
	}
	why[0] = '\0';
	if (kube_parse_meta(body, size, &meta, why, sizeof(why)) < 0 && why[0] == '\0')
		abort();
	kube_status_message(body, size, msg, sizeof(msg));
	if (strlen(msg) >= sizeof(msg))
		abort();
	for (const char *p = msg; *p; p++)
		if ((unsigned char)*p < ' ')
			abort(); /* a message goes into one log line */
	return 0;
}
