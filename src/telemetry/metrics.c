/* SPDX-License-Identifier: Apache-2.0 */
#include "telemetry/metrics.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/k8s_names.h"
#include "base/macro.h"
#include "base/parse.h"

#define GRPC_CODES 17

/* Allocate durations: the kubelet waits on Allocate before it starts a
 * container, so the interesting range is well under a second. */
static const double allocate_buckets[] = { 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1 };
#define N_BUCKETS ELEMENTSOF(allocate_buckets)

/* gRPC's canonical code names, as grpc-go and client libraries label them. */
static const char *const grpc_code_names[GRPC_CODES] = {
	"OK",		  "Canceled",	       "Unknown",	 "InvalidArgument", "DeadlineExceeded", "NotFound",
	"AlreadyExists", "PermissionDenied", "ResourceExhausted", "FailedPrecondition", "Aborted",
	"OutOfRange",	  "Unimplemented",    "Internal",	 "Unavailable",	    "DataLoss",	"Unauthenticated",
};

struct metrics_resource {
	struct metrics *metrics;
	char name[RESOURCE_NAME_MAX];
	unsigned replicas;
	struct npu_snapshot *devices; /* under metrics->lock */
	atomic_uint_fast64_t registrations;
	atomic_uint_fast64_t health_transitions;
	atomic_uint_fast64_t allocate_codes[GRPC_CODES];
	atomic_uint_fast64_t allocate_buckets[N_BUCKETS + 1]; /* per bucket, not cumulative; the last is +Inf */
	atomic_uint_fast64_t allocate_sum_ns;
	atomic_int streams;
};

struct metrics {
	char version[64];
	pthread_mutex_t lock;
	struct npu_snapshot *chips;
	struct telemetry_snapshot *telemetry;
	struct pod_map *pods;
	struct metrics_resource resources[METRICS_MAX_RESOURCES];
	size_t n_resources;
	struct telemetry_errors dcmi_errors;
	atomic_uint_fast64_t kubelet_restarts;
	/* Under lock; the last entry (code 0) is "other". */
	struct {
		uint32_t code;
		uint64_t onsets, escalations;
	} faults[METRICS_MAX_FAULT_CODES + 1];
	size_t n_faults;
	/* Under lock: the chips ever reset, by phy id. */
	struct chip_resets {
		uint32_t phy;
		uint64_t count[METRICS_RESET_COUNT];
		uint64_t decisions[METRICS_DECISION_COUNT];
	} resets[NPU_MAX_CHIPS];
	size_t n_resets;
};

int metrics_new(const char *version, struct metrics **ret_metrics)
{
	struct metrics *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	if (str_copy(m->version, sizeof(m->version), version) < 0) {
		free(m);
		return -ENAMETOOLONG;
	}
	pthread_mutex_init(&m->lock, NULL);
	*ret_metrics = m;
	return 0;
}

void metrics_free(struct metrics *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_resources; i++)
		npu_snapshot_unref(m->resources[i].devices);
	npu_snapshot_unref(m->chips);
	telemetry_snapshot_unref(m->telemetry);
	pod_map_unref(m->pods);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

static struct metrics_resource *find_locked(struct metrics *m, const char *name)
{
	for (size_t i = 0; i < m->n_resources; i++)
		if (strcmp(m->resources[i].name, name) == 0)
			return &m->resources[i];
	return NULL;
}

int metrics_add_resource(struct metrics *m, const char *name, unsigned replicas, struct metrics_resource **ret)
{
	int r = 0;
	pthread_mutex_lock(&m->lock);
	struct metrics_resource *res = find_locked(m, name);
	if (!res) {
		if (m->n_resources == METRICS_MAX_RESOURCES) {
			r = -ENOSPC;
			goto out;
		}
		res = &m->resources[m->n_resources];
		if (str_copy(res->name, sizeof(res->name), name) < 0) {
			r = -ENAMETOOLONG;
			goto out;
		}
		res->metrics = m;
		/* Published last: a render reads n_resources under the lock. */
		m->n_resources++;
	}
	res->replicas = replicas ? replicas : 1;
	*ret = res;
out:
	pthread_mutex_unlock(&m->lock);
	return r;
}

struct metrics_resource *metrics_find_resource(struct metrics *m, const char *name)
{
	pthread_mutex_lock(&m->lock);
	struct metrics_resource *res = find_locked(m, name);
	pthread_mutex_unlock(&m->lock);
	return res;
}

void metrics_publish_chips(struct metrics *m, struct npu_snapshot *snapshot)
{
	pthread_mutex_lock(&m->lock);
	struct npu_snapshot *old = m->chips;
	m->chips = npu_snapshot_ref(snapshot);
	pthread_mutex_unlock(&m->lock);
	npu_snapshot_unref(old);
}

void metrics_publish_devices(struct metrics_resource *r, struct npu_snapshot *snapshot)
{
	struct metrics *m = r->metrics;
	pthread_mutex_lock(&m->lock);
	struct npu_snapshot *old = r->devices;
	r->devices = npu_snapshot_ref(snapshot);
	pthread_mutex_unlock(&m->lock);

	uint64_t transitions = 0;
	for (size_t i = 0; old && snapshot && i < snapshot->count; i++) {
		const struct npu_device *before = npu_snapshot_find(old, snapshot->devices[i].id);
		transitions += before && before->healthy != snapshot->devices[i].healthy;
	}
	if (transitions)
		atomic_fetch_add(&r->health_transitions, transitions);
	npu_snapshot_unref(old);
}

void metrics_publish_telemetry(struct metrics *m, struct telemetry_snapshot *snapshot)
{
	pthread_mutex_lock(&m->lock);
	struct telemetry_snapshot *old = m->telemetry;
	m->telemetry = telemetry_snapshot_ref(snapshot);
	pthread_mutex_unlock(&m->lock);
	telemetry_snapshot_unref(old);
}

void metrics_publish_pods(struct metrics *m, struct pod_map *map)
{
	pthread_mutex_lock(&m->lock);
	struct pod_map *old = m->pods;
	m->pods = pod_map_ref(map);
	pthread_mutex_unlock(&m->lock);
	pod_map_unref(old);
}

struct telemetry_errors *metrics_dcmi_errors(struct metrics *m)
{
	return &m->dcmi_errors;
}

void metrics_count_registration(struct metrics_resource *r)
{
	atomic_fetch_add(&r->registrations, 1);
}

void metrics_count_kubelet_restart(struct metrics *m)
{
	atomic_fetch_add(&m->kubelet_restarts, 1);
}

void metrics_count_fault(struct metrics *m, uint32_t code, bool escalated)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	size_t i = 0;
	while (i < m->n_faults && m->faults[i].code != code)
		i++;
	if (i == m->n_faults && m->n_faults < METRICS_MAX_FAULT_CODES)
		m->faults[m->n_faults++].code = code;
	else if (i == m->n_faults)
		i = METRICS_MAX_FAULT_CODES; /* other */
	if (escalated)
		m->faults[i].escalations++;
	else
		m->faults[i].onsets++;
	pthread_mutex_unlock(&m->lock);
}

/* The chip's reset counters, made at its first count. Under m->lock. */
static struct chip_resets *resets_of_locked(struct metrics *m, uint32_t phy)
{
	size_t i = 0;
	while (i < m->n_resets && m->resets[i].phy != phy)
		i++;
	if (i == m->n_resets && m->n_resets < NPU_MAX_CHIPS)
		m->resets[m->n_resets++] = (struct chip_resets){ .phy = phy };
	return i < m->n_resets ? &m->resets[i] : NULL;
}

void metrics_count_reset(struct metrics *m, uint32_t phy, enum metrics_reset what)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	struct chip_resets *r = resets_of_locked(m, phy);
	if (r)
		r->count[what]++;
	pthread_mutex_unlock(&m->lock);
}

void metrics_count_reset_decision(struct metrics *m, uint32_t phy, enum metrics_reset_decision why)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	struct chip_resets *r = resets_of_locked(m, phy);
	if (r)
		r->decisions[why]++;
	pthread_mutex_unlock(&m->lock);
}

void metrics_streams_changed(struct metrics_resource *r, int delta)
{
	atomic_fetch_add(&r->streams, delta);
}

void metrics_observe_allocate(struct metrics_resource *r, int grpc_code, double seconds)
{
	if (grpc_code < 0 || grpc_code >= GRPC_CODES)
		grpc_code = 2; /* UNKNOWN */
	atomic_fetch_add(&r->allocate_codes[grpc_code], 1);
	if (!(seconds >= 0)) /* NaN too */
		seconds = 0;
	size_t b = 0;
	while (b < N_BUCKETS && seconds > allocate_buckets[b])
		b++;
	atomic_fetch_add(&r->allocate_buckets[b], 1);
	double ns = seconds * 1e9;
	atomic_fetch_add(&r->allocate_sum_ns, ns < 1e18 ? (uint64_t)ns : (uint64_t)1e18);
}

/* --- rendering ------------------------------------------------------------- */

struct text {
	char *p;
	size_t len, cap;
	int error;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct text *t, const char *fmt, ...)
{
	if (t->error)
		return;
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->error = -EINVAL;
			return;
		}
		if ((size_t)n < t->cap - t->len) {
			t->len += (size_t)n;
			return;
		}
		size_t want = t->cap * 2 > t->len + (size_t)n + 1 ? t->cap * 2 : t->len + (size_t)n + 1;
		if (want > METRICS_TEXT_MAX) {
			t->error = -E2BIG;
			return;
		}
		char *p = realloc(t->p, want);
		if (!p) {
			t->error = -ENOMEM;
			return;
		}
		t->p = p;
		t->cap = want;
	}
}

int metrics_escape_label(const char *value, char *buf, size_t size)
{
	size_t n = 0;
	for (const char *s = value; *s; s++) {
		const char *rep = *s == '\\' ? "\\\\" : *s == '"' ? "\\\"" : *s == '\n' ? "\\n" : NULL;
		size_t k = rep ? 2 : 1;
		if (n + k >= size)
			return -ENOBUFS;
		if (rep)
			memcpy(buf + n, rep, 2);
		else
			buf[n] = *s;
		n += k;
	}
	if (n >= size)
		return -ENOBUFS;
	buf[n] = '\0';
	return 0;
}

/* An escaped label value; the longest one is a pod name, doubled at worst. */
#define LABEL_MAX (2 * POD_NAME_MAX + 2)

static void header(struct text *t, const char *name, const char *type, const char *help)
{
	put(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A value in Go's float syntax, as Prometheus parses it. */
static void put_value(struct text *t, double v)
{
	if (isnan(v))
		put(t, "NaN\n");
	else if (isinf(v))
		put(t, v > 0 ? "+Inf\n" : "-Inf\n");
	else if (v == floor(v) && fabs(v) < 1e15)
		put(t, "%.0f\n", v);
	else
		put(t, "%.17g\n", v);
}

/* Everything a render works from, referenced under the lock once. */
struct view {
	size_t n_resources;
	unsigned replicas[METRICS_MAX_RESOURCES];
	struct npu_snapshot *devices[METRICS_MAX_RESOURCES];
	struct npu_snapshot *node;
	struct telemetry_snapshot *telemetry;
	struct pod_map *pods;
	const struct npu_device *chips[NPU_MAX_CHIPS]; /* the node's chips, no vNPUs */
	size_t n_chips;
	size_t n_faults;
	struct {
		uint32_t code;
		uint64_t onsets, escalations;
	} faults[METRICS_MAX_FAULT_CODES + 1]; /* the last is "other" */
	struct chip_resets resets[NPU_MAX_CHIPS];
	size_t n_resets;
};

/* The label sets of one chip: its own labels, then one set per holder
 * (or one without pod labels when nothing holds it). */
static void chip_series(struct text *t, const struct view *v, const struct npu_device *dev, const char *metric,
			double value)
{
	char chip[LABEL_MAX];
	if (metrics_escape_label(dev->chip.name, chip, sizeof(chip)) < 0)
		chip[0] = '\0';
	bool held = false;
	for (size_t i = 0; v->pods && i < v->pods->count; i++) {
		const struct pod_holder *h = &v->pods->holders[i];
		if (strcmp(h->chip_id, dev->id) != 0)
			continue;
		char ns[LABEL_MAX], pod[LABEL_MAX], ctr[LABEL_MAX];
		if (metrics_escape_label(h->namespace_, ns, sizeof(ns)) < 0 ||
		    metrics_escape_label(h->pod, pod, sizeof(pod)) < 0 ||
		    metrics_escape_label(h->container, ctr, sizeof(ctr)) < 0)
			continue;
		held = true;
		put(t, "%s{id=\"%s\",phy=\"%u\",chip=\"%s\",namespace=\"%s\",pod=\"%s\",container=\"%s\"} ", metric,
		    dev->id, dev->chip.phy_id, chip, ns, pod, ctr);
		put_value(t, value);
	}
	if (!held) {
		put(t, "%s{id=\"%s\",phy=\"%u\",chip=\"%s\"} ", metric, dev->id, dev->chip.phy_id, chip);
		put_value(t, value);
	}
}

/* Whether the chip's DCMI health value was read (see npu/inventory.h). */
static bool has_health_code(const struct npu_device *dev)
{
	return dev->chip.card_id >= 0 && (dev->fault == NPU_FAULT_NONE || dev->fault == NPU_FAULT_ABSENT ||
					  dev->fault == NPU_FAULT_HEALTH_LEVEL || dev->fault == NPU_FAULT_POLICY);
}

/* ManuallySeparateNPU in fault/policy.h's order (daemon/fault_stage.c
 * checks the numbering). */
#define SEPARATED_LEVEL 9u

enum chip_metric {
	CM_HEALTHY,
	CM_HEALTH_CODE,
	CM_ERROR_CODES,
	CM_FAULT_LEVEL,
	CM_FAULT_CODE,
	CM_SEPARATED,
	CM_TEMPERATURE,
	CM_POWER,
	CM_UTILIZATION,
	CM_HBM_TOTAL,
	CM_HBM_USED,
	CM_TIMESTAMP,
	CM_ROCE_LINK,
	CM_DEVICE_SHARE,
	CM_COUNT,
};

static const struct {
	const char *name, *help;
} chip_metrics[CM_COUNT] = {
	[CM_HEALTHY] = { "ascend_npu_healthy", "Whether the chip is advertised Healthy (1) or Unhealthy (0)." },
	[CM_HEALTH_CODE] = { "ascend_npu_health_code",
			     "DCMI health of the chip: 0 normal, 1 warning, 2 major, 3 critical, 4294967295 absent." },
	[CM_ERROR_CODES] = { "ascend_npu_error_codes", "Number of error codes the chip currently reports." },
	[CM_FAULT_LEVEL] = { "ascend_npu_fault_level",
			     "The fault policy's level of the chip: 0 none, 1 NotHandleFault, 2 SubHealthFault, 3 "
			     "RestartRequest, 4 RestartBusiness, 5 FreeRestartNPU, 6 RestartNPU, 7 PreSeparateNPU, 8 "
			     "SeparateNPU, 9 ManuallySeparateNPU." },
	[CM_FAULT_CODE] = { "ascend_npu_fault_code", "The fault code behind the chip's fault level, 0 when none." },
	[CM_SEPARATED] = { "ascend_npu_separated",
			   "1 when the fault policy separated the chip (ManuallySeparateNPU) until it is released, else 0." },
	[CM_TEMPERATURE] = { "ascend_npu_temperature_celsius", "Chip temperature." },
	[CM_POWER] = { "ascend_npu_power_watts", "Chip power draw." },
	[CM_UTILIZATION] = { "ascend_npu_aicore_utilization_ratio", "Share of time the AI Cores were busy, 0 to 1." },
	[CM_HBM_TOTAL] = { "ascend_npu_hbm_total_bytes", "High-bandwidth memory of the chip." },
	[CM_HBM_USED] = { "ascend_npu_hbm_used_bytes", "High-bandwidth memory in use on the chip." },
	[CM_TIMESTAMP] = { "ascend_npu_telemetry_timestamp_seconds",
			   "Unix time of the last successful telemetry reading of the chip." },
	[CM_ROCE_LINK] = { "ascend_npu_roce_link_up",
			   "1 when the driver's network detection finds the chip's RoCE link up, 0 when it reports a "
			   "failure; left out while unknown (no RoCE port, no detection address)." },
	[CM_DEVICE_SHARE] = { "ascend_npu_device_share",
			      "1 when the chip's device-share mode is on, 0 when it is off (time-slicing then serves "
			      "the chip whole); left out while unknown." },
};

/* The value of a chip metric, false when it is left out. */
static bool chip_value(enum chip_metric which, const struct npu_device *dev, const struct telemetry_reading *r,
		       double *ret)
{
	switch (which) {
	case CM_HEALTHY:
		*ret = dev->healthy;
		return true;
	case CM_HEALTH_CODE:
		*ret = dev->dcmi_health;
		return has_health_code(dev);
	case CM_ERROR_CODES:
		*ret = r ? (double)r->error_codes : 0;
		return r && r->has_error_codes;
	case CM_FAULT_LEVEL:
		*ret = dev->policy_level;
		return dev->policy_judged;
	case CM_FAULT_CODE:
		*ret = dev->policy_code;
		return dev->policy_judged;
	case CM_SEPARATED:
		*ret = dev->policy_level == SEPARATED_LEVEL;
		return dev->policy_judged;
	case CM_TEMPERATURE:
		*ret = r ? r->temperature_celsius : 0;
		return r && r->has_temperature;
	case CM_POWER:
		*ret = r ? r->power_watts : 0;
		return r && r->has_power;
	case CM_UTILIZATION:
		*ret = r ? r->aicore_utilization_ratio : 0;
		return r && r->has_utilization;
	case CM_HBM_TOTAL:
		*ret = r ? (double)r->hbm_total_bytes : 0;
		return r && r->has_hbm;
	case CM_HBM_USED:
		*ret = r ? (double)r->hbm_used_bytes : 0;
		return r && r->has_hbm;
	case CM_TIMESTAMP:
		*ret = r ? r->timestamp_seconds : 0;
		return r && r->has_timestamp;
	case CM_ROCE_LINK:
		*ret = dev->net.link == NPU_LINK_UP;
		return dev->net.link != NPU_LINK_UNKNOWN;
	case CM_DEVICE_SHARE:
		*ret = dev->share == NPU_SHARE_ON;
		return dev->share != NPU_SHARE_UNKNOWN;
	default:
		return false;
	}
}

static void network_series(struct text *t, const struct view *v);

static void render_chips(struct text *t, const struct view *v)
{
	for (int which = 0; which < CM_COUNT; which++) {
		bool any = false;
		for (size_t i = 0; i < v->n_chips; i++) {
			const struct npu_device *dev = v->chips[i];
			const struct telemetry_reading *r = telemetry_snapshot_find(v->telemetry, dev->id);
			double value;
			if (!chip_value((enum chip_metric)which, dev, r, &value))
				continue;
			if (!any)
				header(t, chip_metrics[which].name, "gauge", chip_metrics[which].help);
			any = true;
			chip_series(t, v, dev, chip_metrics[which].name, value);
		}
	}
	network_series(t, v);
}

/* Each chip's network identity as an info series (value 1): its RoCE
 * address and link, and on A3 its super pod and SDID; chips with neither
 * address nor super pod are left out. Chip labels only: the identity does
 * not change with the pods. */
static void network_series(struct text *t, const struct view *v)
{
	bool any = false;
	for (size_t i = 0; i < v->n_chips; i++) {
		const struct npu_device *dev = v->chips[i];
		const struct npu_net *net = &dev->net;
		if (!net->has_ip && !net->has_super_pod)
			continue;
		if (!any)
			header(t, "ascend_npu_network_info", "gauge",
			       "A chip's network identity for multi-node jobs: its RoCE address (HCCL's device_ip), "
			       "link, and on A3 super pod and SDID; the value is always 1.");
		any = true;
		char ip[NPU_NET_ADDRESS_MAX];
		(void)npu_net_address(net, true, ip);
		put(t, "ascend_npu_network_info{id=\"%s\",phy=\"%u\",ip=\"%s\",link=\"%s\"", dev->id, dev->chip.phy_id,
		    ip, npu_link_name(net->link));
		if (net->has_super_pod)
			put(t, ",super_pod_id=\"%u\",sdid=\"%u\"", net->super_pod_id, net->sdid);
		put(t, "} 1\n");
	}
}

/* Whether any of n counters counted. */
static bool counted(const uint64_t *counts, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (counts[i])
			return true;
	return false;
}

/* Per chip ever reset, each result; per chip the guard decided about, each
 * reason; chip labels only, since a counter's series must not change with
 * the pods that come and go. */
static void reset_series(struct text *t, const struct view *v, bool decisions)
{
	static const char *const results[METRICS_RESET_COUNT] = { "attempted", "succeeded", "failed" };
	static const char *const reasons[METRICS_DECISION_COUNT] = { "reset", "held-by-pod", "busy-process",
								     "holders-unknown", "group-unknown" };
	const char *name = decisions ? "ascend_npu_reset_decisions_total" : "ascend_npu_resets_total";
	const char *label = decisions ? "reason" : "result";
	const char *const *values = decisions ? reasons : results;
	size_t n = decisions ? METRICS_DECISION_COUNT : METRICS_RESET_COUNT;
	bool any = false;
	for (size_t i = 0; i < v->n_chips; i++) {
		const struct npu_device *dev = v->chips[i];
		const struct chip_resets *r = NULL;
		for (size_t k = 0; k < v->n_resets && !r; k++)
			if (v->resets[k].phy == dev->chip.phy_id)
				r = &v->resets[k];
		const uint64_t *counts = r ? (decisions ? r->decisions : r->count) : NULL;
		if (!counts || !counted(counts, n))
			continue;
		if (!any)
			header(t, name, "counter",
			       decisions ? "Decisions of the fault policy's reset guard about a chip whose faults ask for a "
					   "reset, by reason: reset (its reset group was free), held-by-pod, busy-process "
					   "(DCMI lists a process on a chip of the group), holders-unknown, group-unknown."
					 : "Hot resets of the chip by the fault policy: attempted, and how they ended "
					   "(succeeded, failed).");
		any = true;
		char chip[LABEL_MAX];
		if (metrics_escape_label(dev->chip.name, chip, sizeof(chip)) < 0)
			chip[0] = '\0';
		for (size_t k = 0; k < n; k++)
			put(t, "%s{id=\"%s\",phy=\"%u\",chip=\"%s\",%s=\"%s\"} %llu\n", name, dev->id, dev->chip.phy_id,
			    chip, label, values[k], (unsigned long long)counts[k]);
	}
}

/* One series per code seen, and "other" once something counted there;
 * nothing before the first fault. */
static void fault_series(struct text *t, const struct view *v, bool escalations)
{
	const char *name = escalations ? "ascend_device_plugin_fault_escalations_total"
				       : "ascend_device_plugin_fault_onsets_total";
	if (v->n_faults == 0)
		return;
	header(t, name, "counter",
	       escalations ? "Fault policy windows that fired (frequency, duration), per fault code."
			   : "Fault codes that began on a chip, per code (\"other\" past 64 codes).");
	for (size_t i = 0; i < v->n_faults; i++)
		put(t, "%s{code=\"%08X\"} %llu\n", name, v->faults[i].code,
		    (unsigned long long)(escalations ? v->faults[i].escalations : v->faults[i].onsets));
	const uint64_t other = escalations ? v->faults[METRICS_MAX_FAULT_CODES].escalations
					   : v->faults[METRICS_MAX_FAULT_CODES].onsets;
	if (other)
		put(t, "%s{code=\"other\"} %llu\n", name, (unsigned long long)other);
}

static void render_plugin(struct text *t, struct metrics *m, const struct view *v)
{
	char version[LABEL_MAX];
	if (metrics_escape_label(m->version, version, sizeof(version)) < 0)
		version[0] = '\0';
	header(t, "ascend_device_plugin_build_info", "gauge", "Build information of the plugin; the value is always 1.");
	put(t, "ascend_device_plugin_build_info{version=\"%s\"} 1\n", version);

	header(t, "ascend_device_plugin_kubelet_restarts_total", "counter",
	       "Kubelet restarts the plugin has seen (kubelet.sock created anew).");
	put(t, "ascend_device_plugin_kubelet_restarts_total %llu\n",
	    (unsigned long long)atomic_load(&m->kubelet_restarts));

	fault_series(t, v, false);
	fault_series(t, v, true);

	header(t, "ascend_device_plugin_dcmi_errors_total", "counter", "Failed DCMI telemetry calls, per function.");
	for (int c = 0; c < TELEMETRY_CALL_COUNT; c++)
		put(t, "ascend_device_plugin_dcmi_errors_total{function=\"%s\"} %llu\n",
		    telemetry_call_name((enum telemetry_call)c),
		    (unsigned long long)atomic_load(&m->dcmi_errors.count[c]));

	/* Resource names are extended resource names: nothing to escape. */
	header(t, "ascend_device_plugin_registrations_total", "counter",
	       "Registrations the kubelet accepted, per resource.");
	for (size_t i = 0; i < v->n_resources; i++)
		put(t, "ascend_device_plugin_registrations_total{resource=\"%s\"} %llu\n", m->resources[i].name,
		    (unsigned long long)atomic_load(&m->resources[i].registrations));

	header(t, "ascend_device_plugin_list_and_watch_streams", "gauge",
	       "ListAndWatch streams open (the kubelet's and any other watcher's), per resource.");
	for (size_t i = 0; i < v->n_resources; i++)
		put(t, "ascend_device_plugin_list_and_watch_streams{resource=\"%s\"} %d\n", m->resources[i].name,
		    atomic_load(&m->resources[i].streams));

	header(t, "ascend_device_plugin_health_transitions_total", "counter",
	       "Chips that changed between Healthy and Unhealthy, per resource.");
	for (size_t i = 0; i < v->n_resources; i++)
		put(t, "ascend_device_plugin_health_transitions_total{resource=\"%s\"} %llu\n", m->resources[i].name,
		    (unsigned long long)atomic_load(&m->resources[i].health_transitions));

	header(t, "ascend_device_plugin_devices", "gauge",
	       "Devices advertised to the kubelet (chips or vNPUs, times replicas), per resource and health.");
	size_t whole[METRICS_MAX_RESOURCES] = { 0 };
	for (size_t i = 0; i < v->n_resources; i++) {
		const struct npu_snapshot *s = v->devices[i];
		size_t count = s ? s->count : 0, healthy = 0, unhealthy = 0;
		unsigned rep = v->replicas[i];
		/* A chip whose device-share mode is off is advertised once
		 * (plugin/replica.h). */
		for (size_t k = 0; k < count; k++) {
			bool held_whole = rep > 1 && !npu_device_shareable(&s->devices[k]);
			whole[i] += held_whole;
			*(s->devices[k].healthy ? &healthy : &unhealthy) += held_whole ? 1 : rep;
		}
		put(t, "ascend_device_plugin_devices{resource=\"%s\",health=\"Healthy\"} %zu\n", m->resources[i].name,
		    healthy);
		put(t, "ascend_device_plugin_devices{resource=\"%s\",health=\"Unhealthy\"} %zu\n",
		    m->resources[i].name, unhealthy);
	}
	for (size_t i = 0, any = 0; i < v->n_resources; i++)
		if (v->replicas[i] > 1) {
			if (!any++)
				header(t, "ascend_device_plugin_chips_served_whole", "gauge",
				       "Chips of a time-sliced resource served whole, advertised once, per resource and "
				       "reason (device-share-off: the chip's device-share mode is off).");
			put(t, "ascend_device_plugin_chips_served_whole{resource=\"%s\",reason=\"device-share-off\"} %zu\n",
			    m->resources[i].name, whole[i]);
		}

	header(t, "ascend_device_plugin_allocate_requests_total", "counter",
	       "Allocate calls answered, per resource and gRPC status code.");
	for (size_t i = 0; i < v->n_resources; i++)
		for (int c = 0; c < GRPC_CODES; c++) {
			uint64_t n = atomic_load(&m->resources[i].allocate_codes[c]);
			if (n || c == 0)
				put(t, "ascend_device_plugin_allocate_requests_total{resource=\"%s\",code=\"%s\"} %llu\n",
				    m->resources[i].name, grpc_code_names[c], (unsigned long long)n);
		}

	header(t, "ascend_device_plugin_allocate_duration_seconds", "histogram",
	       "Time the plugin took to answer Allocate, per resource.");
	for (size_t i = 0; i < v->n_resources; i++) {
		struct metrics_resource *r = &m->resources[i];
		uint64_t cumulative = 0;
		for (size_t b = 0; b <= N_BUCKETS; b++) {
			cumulative += atomic_load(&r->allocate_buckets[b]);
			if (b < N_BUCKETS)
				put(t, "ascend_device_plugin_allocate_duration_seconds_bucket{resource=\"%s\",le=\"%g\"} %llu\n",
				    r->name, allocate_buckets[b], (unsigned long long)cumulative);
			else
				put(t, "ascend_device_plugin_allocate_duration_seconds_bucket{resource=\"%s\",le=\"+Inf\"} %llu\n",
				    r->name, (unsigned long long)cumulative);
		}
		put(t, "ascend_device_plugin_allocate_duration_seconds_sum{resource=\"%s\"} ", r->name);
		put_value(t, (double)atomic_load(&r->allocate_sum_ns) / 1e9);
		/* The count is the +Inf bucket's, read once above. */
		put(t, "ascend_device_plugin_allocate_duration_seconds_count{resource=\"%s\"} %llu\n", r->name,
		    (unsigned long long)cumulative);
	}
}

int metrics_render(struct metrics *m, char **ret_text, size_t *ret_len)
{
	struct view v = { 0 };
	pthread_mutex_lock(&m->lock);
	v.n_resources = m->n_resources;
	for (size_t i = 0; i < v.n_resources; i++) {
		v.devices[i] = npu_snapshot_ref(m->resources[i].devices);
		v.replicas[i] = m->resources[i].replicas;
	}
	v.node = npu_snapshot_ref(m->chips);
	v.telemetry = telemetry_snapshot_ref(m->telemetry);
	v.pods = pod_map_ref(m->pods);
	v.n_faults = m->n_faults;
	memcpy(v.faults, m->faults, sizeof(v.faults));
	v.n_resets = m->n_resets;
	memcpy(v.resets, m->resets, m->n_resets * sizeof(m->resets[0]));
	pthread_mutex_unlock(&m->lock);

	for (size_t k = 0; v.node && k < v.node->count && v.n_chips < NPU_MAX_CHIPS; k++)
		if (v.node->devices[k].kind == NPU_DEVICE_CHIP)
			v.chips[v.n_chips++] = &v.node->devices[k];

	struct text t = { .cap = 16384 };
	t.p = malloc(t.cap);
	if (!t.p)
		t.error = -ENOMEM;
	render_chips(&t, &v);
	reset_series(&t, &v, false);
	reset_series(&t, &v, true);
	render_plugin(&t, m, &v);

	for (size_t i = 0; i < v.n_resources; i++)
		npu_snapshot_unref(v.devices[i]);
	npu_snapshot_unref(v.node);
	telemetry_snapshot_unref(v.telemetry);
	pod_map_unref(v.pods);
	if (t.error) {
		free(t.p);
		return t.error;
	}
	*ret_text = t.p;
	*ret_len = t.len;
	return 0;
}
