/* SPDX-License-Identifier: Apache-2.0 */
#include "dra/metadata.h"

#include <errno.h>
#include <stdbool.h>

#include "base/parse.h"

int dra_metadata_render(const char *driver, const struct dra_prepared *p, const char *request,
			const struct device_metadata_device *devs, size_t n, char **ret_json)
{
	const struct device_metadata_owner owner = {
		.name = p->name, .namespace = p->namespace, .uid = p->uid, .pod_claim = p->pod_claim
	};
	return device_metadata_render(driver, &owner, request, devs, n, ret_json);
}

int dra_metadata_container_path(const char *driver, const struct dra_prepared *p, const char *request, char *buf,
				size_t size)
{
	bool from_template = p->pod_claim[0] != '\0';
	return str_printf(buf, size, "%s/%s/%s/%s/%s-metadata.json", DRA_METADATA_CONTAINER_DIR,
			  from_template ? "resourceclaimtemplates" : "resourceclaims", from_template ? p->pod_claim : p->name,
			  request, driver) < 0
		       ? -ENAMETOOLONG
		       : 0;
}
