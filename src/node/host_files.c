/* SPDX-License-Identifier: Apache-2.0 */
#include "node/host_files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "base/parse.h"
#include "base/refcount.h"
#include "base/strbuf.h"
#include "npu/inventory.h"

/* Driver paths a container needs read-only; "<driver>" is the driver path. */
static const struct {
	bool under_driver;
	const char *path;
} driver_mounts[HOST_FILES_MAX_MOUNTS] = {
	{ true, "lib64" },
	{ true, "include" },
	{ true, "version.info" },
	{ false, "/usr/local/dcmi" },
	{ false, "/usr/local/bin/npu-smi" },
	{ false, "/etc/ascend_install.info" },
};

#define MANAGER_DOCKER "davinci_manager_docker"

static bool exists_in(const char *dir, const char *name)
{
	char path[4200];
	return path_join(path, sizeof(path), dir, name) == 0 && path_exists(path);
}

static void add_node(struct host_files *f, size_t family, const char *name, const char *container_name)
{
	if (f->n_nodes[family] == HOST_FILES_MAX_NODES)
		return;
	struct host_node *node = &f->nodes[family][f->n_nodes[family]];
	if (snprintf(node->host, sizeof(node->host), "/dev/%s", name) >= (int)sizeof(node->host) ||
	    snprintf(node->container, sizeof(node->container), "/dev/%s", container_name) >= (int)sizeof(node->container))
		return; /* no shared node has so long a name */
	f->n_nodes[family]++;
}

/* About forty stat() calls, at each refresh: cheap beside the inventory's. */
static void scan_nodes(struct host_files *f, const char *dev_dir)
{
	for (size_t family = 0; family < HOST_FILES_FAMILIES; family++) {
		const struct npu_shared_node *nodes;
		size_t n = npu_family_shared_nodes((enum npu_family)family, &nodes);
		for (size_t i = 0; i < n; i++) {
			const char *name = nodes[i].name;
			if (family == NPU_FAMILY_310B && strcmp(name, "davinci_manager") == 0 &&
			    exists_in(dev_dir, MANAGER_DOCKER))
				add_node(f, family, MANAGER_DOCKER, name);
			else if (exists_in(dev_dir, name))
				add_node(f, family, name, name);
		}
	}
}

int host_files_scan(const struct host_paths *paths, struct host_files **ret_files)
{
	struct host_files *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	atomic_init(&f->refs, 1);
	scan_nodes(f, paths->dev_dir);

	char host[4200];
	for (size_t i = 0; i < ELEMENTSOF(driver_mounts); i++) {
		if (driver_mounts[i].under_driver) {
			if (path_join(host, sizeof(host), paths->driver_path, driver_mounts[i].path) < 0)
				continue;
		} else if (str_copy(host, sizeof(host), driver_mounts[i].path) < 0) {
			continue;
		}
		if (!exists_in(paths->host_root, host))
			continue;
		f->mounts[f->n_mounts] = strdup(host);
		if (!f->mounts[f->n_mounts]) {
			host_files_unref(f);
			return -ENOMEM;
		}
		f->n_mounts++;
	}
	*ret_files = f;
	return 0;
}

static void host_files_free(struct host_files *f)
{
	for (size_t i = 0; i < f->n_mounts; i++)
		free(f->mounts[i]);
	free(f);
}

DEFINE_REFCOUNT(struct host_files, host_files, host_files_free)

bool host_files_equal(const struct host_files *a, const struct host_files *b)
{
	if (!a || !b)
		return a == b;
	if (a->n_mounts != b->n_mounts || memcmp(a->n_nodes, b->n_nodes, sizeof(a->n_nodes)) != 0)
		return false;
	for (size_t i = 0; i < a->n_mounts; i++)
		if (strcmp(a->mounts[i], b->mounts[i]) != 0)
			return false;
	for (size_t family = 0; family < HOST_FILES_FAMILIES; family++)
		for (size_t i = 0; i < a->n_nodes[family]; i++)
			if (strcmp(a->nodes[family][i].host, b->nodes[family][i].host) != 0 ||
			    strcmp(a->nodes[family][i].container, b->nodes[family][i].container) != 0)
				return false;
	return true;
}

const struct host_node *host_files_nodes(const struct host_files *f, enum npu_family family, size_t *ret_count)
{
	size_t k = (size_t)family < HOST_FILES_FAMILIES ? (size_t)family : NPU_FAMILY_UNKNOWN;
	*ret_count = f->n_nodes[k];
	return f->nodes[k];
}

size_t host_files_families(const struct npu_device *const *devs, size_t n,
			   enum npu_family families[static HOST_FILES_FAMILIES])
{
	size_t count = 0;
	for (size_t i = 0; i < n; i++) {
		enum npu_family family = devs[i]->chip.family;
		if ((size_t)family >= HOST_FILES_FAMILIES)
			family = NPU_FAMILY_UNKNOWN;
		bool seen = false;
		for (size_t j = 0; j < count && !seen; j++)
			seen = families[j] == family;
		if (!seen)
			families[count++] = family;
	}
	return count;
}

bool host_files_is_shared_node(const char *name)
{
	if (strcmp(name, MANAGER_DOCKER) == 0)
		return true;
	for (size_t family = 0; family < HOST_FILES_FAMILIES; family++) {
		const struct npu_shared_node *nodes;
		size_t n = npu_family_shared_nodes((enum npu_family)family, &nodes);
		for (size_t i = 0; i < n; i++)
			if (strcmp(nodes[i].name, name) == 0)
				return true;
	}
	return false;
}

/* Whether path is one of the files' host paths (a shared node of any family,
 * or a driver path). */
static bool has_path(const struct host_files *f, const char *path)
{
	for (size_t i = 0; i < f->n_mounts; i++)
		if (strcmp(f->mounts[i], path) == 0)
			return true;
	for (size_t family = 0; family < HOST_FILES_FAMILIES; family++)
		for (size_t i = 0; i < f->n_nodes[family]; i++)
			if (strcmp(f->nodes[family][i].host, path) == 0)
				return true;
	return false;
}

/* Appends each host path of from that to lacks, once, followed by what. */
static int list_missing(struct strbuf *sb, const struct host_files *from, const struct host_files *to,
			const char *what)
{
	int r = 0;
	for (size_t i = 0; i < from->n_mounts && r == 0; i++)
		if (!has_path(to, from->mounts[i]))
			r = strbuf_printf(sb, "%s%s %s", sb->len ? ", " : "", from->mounts[i], what);
	/* Families share most nodes: each path once. */
	const char *said[HOST_FILES_FAMILIES * HOST_FILES_MAX_NODES];
	size_t n_said = 0;
	for (size_t family = 0; family < HOST_FILES_FAMILIES; family++)
		for (size_t i = 0; i < from->n_nodes[family] && r == 0; i++) {
			const char *path = from->nodes[family][i].host;
			bool dup = false;
			for (size_t k = 0; k < n_said && !dup; k++)
				dup = strcmp(said[k], path) == 0;
			if (dup || has_path(to, path))
				continue;
			said[n_said++] = path;
			r = strbuf_printf(sb, "%s%s %s", sb->len ? ", " : "", path, what);
		}
	return r;
}

int host_files_describe_change(const struct host_files *before, const struct host_files *after, char *buf,
			       size_t size)
{
	static const struct host_files none;
	struct strbuf sb;
	strbuf_init(&sb, buf, size, ",...");
	int r = list_missing(&sb, after, before ? before : &none, "appeared");
	if (r == 0)
		r = list_missing(&sb, before ? before : &none, after, "went");
	return r;
}
