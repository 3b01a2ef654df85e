/* SPDX-License-Identifier: Apache-2.0 */
#include "config/config.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/k8s_names.h"
#include "base/macro.h"
#include "base/parse.h"
#include "base/strbuf.h"
#include "config/file.h"
#include "fault/huawei.h"
#include "fault/policy.h"
#include "fault/separation.h"
#include "http/server.h"
#include "podresources_api.h"

#define DEFAULT_RESOURCE_NAME "ascend.com/npu"
#define DEFAULT_SOCKET_DIR "/var/lib/kubelet/device-plugins"
#define DEFAULT_DRIVER_PATH "/usr/local/Ascend/driver"
#define DEFAULT_HEALTH_INTERVAL_MS 5000
#define DEFAULT_CDI_DIR "/var/run/cdi"
#define DEFAULT_KUBELET_DIR "/var/lib/kubelet"
/* A DNS subdomain under a domain the project names its resources by. */
#define DEFAULT_DRA_DRIVER_NAME "npu.ascend.com"
/* The metrics port: outside Prometheus' exporter range (9100-9999), as its
 * guide asks of internal components, next to Huawei's npu-exporter (8082)
 * and clear of cAdvisor (8080), InfluxDB (8086) and dcgm-exporter (9400). */
#define DEFAULT_METRICS_ADDR ":8084"
#define DEFAULT_TELEMETRY_INTERVAL_MS 15000
#define MIN_TELEMETRY_INTERVAL_MS 1000
#define DEFAULT_NFD_FEATURES_FILE "/etc/kubernetes/node-feature-discovery/features.d/ascend"
/* Below this, polling DCMI would cost more than it tells. */
#define MIN_HEALTH_INTERVAL_MS 100

/* What a reload does with a flag's new value. */
enum flag_reload {
	FLAG_NO_SETTING, /* a switch or --config: nothing to compare */
	FLAG_RESTART,    /* reported, the running value kept until a restart */
	FLAG_RELOAD,     /* taken by the running daemon */
};

struct flag {
	const char *name;
	const char *arg; /* NULL for a switch */
	const char *help;
	int (*apply)(struct config *c, const char *value, char *why, size_t why_size);
	enum flag_reload reload;
	size_t offset, size; /* the field of struct config it sets */
	bool text;           /* the field is a string (quoted in messages) */
};

/* The field a flag sets, as the table's offset and size. */
#define FIELD(member) offsetof(struct config, member), sizeof(((struct config *)NULL)->member)
#define RESTART_TEXT(member) FLAG_RESTART, FIELD(member), true
#define RESTART(member) FLAG_RESTART, FIELD(member), false
#define RELOAD(member) FLAG_RELOAD, FIELD(member), false
#define NO_SETTING FLAG_NO_SETTING, 0, 0, false

static int set_path(char *dst, size_t size, const char *flag, const char *value, char *why, size_t why_size)
{
	if (value[0] != '/')
		return why_invalid(why, why_size, "--%s: '%s' is not an absolute path", flag, value);
	if (str_copy(dst, size, value) < 0)
		return why_invalid(why, why_size, "--%s: path is too long", flag);
	/* Keep "/" as is, drop other trailing slashes so joins stay tidy. */
	size_t len = strlen(dst);
	while (len > 1 && dst[len - 1] == '/')
		dst[--len] = '\0';
	return 0;
}

static int apply_resource_name(struct config *c, const char *v, char *why, size_t why_size)
{
	char problem[160];
	if (k8s_extended_resource_name_check(v, problem, sizeof(problem)) < 0)
		return why_invalid(why, why_size, "--resource-name: '%s' is invalid: %s", v, problem);
	if (str_copy(c->resource_name, sizeof(c->resource_name), v) < 0)
		return why_invalid(why, why_size, "--resource-name: too long");
	return 0;
}

static int apply_socket_dir(struct config *c, const char *v, char *why, size_t why_size)
{
	return set_path(c->socket_dir, sizeof(c->socket_dir), "socket-dir", v, why, why_size);
}

static int apply_dev_dir(struct config *c, const char *v, char *why, size_t why_size)
{
	return set_path(c->dev_dir, sizeof(c->dev_dir), "dev-dir", v, why, why_size);
}

static int apply_driver_path(struct config *c, const char *v, char *why, size_t why_size)
{
	return set_path(c->driver_path, sizeof(c->driver_path), "driver-path", v, why, why_size);
}

static int apply_host_root(struct config *c, const char *v, char *why, size_t why_size)
{
	return set_path(c->host_root, sizeof(c->host_root), "host-root", v, why, why_size);
}

static int apply_dcmi_lib(struct config *c, const char *v, char *why, size_t why_size)
{
	return set_path(c->dcmi_lib, sizeof(c->dcmi_lib), "dcmi-lib", v, why, why_size);
}

static int apply_backend(struct config *c, const char *v, char *why, size_t why_size)
{
	if (npu_backend_mode_parse(v, &c->backend) < 0)
		return why_invalid(why, why_size, "--backend: '%s' is not one of auto, dcmi, devfs", v);
	return 0;
}

static int apply_health_interval(struct config *c, const char *v, char *why, size_t why_size)
{
	int64_t ms;
	if (parse_duration_ms(v, &ms) < 0 || ms < MIN_HEALTH_INTERVAL_MS)
		return why_invalid(why, why_size,
			    "--health-interval: '%s' is not a duration between 100ms and 24h (e.g. 500ms, 5s, 1m)", v);
	c->health_interval_ms = ms;
	return 0;
}

static int apply_log_level(struct config *c, const char *v, char *why, size_t why_size)
{
	if (log_level_parse(v, &c->log_level) < 0)
		return why_invalid(why, why_size, "--log-level: '%s' is not one of error, warn, info, debug", v);
	return 0;
}

static int apply_log_format(struct config *c, const char *v, char *why, size_t why_size)
{
	if (log_format_parse(v, &c->log_format) < 0)
		return why_invalid(why, why_size, "--log-format: '%s' is not one of text, json", v);
	return 0;
}

static int apply_metrics_addr(struct config *c, const char *v, char *why, size_t why_size)
{
	struct sockaddr_storage ss;
	socklen_t len;
	if (v[0] && http_addr_parse(v, &ss, &len) < 0)
		return why_invalid(why, why_size,
			    "--metrics-addr: '%s' is not HOST:PORT (an IP address, [IPv6], localhost or nothing, and a "
			    "port 0-65535; empty disables)",
			    v);
	if (str_copy(c->metrics_addr, sizeof(c->metrics_addr), v) < 0)
		return why_invalid(why, why_size, "--metrics-addr: too long");
	return 0;
}

static int apply_telemetry_interval(struct config *c, const char *v, char *why, size_t why_size)
{
	int64_t ms;
	if (parse_duration_ms(v, &ms) < 0 || ms < MIN_TELEMETRY_INTERVAL_MS)
		return why_invalid(why, why_size, "--telemetry-interval: '%s' is not a duration between 1s and 24h (e.g. 15s, 1m)",
			    v);
	c->telemetry_interval_ms = ms;
	return 0;
}

/* An absolute path, or empty to disable. */
static int set_optional_path(char *dst, size_t size, const char *flag, const char *value, char *why, size_t why_size)
{
	if (!value[0]) {
		dst[0] = '\0';
		return 0;
	}
	if (value[0] != '/')
		return why_invalid(why, why_size, "--%s: '%s' is not an absolute path (empty disables)", flag, value);
	if (str_copy(dst, size, value) < 0)
		return why_invalid(why, why_size, "--%s: path is too long", flag);
	return 0;
}

static int apply_pod_resources_socket(struct config *c, const char *v, char *why, size_t why_size)
{
	return set_optional_path(c->pod_resources_socket, sizeof(c->pod_resources_socket), "pod-resources-socket", v,
				 why, why_size);
}

static int apply_nfd_features_file(struct config *c, const char *v, char *why, size_t why_size)
{
	int r = set_optional_path(c->nfd_features_file, sizeof(c->nfd_features_file), "nfd-features-file", v, why,
				  why_size);
	if (r == 0 && v[0] && v[strlen(v) - 1] == '/')
		return why_invalid(why, why_size, "--nfd-features-file: '%s' names a directory, not a file", v);
	return r;
}

static int apply_config(struct config *c, const char *v, char *why, size_t why_size)
{
	/* Loaded before the other flags are applied (load_config_file): here
	 * it is only recorded. */
	if (v[0] == '\0')
		return why_invalid(why, why_size, "--config: empty path");
	if (str_copy(c->config_file, sizeof(c->config_file), v) < 0)
		return why_invalid(why, why_size, "--config: path is too long");
	return 0;
}

static const struct {
	unsigned strategy;
	const char *name;
} strategy_names[] = {
	{ CONFIG_STRATEGY_NATIVE, "native" },
	{ CONFIG_STRATEGY_ASCEND_RUNTIME, "ascend-runtime" },
	{ CONFIG_STRATEGY_CDI, "cdi" },
};

/* A comma list of strategy names, each at most once, no empty entries. */
static int strategies_parse(const char *list, unsigned *ret_strategies)
{
	unsigned set = 0;
	const char *p = list;

	for (;;) {
		size_t len = strcspn(p, ",");
		unsigned found = 0;
		for (size_t i = 0; i < ELEMENTSOF(strategy_names) && !found; i++)
			if (strlen(strategy_names[i].name) == len && strncmp(p, strategy_names[i].name, len) == 0)
				found = strategy_names[i].strategy;
		if (!found || (set & found))
			return -EINVAL;
		set |= found;
		if (p[len] == '\0')
			break;
		p += len + 1;
	}
	*ret_strategies = set;
	return 0;
}

int config_strategies_format(unsigned strategies, char *buf, size_t size)
{
	struct strbuf sb;
	strbuf_init(&sb, buf, size, NULL);
	int r = 0;
	for (size_t i = 0; i < ELEMENTSOF(strategy_names); i++)
		if ((strategies & strategy_names[i].strategy) &&
		    (r = strbuf_printf(&sb, "%s%s", sb.len ? "," : "", strategy_names[i].name)) < 0)
			break;
	return r;
}

static int apply_device_list_strategy(struct config *c, const char *v, char *why, size_t why_size)
{
	if (strategies_parse(v, &c->device_list_strategies) < 0)
		return why_invalid(why, why_size,
			    "--device-list-strategy: '%s' is not a comma list of native, ascend-runtime and cdi "
			    "(each at most once)",
			    v);
	return 0;
}

static int apply_cdi_dir(struct config *c, const char *v, char *why, size_t why_size)
{
	return set_path(c->cdi_dir, sizeof(c->cdi_dir), "cdi-dir", v, why, why_size);
}

static int apply_state_dir(struct config *c, const char *v, char *why, size_t why_size)
{
	return set_path(c->state_dir, sizeof(c->state_dir), "state-dir", v, why, why_size);
}

static int apply_front_end(struct config *c, const char *v, char *why, size_t why_size)
{
	if (strcmp(v, "device-plugin") == 0)
		c->front_end = CONFIG_FRONT_END_DEVICE_PLUGIN;
	else if (strcmp(v, "dra") == 0)
		c->front_end = CONFIG_FRONT_END_DRA;
	else if (strcmp(v, "both") == 0)
		c->front_end = CONFIG_FRONT_END_BOTH;
	else
		return why_invalid(why, why_size, "--front-end: '%s' is not one of device-plugin, dra, both", v);
	return 0;
}

/* A list of chips as npu/chip_select.h reads it (or "none", when none_ok,
 * for no chip) for flag, into *select and, as given, into text. */
static int chip_list(const char *flag, const char *v, bool none_ok, char *text, size_t text_size,
		     struct npu_chip_select *select, char *why, size_t why_size)
{
	char problem[160];
	struct npu_chip_select parsed = { 0 };
	if (!(none_ok && strcmp(v, "none") == 0) && npu_chip_select_parse(v, &parsed, problem, sizeof(problem)) < 0)
		return why_invalid(why, why_size, "%s: %s", flag, problem);
	if (str_copy(text, text_size, v) < 0)
		return why_invalid(why, why_size, "%s: longer than %zu characters", flag, text_size - 1);
	*select = parsed;
	return 0;
}

static int apply_dra_chips(struct config *c, const char *v, char *why, size_t why_size)
{
	return chip_list("--dra-chips", v, false, c->dra_chips_text, sizeof(c->dra_chips_text), &c->dra_chips, why,
			 why_size);
}

/* "none", or Huawei's level names, comma-separated: the levels whose taint
 * evicts the pods on the chip (NoExecute). Only levels that take a chip out
 * of service make sense. */
static int apply_dra_no_execute(struct config *c, const char *v, char *why, size_t why_size)
{
	uint32_t levels = 0;
	char name[64];
	/* Each entry up to a comma or the end: a comma at either end is an
	 * empty entry. */
	for (const char *p = v; strcmp(v, "none") != 0; p++) {
		size_t n = strcspn(p, ",");
		enum fault_level level;
		if (n == 0 || n >= sizeof(name))
			return why_invalid(why, why_size, "--dra-no-execute-levels: an empty or overlong entry in '%.64s'", v);
		memcpy(name, p, n);
		name[n] = '\0';
		if (fault_level_parse(name, &level) < 0 || !fault_level_unhealthy(level))
			return why_invalid(why, why_size,
					   "--dra-no-execute-levels: '%.64s' is not a level that takes a chip out of "
					   "service (RestartRequest ... ManuallySeparateNPU)",
					   name);
		levels |= 1u << level;
		p += n;
		if (!*p)
			break;
	}
	if (str_copy(c->dra_no_execute_text, sizeof(c->dra_no_execute_text), v) < 0)
		return why_invalid(why, why_size, "--dra-no-execute-levels: longer than %zu characters",
				   sizeof(c->dra_no_execute_text) - 1);
	c->dra_no_execute_levels = levels;
	return 0;
}

/* "none", or a list as for --dra-chips: the DRA driver's chips that serve
 * vNPUs created at prepare (a chip serves either those or its static ones). */
static int apply_dra_dynamic_vnpus(struct config *c, const char *v, char *why, size_t why_size)
{
	return chip_list("--dra-dynamic-vnpus", v, true, c->dra_dynamic_vnpus_text, sizeof(c->dra_dynamic_vnpus_text),
			 &c->dra_dynamic_vnpus, why, why_size);
}

static int apply_dra_driver_name(struct config *c, const char *v, char *why, size_t why_size)
{
	/* It names the CDI kind "<name>/claim" too, whose vendor starts with a letter. */
	if (k8s_dns_subdomain_check(v, strlen(v)) < 0 || !((v[0] >= 'a' && v[0] <= 'z')))
		return why_invalid(why, why_size,
				   "--dra-driver-name: '%s' is not a DNS subdomain starting with a letter (e.g. "
				   DEFAULT_DRA_DRIVER_NAME ")",
				   v);
	return str_copy(c->dra_driver_name, sizeof(c->dra_driver_name), v) < 0
		       ? why_invalid(why, why_size, "--dra-driver-name: too long")
		       : 0;
}

static int apply_kubelet_dir(struct config *c, const char *v, char *why, size_t why_size)
{
	return set_path(c->kubelet_dir, sizeof(c->kubelet_dir), "kubelet-dir", v, why, why_size);
}

static int apply_node_name(struct config *c, const char *v, char *why, size_t why_size)
{
	if (v[0] && k8s_dns_subdomain_check(v, strlen(v)) < 0)
		return why_invalid(why, why_size, "--node-name: '%s' is not a node name (a DNS subdomain)", v);
	return str_copy(c->node_name, sizeof(c->node_name), v) < 0 ? why_invalid(why, why_size, "--node-name: too long")
								    : 0;
}

static int apply_kubeconfig(struct config *c, const char *v, char *why, size_t why_size)
{
	if (!v[0]) {
		c->kubeconfig[0] = '\0';
		return 0;
	}
	return set_path(c->kubeconfig, sizeof(c->kubeconfig), "kubeconfig", v, why, why_size);
}

static int apply_help(struct config *c, const char *v, char *why, size_t why_size)
{
	(void)v, (void)why, (void)why_size;
	c->action = CONFIG_ACTION_HELP;
	return 0;
}

static int apply_version(struct config *c, const char *v, char *why, size_t why_size)
{
	(void)v, (void)why, (void)why_size;
	if (c->action != CONFIG_ACTION_HELP)
		c->action = CONFIG_ACTION_VERSION;
	return 0;
}

static int apply_probe(struct config *c, const char *v, char *why, size_t why_size)
{
	(void)v, (void)why, (void)why_size;
	if (c->action == CONFIG_ACTION_RUN)
		c->action = CONFIG_ACTION_PROBE;
	return 0;
}

static const struct flag flags[] = {
	{ "resource-name", "NAME", "extended resource to advertise (default " DEFAULT_RESOURCE_NAME ")",
	  apply_resource_name, FLAG_RELOAD, FIELD(resource_name), true },
	{ "socket-dir", "DIR", "kubelet device-plugin directory (default " DEFAULT_SOCKET_DIR ")", apply_socket_dir, RESTART_TEXT(socket_dir) },
	{ "dev-dir", "DIR", "where to look for the davinci device nodes (default /dev)", apply_dev_dir, RESTART_TEXT(dev_dir) },
	{ "driver-path", "DIR", "host path of the Ascend driver (default $ASCEND_DRIVER_PATH, else " DEFAULT_DRIVER_PATH ")",
	  apply_driver_path, RESTART_TEXT(driver_path) },
	{ "host-root", "DIR", "where the host's / is visible, for driver and DCMI lookups (default /)", apply_host_root, RESTART_TEXT(host_root) },
	{ "dcmi-lib", "PATH", "libdcmi.so to load instead of searching for it", apply_dcmi_lib, RESTART_TEXT(dcmi_lib) },
	{ "backend", "MODE", "auto, dcmi or devfs (default auto)", apply_backend, RESTART(backend) },
	{ "health-interval", "DURATION", "how often to poll health and rediscover, e.g. 500ms, 5s (default 5s)",
	  apply_health_interval, RELOAD(health_interval_ms) },
	{ "device-list-strategy", "LIST",
	  "how containers get their NPUs: native, ascend-runtime, cdi, or a comma list of them (default native)",
	  apply_device_list_strategy, RESTART(device_list_strategies) },
	{ "cdi-dir", "DIR", "where the cdi strategy writes its CDI spec (default " DEFAULT_CDI_DIR ")", apply_cdi_dir, RESTART_TEXT(cdi_dir) },
	{ "metrics-addr", "HOST:PORT",
	  "serve /metrics and /healthz here, e.g. :8084 or 127.0.0.1:8084; empty disables (default " DEFAULT_METRICS_ADDR
	  ")",
	  apply_metrics_addr, RESTART_TEXT(metrics_addr) },
	{ "telemetry-interval", "DURATION", "how often to read chip telemetry for the metrics (default 15s)",
	  apply_telemetry_interval, RESTART(telemetry_interval_ms) },
	{ "pod-resources-socket", "PATH",
	  "the kubelet's pod resources socket, for pod labels on metrics; empty disables (default " PODRES_DEFAULT_SOCKET
	  ")",
	  apply_pod_resources_socket, RESTART_TEXT(pod_resources_socket) },
	{ "nfd-features-file", "PATH",
	  "Node Feature Discovery features file to write node labels to; empty disables (default "
	  DEFAULT_NFD_FEATURES_FILE ")",
	  apply_nfd_features_file, RESTART_TEXT(nfd_features_file) },
	{ "state-dir", "DIR",
	  "the plugin's own directory: the record of separated chips (default " FAULT_SEPARATION_DEFAULT_DIR ")",
	  apply_state_dir, RESTART_TEXT(state_dir) },
	{ "log-level", "LEVEL", "error, warn, info or debug (default info)", apply_log_level, RELOAD(log_level) },
	{ "log-format", "FORMAT", "text or json (one JSON object per line) (default text)", apply_log_format, RESTART(log_format) },
	{ "front-end", "NAME",
	  "which front ends run: device-plugin, dra (a DRA driver) or both (default device-plugin)",
	  apply_front_end, RESTART(front_end) },
	{ "dra-chips", "LIST",
	  "the chips the DRA driver serves, the device plugin the others: physical ids, ranges (0-3) and families "
	  "(910B), comma-separated, or all (default all)",
	  apply_dra_chips, RESTART_TEXT(dra_chips_text) },
	{ "dra-no-execute-levels", "LIST",
	  "fault levels (Huawei's names, comma-separated) whose device taint evicts the pods on the chip (NoExecute), "
	  "or none (default none: NoSchedule)",
	  apply_dra_no_execute, RESTART_TEXT(dra_no_execute_text) },
	{ "dra-dynamic-vnpus", "LIST",
	  "the DRA driver's chips that are carved into vNPUs on demand, at prepare: as --dra-chips, or none "
	  "(default none)",
	  apply_dra_dynamic_vnpus, RESTART_TEXT(dra_dynamic_vnpus_text) },
	{ "dra-driver-name", "NAME", "the DRA driver's name (default " DEFAULT_DRA_DRIVER_NAME ")",
	  apply_dra_driver_name, RESTART_TEXT(dra_driver_name) },
	{ "kubelet-dir", "DIR",
	  "the kubelet's root directory, for the DRA sockets and checkpoint (default " DEFAULT_KUBELET_DIR ")",
	  apply_kubelet_dir, RESTART_TEXT(kubelet_dir) },
	{ "node-name", "NAME", "this node's name, the DRA pool (default $NODE_NAME, else the host name)", apply_node_name,
	  RESTART_TEXT(node_name) },
	{ "kubeconfig", "FILE",
	  "the DRA front end's kubeconfig for the API server; empty: the pod's in-cluster config (default empty)",
	  apply_kubeconfig, RESTART_TEXT(kubeconfig) },
	{ "config", "FILE", "YAML file of settings (docs/configuration.md); flags and environment override it",
	  apply_config, NO_SETTING },
	{ "probe", NULL, "check that a running plugin answers on its socket, exit 0 if so (liveness probe)",
	  apply_probe, NO_SETTING },
	{ "help", NULL, "print this help and exit", apply_help, NO_SETTING },
	{ "version", NULL, "print the version and exit", apply_version, NO_SETTING },
};

void config_usage(FILE *out, const char *program)
{
	fprintf(out,
		"Usage: %s [FLAGS]\n"
		"Serves the node's Ascend NPUs to the kubelet as a device plugin.\n\nFlags:\n",
		program);
	for (size_t i = 0; i < ELEMENTSOF(flags); i++) {
		char left[64];
		snprintf(left, sizeof(left), "--%s%s%s", flags[i].name, flags[i].arg ? " " : "",
			 flags[i].arg ? flags[i].arg : "");
		fprintf(out, "  %-28s %s\n", left, flags[i].help);
	}
	fprintf(out, "\nFlags take --flag=value or --flag value. Durations take ms, s, m or h; a bare number\n"
		     "means seconds. Environment: ASCEND_DRIVER_PATH (driver path when --driver-path is unset),\n"
		     "NODE_NAME (node name when --node-name is unset), ASCEND_PLUGIN_INSTANCE (the pod's\n"
		     "UID: names this process's sockets, so that a new pod serves beside the old one).\n");
}

static const struct flag *find_flag(const char *name, size_t len)
{
	for (size_t i = 0; i < ELEMENTSOF(flags); i++)
		if (strlen(flags[i].name) == len && strncmp(flags[i].name, name, len) == 0)
			return &flags[i];
	return NULL;
}

int config_flag_apply(struct config *c, const char *name, const char *value, char *why, size_t why_size)
{
	const struct flag *f = find_flag(name, strlen(name));
	if (!f)
		return -ENOENT;
	if (!f->arg || f->apply == apply_config)
		return -EOPNOTSUPP;
	return f->apply(c, value, why, why_size);
}

void config_changes(const struct config *running, const struct config *next, config_change_fn fn, void *ctx)
{
	for (size_t i = 0; i < ELEMENTSOF(flags); i++) {
		const struct flag *f = &flags[i];
		if (f->reload == FLAG_NO_SETTING)
			continue;
		const char *was = (const char *)running + f->offset, *now = (const char *)next + f->offset;
		if (f->text ? strcmp(was, now) == 0 : memcmp(was, now, f->size) == 0)
			continue;
		const struct config_change change = {
			.flag = f->name,
			.reloadable = f->reload == FLAG_RELOAD,
			.was = f->text ? was : NULL,
			.now = f->text ? now : NULL,
		};
		fn(ctx, &change);
	}
}

void config_take_reloadable(struct config *running, const struct config *next)
{
	for (size_t i = 0; i < ELEMENTSOF(flags); i++)
		if (flags[i].reload == FLAG_RELOAD)
			memcpy((char *)running + flags[i].offset, (const char *)next + flags[i].offset, flags[i].size);
	running->file = next->file;
	running->fault_policy = next->fault_policy;
	running->fault_reset = next->fault_reset;
	memcpy(running->fault_huawei_files, next->fault_huawei_files, sizeof(running->fault_huawei_files));
}

/* The last --config, looked for before any flag is applied since the file
 * ranks below the command line. Malformed arguments end the search; the
 * main loop reports them. */
static const char *find_config_arg(int argc, char **argv)
{
	const char *path = NULL;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0')
			break;
		const char *name = arg + 2;
		const char *eq = strchr(name, '=');
		size_t name_len = eq ? (size_t)(eq - name) : strlen(name);
		const struct flag *f = find_flag(name, name_len);
		if (!f || (f->arg && !eq && i + 1 >= argc))
			break;
		const char *value = eq ? eq + 1 : f->arg ? argv[++i] : NULL;
		if (f->apply == apply_config)
			path = value;
	}
	return path;
}

/* The file's faultPolicy over the defaults in c: Huawei's files first
 * (faultCode.json replaces the code table), then the file's own codes,
 * windows and settings, which win. */
static int load_fault_policy(struct config *c, const struct config_file *file, const char *path, char *why,
			     size_t why_size)
{
	const struct config_fault_policy *fp = &file->fault_policy;
	struct fault_policy_config *policy = &c->fault_policy;
	int r;
	if (fp->huawei_files) {
		char problem[1024];
		r = fault_huawei_load(fp->huawei_files, policy, problem, sizeof(problem));
		if (r < 0) {
			snprintf(why, why_size, "%s: line %zu: faultPolicy.huaweiFiles: %s", path, fp->huawei_files_line,
				 problem);
			return r;
		}
		/* Fits: the file reader checked its length. */
		(void)str_copy(c->fault_huawei_files, sizeof(c->fault_huawei_files), fp->huawei_files);
	}
	if (fp->rules && (r = fault_policy_config_merge(policy, fp->rules)) < 0) {
		snprintf(why, why_size,
			 "%s: line %zu: faultPolicy: with huaweiFiles, more than the policy holds (%d codes, %d frequency "
			 "and %d duration rules, %d codes in rules)",
			 path, fp->line, FAULT_POLICY_MAX_CODES, FAULT_POLICY_MAX_RULES, FAULT_POLICY_MAX_RULES,
			 FAULT_POLICY_MAX_RULE_CODES);
		return r;
	}
	if (fp->has_recovery_hold)
		policy->recovery_hold_ms = fp->recovery_hold_ms;
	if (fp->has_default_level)
		policy->default_level = fp->default_level;
	if (fp->has_release_window)
		policy->release_window_ms = fp->release_window_ms;
	if (fp->has_reset)
		c->fault_reset = fp->reset;
	return 0;
}

/* Applies the file's flags to c and keeps its resources and time-slicing,
 * which name resources only once the command line has settled the default
 * name, and its fault policy. */
static int load_config_file(struct config *c, const char *path, char *why, size_t why_size)
{
	struct config_file *file = NULL;
	int r = config_file_load(path, &file, why, why_size);
	if (r < 0)
		goto out;
	/* Fits: the file holds at most CONFIG_FILE_MAX_ENTRIES of each. */
	struct config_resources *res = &c->file;
	/* A list the file does not have is NULL, which memcpy may not be given. */
	for (size_t i = 0; i < file->n_resources; i++)
		res->names[i] = file->resources[i];
	res->n_names = file->n_resources;
	for (size_t i = 0; i < file->time_slicing.n_resources; i++)
		res->sliced[i] = file->time_slicing.resources[i];
	res->n_sliced = file->time_slicing.n_resources;
	res->rename_by_default = file->time_slicing.rename_by_default;
	res->fail_requests_greater_than_one = file->time_slicing.fail_requests_greater_than_one;
	res->enable_device_share = file->time_slicing.enable_device_share;
	r = load_fault_policy(c, file, path, why, why_size);
	if (r < 0)
		goto out;
	for (size_t i = 0; i < file->n_flags; i++) {
		const struct config_file_flag *f = &file->flags[i];
		char msg[512];
		/* Validated by config_file_load already, by this same rule. */
		r = config_flag_apply(c, f->flag, f->value, msg, sizeof(msg));
		if (r < 0) {
			snprintf(why, why_size, "%s: line %zu: flags.%s: %s", path, f->line, f->key, msg);
			goto out;
		}
	}
out:
	config_file_free(file);
	return r;
}

static int parse(int argc, char **argv, const char *env_driver_path, struct config *ret_config, bool *in_file,
		 char *why, size_t why_size)
{
	struct config c = {
		.action = CONFIG_ACTION_RUN,
		.resource_name = DEFAULT_RESOURCE_NAME,
		.socket_dir = DEFAULT_SOCKET_DIR,
		.dev_dir = "/dev",
		.driver_path = DEFAULT_DRIVER_PATH,
		.host_root = "/",
		.backend = NPU_BACKEND_AUTO,
		.health_interval_ms = DEFAULT_HEALTH_INTERVAL_MS,
		.log_level = LOG_LEVEL_INFO,
		.device_list_strategies = CONFIG_STRATEGY_NATIVE,
		.cdi_dir = DEFAULT_CDI_DIR,
		.metrics_addr = DEFAULT_METRICS_ADDR,
		.telemetry_interval_ms = DEFAULT_TELEMETRY_INTERVAL_MS,
		.pod_resources_socket = PODRES_DEFAULT_SOCKET,
		.nfd_features_file = DEFAULT_NFD_FEATURES_FILE,
		.log_format = LOG_FORMAT_TEXT,
		.state_dir = FAULT_SEPARATION_DEFAULT_DIR,
		.front_end = CONFIG_FRONT_END_DEVICE_PLUGIN,
		.dra_chips_text = "all",
		.dra_chips = { .all = true },
		.dra_dynamic_vnpus_text = "none",
		.dra_no_execute_text = "none",
		.dra_driver_name = DEFAULT_DRA_DRIVER_NAME,
		.kubelet_dir = DEFAULT_KUBELET_DIR,
	};
	int r;
	fault_policy_config_init(&c.fault_policy);
	fault_reset_config_init(&c.fault_reset);

	bool driver_path_flag = false;

	const char *config_path = find_config_arg(argc, argv);
	if (config_path && config_path[0]) {
		r = load_config_file(&c, config_path, why, why_size);
		if (r < 0) {
			*in_file = true;
			return r;
		}
	}

	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0')
			return why_invalid(why, why_size, "unexpected argument '%s'", arg);
		const char *name = arg + 2;
		const char *eq = strchr(name, '=');
		size_t name_len = eq ? (size_t)(eq - name) : strlen(name);
		const struct flag *f = find_flag(name, name_len);
		if (!f)
			return why_invalid(why, why_size, "unknown flag '--%.*s'", (int)name_len, name);

		const char *value = NULL;
		if (f->arg) {
			if (eq)
				value = eq + 1;
			else if (i + 1 < argc)
				value = argv[++i];
			else
				return why_invalid(why, why_size, "--%s needs a value (%s)", f->name, f->arg);
		} else if (eq) {
			return why_invalid(why, why_size, "--%s takes no value", f->name);
		}
		r = f->apply(&c, value, why, why_size);
		if (r < 0)
			return r;
		driver_path_flag |= f->apply == apply_driver_path;
	}

	/* Precedence is flag > environment > file > default, and the environment is
	 * only judged when it is the one that counts: a stale relative
	 * ASCEND_DRIVER_PATH must not stop a plugin given --driver-path. */
	if (!driver_path_flag && env_driver_path && env_driver_path[0] &&
	    set_path(c.driver_path, sizeof(c.driver_path), "driver-path (from ASCEND_DRIVER_PATH)", env_driver_path,
		     why, why_size) < 0)
		return -EINVAL;

	*ret_config = c;
	return 0;
}

int config_parse(int argc, char **argv, const char *env_driver_path, struct config *ret_config, bool *in_file,
		 char *why, size_t why_size)
{
	bool file_problem = false;
	int r = parse(argc, argv, env_driver_path, ret_config, &file_problem, why, why_size);
	if (r < 0 && in_file)
		*in_file = file_problem;
	return r;
}

int config_set_instance(struct config *c, const char *value, char *why, size_t why_size)
{
	if (!value || !value[0]) {
		c->instance[0] = '\0';
		return 0;
	}
	size_t n = strlen(value);
	if (n > 64 || strspn(value, "abcdefghijklmnopqrstuvwxyz0123456789-") != n)
		return why_invalid(why, why_size,
			    "$" CONFIG_INSTANCE_ENV " is not a pod UID (lowercase letters, digits and '-', at most 64)");
	/* A UID's first group; a shorter value whole. */
	size_t take = strcspn(value, "-");
	if (take == 0 || take > CONFIG_INSTANCE_MAX)
		take = n < CONFIG_INSTANCE_MAX ? n : CONFIG_INSTANCE_MAX;
	memcpy(c->instance, value, take);
	c->instance[take] = '\0';
	return 0;
}
