/* SPDX-License-Identifier: Apache-2.0 */
/* The node's CDI (Container Device Interface) spec, for the cdi device-list
 * strategy: one JSON file whose kind is the resource name, with one device
 * per chip, named by its physical id, and the files every chip needs as
 * spec-wide edits. The container runtime reads it and injects what the
 * kubelet's CDI device names (or the annotation) ask for. Format: the CDI
 * specification, github.com/cncf-tags/container-device-interface SPEC.md.
 *
 * What it holds, for "ascend.com/npu":
 *   devices[]: name "<phy>", deviceNodes /dev/davinci<phy>;
 *   containerEdits: deviceNodes of the family's shared nodes, and read-only
 *   bind mounts of the driver paths (the same as Allocate's native answer,
 *   see node/host_files.h).
 * Device nodes carry type "c", major, minor and fileMode from stat() of the
 * node under the dev dir; a node that is not a character device there gets
 * path and hostPath only, and the runtime looks it up when a container starts.
 *
 * A spec can also hold one CDI device for a group of chips (a DRA claim's,
 * cdi_group_spec_render): that device carries all their nodes and
 * ASCEND_VISIBLE_DEVICES, which one device can list whole (and, for vNPUs,
 * ASCEND_RUNTIME_OPTIONS=VIRTUAL; node/visible.h).
 *
 * ASCEND_VISIBLE_DEVICES is not in the node's spec: CDI applies each requested
 * device's env edits in turn, each replacing the variable, so a list of the
 * chips of a request cannot be built from per-device edits. Allocate keeps
 * it in its answer's envs.
 *
 * The file is written atomically: a temp file in the same directory whose
 * name does not end in .json (runtimes never load it), then rename(). */
#pragma once

#include <stddef.h>

#include "base/k8s_names.h"
#include "npu/inventory.h"
#include "node/host_files.h"

/* A vendor is a DNS subdomain and a class a name, as in a resource name. */
#define CDI_KIND_MAX (K8S_DNS_SUBDOMAIN_MAX + 1 + K8S_NAME_MAX + 1)
#define CDI_ANNOTATION_PREFIX "cdi.k8s.io/"
/* The annotation key's part after the prefix is a name. */
#define CDI_ANNOTATION_KEY_MAX (sizeof(CDI_ANNOTATION_PREFIX) - 1 + K8S_NAME_MAX + 1)

struct cdi_names {
	char kind[CDI_KIND_MAX];                /* "<vendor>/<class>": the resource name */
	char file_name[CDI_KIND_MAX + 5];       /* "<vendor>-<class>.json" */
	char annotation_key[CDI_ANNOTATION_KEY_MAX]; /* "cdi.k8s.io/<vendor>_<class>" */
	const char *version;                    /* the lowest cdiVersion that expresses the spec */
};

/* Derives the CDI names from an extended resource name (already checked
 * with k8s_extended_resource_name_check). Returns 0, or -EINVAL with the
 * reason in why when the name cannot be a CDI kind (vendor and class must
 * start with a letter) or makes an annotation key over 63 characters. */
int cdi_names_from_resource(const char *resource_name, struct cdi_names *ret_names, char *why, size_t why_size);

/* The spec for the snapshot's devices (whatever their health) as JSON text
 * ending in a newline, malloc'd, in *ret_json. The shared nodes and mounts
 * are the files' (the loop's last scan); the device nodes' numbers are read
 * under paths->dev_dir now. Returns 0, -EINVAL when the
 * snapshot has no devices (a spec without devices is invalid) or -ENOMEM. */
int cdi_spec_render(const struct cdi_names *names, const struct npu_snapshot *snapshot,
		    const struct host_paths *paths, const struct host_files *files, char **ret_json);

/* Devices handed out together as one CDI device (a DRA claim's): the
 * device edits carry every device's node and ASCEND_VISIBLE_DEVICES with
 * their numbers (one device, so nothing replaces the list),
 * ASCEND_RT_VISIBLE_DEVICES and the live status file, the spec-wide
 * edits the shared nodes of their families and the driver paths. */
#define CDI_GROUP_MAX 64
struct cdi_mount {
	const char *host_path, *container_path;
};
/* A CDI device of one member of the group alone: its node, under a name of
 * its own. The kubelet shows a claim's devices' health in the pod's status
 * by the first CDI id of each (pkg/kubelet/cm/dra), and refuses (1.34,
 * 1.35) or merges (later) two that share it, so each result of a claim
 * needs an id of its own besides the group's. */
struct cdi_part {
	const char *name;
	const struct npu_device *device;
};
struct cdi_group {
	const char *name; /* the CDI device's name, e.g. a claim's uid */
	const struct npu_device *const *devices;
	size_t n_devices; /* 1 to CDI_GROUP_MAX */
	/* The group's live status file (node/status_files.h): its directory,
	 * mounted read-only at status_container_dir, and ASCEND_NPU_STATUS
	 * naming the file there; NULL: none. */
	const char *status_host_dir, *status_container_dir;
	/* Read-only bind mounts besides (a claim's device metadata files). */
	const struct cdi_mount *mounts;
	size_t n_mounts;
	/* One CDI device more per part; none when n_parts is 0. */
	const struct cdi_part *parts;
	size_t n_parts; /* at most CDI_GROUP_MAX */
};

/* The spec for one group as JSON text ending in a newline, malloc'd, in
 * *ret_json. Returns 0, -EINVAL for an empty group, an empty name, more
 * than CDI_GROUP_MAX devices or parts, or a part without a name, or -ENOMEM. */
int cdi_group_spec_render(const struct cdi_names *names, const struct cdi_group *group,
			  const struct host_paths *paths, const struct host_files *files, char **ret_json);

/* Replaces <dir>/<file_name> with json atomically (mode 0644): written to
 * <dir>/.<file_name>.tmp, synced, renamed over the file, the directory
 * synced. A reader sees the old file or the new one, never a part. Returns
 * 0 or a negative errno, leaving no temp file behind. */
int cdi_spec_write(const char *dir, const char *file_name, const char *json);

/* Removes <dir>/<file_name> and a temp file a crash may have left. Returns
 * 0 (also when there was nothing to remove) or a negative errno. */
int cdi_spec_remove(const char *dir, const char *file_name);
