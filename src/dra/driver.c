/* SPDX-License-Identifier: Apache-2.0 */
#include "dra/driver.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "base/parse.h"
#include "base/strbuf.h"
#include "dra/claim_status.h"
#include "dra/metadata.h"
#include "dra/vnpus.h"
#include "base/wait.h"
#include "node/visible.h"

struct dra_driver {
	char driver_name[K8S_DNS_SUBDOMAIN_MAX + 1];
	char node_name[K8S_DNS_SUBDOMAIN_MAX + 1];
	char checkpoint_path[PATH_MAX];
	char cdi_dir[PATH_MAX];
	struct host_paths paths;
	struct dra_claim_reader reader;
	struct cdi_names cdi;

	/* One prepare or unprepare at a time: the checkpoint and the spec
	 * files are theirs. */
	pthread_mutex_t op_lock;
	struct dra_checkpoint checkpoint;
	/* The file holds more than the memory: an unprepare could not save.
	 * The next operation saves, or a claim long gone would hold its
	 * devices after a restart. */
	bool file_stale;

	/* Shared with another instance (a surge roll): the lock file's fd,
	 * flocked around every use of the checkpoint, else -1. The checkpoint
	 * file as this instance last read or wrote it: memory holds what it
	 * said, unless another instance replaced it since. */
	int lock_fd;
	struct stat known;
	bool known_valid;

	/* What the loop published last. */
	pthread_mutex_t snapshot_lock;
	struct npu_snapshot *snapshot;
	struct host_files *files;
	unsigned *shares; /* per device of snapshot: how many claims may hold it; NULL: one each */

	struct npu_chip_select dynamic; /* chips carved on demand */
	bool has_dynamic;
	struct dra_carver carver;
	struct status_dirs *status;
};

/* The lock shared with another instance, when there is one. flock waits
 * only for the other instance's file work (it never holds the lock across
 * a claim read), so no deadline is needed. */
static void lock_file(struct dra_driver *d)
{
	while (d->lock_fd >= 0 && flock(d->lock_fd, LOCK_EX) < 0 && errno == EINTR)
		;
}

static void unlock_file(struct dra_driver *d)
{
	if (d->lock_fd >= 0)
		(void)flock(d->lock_fd, LOCK_UN);
}

/* Remembers the checkpoint file as it is now: what memory holds. */
static void note_file(struct dra_driver *d)
{
	d->known_valid = stat(d->checkpoint_path, &d->known) == 0;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Another instance may have replaced the checkpoint since this one last
 * read or wrote it (saves rename a new file in place): then the file is
 * what holds, read again. A file that does not parse (not what a driver
 * wrote) leaves memory as it is, to be written over at the next save, as a
 * start sets such a file aside; one that cannot be read fails the call,
 * since saving memory over it could drop the other instance's claims.
 * Under op_lock and the file lock. */
static int sync_file(struct dra_driver *d, char *why, size_t why_size)
{
	struct stat now;
	char problem[256];
	if (d->lock_fd < 0)
		return 0;
	bool exists = stat(d->checkpoint_path, &now) == 0;
	if (exists ? d->known_valid && same_file(&now, &d->known) : !d->known_valid)
		return 0;
	struct dra_checkpoint *fresh = calloc(1, sizeof(*fresh));
	int r = fresh ? dra_checkpoint_load(d->checkpoint_path, fresh, problem, sizeof(problem)) : -ENOMEM;
	if (r == 0 || r == -ENOENT) {
		dra_checkpoint_clear(&d->checkpoint);
		d->checkpoint = *fresh;
		d->file_stale = false;
		d->known_valid = exists;
		d->known = now;
		r = 0;
	} else if (r == -EINVAL || r == -E2BIG || r == -EFBIG) {
		d->file_stale = true;
		r = 0;
	} else {
		snprintf(why, why_size, "cannot read the checkpoint %s: %s", d->checkpoint_path,
			 r == -ENOMEM ? "out of memory" : problem);
	}
	free(fresh);
	return r;
}

/* Each use of the checkpoint: this process's lock, then the instances',
 * and the file read again if it changed. Both locks are held whatever it
 * returns (0, or a negative errno with why): leave() releases them. */
static int enter(struct dra_driver *d, char *why, size_t why_size)
{
	pthread_mutex_lock(&d->op_lock);
	lock_file(d);
	return sync_file(d, why, why_size);
}

static void leave(struct dra_driver *d)
{
	unlock_file(d);
	pthread_mutex_unlock(&d->op_lock);
}

int dra_driver_new(const struct dra_driver_options *o, struct dra_driver **ret_driver, char *set_aside,
		   size_t set_aside_size, char *why, size_t why_size)
{
	char kind[CDI_KIND_MAX];
	if (set_aside_size)
		set_aside[0] = '\0';
	struct dra_driver *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	int r = -EINVAL;
	if (str_copy(d->driver_name, sizeof(d->driver_name), o->driver_name) < 0 ||
	    str_copy(d->node_name, sizeof(d->node_name), o->node_name) < 0 ||
	    path_join(d->checkpoint_path, sizeof(d->checkpoint_path), o->plugin_dir, DRA_CHECKPOINT_FILE) < 0 ||
	    str_copy(d->cdi_dir, sizeof(d->cdi_dir), o->cdi_dir) < 0 ||
	    str_printf(kind, sizeof(kind), "%s/%s", o->driver_name, DRA_CDI_CLASS) < 0) {
		snprintf(why, why_size, "the driver name, node name or a directory is too long");
		goto fail;
	}
	if ((r = cdi_names_from_resource(kind, &d->cdi, why, why_size)) < 0)
		goto fail;
	d->paths = o->paths;
	d->reader = o->reader;
	d->carver = o->carver;
	d->status = o->status;
	if (o->dynamic) {
		d->dynamic = *o->dynamic;
		d->has_dynamic = true;
	}
	d->lock_fd = -1;
	if (o->lock_path && (d->lock_fd = open(o->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0) {
		r = -errno;
		snprintf(why, why_size, "cannot open the lock file %s: %s", o->lock_path, strerror(-r));
		goto fail;
	}

	char problem[512];
	/* Under the lock: another instance may be replacing the file. */
	lock_file(d);
	r = dra_checkpoint_load(d->checkpoint_path, &d->checkpoint, problem, sizeof(problem));
	if (r == -ENOMEM) {
		unlock_file(d);
		snprintf(why, why_size, "out of memory");
		goto fail;
	}
	if (r < 0 && r != -ENOENT) {
		/* Kept for a person to look at; the kubelet prepares the claims
		 * of running pods again, which rebuilds the record. */
		char bad[PATH_MAX + 8];
		snprintf(bad, sizeof(bad), "%s.bad", d->checkpoint_path);
		int moved = rename(d->checkpoint_path, bad) == 0 ? 0 : -errno;
		snprintf(set_aside, set_aside_size, "%s: %s; %s", d->checkpoint_path, problem,
			 moved == 0 ? "moved to .bad, starting with no prepared claims"
				    : "cannot move it aside, starting with no prepared claims");
	}
	note_file(d);
	unlock_file(d);
	pthread_mutex_init(&d->op_lock, NULL);
	pthread_mutex_init(&d->snapshot_lock, NULL);
	*ret_driver = d;
	return 0;
fail:
	if (d->lock_fd >= 0)
		close(d->lock_fd);
	free(d);
	return r;
}

void dra_driver_free(struct dra_driver *d)
{
	if (!d)
		return;
	dra_checkpoint_clear(&d->checkpoint);
	npu_snapshot_unref(d->snapshot);
	host_files_unref(d->files);
	free(d->shares);
	pthread_mutex_destroy(&d->op_lock);
	pthread_mutex_destroy(&d->snapshot_lock);
	if (d->lock_fd >= 0)
		close(d->lock_fd);
	free(d);
}

void dra_driver_publish(struct dra_driver *d, struct npu_snapshot *snap, struct host_files *files,
			const unsigned *shares)
{
	unsigned *copy = shares && snap && snap->count ? malloc(snap->count * sizeof(*copy)) : NULL;
	if (copy)
		memcpy(copy, shares, snap->count * sizeof(*copy));
	pthread_mutex_lock(&d->snapshot_lock);
	/* Without memory for the copy no device is shared: the safe side. */
	unsigned *old = d->shares;
	d->shares = copy;
	if (snap != d->snapshot) {
		npu_snapshot_unref(d->snapshot);
		d->snapshot = npu_snapshot_ref(snap);
	}
	if (files != d->files) {
		host_files_unref(d->files);
		d->files = host_files_ref(files);
	}
	pthread_mutex_unlock(&d->snapshot_lock);
	free(old);
}

/* How many claims may hold the device now (time-slicing), at least 1. */
static unsigned shares_of(struct dra_driver *d, const char *device)
{
	unsigned n = 1;
	pthread_mutex_lock(&d->snapshot_lock);
	for (size_t i = 0; d->shares && d->snapshot && i < d->snapshot->count; i++)
		if (strcmp(d->snapshot->devices[i].id, device) == 0 && d->shares[i] > 1)
			n = d->shares[i];
	pthread_mutex_unlock(&d->snapshot_lock);
	return n;
}

bool dra_driver_holds_vnpu(struct dra_driver *d, uint32_t id)
{
	pthread_mutex_lock(&d->op_lock);
	bool held = dra_vnpu_recorded(&d->checkpoint, id);
	pthread_mutex_unlock(&d->op_lock);
	return held;
}

size_t dra_driver_prepared_count(struct dra_driver *d)
{
	pthread_mutex_lock(&d->op_lock);
	size_t n = d->checkpoint.count;
	pthread_mutex_unlock(&d->op_lock);
	return n;
}

/* Whether a result of a prepared claim uses chip phy of snap. */
static bool result_on_chip(const struct dra_result *res, const struct npu_snapshot *snap, uint32_t phy)
{
	if (res->admin_access)
		return false;
	/* A dynamic vNPU: the driver numbers them phy*16+100 onwards. */
	if (res->vnpu_id >= NPU_VNPU_FIRST_ID)
		return (res->vnpu_id - NPU_VNPU_FIRST_ID) / NPU_VNPUS_PER_CHIP == phy;
	const struct npu_device *dev = snap ? npu_snapshot_find(snap, res->device) : NULL;
	return dev && dev->chip.phy_id == phy;
}

size_t dra_driver_claims_on_chip(struct dra_driver *d, uint32_t phy, char *buf, size_t size)
{
	struct strbuf sb;
	strbuf_init(&sb, buf, size, ",...");
	size_t n = 0;
	pthread_mutex_lock(&d->op_lock);
	pthread_mutex_lock(&d->snapshot_lock);
	for (size_t i = 0; i < d->checkpoint.count; i++) {
		const struct dra_prepared *p = d->checkpoint.claims[i];
		bool on = false;
		for (size_t k = 0; k < p->n_devices && !on; k++)
			on = result_on_chip(&p->devices[k], d->snapshot, phy);
		if (on && strbuf_printf(&sb, "%sclaim %s/%s", n++ ? ", " : "", p->namespace, p->name) < 0)
			break;
	}
	pthread_mutex_unlock(&d->snapshot_lock);
	pthread_mutex_unlock(&d->op_lock);
	return n;
}

int dra_driver_cdi_id(const struct dra_driver *d, const char *uid, char *buf, size_t size)
{
	return str_printf(buf, size, "%s=%s", d->cdi.kind, uid);
}

int dra_driver_cdi_part(const char *uid, size_t index, const char *device, char *buf, size_t size)
{
	return str_printf(buf, size, "%s-%zu-%s", uid, index, device);
}

int dra_driver_cdi_result_id(const struct dra_driver *d, const char *uid, size_t index, const char *device,
			     char *buf, size_t size)
{
	char part[DRA_CDI_PART_MAX];
	int r = dra_driver_cdi_part(uid, index, device, part, sizeof(part));
	return r < 0 ? r : str_printf(buf, size, "%s=%s", d->cdi.kind, part);
}

static bool uid_ok(const char *uid);
static int check_request(const char *ns, const char *uid, const char *name, char *why, size_t why_size);
static int check_holders(struct dra_driver *d, const struct dra_prepared *p, size_t among, char *why,
			 size_t why_size);

/* "<driver>-claim_<uid>.json": one spec per claim, so that unpreparing is
 * one removal and no claim's spec is rewritten for another's. A uid that is
 * none makes no name: whatever a uid holds, the file stays in the CDI
 * directory. */
static int spec_file_name(const struct dra_driver *d, const char *uid, char *buf, size_t size)
{
	if (!uid_ok(uid))
		return -EINVAL;
	size_t stem = strlen(d->cdi.file_name) - strlen(".json");
	return str_printf(buf, size, "%.*s_%s.json", (int)stem, d->cdi.file_name, uid);
}

/* A claim's status directory whose claim is not recorded is stale. */
static bool status_unrecorded(void *ctx, const char *name, char (*ids)[NPU_DEVICE_ID_MAX], size_t n)
{
	(void)ids;
	(void)n;
	const struct dra_driver *d = ctx;
	return strncmp(name, "claim-", 6) == 0 && !dra_checkpoint_find(&d->checkpoint, name + 6);
}

int dra_driver_sweep(struct dra_driver *d)
{
	char prefix[CDI_KIND_MAX + 8];
	size_t stem = strlen(d->cdi.file_name) - strlen(".json");
	if (str_printf(prefix, sizeof(prefix), "%.*s_", (int)stem, d->cdi.file_name) < 0)
		return -ENAMETOOLONG;
	DIR *dir;
	int removed = dir_open(d->cdi_dir, &dir);
	if (removed < 0)
		return removed;
	struct dirent *e;
	char why[PATH_MAX + 300];
	/* Without the record, no spec is known to be stale. */
	if ((removed = enter(d, why, sizeof(why))) < 0)
		goto out;
	while ((e = readdir(dir))) {
		size_t len = strlen(e->d_name), plen = strlen(prefix);
		if (len <= plen + strlen(".json") || strncmp(e->d_name, prefix, plen) != 0 ||
		    strcmp(e->d_name + len - strlen(".json"), ".json") != 0)
			continue;
		char uid[DRA_UID_MAX];
		if (str_printf(uid, sizeof(uid), "%.*s", (int)(len - plen - strlen(".json")), e->d_name + plen) < 0 ||
		    dra_checkpoint_find(&d->checkpoint, uid))
			continue;
		removed += cdi_spec_remove(d->cdi_dir, e->d_name) == 0;
	}
	size_t statuses = 0;
	if (d->status && status_dirs_prune(d->status, 0, status_unrecorded, d, &statuses) == 0)
		removed += (int)statuses;
out:
	leave(d);
	closedir(dir);
	return removed;
}

/* The snapshot and files to prepare with, each with a reference. */
static void current(struct dra_driver *d, struct npu_snapshot **ret_snap, struct host_files **ret_files)
{
	pthread_mutex_lock(&d->snapshot_lock);
	*ret_snap = npu_snapshot_ref(d->snapshot);
	*ret_files = host_files_ref(d->files);
	pthread_mutex_unlock(&d->snapshot_lock);
}

/* How many of the vNPUs on chip are the driver's, made for claims: those
 * leave the chip to be allocated whole once they are gone (the scheduler
 * keeps the two apart). */
static unsigned vnpus_of_claims(const struct dra_driver *d, const struct npu_snapshot *snap,
				const struct npu_device *chip)
{
	unsigned n = 0;
	for (size_t i = 0; snap && i < snap->count; i++)
		n += snap->devices[i].kind == NPU_DEVICE_VNPU && snap->devices[i].vnpu.phy_id == chip->chip.phy_id &&
		     dra_vnpu_recorded(&d->checkpoint, snap->devices[i].vnpu.id);
	return n;
}

/* Finds each device of p in snap, each once in devs (a shared chip may be
 * allocated to several requests of one claim) and in the container's order
 * (node/visible.h), their number in *ret_n;
 * healthy_only for a claim being prepared now (a recorded claim keeps its
 * devices whatever their health: its pod runs on them). per_result, unless
 * NULL, gets the device of each result by its index. */
static int resolve(const struct dra_driver *d, const struct dra_prepared *p, const struct npu_snapshot *snap,
		   bool healthy_only, const struct npu_device **devs, struct npu_device *made, size_t *ret_n,
		   const struct npu_device **per_result, char *why, size_t why_size)
{
	size_t n = 0;
	for (size_t i = 0; i < p->n_devices; i++) {
		const struct dra_result *res = &p->devices[i];
		const struct npu_device *dev = snap ? npu_snapshot_find(snap, res->device) : NULL;
		if (per_result)
			per_result[i] = res->vnpu_id ? &made[i] : dev;
		if (strcmp(res->pool, d->node_name) != 0)
			return why_invalid(why, why_size, "device %s is in pool %s, not this node's (%s)", res->device,
					   res->pool, d->node_name);
		/* A dynamic vNPU: the device its placement became. */
		if (res->vnpu_id) {
			if (dra_vnpu_device(res, snap, &made[i]) < 0)
				return why_invalid(why, why_size, "device %s: its chip is not on this node", res->device);
			devs[n++] = &made[i];
			continue;
		}
		if (!dev)
			return why_invalid(why, why_size, "device %s is not on this node (no such NPU in the inventory)",
					   res->device);
		/* A monitoring container looks at a chip whatever holds it or
		 * ails it. */
		if (res->admin_access) {
			bool seen = false;
			for (size_t j = 0; j < n && !seen; j++)
				seen = devs[j] == dev;
			if (!seen)
				devs[n++] = dev;
			continue;
		}
		if (healthy_only && dev->vnpu_count > vnpus_of_claims(d, snap, dev))
			return why_invalid(why, why_size, "device %s is carved into %u vNPUs, so it is not handed out whole",
					   res->device, dev->vnpu_count);
		if (healthy_only && !dev->healthy) {
			char reason[256];
			npu_device_describe(dev, reason, sizeof(reason));
			return why_invalid(why, why_size, "device %s is Unhealthy: %s", res->device, reason);
		}
		bool seen = false;
		for (size_t j = 0; j < n && !seen; j++)
			seen = devs[j] == dev;
		if (!seen)
			devs[n++] = dev;
	}
	/* In the container's order, not the results': CANN numbers the devices
	 * by their nodes, so ASCEND_VISIBLE_DEVICES and the logical ids follow
	 * that order, as Allocate's do. */
	visible_sort(devs, n);
	*ret_n = n;
	return 0;
}

/* The claim's live status directory: "claim-<uid>". */
static int status_name(const char *uid, char *buf, size_t size)
{
	return str_printf(buf, size, "claim-%s", uid);
}

/* Makes sure the claim's live status file is there, into group; a
 * directory that cannot be made leaves the claim without one, as a node
 * without a status directory has. */
static void add_status(struct dra_driver *d, const struct dra_prepared *p, struct cdi_group *group, char *host_dir,
		       size_t host_size, char *container_dir, size_t container_size)
{
	char name[STATUS_NAME_MAX + 1];
	if (!d->status || status_name(p->uid, name, sizeof(name)) < 0 ||
	    status_dirs_ensure(d->status, name, group->devices, group->n_devices, host_dir, host_size) < 0 ||
	    str_printf(container_dir, container_size, "%s/%s", STATUS_CONTAINER_DIR,
		       p->pod_claim[0] ? p->pod_claim : p->name) < 0)
		return;
	group->status_host_dir = host_dir;
	group->status_container_dir = container_dir;
}

/* The device metadata files of a claim (dra/metadata.h), one per request,
 * and their mounts. */
struct metadata_files {
	struct cdi_mount mounts[DRA_CLAIM_RESULTS_MAX];
	char host[DRA_CLAIM_RESULTS_MAX][PATH_MAX];
	char container[DRA_CLAIM_RESULTS_MAX][PATH_MAX];
	struct device_metadata_device devs[DRA_CLAIM_RESULTS_MAX];
};

/* The device result res became: made[i] for a dynamic vNPU, else the
 * snapshot's. */
static const struct npu_device *device_of(const struct dra_prepared *p, size_t i, const struct npu_snapshot *snap,
					  const struct npu_device *made)
{
	return p->devices[i].vnpu_id ? &made[i] : npu_snapshot_find(snap, p->devices[i].device);
}

/* Whether rq ("<request>" or "<request>/<subrequest>") is of base. */
static bool of_request(const char *rq, const char *base)
{
	size_t len = strlen(base);
	return strncmp(rq, base, len) == 0 && (rq[len] == '\0' || rq[len] == '/');
}

/* Writes the claim's device metadata beside its status file, one file per
 * request, and adds their mounts to group. Needs the status directory: a
 * claim without one goes without metadata, as one that cannot be written. */
static void add_metadata(struct dra_driver *d, const struct dra_prepared *p, const struct npu_snapshot *snap,
			 const struct npu_device *made, struct cdi_group *group, struct metadata_files *m)
{
	char name[STATUS_NAME_MAX + 1];
	if (!m || !group->status_host_dir || status_name(p->uid, name, sizeof(name)) < 0)
		return;
	size_t n_mounts = 0;
	for (size_t i = 0; i < p->n_devices; i++) {
		char request[DRA_REQUEST_MAX], file[DRA_REQUEST_MAX + 32];
		(void)str_printf(request, sizeof(request), "%.*s", (int)strcspn(p->devices[i].request, "/"),
				 p->devices[i].request); /* as long as the source */
		bool done = false;
		for (size_t k = 0; k < i && !done; k++)
			done = of_request(p->devices[k].request, request);
		if (done)
			continue;
		size_t n = 0;
		for (size_t k = i; k < p->n_devices; k++) {
			const struct npu_device *dev = device_of(p, k, snap, made);
			if (!of_request(p->devices[k].request, request) || !dev)
				continue;
			size_t logical = 0;
			while (logical < group->n_devices && group->devices[logical] != dev)
				logical++;
			m->devs[n++] = (struct device_metadata_device){ .device = dev, .pool = p->devices[k].pool,
								      .logical_id = logical };
		}
		char *json = NULL;
		if (n == 0 || str_printf(file, sizeof(file), "metadata-%s.json", request) < 0 ||
		    dra_metadata_render(d->driver_name, p, request, m->devs, n, &json) < 0 ||
		    status_dirs_put(d->status, name, file, json, m->host[n_mounts], sizeof(m->host[0])) < 0 ||
		    dra_metadata_container_path(d->driver_name, p, request, m->container[n_mounts],
						sizeof(m->container[0])) < 0) {
			free(json);
			continue;
		}
		free(json);
		m->mounts[n_mounts] = (struct cdi_mount){ .host_path = m->host[n_mounts],
							  .container_path = m->container[n_mounts] };
		n_mounts++;
	}
	group->mounts = m->mounts;
	group->n_mounts = n_mounts;
}

static void remove_status(struct dra_driver *d, const char *uid)
{
	char name[STATUS_NAME_MAX + 1];
	if (d->status && status_name(uid, name, sizeof(name)) == 0)
		(void)status_dirs_remove(d->status, name);
}

/* Writes the claim's spec for the devices of p. */
static int write_spec(struct dra_driver *d, const struct dra_prepared *p, bool healthy_only, char *why,
		      size_t why_size)
{
	struct npu_snapshot *snap;
	struct host_files *files;
	const struct npu_device *devs[DRA_CLAIM_RESULTS_MAX];
	struct npu_device *made = calloc(DRA_CLAIM_RESULTS_MAX, sizeof(*made));
	char *json = NULL, file[CDI_KIND_MAX + DRA_UID_MAX + 8];
	char status_host[PATH_MAX], status_container[sizeof(STATUS_CONTAINER_DIR) + K8S_DNS_SUBDOMAIN_MAX + 1];
	struct metadata_files *metadata = NULL;
	size_t n = 0;
	current(d, &snap, &files);
	const struct npu_device *per_result[DRA_CLAIM_RESULTS_MAX];
	char (*names)[DRA_CDI_PART_MAX] = malloc(DRA_CLAIM_RESULTS_MAX * sizeof(*names));
	struct cdi_part parts[DRA_CLAIM_RESULTS_MAX];
	int r = made && names ? resolve(d, p, snap, healthy_only, devs, made, &n, per_result, why, why_size) : -ENOMEM;
	if (r < 0)
		goto out;
	for (size_t i = 0; i < p->n_devices; i++) {
		if ((r = dra_driver_cdi_part(p->uid, i, p->devices[i].device, names[i], sizeof(names[i]))) < 0) {
			snprintf(why, why_size, "the CDI name of device %s is too long", p->devices[i].device);
			goto out;
		}
		parts[i] = (struct cdi_part){ .name = names[i], .device = per_result[i] };
	}
	struct cdi_group group = { .name = p->uid, .devices = devs, .n_devices = n, .parts = parts,
				   .n_parts = p->n_devices };
	add_status(d, p, &group, status_host, sizeof(status_host), status_container, sizeof(status_container));
	metadata = malloc(sizeof(*metadata));
	add_metadata(d, p, snap, made, &group, metadata);
	if ((r = spec_file_name(d, p->uid, file, sizeof(file))) < 0 ||
	    (r = cdi_group_spec_render(&d->cdi, &group, &d->paths, files, &json)) < 0) {
		snprintf(why, why_size, "cannot render the CDI spec: %s", strerror(-r));
		goto out;
	}
	if ((r = cdi_spec_write(d->cdi_dir, file, json)) < 0)
		snprintf(why, why_size, "cannot write the CDI spec %s/%s: %s", d->cdi_dir, file, strerror(-r));
out:
	free(metadata);
	free(names);
	free(made);
	free(json);
	npu_snapshot_unref(snap);
	host_files_unref(files);
	return r;
}

/* Writes the checkpoint as memory has it (durably if asked). The file then
 * matches memory, or on failure is marked stale so that the next operation
 * saves again; why says the failure. */
static int save(struct dra_driver *d, bool durable, char *why, size_t why_size)
{
	int r = dra_checkpoint_save(d->checkpoint_path, &d->checkpoint, durable);
	d->file_stale = r < 0;
	if (r < 0)
		snprintf(why, why_size, "cannot write the checkpoint %s: %s", d->checkpoint_path, strerror(-r));
	else
		note_file(d);
	return r;
}

/* Whether record i of the checkpoint stands as a new claim would: a uid,
 * namespace and name a prepare accepts, and no device of it held by as
 * many records before it as may share it. The file is the driver's own,
 * but whatever it says must neither write outside the CDI directory nor
 * hand one chip to more claims than may share it. (The number of records
 * is bounded when the file is parsed.) */
static int check_record(struct dra_driver *d, size_t i, char *why, size_t why_size)
{
	const struct dra_prepared *p = d->checkpoint.claims[i];
	int r = check_request(p->namespace, p->uid, p->name, why, why_size);
	if (r == 0)
		r = dra_vnpus_check_record(p, why, why_size);
	return r < 0 ? r : check_holders(d, p, i, why, why_size);
}

/* Drops record i, and the spec of its uid if the uid names one: no runtime
 * may inject its chips. The file keeps it until the next save. */
static void set_aside(struct dra_driver *d, size_t i)
{
	char uid[DRA_UID_MAX], file[CDI_KIND_MAX + DRA_UID_MAX + 8];
	memcpy(uid, d->checkpoint.claims[i]->uid, sizeof(uid));
	if (spec_file_name(d, uid, file, sizeof(file)) == 0)
		(void)cdi_spec_remove(d->cdi_dir, file);
	(void)dra_checkpoint_drop(&d->checkpoint, uid);
	d->file_stale = true;
}

int dra_driver_restore(struct dra_driver *d, size_t *ret_failed, char *why, size_t why_size)
{
	int written = 0;
	size_t failed = 0;
	char reason[512];
	/* A file that cannot be read now leaves the record read at the start,
	 * a moment ago. */
	(void)enter(d, reason, sizeof(reason));
	struct npu_snapshot *snap;
	struct host_files *files;
	size_t adopted = 0;
	current(d, &snap, &files);
	for (size_t i = 0; i < d->checkpoint.count;) {
		struct dra_prepared *p = d->checkpoint.claims[i];
		bool invalid = check_record(d, i, reason, sizeof(reason)) < 0;
		adopted += invalid ? 0 : dra_vnpus_adopt(p, snap);
		/* A vNPU still to create: the kubelet's next prepare makes it
		 * and writes the spec; until then there is none to write. */
		if (!invalid && dra_vnpus_pending(p)) {
			i++;
			continue;
		}
		if (!invalid && write_spec(d, p, false, reason, sizeof(reason)) == 0) {
			written++;
			i++;
			continue;
		}
		if (failed++ == 0)
			snprintf(why, why_size, "claim %s/%s (uid %s): %s%s", p->namespace, p->name, p->uid, reason,
				 invalid ? "; its record is set aside" : "");
		if (invalid)
			set_aside(d, i);
		else
			i++;
	}
	/* A vNPU DCMI made before a crash took the driver: the record says so
	 * now, so the next start need not look again. */
	if (adopted)
		(void)save(d, false, reason, sizeof(reason));
	npu_snapshot_unref(snap);
	host_files_unref(files);
	leave(d);
	*ret_failed = failed;
	return written;
}

static struct dra_prepared *copy_prepared(const struct dra_prepared *p)
{
	struct dra_prepared *c = dra_prepared_new(p->n_devices);
	if (c)
		memcpy(c, p, sizeof(*p) + p->n_devices * sizeof(p->devices[0]));
	return c;
}

/* Whether another prepared claim holds result res. */
static bool holds(const struct dra_prepared *other, const struct dra_result *res)
{
	for (size_t m = 0; m < other->n_devices; m++)
		if (!other->devices[m].admin_access && strcmp(other->devices[m].device, res->device) == 0 &&
		    strcmp(other->devices[m].pool, res->pool) == 0)
			return true;
	return false;
}

/* Each device of p held by fewer of the first among prepared claims than
 * may share it: one for a device not time-sliced, its replicas for one that
 * is (the scheduler allocated it as often, by its capacity "shares"). */
static int check_holders(struct dra_driver *d, const struct dra_prepared *p, size_t among, char *why,
			 size_t why_size)
{
	for (size_t i = 0; i < p->n_devices; i++) {
		const struct dra_result *res = &p->devices[i];
		/* Administrative access holds nothing and waits for no one. */
		if (res->admin_access)
			continue;
		unsigned shares = shares_of(d, res->device), held = 0;
		const struct dra_prepared *last = NULL;
		for (size_t k = 0; k < among; k++)
			if (holds(d->checkpoint.claims[k], res)) {
				held++;
				last = d->checkpoint.claims[k];
			}
		if (held < shares)
			continue;
		if (shares == 1)
			return why_invalid(why, why_size, "device %s is prepared for claim %s/%s (uid %s)", res->device,
					   last->namespace, last->name, last->uid);
		return why_invalid(why, why_size,
				   "device %s is prepared for %u claims already, as many as its time-slicing replicas "
				   "(the last claim %s/%s, uid %s)",
				   res->device, held, last->namespace, last->name, last->uid);
	}
	return 0;
}

/* The record of a claim read from the API server: its results of this
 * driver, each device held by no more claims than may share it. */
static int take_claim(struct dra_driver *d, const char *ns, const char *uid, const char *name,
		      const struct dra_claim *claim, struct dra_prepared **ret, char *why, size_t why_size)
{
	if (strcmp(claim->uid, uid) != 0)
		return why_invalid(why, why_size,
				   "ResourceClaim %s/%s has uid %s, not %s: the claim was deleted and made anew", ns, name,
				   claim->uid, uid);
	if (!claim->allocated)
		return why_invalid(why, why_size, "ResourceClaim %s/%s is not allocated", ns, name);
	size_t n = 0;
	for (size_t i = 0; i < claim->n_results; i++)
		n += strcmp(claim->results[i].driver, d->driver_name) == 0;
	if (n == 0)
		return why_invalid(why, why_size, "ResourceClaim %s/%s has no device of driver %s", ns, name,
				   d->driver_name);
	struct dra_prepared *p = dra_prepared_new(n);
	if (!p)
		return -ENOMEM;
	(void)str_copy(p->uid, sizeof(p->uid), uid); /* both bounded alike */
	(void)str_copy(p->namespace, sizeof(p->namespace), ns);
	(void)str_copy(p->name, sizeof(p->name), name);
	memcpy(p->pod_claim, claim->pod_claim_name, sizeof(p->pod_claim));
	size_t j = 0;
	for (size_t i = 0; i < claim->n_results; i++)
		if (strcmp(claim->results[i].driver, d->driver_name) == 0)
			p->devices[j++] = claim->results[i];
	for (size_t i = 0; i < n; i++)
		p->devices[i].driver[0] = '\0';
	int r = check_holders(d, p, d->checkpoint.count, why, why_size);
	if (r < 0) {
		free(p);
		return r;
	}
	*ret = p;
	return 0;
}

/* A uid names a file and a CDI device, whose names allow letters, digits,
 * '_', '.', ':' and '-' after a letter or digit: a UUID always fits. */
static bool uid_ok(const char *uid)
{
	size_t len = strlen(uid);
	if (len == 0 || len >= DRA_UID_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = uid[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		if (!alnum && (i == 0 || !strchr("_.:-", c)))
			return false;
	}
	return true;
}

/* The uid, namespace and name must fit the record. */
static int check_request(const char *ns, const char *uid, const char *name, char *why, size_t why_size)
{
	if (!uid_ok(uid))
		return why_invalid(why, why_size, "claim uid '%.64s' is not a uid", uid);
	if (!ns[0] || strlen(ns) > K8S_NAME_MAX || !name[0] || strlen(name) > K8S_DNS_SUBDOMAIN_MAX)
		return why_invalid(why, why_size, "claim %.64s/%.64s: namespace or name empty or too long", ns, name);
	return 0;
}

/* The claim as the API server has it now, malloc'd. Takes no lock: a
 * prepare waiting on the API server holds up no other claim's. */
static int read_claim(struct dra_driver *d, const char *ns, const char *name, const struct dra_read_limits *limits,
		      struct dra_claim **ret, char *why, size_t why_size)
{
	char *json = NULL, problem[512] = "";
	size_t len = 0;
	struct dra_claim *claim = malloc(sizeof(*claim));
	int r = -ENOMEM;
	if (!claim)
		goto out;
	if (!d->reader.get) {
		r = why_invalid(why, why_size, "cannot read ResourceClaim %s/%s: no API-server client", ns, name);
		goto out;
	}
	r = d->reader.get(d->reader.ctx, ns, name, limits, &json, &len, problem, sizeof(problem));
	if (r < 0) {
		snprintf(why, why_size, "cannot read ResourceClaim %s/%s: %s", ns, name, problem);
		goto out;
	}
	if ((r = dra_claim_parse(json, len, claim, problem, sizeof(problem))) < 0) {
		snprintf(why, why_size, "ResourceClaim %s/%s: %s", ns, name, problem);
		goto out;
	}
	*ret = claim;
	claim = NULL;
out:
	free(json);
	free(claim);
	return r;
}

/* Puts p into the checkpoint and saves it; takes p over. On failure the
 * checkpoint holds no entry of p's uid. */
static int keep(struct dra_driver *d, struct dra_prepared *p, bool durable, char *why, size_t why_size)
{
	char uid[DRA_UID_MAX];
	memcpy(uid, p->uid, sizeof(uid));
	int r = dra_checkpoint_put(&d->checkpoint, p);
	if (r < 0) {
		snprintf(why, why_size, "%d claims are prepared already on this node", DRA_CHECKPOINT_MAX_CLAIMS);
		free(p);
	} else if ((r = save(d, durable, why, why_size)) < 0) {
		(void)dra_checkpoint_drop(&d->checkpoint, uid); /* frees p */
	}
	return r;
}

/* Writes the spec of a new claim and records it, the record last: a crash
 * between the two leaves a spec that the next start sweeps away. Takes p
 * over, whatever the outcome.
 *
 * The record is not synced to disk: it outlives a restart of the driver or
 * the kubelet in the page cache, and a record a power loss takes is one the
 * kubelet asks for again (it prepares every claim again after its own
 * start). What must outlive a power loss is a claim's removal, or the chip
 * would stay held for a claim long gone: unprepare's save is durable, and
 * with it everything recorded before. */
static int record(struct dra_driver *d, struct dra_prepared *p, char *why, size_t why_size)
{
	char uid[DRA_UID_MAX], file[CDI_KIND_MAX + DRA_UID_MAX + 8];
	memcpy(uid, p->uid, sizeof(uid));
	int r = write_spec(d, p, true, why, why_size);
	if (r < 0) {
		free(p);
		return r;
	}
	if ((r = keep(d, p, false, why, why_size)) == 0)
		return 0;
	/* The claim failed: no runtime may inject it. */
	if (spec_file_name(d, uid, file, sizeof(file)) == 0)
		(void)cdi_spec_remove(d->cdi_dir, file);
	remove_status(d, uid);
	return r;
}

/* The apply of p's status (dra/claim_status.h) into *ret_status, or nothing
 * when its chips have no network identity or memory runs out: the status is
 * news for the job's pods, never a condition of the prepare. */
static void status_of(struct dra_driver *d, const struct dra_prepared *p, char **ret_status)
{
	struct npu_snapshot *snap;
	struct host_files *files;
	const struct npu_device *devs[DRA_CLAIM_RESULTS_MAX];
	struct npu_device *made = calloc(DRA_CLAIM_RESULTS_MAX, sizeof(*made));
	size_t n = 0;
	char why[256];
	current(d, &snap, &files);
	if (made && resolve(d, p, snap, false, devs, made, &n, NULL, why, sizeof(why)) == 0)
		(void)dra_claim_status_body(d->driver_name, d->node_name, p->namespace, p->name, p->uid, devs, n,
					    ret_status);
	free(made);
	npu_snapshot_unref(snap);
	host_files_unref(files);
}

/* The answer: a copy of the record p. */
static int answer(const struct dra_prepared *p, struct dra_prepared **ret)
{
	struct dra_prepared *copy = copy_prepared(p);
	if (!copy)
		return -ENOMEM;
	*ret = copy;
	return 0;
}

/* The answer from the record p, its spec written again. */
static int answer_recorded(struct dra_driver *d, const struct dra_prepared *p, struct dra_prepared **ret, char *why,
			   size_t why_size)
{
	int r = write_spec(d, p, false, why, why_size);
	return r < 0 ? r : answer(p, ret);
}

/* Gives the claim's placements their vNPU ids (dra/vnpus.h). */
static int plan_vnpus(struct dra_driver *d, struct dra_prepared *p, char *why, size_t why_size)
{
	struct npu_snapshot *snap;
	struct host_files *files;
	bool any = false;
	for (size_t j = 0; j < p->n_devices && !any; j++) {
		uint32_t phy;
		const char *t;
		any = dra_vnpu_placement(&p->devices[j], &phy, &t);
	}
	if (!any)
		return 0;
	if (!d->carver.create)
		return why_invalid(why, why_size, "device %s is a dynamic vNPU, and this node cannot create vNPUs",
				   p->devices[0].device);
	current(d, &snap, &files);
	int r = dra_vnpus_plan(p, snap, d->has_dynamic ? &d->dynamic : NULL, &d->checkpoint, why, why_size);
	npu_snapshot_unref(snap);
	host_files_unref(files);
	return r;
}

/* Records a claim whose vNPUs are to be created, before DCMI makes them
 * (durably: a vNPU must never exist that no record names). Takes p over.
 * Returns -EINPROGRESS: the caller creates them outside the lock. */
static int record_intent(struct dra_driver *d, struct dra_prepared *p, char *why, size_t why_size)
{
	int r = keep(d, p, true, why, why_size);
	return r < 0 ? r : -EINPROGRESS;
}

/* A claim read from the API server: checked against the claims recorded
 * now, its spec written, recorded, answered. A call for the same claim that
 * recorded it meanwhile has made the answer. */
static int prepare_read(struct dra_driver *d, const char *ns, const char *uid, const char *name,
			const struct dra_claim *claim, struct dra_prepared **ret, char **ret_status, char *why,
			size_t why_size)
{
	struct dra_prepared *p = dra_checkpoint_find(&d->checkpoint, uid);
	if (p)
		return dra_vnpus_pending(p) ? -EINPROGRESS : answer_recorded(d, p, ret, why, why_size);
	int r = take_claim(d, ns, uid, name, claim, &p, why, why_size);
	if (r < 0)
		return r;
	if ((r = plan_vnpus(d, p, why, why_size)) < 0) {
		free(p);
		return r;
	}
	if (dra_vnpus_pending(p))
		return record_intent(d, p, why, why_size);
	if ((r = record(d, p, why, why_size)) < 0)
		return r;
	p = dra_checkpoint_find(&d->checkpoint, uid);
	if (d->reader.prepared)
		status_of(d, p, ret_status);
	return answer(p, ret);
}

/* A placement's vNPU, outside the lock. */
struct carving {
	size_t index; /* in the record's devices */
	uint32_t phy, id;
	const char *template_name;
	bool created;
};

/* The vNPUs of record p (pending_only: those not created yet), into c. */
static size_t carvings_of(const struct dra_prepared *p, bool pending_only, struct carving *c)
{
	size_t n = 0;
	for (size_t j = 0; j < p->n_devices; j++) {
		const struct dra_result *res = &p->devices[j];
		uint32_t phy;
		const char *t;
		if (!res->vnpu_id || (pending_only && res->vnpu_created) || !dra_vnpu_placement(res, &phy, &t))
			continue;
		c[n++] = (struct carving){ .index = j, .phy = phy, .id = res->vnpu_id, .template_name = t };
	}
	return n;
}

static int64_t deadline_of(const struct dra_read_limits *limits)
{
	return limits && limits->deadline_ms ? limits->deadline_ms : now_ms() + DRA_CARVE_TIMEOUT_MS;
}

/* Creates the vNPUs of claim uid's record, then records them created, writes
 * its spec and answers. A create that fails destroys what this call made and
 * drops the record: the claim fails as a whole and leaves nothing behind. */
static int carve(struct dra_driver *d, const char *uid, const struct dra_read_limits *limits,
		 struct dra_prepared **ret, char **ret_status, char *why, size_t why_size)
{
	struct carving c[DRA_CLAIM_RESULTS_MAX];
	size_t n = 0;
	int r = enter(d, why, why_size);
	const struct dra_prepared *p = r == 0 ? dra_checkpoint_find(&d->checkpoint, uid) : NULL;
	if (r == 0 && !p)
		r = why_invalid(why, why_size, "claim %s was unprepared while its vNPUs were to be created", uid);
	if (r == 0)
		n = carvings_of(p, true, c);
	leave(d);
	if (r < 0)
		return r;

	int64_t deadline = deadline_of(limits);
	for (size_t i = 0; i < n && r == 0; i++)
		if ((r = d->carver.create(d->carver.ctx, c[i].phy, c[i].template_name, c[i].id, deadline, why,
					  why_size)) == 0)
			c[i].created = true;
	/* A create past its deadline may still be made by DCMI: the record
	 * stays, naming the vNPU as not created, for the kubelet's next
	 * prepare to finish (or its unprepare to destroy). Only a refusal
	 * leaves nothing behind. */
	if (r == -ETIMEDOUT)
		return r;
	if (r < 0) {
		char ignored[256];
		for (size_t i = 0; i < n; i++)
			if (c[i].created)
				(void)d->carver.destroy(d->carver.ctx, c[i].phy, c[i].id, deadline_of(NULL), ignored,
							sizeof(ignored));
		if (enter(d, ignored, sizeof(ignored)) == 0 && dra_checkpoint_drop(&d->checkpoint, uid))
			(void)save(d, true, ignored, sizeof(ignored));
		leave(d);
		return r;
	}

	if ((r = enter(d, why, why_size)) == 0) {
		struct dra_prepared *rec = dra_checkpoint_find(&d->checkpoint, uid);
		if (!rec) {
			r = why_invalid(why, why_size, "claim %s was unprepared while its vNPUs were created", uid);
		} else {
			for (size_t i = 0; i < n; i++)
				rec->devices[c[i].index].vnpu_created = true;
			if ((r = write_spec(d, rec, false, why, why_size)) == 0 &&
			    (r = save(d, false, why, why_size)) == 0) {
				if (d->reader.prepared)
					status_of(d, rec, ret_status);
				r = answer(rec, ret);
			}
		}
	}
	leave(d);
	return r;
}

/* Destroys the vNPUs claim uid's record names (one already gone is no
 * error), outside the lock. */
static int uncarve(struct dra_driver *d, const struct carving *c, size_t n, char *why, size_t why_size)
{
	int64_t deadline = deadline_of(NULL);
	for (size_t i = 0; i < n; i++) {
		int r = d->carver.destroy ? d->carver.destroy(d->carver.ctx, c[i].phy, c[i].id, deadline, why, why_size)
					  : -ENOENT;
		if (r < 0 && r != -ENOENT)
			return r;
	}
	return 0;
}

int dra_driver_prepare_recorded(struct dra_driver *d, const char *ns, const char *uid, const char *name,
				struct dra_prepared **ret_prepared, char *why, size_t why_size)
{
	int r = check_request(ns, uid, name, why, why_size);
	if (r < 0)
		return r;
	/* Prepared before: the same answer, and the spec there again. */
	if ((r = enter(d, why, why_size)) == 0) {
		const struct dra_prepared *p = dra_checkpoint_find(&d->checkpoint, uid);
		/* A vNPU still to create: only dra_driver_prepare may wait on DCMI. */
		r = !p || dra_vnpus_pending(p) ? -ENODATA : answer_recorded(d, p, ret_prepared, why, why_size);
	}
	leave(d);
	if (r == -ENOMEM && !why[0])
		snprintf(why, why_size, "out of memory");
	return r;
}

int dra_driver_prepare(struct dra_driver *d, const char *ns, const char *uid, const char *name,
		       const struct dra_read_limits *limits, struct dra_prepared **ret_prepared, char *why,
		       size_t why_size)
{
	static const struct dra_read_limits unlimited = { .deadline_ms = 0, .abort_fd = -1 };
	int r = dra_driver_prepare_recorded(d, ns, uid, name, ret_prepared, why, why_size);
	if (r != -ENODATA)
		return r;
	struct dra_claim *claim = NULL;
	char *status = NULL;
	/* Recorded with a vNPU still to create (a crash, a create past its
	 * deadline): no need to read the claim again. */
	bool pending = false;
	if ((r = enter(d, why, why_size)) == 0) {
		const struct dra_prepared *p = dra_checkpoint_find(&d->checkpoint, uid);
		pending = p && dra_vnpus_pending(p);
	}
	leave(d);
	if (r < 0)
		return r;
	r = pending ? -EINPROGRESS : read_claim(d, ns, name, limits ? limits : &unlimited, &claim, why, why_size);
	if (r == 0) {
		if ((r = enter(d, why, why_size)) == 0)
			r = prepare_read(d, ns, uid, name, claim, ret_prepared, &status, why, why_size);
		leave(d);
	}
	if (r == -EINPROGRESS)
		r = carve(d, uid, limits ? limits : &unlimited, ret_prepared, &status, why, why_size);
	/* Outside the lock: the sink queues, but takes a lock of its own. */
	if (r == 0 && status)
		d->reader.prepared(d->reader.ctx, ns, name, status);
	free(status);
	free(claim);
	if (r == -ENOMEM && !why[0])
		snprintf(why, why_size, "out of memory");
	return r;
}

int dra_driver_unprepare(struct dra_driver *d, const char *uid, char *why, size_t why_size)
{
	char file[CDI_KIND_MAX + DRA_UID_MAX + 8];
	int r = check_request("-", uid, "-", why, why_size);
	if (r < 0)
		return r;
	if ((r = enter(d, why, why_size)) < 0)
		goto out;
	if ((r = spec_file_name(d, uid, file, sizeof(file))) < 0 || (r = cdi_spec_remove(d->cdi_dir, file)) < 0) {
		snprintf(why, why_size, "cannot remove the CDI spec of claim %s: %s", uid, strerror(-r));
		goto out;
	}
	remove_status(d, uid);
	/* Its vNPUs go before its record: a vNPU never outlives the record
	 * that names it. */
	const struct dra_prepared *p = dra_checkpoint_find(&d->checkpoint, uid);
	struct carving c[DRA_CLAIM_RESULTS_MAX];
	size_t n = p ? carvings_of(p, false, c) : 0;
	if (n) {
		leave(d);
		if ((r = uncarve(d, c, n, why, why_size)) < 0)
			return r;
		if ((r = enter(d, why, why_size)) < 0)
			goto out;
	}
	/* A failure is said, so that the kubelet calls again and the save is
	 * retried. */
	if (dra_checkpoint_drop(&d->checkpoint, uid) || d->file_stale)
		r = save(d, true, why, why_size);
out:
	leave(d);
	return r;
}
