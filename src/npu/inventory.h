/* SPDX-License-Identifier: Apache-2.0 */
/* The node's NPU inventory: which chips exist and whether each is healthy,
 * from DCMI or from the device files, published as immutable reference-counted
 * snapshots. One owner (the daemon's loop thread) refreshes it; any thread
 * may read a snapshot it holds a reference to.
 *
 * Health rules: DCMI health 0 or 1 is Healthy; 2, 3, absent or a failing
 * health call is Unhealthy; a missing <dev_dir>/davinci<phy> makes that chip
 * Unhealthy; a missing <dev_dir>/davinci_manager makes every chip Unhealthy.
 * A DCMI call for a chip that does not return in time (npu/dcmi.h) makes
 * that chip Unhealthy until its calls answer again; while DCMI is stuck in
 * another chip's call, a chip keeps the health it had (it could not be
 * asked), and the chip list stays as it was.
 *
 * vNPUs: the static vNPUs of each chip come from DCMI (with their template)
 * and from the <dev_dir>/vdavinci<id> nodes (without: a vNPU known only by
 * its node keeps the template last read from DCMI, else none). A vNPU is as
 * healthy as its chip, and Unhealthy when its node is missing; it sits where
 * its chip sits.
 *
 * Placement: each chip's PCI address comes from DCMI
 * (dcmi_get_device_pcie_info_v2) where it answers, else from the sysfs link
 * of its device node (/sys/dev/char/<major>:<minor>/device); its NUMA node is
 * then the numa_node of that PCI device (npu/sysfs.h). Both are read when a
 * chip is first listed, and again when it comes back: after it left the
 * list, after its device node (or davinci_manager) was missing, or when its
 * DCMI address changed (DCMI loaded after the device-file fallback). A chip
 * that stays listed keeps what was read, since a PCI device does not move
 * while the machine runs.
 *
 * Network identity: each chip's RoCE address and link are read from DCMI at
 * every refresh (an administrator may set an address with hccn_tool while
 * the node runs, and a link comes and goes), its super pod place with its
 * placement. A call that fails or does not return keeps what was read
 * before; a call the library or the family does not have leaves the field
 * absent. The link never makes a chip Unhealthy here: a chip without a
 * working RoCE link still serves a single-server pod (the fault policy may
 * judge it otherwise).
 *
 * Device-share: each chip's mode is read from DCMI at every refresh (an
 * administrator may switch it with npu-smi while the node runs); the
 * inventory only reads it, what it means for time-slicing is
 * plugin/replica.h's. */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/pci.h"
#include "npu/chip.h"
#include "npu/dcmi.h"
#include "npu/sysfs.h"

enum npu_backend_mode {
	NPU_BACKEND_AUTO,  /* DCMI when it loads, else device files; keeps trying DCMI */
	NPU_BACKEND_DCMI,  /* DCMI only: no chips until it loads */
	NPU_BACKEND_DEVFS, /* device files only */
};

/* Parses "auto", "dcmi" or "devfs". */
int npu_backend_mode_parse(const char *s, enum npu_backend_mode *ret_mode);
const char *npu_backend_mode_name(enum npu_backend_mode mode);

/* Why a device is Unhealthy, most fundamental first. */
enum npu_fault {
	NPU_FAULT_NONE,
	NPU_FAULT_DRIVER_NOT_READY, /* davinci_manager missing */
	NPU_FAULT_NODE_MISSING,     /* davinci<phy> missing */
	NPU_FAULT_ABSENT,           /* DCMI reports the chip absent */
	NPU_FAULT_HEALTH_CALL,      /* dcmi_get_device_health failed */
	NPU_FAULT_HEALTH_LEVEL,     /* DCMI health 2 (major) or 3 (critical) */
	NPU_FAULT_DISCOVERY,        /* DCMI failed to list the chips at all */
	NPU_FAULT_VENDOR_TIMEOUT,   /* a DCMI call for the chip did not return in time */
	NPU_FAULT_POLICY,           /* DCMI finds it well, the fault policy keeps it out (policy_note) */
};

#define NPU_DEVICE_ID_MAX 16
/* Error codes kept per chip: what the fault policy follows at once. */
#define NPU_FAULT_CODES_KEPT 16
#define NPU_POLICY_NOTE_MAX 128

/* A chip's device-share mode (dcmi_get_device_share_enable): whether
 * containers may share it. Unknown without DCMI, when the library or the
 * chip lacks the call, and until it was read once. */
enum npu_share {
	NPU_SHARE_UNKNOWN,
	NPU_SHARE_OFF,
	NPU_SHARE_ON,
};

enum npu_device_kind {
	NPU_DEVICE_CHIP,
	NPU_DEVICE_VNPU,
};

struct npu_device {
	/* "npu-<phy>" for a chip, "vnpu-<id>" for a vNPU: stable across
	 * restarts and reboots. */
	char id[NPU_DEVICE_ID_MAX];
	enum npu_device_kind kind;
	struct npu_chip chip; /* a vNPU's: the chip it is carved from */
	/* A chip: how many vNPUs are carved from it (then it is not handed out
	 * whole). A vNPU: its id and template. */
	unsigned vnpu_count;
	struct npu_vnpu vnpu;
	bool healthy;
	enum npu_fault fault;
	unsigned int dcmi_health; /* raw DCMI health when read */
	int dcmi_code;            /* the failing health call's code */
	const char *overdue_call; /* VENDOR_TIMEOUT (or DISCOVERY): the DCMI call that did not return */
	int dev_error;            /* DRIVER_NOT_READY: negative errno when davinci_manager could not
				   * be checked (an unreadable dev dir), 0 when it is missing */
	unsigned int fault_codes[NPU_FAULT_CODES_KEPT]; /* read at DCMI health 1 and above */
	size_t n_fault_codes;
	/* Set by whoever applies a fault policy to a snapshot: the level, code
	 * and rule behind its verdict ("RestartBusiness, code 80E01801, code
	 * table"); empty when none judged the device. */
	char policy_note[NPU_POLICY_NOTE_MAX];
	bool policy_judged;    /* a fault policy judged the chip at this refresh */
	unsigned policy_level; /* its level by severity, 0 none (fault/policy.h's order) */
	uint32_t policy_code;  /* the code behind the level, 0 none */
	const char *policy_level_name; /* the level's name ("RestartBusiness"), NULL when none judged */
	/* Wall-clock ms (CLOCK_REALTIME) since when the device's health, level
	 * and code have been what they are, as the fault stage first saw them;
	 * 0 when unknown. */
	int64_t since_ms;
	/* Placement (see the top of this file). */
	char pci_address[PCI_ADDRESS_SIZE]; /* "0000:3b:00.0"; empty when not found */
	char pcie_root[SYSFS_PCIE_ROOT_SIZE]; /* "pci0000:3a" (npu/sysfs.h); empty when not found */
	bool has_numa;
	uint32_t numa_node;
	int numa_error; /* without has_numa: why, a negative errno of the step that failed */
	/* A chip's network identity (npu/chip.h), from DCMI: the RoCE address
	 * and link at every refresh, the super pod with the placement. */
	struct npu_net net;
	/* The chip's device-share mode, read at every refresh (a vNPU has its
	 * chip's); a call that fails keeps what was read. */
	enum npu_share share;
};

struct npu_snapshot {
	atomic_uint refs;
	size_t count;
	size_t healthy;
	struct npu_device devices[]; /* the chips by phy id, then the vNPUs by id */
};

/* Whether containers may share the device: not when its chip's device-share
 * mode is off (the driver then admits one container at a time); an unknown
 * mode is taken as allowing it, as before the mode was read. */
static inline bool npu_device_shareable(const struct npu_device *device)
{
	return device->share != NPU_SHARE_OFF;
}

/* The number a container sees the device by, in /dev/davinci<n> and in
 * ASCEND_VISIBLE_DEVICES: a chip's phy id, a vNPU's id. */
static inline uint32_t npu_device_number(const struct npu_device *device)
{
	return device->kind == NPU_DEVICE_VNPU ? device->vnpu.id : device->chip.phy_id;
}

/* The device's node on the host, without "/dev/": "davinci<phy>" for a
 * chip, "vdavinci<id>" for a vNPU (inside the container it is always
 * "davinci<n>"). */
static inline const char *npu_device_node_prefix(const struct npu_device *device)
{
	return device->kind == NPU_DEVICE_VNPU ? "vdavinci" : "davinci";
}

/* A snapshot of count zeroed devices with one reference, or NULL without memory. */
struct npu_snapshot *npu_snapshot_new(size_t count);
/* Both take NULL (base/refcount.h). */
struct npu_snapshot *npu_snapshot_ref(struct npu_snapshot *snapshot);
void npu_snapshot_unref(struct npu_snapshot *snapshot);
const struct npu_device *npu_snapshot_find(const struct npu_snapshot *snapshot, const char *id);

/* Whether two snapshots list the same ids with the same health, NUMA nodes,
 * vNPU templates, vNPU counts, network identity and device-share modes. */
bool npu_snapshot_same(const struct npu_snapshot *a, const struct npu_snapshot *b);

/* A readable reason for an Unhealthy device, e.g. "DCMI health 3 (critical),
 * error codes 80E01801". */
void npu_device_describe(const struct npu_device *device, char *buf, size_t size);

/* The fault's name for the log's JSON fields, e.g. "health-level" or
 * "absent": a name that stays when npu_device_describe's words change. */
const char *npu_fault_name(enum npu_fault fault);

/* Where the chip sits, e.g. "NUMA node 1 (PCI 0000:3b:00.0)", or why its
 * NUMA node is unknown, e.g. "numa_node of PCI 0000:3b:00.0 is -1, the
 * kernel knows no node for it". */
void npu_device_describe_numa(const struct npu_device *device, char *buf, size_t size);

struct inventory_options {
	enum npu_backend_mode backend;
	struct dcmi_search dcmi;
	const char *dev_dir;
	const char *host_root; /* where the host's / is visible: sysfs is read under it (NULL: "/") */
	/* Receives DCMI fault events on a vendor thread; it must only wake the
	 * owner. Never called once inventory_free has returned. */
	dcmi_fault_fn on_fault_event;
	void *fault_ctx;
};

enum inventory_source {
	INVENTORY_SOURCE_NONE,
	INVENTORY_SOURCE_DCMI,
	INVENTORY_SOURCE_DEVFS,
};

/* What the owner reports when it changes: the inventory itself never logs. */
struct inventory_status {
	enum inventory_source source;
	char dcmi_path[512];     /* the library in use */
	char dcmi_why[768];      /* why DCMI is not in use, empty when it is */
	int dcmi_open_error;     /* the negative errno of the last failed load */
	bool events;             /* subscribed to DCMI fault events */
	int events_error;        /* why not, when DCMI is loaded */
	bool driver_ready;       /* davinci_manager exists (and could be checked) */
	char driver_version[64]; /* from DCMI, empty if unknown */
	struct dcmi_error discovery_error; /* last failing DCMI call in discovery */
	/* Negative errno when the dev dir could not be read: listing it
	 * (devfs backend) or checking davinci_manager in it (every backend).
	 * When set, driver_ready is false because of it, not because
	 * davinci_manager is missing; 0 otherwise. */
	int devfs_error;
	/* The library or a chip answered that it lacks the device-share call:
	 * those chips' mode is unknown. */
	bool share_unsupported;
};

struct inventory;

int inventory_new(const struct inventory_options *options, struct inventory **ret_inventory);
void inventory_free(struct inventory *inventory);

/* Loads DCMI if due, rediscovers the chips and re-reads their health. Sets
 * *ret_changed when the ids or health differ from the previous snapshot. */
int inventory_refresh(struct inventory *inventory, bool *ret_changed);

/* Asks for a rediscovery (SIGHUP): the next refresh whose listing
 * succeeds lists only the chips that exist then, and a chip that vanished
 * is dropped instead of kept Unhealthy. Until a listing succeeds (DCMI
 * stuck in a chip's call, or failing), the chips known so far stay as they
 * are: a reload never withdraws what it cannot see anew. Each chip is still
 * judged by its own calls, with what was known of it before. */
void inventory_rediscover(struct inventory *inventory);

/* The latest snapshot, with a new reference. Never NULL after inventory_new. */
struct npu_snapshot *inventory_snapshot(struct inventory *inventory);

const struct inventory_status *inventory_status(const struct inventory *inventory);

/* The DCMI library the inventory reads, for further calls from the owner's
 * thread (telemetry), or NULL when DCMI is not in use. Valid until the next
 * inventory_refresh or inventory_free. */
struct dcmi_lib *inventory_dcmi(struct inventory *inventory);
