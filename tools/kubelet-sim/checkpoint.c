/* SPDX-License-Identifier: Apache-2.0 */
/* The kubelet_internal_checkpoint file; see checkpoint.h. */
#include "checkpoint.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/file.h"
#include "base/json_put.h"
#include "base/parse.h"

#define CHECKPOINT_NAME "kubelet_internal_checkpoint"

bool checkpoint_exists(const struct sim *sim)
{
	char path[SIM_PATH_MAX];
	return path_join(path, sizeof(path), sim->dir, CHECKPOINT_NAME) == 0 && path_exists(path);
}

/* Standard base64 with padding, as Go's encoding/json writes a []byte, as
 * a JSON string; NULL without memory. */
static json_object *base64_string(const uint8_t *data, size_t len)
{
	static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t out_len = (len + 2) / 3 * 4;
	char *out = malloc(out_len + 1);
	if (!out)
		return NULL;
	char *o = out;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)data[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)data[i + 1] << 8;
		if (i + 2 < len)
			v |= data[i + 2];
		*o++ = alphabet[(v >> 18) & 63];
		*o++ = alphabet[(v >> 12) & 63];
		*o++ = i + 1 < len ? alphabet[(v >> 6) & 63] : '=';
		*o++ = i + 2 < len ? alphabet[v & 63] : '=';
	}
	json_object *s = json_object_new_string_len(out, (int)out_len);
	free(out);
	return s;
}

/* One pod device entry per allocation, in the kubelet's field names: the
 * simulated pod and container, the device IDs under NUMA node "-1" (none
 * known), and the packed AllocateResponse. */
static void put_entry(struct json_put *b, json_object *entries, const struct sim_resource *res,
		      const struct sim_allocation *alloc)
{
	char pod[48], container[48];
	snprintf(pod, sizeof(pod), "kubelet-sim-pod-%lu", alloc->serial);
	snprintf(container, sizeof(container), "container-%lu", alloc->serial);
	json_object *entry = json_put(b, entries, NULL, json_object_new_object());
	json_put_string(b, entry, "PodUID", pod);
	json_put_string(b, entry, "ContainerName", container);
	json_put_string(b, entry, "ResourceName", res->name);
	json_object *numa = json_put(b, entry, "DeviceIDs", json_object_new_object());
	json_object *ids = json_put(b, numa, "-1", json_object_new_array());
	for (size_t i = 0; i < alloc->n_ids; i++)
		json_put_string(b, ids, NULL, alloc->ids[i]);
	json_put(b, entry, "AllocResp", base64_string(alloc->response, alloc->response_len));
}

/* The document as the kubelet's checkpoint manager writes it, one line, or
 * NULL without memory. */
static json_object *checkpoint_document(const struct sim *sim)
{
	struct json_put b = { 0 };
	json_object *root = json_object_new_object();
	json_object *data = json_put(&b, root, "Data", json_object_new_object());
	json_object *entries = json_put(&b, data, "PodDeviceEntries", json_object_new_array());
	for (size_t i = 0; i < sim->n_resources; i++)
		for (size_t j = 0; j < sim->resources[i].n_allocs; j++)
			put_entry(&b, entries, &sim->resources[i], &sim->resources[i].allocs[j]);
	json_object *registered = json_put(&b, data, "RegisteredDevices", json_object_new_object());
	for (size_t i = 0; i < sim->n_resources; i++) {
		const struct sim_resource *res = &sim->resources[i];
		json_object *ids = json_put(&b, registered, res->name, json_object_new_array());
		for (size_t j = 0; j < res->n_devices; j++)
			json_put_string(&b, ids, NULL, res->devices[j].id);
	}
	json_put(&b, root, "Checksum", json_object_new_int(0));
	if (b.failed) {
		json_object_put(root);
		return NULL;
	}
	return root;
}

int checkpoint_write(const struct sim *sim)
{
	char path[SIM_PATH_MAX];
	int r = path_join(path, sizeof(path), sim->dir, CHECKPOINT_NAME);
	if (r < 0)
		return r;
	json_object *doc = checkpoint_document(sim);
	if (!doc)
		return -ENOMEM;
	r = -ENOMEM;
	const char *text = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	char *line = NULL;
	if (text && asprintf(&line, "%s\n", text) >= 0) {
		/* Not synced: readers need a whole file, not durability. */
		r = file_write_atomic(path, line, strlen(line), 0644, 0);
	}
	free(line);
	json_object_put(doc);
	return r;
}
