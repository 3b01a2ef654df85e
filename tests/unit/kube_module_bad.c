/* SPDX-License-Identifier: Apache-2.0 */
/* A stand-in for libascend-kube.so whose table is wrong in the way
 * $KUBE_MODULE_BAD says (version, size, layout, build, function, none), so
 * that test_kube_module sees the loader refuse each with its cause. */
#include <stdlib.h>
#include <string.h>

#include "kube/module.h"

static void stop(struct kube_publisher *publisher)
{
	(void)publisher;
}

__attribute__((visibility("default"))) const struct kube_module_api *ascend_kube_module_v1(void);

const struct kube_module_api *ascend_kube_module_v1(void)
{
	static struct kube_module_api api;
	const char *bad = getenv("KUBE_MODULE_BAD");
	bad = bad ? bad : "";
	api = (struct kube_module_api){
		.version = KUBE_MODULE_API_VERSION,
		.size = sizeof(api),
		.layout = KUBE_MODULE_LAYOUT,
		.build_version = ASCEND_VERSION,
		/* Every function but the last is missing unless the table is
		 * otherwise wrong: the checks before it come first. */
		.publisher_stop = stop,
	};
	if (strcmp(bad, "none") == 0)
		return NULL;
	if (strcmp(bad, "version") == 0)
		api.version = KUBE_MODULE_API_VERSION + 1;
	else if (strcmp(bad, "size") == 0)
		api.size = (uint32_t)(sizeof(api) - sizeof(void (*)(void)));
	else if (strcmp(bad, "layout") == 0)
		api.layout.snapshot++;
	else if (strcmp(bad, "build") == 0)
		api.build_version = "0.0.1";
	return &api;
}
