/* SPDX-License-Identifier: Apache-2.0 */
#include "dra.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "base/log.h"
#include "dra.pb-c.h"
#include "dra_api.h"
#include "grpc/client.h"
#include "output.h"
#include "pluginregistration.pb-c.h"

/* What the kubelet waits for a plugin's answer (its plugin watcher: 10 s). */
#define CALL_TIMEOUT_MS 10000

static void notify(struct gc_channel *ch, bool ok, const char *error)
{
	Pluginregistration__RegistrationStatus st;
	pluginregistration__registration_status__init(&st);
	st.plugin_registered = ok;
	st.error = (char *)(uintptr_t)error;
	uint8_t buf[1024];
	size_t len = pluginregistration__registration_status__pack(&st, buf);
	struct gc_result res;
	if (gc_unary(ch, PLUGINREG_METHOD_NOTIFY, buf, len, CALL_TIMEOUT_MS, &res) == 0)
		gc_result_clear(&res);
}

/* The kubelet's choice: the first service the plugin lists that it knows. */
static bool choose(struct dra_sim_plugin *s, const Pluginregistration__PluginInfo *info, char *version,
		   size_t size)
{
	for (size_t i = 0; i < info->n_supported_versions; i++) {
		const char *v = info->supported_versions[i];
		if (strcmp(v, DRA_SERVICE_V1) == 0 || strcmp(v, DRA_SERVICE_V1BETA1) == 0) {
			bool v1 = strcmp(v, DRA_SERVICE_V1) == 0;
			s->prepare_method = v1 ? DRA_METHOD_V1_PREPARE : DRA_METHOD_V1BETA1_PREPARE;
			s->unprepare_method = v1 ? DRA_METHOD_V1_UNPREPARE : DRA_METHOD_V1BETA1_UNPREPARE;
			snprintf(version, size, "%s", v);
			return true;
		}
	}
	return false;
}

static void drop_plugin(struct dra_sim *s, const char *socket)
{
	for (size_t i = 0; i < s->n_plugins; i++) {
		if (strcmp(s->plugins[i].socket, socket) != 0)
			continue;
		memmove(&s->plugins[i], &s->plugins[i + 1], (s->n_plugins - i - 1) * sizeof(s->plugins[0]));
		s->n_plugins--;
		return;
	}
}

/* A socket registered again replaces its registration. */
static void add_plugin(struct dra_sim *s, const struct dra_sim_plugin *p)
{
	drop_plugin(s, p->socket);
	if (s->n_plugins == DRA_SIM_PLUGINS_MAX)
		drop_plugin(s, s->plugins[0].socket);
	s->plugins[s->n_plugins++] = *p;
}

/* The kubelet's plugin watcher deregisters a plugin whose socket goes. */
static void deregister_socket(struct dra_sim *s, const char *name)
{
	size_t before = s->n_plugins;
	drop_plugin(s, name);
	if (s->n_plugins == before)
		return;
	struct out_line line;
	out_start(&line, "dra-deregistered");
	out_kv(&line, "socket", name);
	out_emit(&line);
}

static void register_socket(struct dra_sim *s, const char *name)
{
	char path[PATH_MAX];
	struct stat st;
	if (path_join(path, sizeof(path), s->dir, name) < 0 || stat(path, &st) < 0 || !S_ISSOCK(st.st_mode))
		return;
	struct gc_channel *ch;
	struct gc_result res = { 0 };
	struct out_line line;
	if (gc_channel_open(path, &ch) < 0)
		return;
	uint8_t empty = 0;
	int r = gc_unary(ch, PLUGINREG_METHOD_GET_INFO, &empty, 0, CALL_TIMEOUT_MS, &res);
	if (r == 0 && res.status == GRPC_STATUS_UNAVAILABLE && s->n_pending < DRA_SIM_PENDING_MAX &&
	    str_copy(s->pending[s->n_pending], sizeof(s->pending[0]), name) == 0) {
		s->n_pending++; /* bound, not listening yet */
		goto out;
	}
	if (r < 0 || res.status != GRPC_STATUS_OK) {
		out_start(&line, "dra-refused");
		out_kv(&line, "socket", name);
		out_kv_quoted(&line, "error", r < 0 ? strerror(-r) : res.details);
		out_emit(&line);
		goto out;
	}
	Pluginregistration__PluginInfo *info = pluginregistration__plugin_info__unpack(NULL, res.len, res.body);
	char version[64] = "", error[512] = "";
	struct dra_sim_plugin plugin = { 0 };
	if (!info)
		snprintf(error, sizeof(error), "malformed PluginInfo");
	else if (strcmp(info->type, PLUGINREG_TYPE_DRA) != 0)
		snprintf(error, sizeof(error), "type %s is not %s", info->type, PLUGINREG_TYPE_DRA);
	else if (!choose(&plugin, info, version, sizeof(version)))
		snprintf(error, sizeof(error), "none of the services supported by the plugin is supported by the kubelet");
	else if (str_copy(plugin.endpoint, sizeof(plugin.endpoint), info->endpoint) < 0 ||
		 str_copy(plugin.driver, sizeof(plugin.driver), info->name) < 0 ||
		 str_copy(plugin.socket, sizeof(plugin.socket), name) < 0)
		snprintf(error, sizeof(error), "endpoint or name too long");
	notify(ch, !error[0], error);
	out_start(&line, error[0] ? "dra-refused" : "dra-registered");
	out_kv(&line, "socket", name);
	if (info) {
		out_kv(&line, "name", info->name);
		out_kv(&line, "type", info->type);
		out_kv(&line, "endpoint", info->endpoint);
		struct out_line list;
		out_start(&list, NULL);
		for (size_t i = 0; i < info->n_supported_versions; i++)
			out_list_add(&list, info->supported_versions[i]);
		out_kv_list(&line, "versions", &list);
	}
	if (error[0])
		out_kv_quoted(&line, "error", error);
	else
		out_kv(&line, "chosen", version);
	out_emit(&line);
	if (!error[0])
		add_plugin(s, &plugin);
	if (info)
		pluginregistration__plugin_info__free_unpacked(info, NULL);
out:
	gc_result_clear(&res);
	gc_channel_close(ch);
}

int dra_sim_start(struct dra_sim *s, const char *dir)
{
	*s = (struct dra_sim){ .inotify_fd = -1 };
	int r = str_copy(s->dir, sizeof(s->dir), dir);
	if (r < 0 || (r = mkdir_p(dir, 0750)) < 0) {
		log_error("cannot make %s: %s", dir, strerror(-r));
		return r;
	}
	s->inotify_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (s->inotify_fd < 0 || inotify_add_watch(s->inotify_fd, dir, IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM) < 0) {
		r = -errno;
		log_error("cannot watch %s: %s", dir, strerror(-r));
		return r;
	}
	/* The kubelet's watcher also looks at what is there when it starts. */
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			register_socket(s, e->d_name);
	if (d)
		closedir(d);
	return 0;
}

void dra_sim_stop(struct dra_sim *s)
{
	if (s->inotify_fd >= 0)
		close(s->inotify_fd);
	s->inotify_fd = -1;
}

void dra_sim_on_events(struct dra_sim *s)
{
	_Alignas(struct inotify_event) char buf[4096];
	ssize_t n;
	while ((n = read(s->inotify_fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)(void *)p;
			if (ev->len && ev->name[0] != '.' && (ev->mask & (IN_DELETE | IN_MOVED_FROM)))
				deregister_socket(s, ev->name);
			else if (ev->len && ev->name[0] != '.')
				register_socket(s, ev->name);
			p += sizeof(*ev) + ev->len;
		}
	}
}

int dra_sim_timeout(const struct dra_sim *s)
{
	return s->n_pending ? DRA_SIM_RETRY_MS : -1;
}

void dra_sim_retry(struct dra_sim *s)
{
	char names[DRA_SIM_PENDING_MAX][256];
	size_t n = s->n_pending;
	memcpy(names, s->pending, sizeof(names));
	s->n_pending = 0;
	for (size_t i = 0; i < n; i++)
		register_socket(s, names[i]);
}

/* Whether id k of device j came earlier in the claim's answer. */
static bool cdi_id_before(const K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourceResponse *c, size_t j,
			  size_t k)
{
	const char *id = c->devices[j]->cdi_device_ids[k];
	for (size_t jj = 0; jj <= j; jj++)
		for (size_t kk = 0; kk < (jj < j ? c->devices[jj]->n_cdi_device_ids : k); kk++)
			if (strcmp(c->devices[jj]->cdi_device_ids[kk], id) == 0)
				return true;
	return false;
}

static void print_prepare(const uint8_t *body, size_t len)
{
	K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse *resp =
		k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__unpack(NULL, len, body);
	if (!resp) {
		out_error("malformed NodePrepareResourcesResponse");
		return;
	}
	out_block_begin();
	for (size_t i = 0; i < resp->n_claims; i++) {
		const K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourceResponse *c = resp->claims[i]->value;
		struct out_line line, devices, cdi;
		out_start(&line, c && c->error && c->error[0] ? "dra-prepare-error" : "dra-prepared");
		out_kv(&line, "uid", resp->claims[i]->key);
		out_start(&devices, NULL);
		out_start(&cdi, NULL);
		for (size_t j = 0; c && j < c->n_devices; j++) {
			out_list_add(&devices, c->devices[j]->device_name);
			/* Each id once, in order: devices share the claim's. */
			for (size_t k = 0; k < c->devices[j]->n_cdi_device_ids; k++)
				if (!cdi_id_before(c, j, k))
					out_list_add(&cdi, c->devices[j]->cdi_device_ids[k]);
		}
		out_kv_list(&line, "devices", &devices);
		out_kv_list(&line, "cdi", &cdi);
		if (c && c->error && c->error[0])
			out_kv_quoted(&line, "error", c->error);
		out_emit(&line);
	}
	out_block_end();
	k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__free_unpacked(resp, NULL);
}

static void print_unprepare(const uint8_t *body, size_t len)
{
	K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse *resp =
		k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__unpack(NULL, len, body);
	if (!resp) {
		out_error("malformed NodeUnprepareResourcesResponse");
		return;
	}
	for (size_t i = 0; i < resp->n_claims; i++) {
		const K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourceResponse *c = resp->claims[i]->value;
		struct out_line line;
		bool failed = c && c->error && c->error[0];
		out_start(&line, failed ? "dra-unprepare-error" : "dra-unprepared");
		out_kv(&line, "uid", resp->claims[i]->key);
		if (failed)
			out_kv_quoted(&line, "error", c->error);
		out_emit(&line);
	}
	k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__free_unpacked(resp, NULL);
}

void dra_sim_call(struct dra_sim *s, bool prepare, char **args)
{
	if (!s->n_plugins) {
		out_error("no DRA driver registered");
		return;
	}
	const struct dra_sim_plugin *p = &s->plugins[s->n_plugins - 1];
	K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim claim, *claims[1] = { &claim };
	k8s__io__kubelet__pkg__apis__dra__v1__claim__init(&claim);
	claim.namespace_ = args[0];
	claim.name = args[1];
	claim.uid = args[2];
	/* Both requests are `repeated Claim claims = 1`: one encoding serves. */
	K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest req;
	k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__init(&req);
	req.n_claims = 1;
	req.claims = claims;
	size_t len = k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__get_packed_size(&req);
	uint8_t *buf = malloc(len ? len : 1);
	struct gc_channel *ch = NULL;
	struct gc_result res = { 0 };
	if (!buf || gc_channel_open(p->endpoint, &ch) < 0) {
		out_error("cannot call %s", p->endpoint);
		goto out;
	}
	k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__pack(&req, buf);
	int r = gc_unary(ch, prepare ? p->prepare_method : p->unprepare_method, buf, len, CALL_TIMEOUT_MS, &res);
	if (r < 0 || res.status != GRPC_STATUS_OK) {
		struct out_line line;
		out_start(&line, "dra-call-failed");
		out_kv_u64(&line, "status", r < 0 ? 0 : (unsigned long long)res.status);
		out_kv_quoted(&line, "details", r < 0 ? strerror(-r) : res.details);
		out_emit(&line);
	} else if (prepare) {
		print_prepare(res.body, res.len);
	} else {
		print_unprepare(res.body, res.len);
	}
out:
	gc_result_clear(&res);
	gc_channel_close(ch);
	free(buf);
}
