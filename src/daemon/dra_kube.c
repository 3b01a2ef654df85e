/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/dra_kube.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/k8s_names.h"
#include "base/log.h"
#include "daemon/kube_module.h"
#include "fault/policy.h"

int dra_kube_open(const struct config *c, struct dra_kube *k, enum dra_kube_failure *ret_failure, char *why,
		  size_t why_size)
{
	*k = (struct dra_kube){ 0 };
	const struct kube_module_api *api;
	char cause[768];
	int r = kube_module_load(NULL, &api, cause, sizeof(cause));
	if (r < 0) {
		*ret_failure = DRA_KUBE_MODULE;
		snprintf(why, why_size, "the DRA front end's API-server module: %s", cause);
		return r;
	}
	struct kube_config kc;
	if (c->kubeconfig[0])
		r = api->config_from_kubeconfig(c->kubeconfig, NULL, &kc, cause, sizeof(cause));
	else
		r = api->config_in_cluster(NULL, &kc, cause, sizeof(cause));
	if (r < 0) {
		*ret_failure = DRA_KUBE_CONFIG;
		if (c->kubeconfig[0])
			snprintf(why, why_size, "%s", cause); /* it names the file, its line and key */
		else
			snprintf(why, why_size, "no --kubeconfig, and no in-cluster configuration: %s", cause);
		return r;
	}
	r = api->client_new(&kc, 0, &k->client, cause, sizeof(cause));
	if (r < 0) {
		api->config_free(&kc);
		*ret_failure = r == -ENOMEM ? DRA_KUBE_MODULE : DRA_KUBE_CONFIG;
		snprintf(why, why_size, "%s: %s", c->kubeconfig[0] ? c->kubeconfig : "in-cluster configuration",
			 cause);
		return r;
	}
	k->api = api;
	r = status_writer_start(&k->status, api, k->client, c->dra_driver_name);
	if (r < 0)
		log_error("cannot start writing the claims' status: %s; claims are prepared without it", strerror(-r));
	return 0;
}

void dra_kube_close(struct dra_kube *k)
{
	/* A daemon that never started has not stopped the writer. */
	if (k->api && k->client && k->status.running) {
		k->api->client_abort(k->client);
		status_writer_stop(&k->status);
	}
	if (k->api && k->client)
		k->api->client_free(k->client);
	k->client = NULL;
}

/* The server's own words for a refusal, else the bare status. */
static void refusal(const struct kube_module_api *api, const struct kube_response *res, const char *what,
		    char *why, size_t why_size)
{
	char message[512];
	api->status_message(res->body, res->len, message, sizeof(message));
	snprintf(why, why_size, "%s (HTTP %ld)%s%s", what, res->status, message[0] ? ": " : "", message);
}

static int read_claim(void *ctx, const char *ns, const char *name, const struct dra_read_limits *limits,
		      char **ret_json, size_t *ret_len, char *why, size_t why_size)
{
	struct dra_kube *k = ctx;
	/* The kubelet's names go into a URL path: only what Kubernetes allows. */
	if (k8s_dns_subdomain_check(ns, strlen(ns)) < 0 || k8s_dns_subdomain_check(name, strlen(name)) < 0)
		return why_invalid(why, why_size, "not a namespace and claim name Kubernetes allows");
	char path[2 * K8S_DNS_SUBDOMAIN_MAX + 64];
	snprintf(path, sizeof(path), "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s", ns, name);
	struct kube_response res = { 0 };
	const struct kube_request_limits within = { .deadline_ms = limits->deadline_ms, .abort_fd = limits->abort_fd };
	int r = k->api->client_request(k->client, "GET", path, NULL, 0, &within, &res);
	if (r < 0) {
		snprintf(why, why_size, "API server: %s", res.cause);
		return r;
	}
	if (res.status == 200 && res.len <= DRA_CLAIM_JSON_MAX) {
		*ret_json = res.body; /* the caller frees it */
		*ret_len = res.len;
		return 0;
	}
	if (res.status == 200) {
		snprintf(why, why_size, "the API server's answer is over %d bytes", DRA_CLAIM_JSON_MAX);
		r = -EFBIG;
	} else if (res.status == 404) {
		refusal(k->api, &res, "no such claim", why, why_size);
		r = -ENOENT;
	} else if (res.status == 401 || res.status == 403) {
		refusal(k->api, &res, "not allowed to read it", why, why_size);
		r = -EACCES;
	} else if (res.retry_after_s > 0) {
		char what[96];
		snprintf(what, sizeof(what), "the API server asked to retry after %ld s, beyond what this call waits",
			 res.retry_after_s);
		refusal(k->api, &res, what, why, why_size);
		r = -EAGAIN;
	} else {
		refusal(k->api, &res, "the API server refused", why, why_size);
		r = -EREMOTEIO;
	}
	k->api->response_free(&res);
	return r;
}

/* A claim reader thread: queued, never waited for. */
static void claim_prepared(void *ctx, const char *ns, const char *name, const char *status_body)
{
	struct dra_kube *k = ctx;
	status_writer_put(&k->status, ns, name, status_body);
}

struct dra_claim_reader dra_kube_reader(struct dra_kube *k)
{
	return (struct dra_claim_reader){ .get = read_claim, .prepared = claim_prepared, .ctx = k };
}

/* What the API server drops with a feature gate off, and what the slices
 * do without it (kube/slices.h). */
static const struct {
	unsigned bit;
	const char *gate, *fields, *instead;
} lacks[] = {
	{ KUBE_LACKS_TAINTS, "DRADeviceTaints", "device taints",
	  "Unhealthy chips are left out of the ResourceSlices instead, and sub-health is not shown" },
	{ KUBE_LACKS_PARTITIONS, "DRAPartitionableDevices", "shared counters",
	  "vNPUs are not published instead; chips carrying vNPUs stay withheld, chips for dynamic vNPUs are "
	  "published whole" },
	{ KUBE_LACKS_SHARING, "DRAConsumableCapacity", "shared capacity",
	  "time-sliced chips are published as plain chips instead, one claim at a time" },
};

/* One line per field the publisher found lacking (it reports each once). */
static void log_lacks(const struct dra_kube *k, const struct kube_publish_report *rep)
{
	for (size_t i = 0; i < sizeof(lacks) / sizeof(lacks[0]); i++) {
		if (!(rep->lacking & lacks[i].bit))
			continue;
		log_event(LOG_LEVEL_WARN, LOG_EVENT_SLICES_FIELDS_DROPPED,
			  &(struct log_fields){ .more = { LOG_STR("node", k->node_name), LOG_STR("gate", lacks[i].gate),
							  LOG_STR("found", rep->by_write ? "write" : "probe") } },
			  "the API server drops %s (feature gate %s off): %s", lacks[i].fields, lacks[i].gate,
			  lacks[i].instead);
	}
}

/* The publisher's thread: reports come once per cause already. */
static void on_report(void *ctx, const struct kube_publish_report *rep)
{
	struct dra_kube *k = ctx;
	if (rep->event == KUBE_PUBLISH_LACKS) {
		log_lacks(k, rep);
		return;
	}
	if (rep->event == KUBE_PUBLISH_FAILED) {
		log_event(LOG_LEVEL_ERROR, LOG_EVENT_SLICES_PUBLISH_FAILED,
			  &(struct log_fields){ .more = { LOG_STR("node", k->node_name) } },
			  "cannot publish the ResourceSlices of node %s: %s; retrying with backoff", k->node_name,
			  rep->cause);
		return;
	}
	if (rep->event == KUBE_PUBLISH_WATCH_FAILED) {
		log_event(LOG_LEVEL_WARN, LOG_EVENT_SLICES_WATCH_FAILED,
			  &(struct log_fields){ .more = { LOG_STR("node", k->node_name) } },
			  "cannot watch the ResourceSlices of node %s: %s; watching again with backoff, and checking "
			  "them every 10 minutes meanwhile",
			  k->node_name, rep->cause);
		return;
	}
	const struct log_fields f = { .more = { LOG_STR("node", k->node_name), LOG_NUM("generation", rep->generation),
						LOG_NUM("slices", rep->slices), LOG_NUM("devices", rep->devices),
						LOG_NUM("recovered", rep->recovered) } };
	if (rep->recovered)
		log_event(LOG_LEVEL_INFO, LOG_EVENT_SLICES_PUBLISHED, &f,
			  "publishing ResourceSlices works again: node %s, generation %lld, %zu slices, %zu devices",
			 k->node_name, (long long)rep->generation, rep->slices, rep->devices);
	else
		log_event(LOG_LEVEL_INFO, LOG_EVENT_SLICES_PUBLISHED, &f,
			  "published the ResourceSlices of node %s: generation %lld, %zu slices, %zu devices",
			  k->node_name, (long long)rep->generation, rep->slices, rep->devices);
}

/* The taint the fault policy's verdict on d asks for (kube/slices.h): an
 * Unhealthy device judged at a level says the level and code and evicts
 * when the operator chose that level; one in service at SubHealthFault is
 * tainted informationally. */
static void taint_of(const struct npu_device *d, uint32_t no_execute_levels, struct kube_device_facts *fact)
{
	enum fault_level level = d->policy_judged ? (enum fault_level)d->policy_level : FAULT_LEVEL_NONE;
	if (level == FAULT_LEVEL_NONE || level >= FAULT_LEVEL_COUNT || (d->healthy && level != FAULT_LEVEL_SUB_HEALTH))
		return;
	if (d->policy_code)
		(void)str_printf(fact->taint_value, sizeof(fact->taint_value), "%s-%08" PRIX32, fault_level_name(level),
				 d->policy_code); /* fits */
	else
		(void)str_copy(fact->taint_value, sizeof(fact->taint_value), fault_level_name(level));
	if (d->healthy)
		fact->taint = KUBE_TAINT_SUB_HEALTH;
	else if (no_execute_levels & (1u << level))
		fact->taint = KUBE_TAINT_NO_EXECUTE;
}

void dra_kube_offer(struct dra_kube *k, struct npu_snapshot *snap, const struct dra_kube_offer *offer)
{
	if (!k->publisher) {
		/* Before the publisher's thread starts: its reports name the node. */
		k->node_name = offer->node_name;
		k->driver = offer->driver;
		const struct kube_publisher_options o = {
			.client = k->client,
			.driver = k->driver,
			.node_name = k->node_name,
			.driver_version = offer->driver_version,
			.firmware_version = offer->firmware_version,
			.report = on_report,
			.report_ctx = k,
		};
		int r = k->api->publisher_start(&o, &k->publisher);
		if (r < 0) {
			if (r != k->start_error)
				log_error("cannot start publishing ResourceSlices: %s; trying again at every refresh",
					  strerror(-r));
			k->start_error = r;
			return;
		}
		k->start_error = 0;
	}
	/* HBM sizes come from the telemetry reads, not the snapshot. */
	uint64_t *hbm = snap->count ? calloc(snap->count, sizeof(*hbm)) : NULL;
	struct kube_device_facts *facts = snap->count ? calloc(snap->count, sizeof(*facts)) : NULL;
	if (hbm && facts) {
		telemetry_cache_hbm_bytes(offer->telemetry, snap, hbm);
		for (size_t i = 0; i < snap->count; i++) {
			facts[i].hbm_bytes = hbm[i];
			facts[i].shares = resource_set_shares(offer->resources, &snap->devices[i]);
			const struct npu_device *dev = &snap->devices[i];
			if (dev->kind == NPU_DEVICE_CHIP)
				facts[i].carve_on_demand = offer->carve_on_demand &&
							   npu_chip_select_has(offer->carve_on_demand, &dev->chip);
			else
				facts[i].made_for_claim = offer->claims && dra_driver_holds_vnpu(offer->claims, dev->vnpu.id);
			taint_of(dev, offer->no_execute_levels, &facts[i]);
		}
	}
	if ((snap->count && (!hbm || !facts)) || k->api->publisher_offer(k->publisher, snap, facts) < 0)
		log_error("cannot hand the ResourceSlice publisher the chips: out of memory; publishing the previous "
			  "list");
	free(hbm);
	free(facts);
}

void dra_kube_recheck(struct dra_kube *k)
{
	/* Before the first offer there is no publisher yet; its first round
	 * lists the slices anyway. */
	if (k->api && k->publisher)
		k->api->publisher_recheck(k->publisher, 0);
}

void dra_kube_stop(struct dra_kube *k)
{
	if (k->api && k->client)
		k->api->client_abort(k->client);
	if (k->api && k->publisher)
		k->api->publisher_stop(k->publisher);
	k->publisher = NULL;
	status_writer_stop(&k->status);
}
