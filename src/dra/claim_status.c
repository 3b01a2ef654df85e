/* SPDX-License-Identifier: Apache-2.0 */
#include "dra/claim_status.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/json_put.h"
#include "node/device_metadata.h"
#include "node/visible.h"

static bool has_identity(const struct npu_device *d)
{
	return d->kind == NPU_DEVICE_CHIP && (d->net.has_ip || d->net.has_super_pod);
}

/* One chip's entry of status.devices. */
static void put_device(struct json_put *b, json_object *devices, const char *driver, const char *pool,
		       const struct npu_device *d)
{
	json_object *o = json_put(b, devices, NULL, json_object_new_object());
	json_put_string(b, o, "driver", driver);
	json_put_string(b, o, "pool", pool);
	json_put_string(b, o, "device", d->id);
	json_object *data = visible_network_entry(d);
	if (!data)
		b->failed = true;
	json_put(b, o, "data", data);
	device_metadata_put_network_data(b, o, d);
}

int dra_claim_status_body(const char *driver, const char *pool, const char *ns, const char *name, const char *uid,
			  const struct npu_device *const *devs, size_t n, char **ret_body)
{
	bool any = false;
	for (size_t i = 0; i < n; i++)
		any |= has_identity(devs[i]);
	if (!any)
		return -ENODATA;
	struct json_put b = { 0 };
	json_object *root = json_object_new_object();
	json_put_string(&b, root, "apiVersion", "resource.k8s.io/v1");
	json_put_string(&b, root, "kind", "ResourceClaim");
	json_object *meta = json_put(&b, root, "metadata", json_object_new_object());
	json_put_string(&b, meta, "name", name);
	json_put_string(&b, meta, "namespace", ns);
	json_put_string(&b, meta, "uid", uid);
	json_object *status = json_put(&b, root, "status", json_object_new_object());
	json_object *devices = json_put(&b, status, "devices", json_object_new_array());
	for (size_t i = 0; i < n; i++)
		if (has_identity(devs[i]))
			put_device(&b, devices, driver, pool, devs[i]);
	char *body = NULL;
	/* YAML, which an apply's body is read as, knows no "\/" escape. */
	if (root && !b.failed) {
		const char *text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
		body = text ? strdup(text) : NULL;
	}
	json_object_put(root);
	if (!body)
		return -ENOMEM;
	*ret_body = body;
	return 0;
}
