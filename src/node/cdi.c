/* SPDX-License-Identifier: Apache-2.0 */
#include "node/cdi.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <json-c/json.h>

#include "base/file.h"
#include "base/json_put.h"
#include "base/macro.h"
#include "base/parse.h"
#include "node/status_files.h"
#include "node/visible.h"

/* The kubelet's DeviceSpecs ask for "rw" too: no mknod inside. */
#define NODE_PERMISSIONS "rw"
/* Read-only bind mounts, as the kubelet's read-only mounts become in
 * containerd (rbind, rprivate, ro), with nosuid and nodev besides: nothing
 * under the driver paths needs either. */
static const char *const mount_options[] = { "ro", "nosuid", "nodev", "rbind", "rprivate" };

/* Shared nodes of every family together stay well under this. */
#define SHARED_SEEN_MAX 48
#define SHARED_NAME_MAX 40

static bool is_letter(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

int cdi_names_from_resource(const char *resource_name, struct cdi_names *ret_names, char *why, size_t why_size)
{
	struct cdi_names n = { .version = "0.5.0" };
	const char *slash = strchr(resource_name, '/');
	if (!slash || slash == resource_name || slash[1] == '\0') {
		snprintf(why, why_size, "'%s' is not <vendor>/<class>", resource_name);
		return -EINVAL;
	}
	int vendor_len = (int)(slash - resource_name);
	const char *class = slash + 1;

	/* The extended resource name rules already hold the characters and the
	 * last ones to what CDI accepts; CDI wants a letter first as well. */
	if (!is_letter(resource_name[0]) || !is_letter(class[0])) {
		snprintf(why, why_size, "CDI wants the vendor ('%.*s') and the class ('%s') to start with a letter",
			 vendor_len, resource_name, class);
		return -EINVAL;
	}
	if (str_copy(n.kind, sizeof(n.kind), resource_name) < 0 ||
	    str_printf(n.file_name, sizeof(n.file_name), "%.*s-%s.json", vendor_len, resource_name, class) < 0) {
		snprintf(why, why_size, "'%s' is too long for a CDI kind", resource_name);
		return -EINVAL;
	}
	/* The form of the CDI library's AnnotationKey(vendor, class): one key
	 * per resource, so that two plugins' annotations never collide. */
	if (str_printf(n.annotation_key, sizeof(n.annotation_key), CDI_ANNOTATION_PREFIX "%.*s_%s", vendor_len,
		       resource_name, class) < 0) {
		snprintf(why, why_size,
			 "the CDI annotation key " CDI_ANNOTATION_PREFIX "%.*s_%s would be longer than 63 characters "
			 "after the prefix",
			 vendor_len, resource_name, class);
		return -EINVAL;
	}
	/* The lowest version that expresses the spec: mounts[].type needs
	 * 0.4.0; device names starting with a digit and deviceNodes[].hostPath
	 * need 0.5.0 (every spec here has both); a '.' in the class needs 0.6.0. */
	if (strchr(class, '.'))
		n.version = "0.6.0";
	*ret_names = n;
	return 0;
}

/* --- rendering ----------------------------------------------------------- */

struct builder {
	struct json_put json;
	const struct host_paths *paths;
	json_object *shared_nodes;
	json_object *mounts;
	char seen[SHARED_SEEN_MAX][SHARED_NAME_MAX]; /* container names of the shared nodes so far */
	size_t n_seen;
};

/* A device node: /dev/<name> on the host, /dev/<container_name> inside. */
static void put_node(struct builder *b, json_object *nodes, const char *name, const char *container_name)
{
	char host[SHARED_NAME_MAX + 8], container[SHARED_NAME_MAX + 8], at[4200];
	json_object *node = json_put(&b->json, nodes, NULL, json_object_new_object());
	if (str_printf(host, sizeof(host), "/dev/%s", name) < 0 ||
	    str_printf(container, sizeof(container), "/dev/%s", container_name) < 0) {
		b->json.failed = true;
		return;
	}
	json_put_string(&b->json, node, "path", container);
	json_put_string(&b->json, node, "hostPath", host);

	/* With type and numbers given, the runtime uses them as they are; without,
	 * it stat()s hostPath itself when the container is created. */
	struct stat st;
	if (path_join(at, sizeof(at), b->paths->dev_dir, name) == 0 && stat(at, &st) == 0 && S_ISCHR(st.st_mode)) {
		json_put_string(&b->json, node, "type", "c");
		json_put(&b->json, node, "major", json_object_new_int64((int64_t)major(st.st_rdev)));
		json_put(&b->json, node, "minor", json_object_new_int64((int64_t)minor(st.st_rdev)));
		/* JSON has no octal: 0660 is written 432. */
		json_put(&b->json, node, "fileMode", json_object_new_int64((int64_t)(st.st_mode & 0777)));
	}
	json_put_string(&b->json, node, "permissions", NODE_PERMISSIONS);
}

static void on_shared_node(struct builder *b, const char *name, const char *container_name)
{
	/* Two families on one node share most names: each node once. */
	for (size_t i = 0; i < b->n_seen; i++)
		if (strcmp(b->seen[i], container_name) == 0)
			return;
	if (b->n_seen < SHARED_SEEN_MAX && str_copy(b->seen[b->n_seen], SHARED_NAME_MAX, container_name) == 0)
		b->n_seen++;
	put_node(b, b->shared_nodes, name, container_name);
}

static void put_mount(struct builder *b, json_object *mounts, const char *host_path, const char *container_path)
{
	json_object *mount = json_put(&b->json, mounts, NULL, json_object_new_object());
	json_put_string(&b->json, mount, "hostPath", host_path);
	json_put_string(&b->json, mount, "containerPath", container_path);
	json_put_string(&b->json, mount, "type", "bind");
	json_object *options = json_put(&b->json, mount, "options", json_object_new_array());
	for (size_t i = 0; i < ELEMENTSOF(mount_options); i++)
		json_put_string(&b->json, options, NULL, mount_options[i]);
}

static void on_mount(struct builder *b, const char *host_path)
{
	put_mount(b, b->mounts, host_path, host_path);
}

/* Adds the array under key when it holds something; drops it otherwise. */
static void put_unless_empty(struct builder *b, json_object *parent, const char *key, json_object *array)
{
	if (array && json_object_array_length(array) == 0) {
		json_object_put(array);
		return;
	}
	json_put(&b->json, parent, key, array);
}

/* Edits for any device of the spec: the shared nodes of the devices'
 * families (each family once) and the driver paths. */
static void put_spec_edits(struct builder *b, json_object *root, const struct npu_device *const *devs, size_t n,
			   const struct host_files *files)
{
	json_object *edits = json_object_new_object();
	b->shared_nodes = json_object_new_array();
	b->mounts = json_object_new_array();
	enum npu_family families[HOST_FILES_FAMILIES];
	size_t n_families = host_files_families(devs, n, families);
	for (size_t f = 0; f < n_families; f++) {
		size_t count;
		const struct host_node *nodes = host_files_nodes(files, families[f], &count);
		for (size_t k = 0; k < count; k++) /* both "/dev/<name>" */
			on_shared_node(b, nodes[k].host + strlen("/dev/"), nodes[k].container + strlen("/dev/"));
	}
	for (size_t i = 0; i < files->n_mounts; i++)
		on_mount(b, files->mounts[i]);
	put_unless_empty(b, edits, "deviceNodes", b->shared_nodes);
	put_unless_empty(b, edits, "mounts", b->mounts);
	if (edits && json_object_object_length(edits) == 0)
		json_object_put(edits);
	else
		json_put(&b->json, root, "containerEdits", edits);
}

/* The device's own node, /dev/davinci<n> inside the container. */
static void put_device_node(struct builder *b, json_object *nodes, const struct npu_device *d)
{
	char node[24], container_node[24];
	uint32_t n = npu_device_number(d);
	snprintf(node, sizeof(node), "%s%u", npu_device_node_prefix(d), n);
	snprintf(container_node, sizeof(container_node), "davinci%u", n);
	put_node(b, nodes, node, container_node);
}

/* Renders the spec whose devices put_devices adds, then the spec-wide edits
 * for devs, as the text *ret_json. */
typedef void put_devices_fn(struct builder *b, json_object *devices, const void *what);

static int render(const struct cdi_names *names, put_devices_fn *put_devices, const void *what,
		  const struct npu_device *const *devs, size_t n, const struct host_paths *paths,
		  const struct host_files *files, char **ret_json)
{
	static const struct host_files no_files; /* none scanned yet (out of memory) */
	if (!files)
		files = &no_files;
	struct builder *b = calloc(1, sizeof(*b));
	json_object *root = json_object_new_object();
	char *json = NULL;
	int r = -ENOMEM;
	if (!b || !root)
		goto out;
	b->paths = paths;

	json_put_string(&b->json, root, "cdiVersion", names->version);
	json_put_string(&b->json, root, "kind", names->kind);
	json_object *devices = json_put(&b->json, root, "devices", json_object_new_array());
	put_devices(b, devices, what);
	put_spec_edits(b, root, devs, n, files);
	if (b->json.failed)
		goto out;

	const char *text = json_object_to_json_string_ext(
		root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
	size_t len = text ? strlen(text) : 0;
	json = text ? malloc(len + 2) : NULL;
	if (!json)
		goto out;
	memcpy(json, text, len);
	memcpy(json + len, "\n", 2);
	*ret_json = json;
	r = 0;
out:
	json_object_put(root);
	free(b);
	return r;
}

/* One CDI device per device of the snapshot, named by its number. */
static void put_snapshot_devices(struct builder *b, json_object *devices, const void *what)
{
	const struct npu_snapshot *snap = what;
	for (size_t i = 0; i < snap->count; i++) {
		const struct npu_device *d = &snap->devices[i];
		char name[24];
		snprintf(name, sizeof(name), "%s%u", d->kind == NPU_DEVICE_VNPU ? "vnpu-" : "", npu_device_number(d));
		json_object *device = json_put(&b->json, devices, NULL, json_object_new_object());
		json_put_string(&b->json, device, "name", name);
		json_object *edits = json_put(&b->json, device, "containerEdits", json_object_new_object());
		json_object *nodes = json_put(&b->json, edits, "deviceNodes", json_object_new_array());
		put_device_node(b, nodes, d);
	}
}

int cdi_spec_render(const struct cdi_names *names, const struct npu_snapshot *snap, const struct host_paths *paths,
		    const struct host_files *files, char **ret_json)
{
	if (snap->count == 0)
		return -EINVAL;
	const struct npu_device **devs = calloc(snap->count, sizeof(*devs));
	if (!devs)
		return -ENOMEM;
	for (size_t i = 0; i < snap->count; i++)
		devs[i] = &snap->devices[i];
	int r = render(names, put_snapshot_devices, snap, devs, snap->count, paths, files, ret_json);
	free(devs);
	return r;
}

/* One CDI device for the whole group: every device's node, and the
 * environment Allocate gives (node/visible.h): ASCEND_VISIBLE_DEVICES
 * listing their numbers and, for vNPUs, ASCEND_RUNTIME_OPTIONS=VIRTUAL, as
 * a node with the Ascend Docker Runtime still runs it on the spec's env;
 * ASCEND_NPU_NETWORK where the chips have a network identity. */
static void put_group_device(struct builder *b, json_object *devices, const void *what)
{
	const struct cdi_group *g = what;
	json_object *device = json_put(&b->json, devices, NULL, json_object_new_object());
	json_put_string(&b->json, device, "name", g->name);
	json_object *edits = json_put(&b->json, device, "containerEdits", json_object_new_object());
	json_object *nodes = json_put(&b->json, edits, "deviceNodes", json_object_new_array());
	for (size_t i = 0; i < g->n_devices; i++)
		put_device_node(b, nodes, g->devices[i]);
	char visible[sizeof(VISIBLE_DEVICES_ENV "=") + CDI_GROUP_MAX * VISIBLE_NUMBER_MAX];
	size_t prefix = strlen(VISIBLE_DEVICES_ENV "=");
	memcpy(visible, VISIBLE_DEVICES_ENV "=", prefix);
	(void)visible_devices(g->devices, g->n_devices, visible + prefix, sizeof(visible) - prefix); /* sized for it */
	json_object *env = json_put(&b->json, edits, "env", json_object_new_array());
	json_put_string(&b->json, env, NULL, visible);
	char logical[sizeof(VISIBLE_RUNTIME_ENV "=") + CDI_GROUP_MAX * VISIBLE_NUMBER_MAX];
	prefix = strlen(VISIBLE_RUNTIME_ENV "=");
	memcpy(logical, VISIBLE_RUNTIME_ENV "=", prefix);
	(void)visible_logical(g->n_devices, logical + prefix, sizeof(logical) - prefix); /* sized for it */
	json_put_string(&b->json, env, NULL, logical);
	json_object *mounts = g->status_host_dir || g->n_mounts
				      ? json_put(&b->json, edits, "mounts", json_object_new_array())
				      : NULL;
	if (g->status_host_dir) {
		char *kv = NULL;
		if (asprintf(&kv, "%s=%s/%s", STATUS_ENV, g->status_container_dir, STATUS_FILE_NAME) < 0)
			b->json.failed = true;
		else
			json_put_string(&b->json, env, NULL, kv);
		free(kv);
		put_mount(b, mounts, g->status_host_dir, g->status_container_dir);
	}
	for (size_t i = 0; i < g->n_mounts; i++)
		put_mount(b, mounts, g->mounts[i].host_path, g->mounts[i].container_path);
	if (visible_virtual(g->devices, g->n_devices))
		json_put_string(&b->json, env, NULL, VISIBLE_OPTIONS_ENV "=" VISIBLE_OPTIONS_VIRTUAL);
	char *network = NULL;
	int r = visible_network(g->devices, g->n_devices, &network);
	if (r == 0) {
		char *kv = NULL;
		if (asprintf(&kv, "%s=%s", VISIBLE_NETWORK_ENV, network) < 0)
			b->json.failed = true;
		else
			json_put_string(&b->json, env, NULL, kv);
		free(kv);
	} else if (r != -ENODATA) {
		b->json.failed = true;
	}
	free(network);
	for (size_t i = 0; i < g->n_parts; i++) {
		json_object *part = json_put(&b->json, devices, NULL, json_object_new_object());
		json_put_string(&b->json, part, "name", g->parts[i].name);
		json_object *part_edits = json_put(&b->json, part, "containerEdits", json_object_new_object());
		put_device_node(b, json_put(&b->json, part_edits, "deviceNodes", json_object_new_array()),
				g->parts[i].device);
	}
}

int cdi_group_spec_render(const struct cdi_names *names, const struct cdi_group *group,
			  const struct host_paths *paths, const struct host_files *files, char **ret_json)
{
	if (group->n_devices == 0 || group->n_devices > CDI_GROUP_MAX || !group->name[0] ||
	    group->n_parts > CDI_GROUP_MAX)
		return -EINVAL;
	for (size_t i = 0; i < group->n_parts; i++)
		if (!group->parts[i].name || !group->parts[i].name[0] || !group->parts[i].device)
			return -EINVAL;
	return render(names, put_group_device, group, group->devices, group->n_devices, paths, files, ret_json);
}

/* --- the file ----------------------------------------------------------------- */

int cdi_spec_write(const char *dir, const char *file_name, const char *json)
{
	char path[PATH_MAX];
	int r = path_join(path, sizeof(path), dir, file_name);
	if (r < 0)
		return r;
	/* The temp file's name does not end in .json or .yaml: runtimes never
	 * load a half-written spec. Not synced: a spec is derived data, written
	 * anew at every start (the device plugin's from the inventory, a DRA
	 * claim's from the driver's checkpoint), and usually on tmpfs anyway
	 * (/var/run/cdi), so an fsync would only slow a prepare down. */
	return file_write_atomic(path, json, strlen(json), 0644, 0);
}

int cdi_spec_remove(const char *dir, const char *file_name)
{
	char path[PATH_MAX];
	int r = path_join(path, sizeof(path), dir, file_name);
	if (r < 0)
		return r;
	return file_remove_atomic(path);
}
