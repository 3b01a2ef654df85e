/* SPDX-License-Identifier: Apache-2.0 */
#include "npu/inventory.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/macro.h"
#include "base/parse.h"
#include "base/refcount.h"
#include "base/strbuf.h"
#include "npu/dcmi_load.h"
#include "npu/devfs.h"
#include "npu/sysfs.h"

/* How long the first load of DCMI is waited for: the first device list is
 * DCMI's when it loads in time, and SIGTERM at start still ends the daemon
 * within 2 s when it does not (the load goes on; see npu/dcmi_load.h). */
#define DCMI_LOAD_WAIT_MS 1500
/* A later load is waited for this long: a library that is missing or
 * refused answers at once, and a hanging one costs the loop this once, not
 * at every refresh (no second load starts while one runs). */
#define DCMI_RELOAD_WAIT_MS 100

struct inventory {
	enum npu_backend_mode mode;
	struct dcmi_search search;
	char dev_dir[4096];
	char host_root[4096];
	dcmi_fault_fn on_fault_event;
	void *fault_ctx;

	struct dcmi_lib *dcmi;
	struct dcmi_load *loading; /* a load under way, NULL when none */
	bool load_waited;            /* the first load was waited for */
	struct inventory_status status;
	struct npu_snapshot *current;
	struct npu_chip chips[NPU_MAX_CHIPS];
	struct npu_vnpu vnpus[NPU_MAX_VNPUS];      /* from DCMI */
	struct npu_vnpu vnpu_nodes[NPU_MAX_VNPUS]; /* from the device files */
	/* The templates DCMI gave, kept while the vNPU's node stays (and across
	 * inventory_rediscover): a vNPU DCMI stops listing is still that template. */
	struct npu_vnpu templates[NPU_MAX_VNPUS];
	size_t n_templates;
	/* A rediscovery was asked for and no listing has succeeded since. */
	bool rediscover;
};

static const char *const mode_names[] = {
	[NPU_BACKEND_AUTO] = "auto",
	[NPU_BACKEND_DCMI] = "dcmi",
	[NPU_BACKEND_DEVFS] = "devfs",
};

int npu_backend_mode_parse(const char *s, enum npu_backend_mode *ret_mode)
{
	for (size_t i = 0; i < ELEMENTSOF(mode_names); i++) {
		if (strcmp(s, mode_names[i]) == 0) {
			*ret_mode = (enum npu_backend_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *npu_backend_mode_name(enum npu_backend_mode mode)
{
	return mode_names[mode];
}

struct npu_snapshot *npu_snapshot_new(size_t count)
{
	struct npu_snapshot *s = calloc(1, sizeof(*s) + count * sizeof(struct npu_device));
	if (!s)
		return NULL;
	atomic_init(&s->refs, 1);
	s->count = count;
	return s;
}

DEFINE_REFCOUNT(struct npu_snapshot, npu_snapshot, free)

const struct npu_device *npu_snapshot_find(const struct npu_snapshot *s, const char *id)
{
	for (size_t i = 0; i < s->count; i++)
		if (strcmp(s->devices[i].id, id) == 0)
			return &s->devices[i];
	return NULL;
}

static bool npu_net_same(const struct npu_net *a, const struct npu_net *b)
{
	return a->has_ip == b->has_ip && a->ipv6 == b->ipv6 && memcmp(a->ip, b->ip, sizeof(a->ip)) == 0 &&
	       a->prefix_len == b->prefix_len && a->link == b->link && a->has_super_pod == b->has_super_pod &&
	       a->super_pod_id == b->super_pod_id && a->sdid == b->sdid && a->server_index == b->server_index;
}

bool npu_snapshot_same(const struct npu_snapshot *a, const struct npu_snapshot *b)
{
	if (a->count != b->count)
		return false;
	for (size_t i = 0; i < a->count; i++) {
		const struct npu_device *x = &a->devices[i], *y = &b->devices[i];
		if (strcmp(x->id, y->id) != 0 || x->healthy != y->healthy || x->has_numa != y->has_numa ||
		    (x->has_numa && x->numa_node != y->numa_node) || x->vnpu_count != y->vnpu_count ||
		    strcmp(x->vnpu.template_name, y->vnpu.template_name) != 0 || !npu_net_same(&x->net, &y->net) ||
		    x->share != y->share)
			return false;
	}
	return true;
}

void npu_device_describe(const struct npu_device *d, char *buf, size_t size)
{
	static const char *const levels[] = { "normal", "warning", "major", "critical" };
	struct strbuf sb;
	strbuf_init(&sb, buf, size, "...");

	switch (d->fault) {
	case NPU_FAULT_NONE:
		strbuf_printf(&sb, "healthy");
		break;
	case NPU_FAULT_DRIVER_NOT_READY:
		if (d->dev_error)
			strbuf_printf(&sb, "driver state unknown (cannot check davinci_manager: %s)",
				      strerror(-d->dev_error));
		else
			strbuf_printf(&sb, "driver not ready (davinci_manager missing)");
		break;
	case NPU_FAULT_NODE_MISSING:
		if (d->kind == NPU_DEVICE_VNPU)
			strbuf_printf(&sb, "device node vdavinci%u missing", d->vnpu.id);
		else
			strbuf_printf(&sb, "device node davinci%u missing", d->chip.phy_id);
		break;
	case NPU_FAULT_ABSENT:
		strbuf_printf(&sb, "DCMI reports the chip absent");
		break;
	case NPU_FAULT_DISCOVERY:
		if (d->overdue_call)
			strbuf_printf(&sb, "DCMI cannot list the chips (%s did not return within %d ms)",
				      d->overdue_call, DCMI_CALL_DEADLINE_MS);
		else
			strbuf_printf(&sb, "DCMI cannot list the chips (error %d)", d->dcmi_code);
		break;
	case NPU_FAULT_VENDOR_TIMEOUT:
		strbuf_printf(&sb, "the vendor call %s did not return within %d ms", d->overdue_call ? d->overdue_call : "?",
			      DCMI_CALL_DEADLINE_MS);
		break;
	case NPU_FAULT_HEALTH_CALL:
		strbuf_printf(&sb, "dcmi_get_device_health failed with %d", d->dcmi_code);
		break;
	case NPU_FAULT_HEALTH_LEVEL:
		strbuf_printf(&sb, "DCMI health %u (%s)", d->dcmi_health,
			      d->dcmi_health < ELEMENTSOF(levels) ? levels[d->dcmi_health] : "unknown");
		break;
	case NPU_FAULT_POLICY:
		strbuf_printf(&sb, "DCMI health %u (%s)", d->dcmi_health,
			      d->dcmi_health < ELEMENTSOF(levels) ? levels[d->dcmi_health] : "unknown");
		break;
	}
	for (size_t i = 0; i < d->n_fault_codes; i++)
		strbuf_printf(&sb, "%s%08X", i == 0 ? ", error codes " : ",", d->fault_codes[i]);
	if (d->policy_note[0] && !d->healthy)
		strbuf_printf(&sb, "; fault policy: %s", d->policy_note);
}

const char *npu_fault_name(enum npu_fault fault)
{
	static const char *const names[] = {
		[NPU_FAULT_NONE] = "none",
		[NPU_FAULT_DRIVER_NOT_READY] = "driver-not-ready",
		[NPU_FAULT_NODE_MISSING] = "node-missing",
		[NPU_FAULT_ABSENT] = "absent",
		[NPU_FAULT_HEALTH_CALL] = "health-call",
		[NPU_FAULT_HEALTH_LEVEL] = "health-level",
		[NPU_FAULT_DISCOVERY] = "discovery",
		[NPU_FAULT_VENDOR_TIMEOUT] = "vendor-timeout",
		[NPU_FAULT_POLICY] = "policy",
	};
	return (size_t)fault < ELEMENTSOF(names) && names[fault] ? names[fault] : "unknown";
}

void npu_device_describe_numa(const struct npu_device *d, char *buf, size_t size)
{
	struct strbuf sb;
	strbuf_init(&sb, buf, size, "...");

	if (d->has_numa) {
		strbuf_printf(&sb, "NUMA node %u (PCI %s)", d->numa_node, d->pci_address);
		return;
	}
	if (!d->pci_address[0]) {
		/* Only the device-node route is left to explain: DCMI, when it
		 * was asked (a chip with a DCMI address), gave none. */
		bool asked_dcmi = d->chip.card_id >= 0 && d->chip.device_id >= 0;
		strbuf_printf(&sb, "no PCI address: %s", asked_dcmi ? "none from DCMI, and " : "");
		if (d->numa_error == -ENODEV)
			strbuf_printf(&sb, "davinci%u is not a character device", d->chip.phy_id);
		else if (d->numa_error == -ENOENT)
			strbuf_printf(&sb, "davinci%u has no sysfs device link, or is missing", d->chip.phy_id);
		else if (d->numa_error == -EINVAL)
			strbuf_printf(&sb, "the sysfs parent of davinci%u is not a PCI device", d->chip.phy_id);
		else
			strbuf_printf(&sb, "davinci%u: %s", d->chip.phy_id, strerror(-d->numa_error));
	} else if (d->numa_error == -ENODATA) {
		strbuf_printf(&sb, "numa_node of PCI %s is -1, the kernel knows no node for it", d->pci_address);
	} else {
		strbuf_printf(&sb, "cannot read numa_node of PCI %s: %s", d->pci_address,
			      d->numa_error == -EINVAL ? "not a node number" : strerror(-d->numa_error));
	}
}

int inventory_new(const struct inventory_options *options, struct inventory **ret_inventory)
{
	struct inventory *inv = calloc(1, sizeof(*inv));
	if (!inv)
		return -ENOMEM;
	inv->mode = options->backend;
	inv->search = options->dcmi;
	inv->on_fault_event = options->on_fault_event;
	inv->fault_ctx = options->fault_ctx;
	int r = str_copy(inv->dev_dir, sizeof(inv->dev_dir), options->dev_dir);
	if (r < 0)
		goto fail;
	r = str_copy(inv->host_root, sizeof(inv->host_root), options->host_root ? options->host_root : "/");
	if (r < 0)
		goto fail;

	inv->current = npu_snapshot_new(0);
	if (!inv->current) {
		r = -ENOMEM;
		goto fail;
	}
	*ret_inventory = inv;
	return 0;

fail:
	free(inv);
	return r;
}

void inventory_free(struct inventory *inv)
{
	if (!inv)
		return;
	if (inv->status.events)
		dcmi_unsubscribe_faults();
	dcmi_load_abandon(inv->loading);
	dcmi_lib_close(inv->dcmi);
	npu_snapshot_unref(inv->current);
	free(inv);
}

/* Loads DCMI when the mode wants it and it is not loaded yet; subscribes to
 * fault events once loaded. A failure only means "not now". */
static void try_load_dcmi(struct inventory *inv)
{
	struct inventory_status *st = &inv->status;

	if (inv->mode == NPU_BACKEND_DEVFS)
		return;
	if (inv->dcmi) {
		/* Events may come later (DCMI's own daemon starting after us):
		 * until they do, ask again on every refresh. */
		if (!st->events && inv->on_fault_event) {
			st->events_error = dcmi_subscribe_faults(inv->dcmi, inv->on_fault_event, inv->fault_ctx);
			st->events = st->events_error == 0;
		}
		return;
	}
	/* Loading runs vendor code with no deadline of its own: on a thread of
	 * its own, waited for at the start only, and only so long. */
	int r = inv->loading ? 0 : dcmi_load_start(&inv->search, &inv->loading);
	if (r < 0) {
		st->dcmi_open_error = r;
		snprintf(st->dcmi_why, sizeof(st->dcmi_why), "cannot start loading it: %s", strerror(-r));
		return;
	}
	struct dcmi_load_result loaded;
	r = dcmi_load_take(inv->loading, inv->load_waited ? DCMI_RELOAD_WAIT_MS : DCMI_LOAD_WAIT_MS, &loaded);
	bool first = !inv->load_waited;
	inv->load_waited = true;
	if (r == -EINPROGRESS) {
		/* Said once; a retry under way keeps the reason the last one gave. */
		if (first) {
			st->dcmi_open_error = r;
			snprintf(st->dcmi_why, sizeof(st->dcmi_why),
				 "still loading: libdcmi.so or its dcmi_init has not returned yet");
		}
		return;
	}
	inv->loading = NULL;
	if (loaded.error < 0) {
		st->dcmi_open_error = loaded.error;
		_Static_assert(sizeof(st->dcmi_why) == sizeof(loaded.why), "same size");
		memcpy(st->dcmi_why, loaded.why, sizeof(st->dcmi_why));
		return;
	}
	inv->dcmi = loaded.lib;
	st->dcmi_open_error = 0;
	st->dcmi_why[0] = '\0';
	snprintf(st->dcmi_path, sizeof(st->dcmi_path), "%s", dcmi_lib_path(inv->dcmi));
	if (dcmi_driver_version(inv->dcmi, st->driver_version, sizeof(st->driver_version)) < 0)
		st->driver_version[0] = '\0';
	st->events_error = inv->on_fault_event ? dcmi_subscribe_faults(inv->dcmi, inv->on_fault_event, inv->fault_ctx)
					       : -EOPNOTSUPP;
	st->events = st->events_error == 0;
}

/* The health of a chip DCMI could not be asked about: what it was. */
static void keep_health(struct npu_device *d, const struct npu_device *before)
{
	d->fault = before->fault;
	d->dcmi_health = before->dcmi_health;
	d->dcmi_code = before->dcmi_code;
	d->overdue_call = before->overdue_call;
	d->n_fault_codes = before->n_fault_codes;
	memcpy(d->fault_codes, before->fault_codes, sizeof(d->fault_codes));
}

static void read_dcmi_health(struct inventory *inv, struct npu_device *d, const struct npu_device *before)
{
	unsigned int health;
	int r = dcmi_chip_health(inv->dcmi, &d->chip, &health);
	if (r == -EBUSY && before) {
		keep_health(d, before);
		return;
	}
	if (r == -ETIMEDOUT || r == -EBUSY) {
		d->fault = NPU_FAULT_VENDOR_TIMEOUT;
		d->overdue_call = dcmi_last_error(inv->dcmi).call;
		return;
	}
	if (r < 0) {
		d->fault = NPU_FAULT_HEALTH_CALL;
		d->dcmi_code = dcmi_last_error(inv->dcmi).code;
		return;
	}
	d->dcmi_health = health;
	if (health == DCMI_HEALTH_ABSENT)
		d->fault = NPU_FAULT_ABSENT;
	else if (health >= 2)
		d->fault = NPU_FAULT_HEALTH_LEVEL;
	/* A warning (health 1) carries codes too: the sub-health ones a fault
	 * policy counts without taking the chip out. */
	if (d->fault == NPU_FAULT_ABSENT || health == 0)
		return;

	unsigned int codes[DCMI_MAX_ERROR_CODES];
	size_t n = 0;
	if (dcmi_chip_error_codes(inv->dcmi, &d->chip, codes, DCMI_MAX_ERROR_CODES, &n) == 0) {
		d->n_fault_codes = n < NPU_FAULT_CODES_KEPT ? n : NPU_FAULT_CODES_KEPT;
		memcpy(d->fault_codes, codes, d->n_fault_codes * sizeof(codes[0]));
	}
}

static void judge_device(struct inventory *inv, struct npu_device *d, bool driver_ready,
			 const struct npu_device *before)
{
	char node[4200];

	d->fault = NPU_FAULT_NONE;
	d->overdue_call = NULL;
	if (!driver_ready) {
		d->fault = NPU_FAULT_DRIVER_NOT_READY;
		d->dev_error = inv->status.devfs_error;
	}
	else if (str_printf(node, sizeof(node), "%s/davinci%u", inv->dev_dir, d->chip.phy_id) < 0 ||
		 !path_exists(node))
		d->fault = NPU_FAULT_NODE_MISSING;
	else if (inv->status.source == INVENTORY_SOURCE_DCMI)
		read_dcmi_health(inv, d, before);
	d->healthy = d->fault == NPU_FAULT_NONE;
}

/* Finds the chip's PCI address (DCMI first, then the sysfs link of its
 * device node) and the NUMA node of that PCI device. */
static void locate_device(struct inventory *inv, struct npu_device *d)
{
	struct pci_address address;
	char node[4200];
	int r = -EOPNOTSUPP;

	d->pci_address[0] = '\0';
	d->pcie_root[0] = '\0';
	d->has_numa = false;
	if (inv->dcmi && d->chip.card_id >= 0 && d->chip.device_id >= 0)
		r = dcmi_chip_pci_address(inv->dcmi, &d->chip, &address);
	if (r < 0) {
		r = str_printf(node, sizeof(node), "%s/davinci%u", inv->dev_dir, d->chip.phy_id);
		if (r == 0)
			r = sysfs_char_device_pci_address(inv->host_root, node, &address);
	}
	if (r == 0)
		r = pci_address_format(&address, d->pci_address, sizeof(d->pci_address));
	/* The root complex is there on a real host; a test tree may lack it. */
	if (r == 0 && sysfs_pci_pcie_root(inv->host_root, &address, d->pcie_root, sizeof(d->pcie_root)) < 0)
		d->pcie_root[0] = '\0';
	if (r == 0)
		r = sysfs_pci_numa_node(inv->host_root, &address, &d->numa_node);
	d->has_numa = r == 0;
	d->numa_error = r;
}

/* Whether what was read about a chip's placement still holds: the chip
 * stayed listed with the same DCMI address and its device node there. */
static bool placement_holds(const struct npu_device *before, const struct npu_device *d)
{
	return before && before->fault != NPU_FAULT_NODE_MISSING && before->fault != NPU_FAULT_DRIVER_NOT_READY &&
	       before->chip.card_id == d->chip.card_id && before->chip.device_id == d->chip.device_id;
}

/* The RoCE address and link of a chip DCMI answers for (see the top of
 * inventory.h): a failed call keeps what the chip had. */
static void read_network(struct inventory *inv, struct npu_device *d, const struct npu_device *before)
{
	if (before) {
		d->net.has_ip = before->net.has_ip;
		d->net.ipv6 = before->net.ipv6;
		memcpy(d->net.ip, before->net.ip, sizeof(d->net.ip));
		d->net.prefix_len = before->net.prefix_len;
		d->net.link = before->net.link;
		d->net.link_code = before->net.link_code;
	}
	if (inv->status.source != INVENTORY_SOURCE_DCMI || d->fault == NPU_FAULT_ABSENT ||
	    d->fault == NPU_FAULT_VENDOR_TIMEOUT || d->fault == NPU_FAULT_NODE_MISSING)
		return;
	struct npu_net net = d->net;
	int r = dcmi_chip_roce_address(inv->dcmi, &d->chip, &net);
	if (r == -EOPNOTSUPP)
		net.has_ip = false;
	r = dcmi_chip_link(inv->dcmi, &d->chip, &net);
	if (r == -EOPNOTSUPP)
		net.link = NPU_LINK_UNKNOWN;
	d->net = net;
}

/* The chip's device-share mode (see the top of inventory.h): a call that
 * fails keeps what was read, one the library or the chip lacks makes it
 * unknown. */
static void read_share(struct inventory *inv, struct npu_device *d, const struct npu_device *before)
{
	d->share = before ? before->share : NPU_SHARE_UNKNOWN;
	if (inv->status.source != INVENTORY_SOURCE_DCMI || d->chip.card_id < 0 || d->fault == NPU_FAULT_ABSENT ||
	    d->fault == NPU_FAULT_VENDOR_TIMEOUT || d->fault == NPU_FAULT_NODE_MISSING)
		return;
	bool on;
	int r = dcmi_chip_share_mode(inv->dcmi, &d->chip, &on);
	if (r == 0) {
		d->share = on ? NPU_SHARE_ON : NPU_SHARE_OFF;
	} else if (r == -EOPNOTSUPP) {
		d->share = NPU_SHARE_UNKNOWN;
		inv->status.share_unsupported = true;
	}
}

/* An A3 chip's super pod place, read with its placement. */
static void read_super_pod(struct inventory *inv, struct npu_device *d)
{
	struct npu_net net = d->net;
	net.has_super_pod = false;
	if (inv->status.source == INVENTORY_SOURCE_DCMI && dcmi_chip_super_pod(inv->dcmi, &d->chip, &net) < 0)
		net.has_super_pod = false;
	d->net = net;
}

static void place_device(struct inventory *inv, const struct npu_device *before, struct npu_device *d)
{
	if (!placement_holds(before, d)) {
		locate_device(inv, d);
		read_super_pod(inv, d);
		return;
	}
	d->net.has_super_pod = before->net.has_super_pod;
	d->net.super_pod_id = before->net.super_pod_id;
	d->net.sdid = before->net.sdid;
	d->net.server_index = before->net.server_index;
	memcpy(d->pci_address, before->pci_address, sizeof(d->pci_address));
	memcpy(d->pcie_root, before->pcie_root, sizeof(d->pcie_root));
	d->has_numa = before->has_numa;
	d->numa_node = before->numa_node;
	d->numa_error = before->numa_error;
}

/* 0 when <dev_dir>/davinci_manager exists, -ENOENT when it does not, and
 * the real errno when that cannot be told: an unreadable dev dir is not a
 * driver that is not loaded, and must not be reported as one. */
static int check_manager(const struct inventory *inv)
{
	char manager[4200];
	struct stat st;
	int r = str_printf(manager, sizeof(manager), "%s/davinci_manager", inv->dev_dir);
	if (r < 0)
		return r;
	return stat(manager, &st) == 0 ? 0 : -errno;
}

/* Adds the chips of the current snapshot missing from chips[0..count). */
static size_t merge_known(struct inventory *inv, size_t count)
{
	size_t scanned = count;
	for (size_t i = 0; i < inv->current->count && count < NPU_MAX_CHIPS; i++) {
		if (inv->current->devices[i].kind != NPU_DEVICE_CHIP)
			break; /* the vNPUs follow the chips */
		const struct npu_chip *known = &inv->current->devices[i].chip;
		bool found = false;
		for (size_t j = 0; j < scanned && !found; j++)
			found = inv->chips[j].phy_id == known->phy_id;
		if (!found)
			inv->chips[count++] = *known;
	}
	qsort(inv->chips, count, sizeof(inv->chips[0]), npu_chip_compare_phy);
	return count;
}

/* The vNPUs: DCMI's (with templates) and the device files' (node present),
 * merged by id into inv->vnpus, sorted by id. Returns their number. A
 * failing DCMI query leaves that chip's vNPUs to the device files. */
static size_t discover_vnpus(struct inventory *inv, size_t chip_count, size_t *ret_nodes)
{
	size_t n = 0, nodes = 0;
	if (inv->status.source == INVENTORY_SOURCE_DCMI) {
		for (size_t i = 0; i < chip_count && n < NPU_MAX_VNPUS; i++) {
			size_t got = 0;
			if (inv->chips[i].card_id < 0 ||
			    dcmi_chip_vnpus(inv->dcmi, &inv->chips[i], inv->vnpus + n, NPU_MAX_VNPUS - n, &got) < 0)
				continue;
			n += got;
		}
	}
	if (devfs_scan_vnpus(inv->dev_dir, inv->vnpu_nodes, NPU_MAX_VNPUS, &nodes) < 0)
		nodes = 0;
	size_t from_dcmi = n;
	for (size_t i = 0; i < nodes && n < NPU_MAX_VNPUS; i++) {
		bool known = false;
		for (size_t j = 0; j < from_dcmi && !known; j++)
			known = inv->vnpus[j].id == inv->vnpu_nodes[i].id;
		if (known)
			continue;
		struct npu_vnpu v = inv->vnpu_nodes[i];
		for (size_t j = 0; j < inv->n_templates; j++)
			if (inv->templates[j].id == v.id)
				memcpy(v.template_name, inv->templates[j].template_name, sizeof(v.template_name));
		inv->vnpus[n++] = v;
	}
	/* What is known now is what the next refresh remembers. */
	inv->n_templates = 0;
	for (size_t i = 0; i < n; i++)
		if (inv->vnpus[i].template_name[0])
			inv->templates[inv->n_templates++] = inv->vnpus[i];
	for (size_t i = 1; i < n; i++) /* insertion sort: a few dozen at most */
		for (size_t j = i; j > 0 && inv->vnpus[j - 1].id > inv->vnpus[j].id; j--) {
			struct npu_vnpu t = inv->vnpus[j];
			inv->vnpus[j] = inv->vnpus[j - 1];
			inv->vnpus[j - 1] = t;
		}
	*ret_nodes = nodes;
	return n;
}

static bool vnpu_node_present(const struct inventory *inv, size_t nodes, uint32_t id)
{
	for (size_t i = 0; i < nodes; i++)
		if (inv->vnpu_nodes[i].id == id)
			return true;
	return false;
}

/* A vNPU device: its chip's health and placement, Unhealthy without its node. */
static void judge_vnpu(struct npu_device *d, const struct npu_vnpu *v, const struct npu_device *chip, bool node)
{
	if (chip) {
		*d = *chip;
	} else {
		/* Its chip is not listed (device files only): it stands alone. */
		*d = (struct npu_device){ .chip = { .phy_id = v->phy_id, .card_id = -1, .device_id = -1 }, .healthy = true };
	}
	d->kind = NPU_DEVICE_VNPU;
	d->vnpu = *v;
	d->vnpu_count = 0;
	snprintf(d->id, sizeof(d->id), "vnpu-%u", v->id);
	if (d->healthy && !node) {
		d->fault = NPU_FAULT_NODE_MISSING;
		d->healthy = false;
	}
}

void inventory_rediscover(struct inventory *inv)
{
	inv->rediscover = true;
}

int inventory_refresh(struct inventory *inv, bool *ret_changed)
{
	struct inventory_status *st = &inv->status;
	bool discovery_failed = false, discovery_overdue = false, asked_anew = inv->rediscover;
	int scan_error = 0;
	size_t count = 0;
	int r;

	try_load_dcmi(inv);
	if (inv->dcmi) {
		st->source = INVENTORY_SOURCE_DCMI;
		r = dcmi_enumerate(inv->dcmi, inv->chips, NPU_MAX_CHIPS, &count);
		st->discovery_error = r < 0 ? dcmi_last_error(inv->dcmi) : (struct dcmi_error){ 0 };
		/* When DCMI cannot list the chips at all, the chips it listed
		 * before are still there, and not usable: keep them, Unhealthy.
		 * When it is stuck in another call, it was not asked: keep them
		 * as they are. */
		discovery_failed = r < 0 && r != -EBUSY;
		discovery_overdue = r == -ETIMEDOUT;
		if (r < 0)
			count = merge_known(inv, 0);
		else
			inv->rediscover = false;
	} else if (inv->mode == NPU_BACKEND_DCMI) {
		st->source = INVENTORY_SOURCE_NONE;
	} else {
		bool was_devfs = st->source == INVENTORY_SOURCE_DEVFS;
		st->source = INVENTORY_SOURCE_DEVFS;
		r = devfs_scan(inv->dev_dir, inv->chips, NPU_MAX_CHIPS, &count);
		scan_error = r < 0 ? r : 0;
		if (r < 0)
			count = 0;
		/* Here health is the node being present: a chip whose node vanished
		 * stays listed, as Unhealthy, until a rediscovery. */
		if (r == 0 && inv->rediscover)
			inv->rediscover = false;
		else if (was_devfs)
			count = merge_known(inv, count);
	}

	r = check_manager(inv);
	st->driver_ready = r == 0;
	st->devfs_error = scan_error ? scan_error : r == -ENOENT ? 0 : r;

	size_t vnpu_nodes = 0;
	size_t n_vnpus = discover_vnpus(inv, count, &vnpu_nodes);
	struct npu_snapshot *next = npu_snapshot_new(count + n_vnpus);
	if (!next)
		return -ENOMEM;
	const struct npu_snapshot *prev = inv->current;
	size_t prev_chips = 0, j = 0;
	while (prev_chips < prev->count && prev->devices[prev_chips].kind == NPU_DEVICE_CHIP)
		prev_chips++;
	for (size_t i = 0; i < count; i++) {
		struct npu_device *d = &next->devices[i];
		d->chip = inv->chips[i];
		snprintf(d->id, sizeof(d->id), "npu-%u", d->chip.phy_id);
		/* Both lists are sorted by phy id. */
		while (j < prev_chips && prev->devices[j].chip.phy_id < d->chip.phy_id)
			j++;
		const struct npu_device *before =
			j < prev_chips && prev->devices[j].chip.phy_id == d->chip.phy_id ? &prev->devices[j] : NULL;
		judge_device(inv, d, st->driver_ready, before);
		read_network(inv, d, before);
		read_share(inv, d, before);
		/* A rediscovery that listed the chips reads their placement anew. */
		place_device(inv, asked_anew && !inv->rediscover ? NULL : before, d);
		if (discovery_failed && d->healthy) {
			d->fault = NPU_FAULT_DISCOVERY;
			d->dcmi_code = st->discovery_error.code;
			d->overdue_call = discovery_overdue ? st->discovery_error.call : NULL;
			d->healthy = false;
		}
		next->healthy += d->healthy;
	}
	for (size_t i = 0; i < n_vnpus; i++) {
		const struct npu_vnpu *v = &inv->vnpus[i];
		struct npu_device *chip = NULL;
		for (size_t k = 0; k < count && !chip; k++)
			if (next->devices[k].chip.phy_id == v->phy_id)
				chip = &next->devices[k];
		if (chip)
			chip->vnpu_count++;
		struct npu_device *d = &next->devices[count + i];
		judge_vnpu(d, v, chip, vnpu_node_present(inv, vnpu_nodes, v->id));
		next->healthy += d->healthy;
	}

	bool changed = !npu_snapshot_same(inv->current, next);
	npu_snapshot_unref(inv->current);
	inv->current = next;
	*ret_changed = changed;
	return 0;
}

struct npu_snapshot *inventory_snapshot(struct inventory *inv)
{
	return npu_snapshot_ref(inv->current);
}

const struct inventory_status *inventory_status(const struct inventory *inv)
{
	return &inv->status;
}

struct dcmi_lib *inventory_dcmi(struct inventory *inv)
{
	return inv->status.source == INVENTORY_SOURCE_DCMI ? inv->dcmi : NULL;
}
