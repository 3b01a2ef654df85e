/* SPDX-License-Identifier: Apache-2.0 */
/* The simulated kubelet's life cycle and Registration service; see registration.h. */
#include "registration.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "base/log.h"
#include "base/k8s_names.h"
#include "base/macro.h"
#include "base/parse.h"
#include "checkpoint.h"
#include "deviceplugin.pb-c.h"
#include "follower.h"
#include "output.h"

/* The kubelet's dial-back timeout. */
#define DIAL_BACK_TIMEOUT_MS 10000

/* Quotes s like Go's %q (enough of it for error messages), cut to fit. */
static void go_quote(char *dst, size_t size, const char *s)
{
	size_t n = 0;
	dst[n++] = '"';
	for (const unsigned char *p = (const unsigned char *)s; *p && n + 6 < size; p++) {
		if (*p == '"' || *p == '\\') {
			dst[n++] = '\\';
			dst[n++] = (char)*p;
		} else if (*p < 0x20 || *p == 0x7f) {
			n += (size_t)snprintf(dst + n, size - n, "\\x%02x", *p);
		} else {
			dst[n++] = (char)*p;
		}
	}
	dst[n++] = '"';
	dst[n] = '\0';
}

static void print_rejected(const char *resource, const char *reason)
{
	struct out_line line;
	out_start(&line, "register-rejected");
	out_kv(&line, "resource", resource);
	out_kv_quoted(&line, "reason", reason);
	out_emit(&line);
}

static int validate(const struct sim *sim, const V1beta1__RegisterRequest *req, char *socket_path,
		    size_t socket_path_size, char *reason, size_t reason_size)
{
	char quoted[320];
	if (strcmp(req->version, DP_API_VERSION) != 0) {
		go_quote(quoted, sizeof(quoted), req->version);
		snprintf(reason, reason_size,
			 "requested API version %s is not supported by kubelet. Supported versions are [\"" DP_API_VERSION
			 "\"]",
			 quoted);
		return -EINVAL;
	}
	char problem[160];
	if (k8s_extended_resource_name_check(req->resource_name, problem, sizeof(problem)) < 0) {
		go_quote(quoted, sizeof(quoted), req->resource_name);
		snprintf(reason, reason_size, "the ResourceName %s is invalid", quoted);
		return -EINVAL;
	}
	const char *endpoint = req->endpoint;
	if (endpoint[0] == '\0' || strchr(endpoint, '/') || strcmp(endpoint, ".") == 0 || strcmp(endpoint, "..") == 0) {
		go_quote(quoted, sizeof(quoted), endpoint);
		snprintf(reason, reason_size, "the endpoint %s is not a file name in the device plugin directory",
			 quoted);
		return -EINVAL;
	}
	if (path_join(socket_path, socket_path_size, sim->dir, endpoint) < 0) {
		go_quote(quoted, sizeof(quoted), endpoint);
		snprintf(reason, reason_size, "the socket path for endpoint %s is %d bytes or longer", quoted,
			 SOCKET_PATH_MAX);
		return -ENAMETOOLONG;
	}
	return 0;
}

/* Dials the plugin and asks for its options, as the kubelet does before it
 * answers Register. On success the channel is handed over to the caller. */
static int dial_back(const char *socket_path, struct gc_channel **ret_channel, bool *ret_preferred,
		     bool *ret_pre_start, char *reason, size_t reason_size)
{
	static const uint8_t empty[1];
	struct gc_channel *channel = NULL;
	struct gc_result res = { 0 };
	V1beta1__DevicePluginOptions *opts = NULL;

	int r = gc_channel_open(socket_path, &channel);
	if (r < 0) {
		snprintf(reason, reason_size, "failed to dial device plugin: %s", strerror(-r));
		goto fail;
	}
	r = gc_unary(channel, DP_METHOD_GET_OPTIONS, NULL, 0, DIAL_BACK_TIMEOUT_MS, &res);
	if (r < 0) {
		snprintf(reason, reason_size, "failed to get device plugin options: %s", strerror(-r));
		goto fail;
	}
	if (res.status != GRPC_STATUS_OK) {
		snprintf(reason, reason_size, "failed to get device plugin options: %.400s (status %d)", res.details,
			 (int)res.status);
		r = -EIO;
		goto fail;
	}
	opts = v1beta1__device_plugin_options__unpack(NULL, res.len, res.body ? res.body : empty);
	if (!opts) {
		snprintf(reason, reason_size, "failed to get device plugin options: cannot decode the answer");
		r = -EBADMSG;
		goto fail;
	}
	*ret_preferred = opts->get_preferred_allocation_available;
	*ret_pre_start = opts->pre_start_required;
	*ret_channel = channel;
	channel = NULL;
	r = 0;

fail:
	if (opts)
		v1beta1__device_plugin_options__free_unpacked(opts, NULL);
	gc_result_clear(&res);
	gc_channel_close(channel);
	return r;
}

/* Makes plugin the resource's newest registration. One on another socket
 * is followed beside the registrations already there, as the kubelet from
 * v1.36 on does (sim.h); one on a socket the resource still holds is
 * refused; one on the same socket, let go of, replaces its follower. Older
 * ones whose streams ended, and the oldest when there are too many, are let
 * go. Takes over plugin. */
static int install(struct sim *sim, struct sim_plugin *plugin, char *reason, size_t reason_size)
{
	struct sim_resource *res;
	struct follower *stop[SIM_MAX_OLDER + 1];
	struct sim_plugin *drop[SIM_MAX_OLDER + 1];
	size_t n_stop = 0;
	pthread_mutex_lock(&sim->lock);
	int r = sim_resource_get(sim, plugin->resource, true, &res);
	/* The kubelet from v1.36 on keys its clients by socket path and refuses
	 * a second one on a path it holds; it lets go of a path only after the
	 * stream through it ended (pkg/kubelet/cm/devicemanager). */
	if (r == 0 && sim_resource_holds(res, plugin->endpoint)) {
		pthread_mutex_unlock(&sim->lock);
		snprintf(reason, reason_size, "device plugin already connected: %s/%s", sim->dir, plugin->endpoint);
		sim_plugin_unref(plugin);
		return -EEXIST;
	}
	if (r == 0) {
		size_t kept = 0;
		for (size_t i = 0; i < res->n_older; i++) {
			struct sim_older *o = &res->older[i];
			if (o->streaming && strcmp(o->plugin->endpoint, plugin->endpoint) != 0) {
				res->older[kept++] = *o;
				continue;
			}
			stop[n_stop] = o->follower;
			drop[n_stop++] = o->plugin;
		}
		res->n_older = kept;
		bool beside = res->plugin && res->streaming && strcmp(res->plugin->endpoint, plugin->endpoint) != 0;
		if (beside && res->n_older == SIM_MAX_OLDER) {
			stop[n_stop] = res->older[0].follower;
			drop[n_stop++] = res->older[0].plugin;
			memmove(res->older, res->older + 1, (SIM_MAX_OLDER - 1) * sizeof(res->older[0]));
			res->n_older--;
		}
		if (beside) {
			res->older[res->n_older++] =
				(struct sim_older){ .plugin = res->plugin, .follower = res->follower, .streaming = true };
		} else if (res->plugin) {
			/* Taken out first, so that its follower's end leaves the
			 * devices and the older registrations alone. */
			stop[n_stop] = res->follower;
			drop[n_stop++] = res->plugin;
		}
		res->plugin = NULL;
		res->follower = NULL;
		res->streaming = false;
	}
	pthread_mutex_unlock(&sim->lock);
	if (r < 0) {
		snprintf(reason, reason_size, "kubelet-sim follows at most %d resources", SIM_MAX_RESOURCES);
		sim_plugin_unref(plugin);
		return r;
	}

	/* Joined outside the lock: the follower takes it to report its end. */
	for (size_t i = 0; i < n_stop; i++)
		follower_stop(stop[i], "replaced by a new registration");

	pthread_mutex_lock(&sim->lock);
	res->plugin = plugin;
	sim->current = res;

	struct out_line line;
	out_start(&line, "register");
	out_kv(&line, "resource", plugin->resource);
	out_kv(&line, "endpoint", plugin->endpoint);
	out_kv(&line, "version", DP_API_VERSION);
	out_kv_bool(&line, "preferred_allocation", plugin->preferred_allocation);
	out_kv_bool(&line, "pre_start", plugin->pre_start);
	out_kv_u64(&line, "beside", res->n_older);
	out_emit(&line);

	/* Like the kubelet, ListAndWatch starts before Register has answered. */
	struct follower *follower = NULL;
	r = follower_start(sim, res, plugin, &follower);
	if (r == 0) {
		res->follower = follower;
		res->streaming = true;
	}
	pthread_mutex_unlock(&sim->lock);

	for (size_t i = 0; i < n_stop; i++)
		if (drop[i])
			sim_plugin_unref(drop[i]);
	if (r < 0) {
		/* The registration stands; only the stream could not be followed. */
		log_error("%s: cannot start following ListAndWatch: %s", plugin->resource, strerror(-r));
	}
	return 0;
}

static void handle_register(void *ctx, const uint8_t *body, size_t len, struct gs_reply *reply)
{
	static const uint8_t empty[1];
	struct sim *sim = ctx;
	char reason[512];
	char socket_path[SOCKET_PATH_MAX];
	struct gc_channel *channel = NULL;
	bool preferred = false, pre_start = false;

	V1beta1__RegisterRequest *req = v1beta1__register_request__unpack(NULL, len, body ? body : empty);
	if (!req) {
		print_rejected("", "cannot decode RegisterRequest");
		gs_reply_error(reply, GRPC_STATUS_INVALID_ARGUMENT, "cannot decode RegisterRequest");
		return;
	}
	log_debug("Register version=%s resource=%s endpoint=%s", req->version, req->resource_name, req->endpoint);

	int r = validate(sim, req, socket_path, sizeof(socket_path), reason, sizeof(reason));
	if (r == 0)
		r = dial_back(socket_path, &channel, &preferred, &pre_start, reason, sizeof(reason));
	struct sim_plugin *plugin = NULL;
	if (r == 0) {
		r = sim_plugin_new(req->resource_name, req->endpoint, channel, preferred, pre_start, &plugin);
		if (r < 0)
			snprintf(reason, sizeof(reason), "cannot keep the plugin: %s", strerror(-r));
	}
	if (r == 0)
		r = install(sim, plugin, reason, sizeof(reason));
	if (r < 0) {
		print_rejected(req->resource_name, reason);
		gs_reply_error(reply, GRPC_STATUS_UNKNOWN, "%s", reason);
	}
	v1beta1__register_request__free_unpacked(req, NULL);
}

static const struct gs_method registration_methods[] = {
	{ .path = DP_METHOD_REGISTER, .unary = handle_register },
};

/* Deletes every socket file directly in dir; other files and directories stay. */
static int remove_sockets(const char *dir, unsigned *ret_removed)
{
	unsigned removed = 0;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	DIR *d = fdopendir(fd);
	if (!d) {
		int r = -errno;
		close(fd);
		return r;
	}
	int r = 0;
	for (;;) {
		errno = 0;
		struct dirent *de = readdir(d);
		if (!de) {
			if (errno != 0)
				r = -errno;
			break;
		}
		struct stat st;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISSOCK(st.st_mode))
			continue;
		if (unlinkat(fd, de->d_name, 0) < 0) {
			if (errno != ENOENT && r == 0)
				r = -errno;
			continue;
		}
		removed++;
	}
	closedir(d);
	if (r < 0)
		return r;
	*ret_removed = removed;
	return 0;
}

int kubelet_start(struct sim *sim)
{
	int r = mkdir_p(sim->dir, 0755);
	if (r < 0) {
		log_error("cannot create %s: %s", sim->dir, strerror(-r));
		return r;
	}
	unsigned removed = 0;
	r = remove_sockets(sim->dir, &removed);
	if (r < 0) {
		log_error("cannot delete the sockets in %s: %s", sim->dir, strerror(-r));
		return r;
	}
	log_debug("deleted %u socket(s) in %s", removed, sim->dir);

	if (!checkpoint_exists(sim)) {
		pthread_mutex_lock(&sim->lock);
		r = checkpoint_write(sim);
		pthread_mutex_unlock(&sim->lock);
		if (r < 0)
			log_warn("cannot write the checkpoint in %s: %s", sim->dir, strerror(-r));
	}

	r = gs_server_start(sim->kubelet_socket, registration_methods,
			    ELEMENTSOF(registration_methods), sim, &sim->server);
	if (r < 0) {
		log_error("cannot serve %s: %s", sim->kubelet_socket, strerror(-r));
		return r;
	}
	return 0;
}

void kubelet_stop(struct sim *sim, const char *reason)
{
	/* First no more registrations (this waits for a Register in progress),
	 * then no more streams, then no more connections. */
	gs_server_stop(sim->server);
	sim->server = NULL;

	/* The older registrations first, so that no stream's end promotes
	 * one; then the newest, whose end marks the devices Unhealthy. */
	static struct follower *followers[SIM_MAX_RESOURCES * SIM_MAX_OLDER];
	static struct sim_plugin *plugins[SIM_MAX_RESOURCES * SIM_MAX_OLDER];
	size_t n = 0;
	pthread_mutex_lock(&sim->lock);
	for (size_t i = 0; i < sim->n_resources; i++)
		n += sim_resource_take_older(&sim->resources[i], followers + n, plugins + n);
	pthread_mutex_unlock(&sim->lock);
	for (size_t i = 0; i < n; i++)
		follower_stop(followers[i], reason);
	for (size_t i = 0; i < n; i++)
		sim_plugin_unref(plugins[i]);

	n = 0;
	pthread_mutex_lock(&sim->lock);
	for (size_t i = 0; i < sim->n_resources; i++) {
		if (sim->resources[i].follower)
			followers[n++] = sim->resources[i].follower;
		sim->resources[i].follower = NULL;
	}
	pthread_mutex_unlock(&sim->lock);
	for (size_t i = 0; i < n; i++)
		follower_stop(followers[i], reason);

	n = 0;
	pthread_mutex_lock(&sim->lock);
	for (size_t i = 0; i < sim->n_resources; i++) {
		if (sim->resources[i].plugin)
			plugins[n++] = sim->resources[i].plugin;
		sim->resources[i].plugin = NULL;
		sim->resources[i].streaming = false;
		/* A kubelet that starts holds no path. */
		memset(sim->resources[i].held, 0, sizeof(sim->resources[i].held));
	}
	pthread_mutex_unlock(&sim->lock);
	for (size_t i = 0; i < n; i++)
		sim_plugin_unref(plugins[i]);
}
