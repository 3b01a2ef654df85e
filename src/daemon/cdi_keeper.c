/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/cdi_keeper.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/parse.h"
#include "base/strbuf.h"

/* Writes the spec when its text differs from the file's (chips appeared or
 * went, a device node went, came back or changed its numbers, a shared node
 * or driver path appeared or went; never health alone, which is not in it) or the file is gone. With no chips
 * there is no valid spec: the file is removed. A failed write is retried at
 * the next refresh. */
void cdi_keeper_sync(struct cdi_keeper *d, const struct resource_set *resources, const struct npu_snapshot *all,
		     const struct host_paths *paths, const struct host_files *files)
{
	struct npu_snapshot *snap = NULL;
	char *json = NULL;
	int r;

	if (!d->active)
		return;
	/* What some resource lists: not a chip handed out as vNPUs, nor a vNPU
	 * without a resource. */
	if (resource_view(resources, NULL, all, &snap) < 0) {
		log_error("cannot build the CDI spec: out of memory");
		return;
	}
	if (snap->count == 0) {
		r = cdi_spec_remove(d->dir, d->names->file_name);
		if (r < 0 && r != d->error)
			log_error("cannot remove the CDI spec %s: %s", d->path, strerror(-r));
		else if (r == 0 && d->written)
			log_event(LOG_LEVEL_INFO, LOG_EVENT_CDI_REMOVED, &(struct log_fields){ .more = { LOG_STR("path", d->path) } },
				  "removed the CDI spec %s: no chips", d->path);
		d->error = r;
		if (r == 0) {
			free(d->written);
			d->written = NULL;
		}
		goto out;
	}
	r = cdi_spec_render(d->names, snap, paths, files, &json);
	if (r < 0) {
		log_error("cannot build the CDI spec: %s", strerror(-r));
		goto out;
	}
	if (d->written && strcmp(json, d->written) == 0 && path_exists(d->path)) {
		free(json);
		goto out;
	}
	r = cdi_spec_write(d->dir, d->names->file_name, json);
	if (r < 0) {
		if (r != d->error)
			log_error("cannot write the CDI spec %s: %s; retrying at every refresh", d->path, strerror(-r));
		d->error = r;
		free(json);
		goto out;
	}
	char names[1024];
	struct strbuf sb;
	strbuf_init(&sb, names, sizeof(names), ",...");
	for (size_t i = 0; i < snap->count; i++)
		if (strbuf_printf(&sb, "%s%s%u", i ? "," : "", snap->devices[i].kind == NPU_DEVICE_VNPU ? "vnpu-" : "",
				  npu_device_number(&snap->devices[i])) < 0)
			break;
	log_event(LOG_LEVEL_INFO, LOG_EVENT_CDI_WRITTEN,
		  &(struct log_fields){ .more = { LOG_STR("path", d->path), LOG_STR("kind", d->names->kind),
						  LOG_NUM("count", snap->count), LOG_STR("devices", names) } },
		  "wrote the CDI spec %s: kind %s, %zu devices %s", d->path, d->names->kind, snap->count, names);
	d->error = 0;
	free(d->written);
	d->written = json;
out:
	npu_snapshot_unref(snap);
}

void cdi_keeper_start(struct cdi_keeper *d, const struct resource_set *resources, const struct npu_snapshot *all,
		      const struct host_paths *paths, const struct host_files *files)
{
	if (!d->names)
		return;
	d->active = true;
	cdi_keeper_sync(d, resources, all, paths, files);
}

void cdi_keeper_stop(struct cdi_keeper *d, bool remove)
{
	if (!d->active)
		return;
	int r = remove ? cdi_spec_remove(d->dir, d->names->file_name) : 0;
	if (r < 0)
		log_warn("cannot remove the CDI spec %s: %s", d->path, strerror(-r));
	else if (remove)
		log_event(LOG_LEVEL_INFO, LOG_EVENT_CDI_REMOVED, &(struct log_fields){ .more = { LOG_STR("path", d->path) } },
			  "removed the CDI spec %s", d->path);
	d->active = false;
	free(d->written);
	d->written = NULL;
}

int cdi_keeper_init(struct cdi_keeper *d, const char *dir, const struct cdi_names *names)
{
	int r = path_join(d->path, sizeof(d->path), dir, names->file_name);
	if (r < 0)
		return r;
	d->dir = dir;
	d->names = names;
	return 0;
}
