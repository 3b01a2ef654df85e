/* SPDX-License-Identifier: Apache-2.0 */
/* kubelet-sim's shared state; see sim.h. */
#include "sim.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/parse.h"
#include "base/refcount.h"
#include "output.h"

int sim_init(struct sim *sim, const char *dir)
{
	char socket_path[SOCKET_PATH_MAX];
	/* The socket path is the binding limit: a dir that fits in it fits in sim->dir. */
	int r = path_join(socket_path, sizeof(socket_path), dir, "kubelet.sock");
	if (r < 0)
		return r;

	*sim = (struct sim){ .next_serial = 1, .dra = { .inotify_fd = -1 } };
	memcpy(sim->kubelet_socket, socket_path, sizeof(socket_path));
	str_copy(sim->dir, sizeof(sim->dir), dir);
	pthread_mutex_init(&sim->lock, NULL);
	return 0;
}

static void allocation_clear(struct sim_allocation *alloc)
{
	for (size_t i = 0; i < alloc->n_ids; i++)
		free(alloc->ids[i]);
	free(alloc->ids);
	free(alloc->response);
	*alloc = (struct sim_allocation){ 0 };
}

void sim_fini(struct sim *sim)
{
	for (size_t i = 0; i < sim->n_resources; i++) {
		struct sim_resource *res = &sim->resources[i];
		sim_plugin_unref(res->plugin);
		for (size_t j = 0; j < res->n_older; j++)
			sim_plugin_unref(res->older[j].plugin);
		sim_devices_free(res->devices, res->n_devices);
		for (size_t j = 0; j < res->n_allocs; j++)
			allocation_clear(&res->allocs[j]);
		free(res->allocs);
	}
	sim->n_resources = 0;
	pthread_mutex_destroy(&sim->lock);
}

int sim_plugin_new(const char *resource, const char *endpoint, struct gc_channel *channel, bool preferred_allocation,
		   bool pre_start, struct sim_plugin **ret_plugin)
{
	int r = -ENOMEM;
	struct sim_plugin *plugin = calloc(1, sizeof(*plugin));
	if (!plugin)
		goto fail;
	r = str_copy(plugin->resource, sizeof(plugin->resource), resource);
	if (r < 0)
		goto fail;
	r = str_copy(plugin->endpoint, sizeof(plugin->endpoint), endpoint);
	if (r < 0)
		goto fail;
	atomic_init(&plugin->refs, 1);
	plugin->channel = channel;
	plugin->preferred_allocation = preferred_allocation;
	plugin->pre_start = pre_start;
	*ret_plugin = plugin;
	return 0;

fail:
	free(plugin);
	gc_channel_close(channel);
	return r;
}

static void sim_plugin_free(struct sim_plugin *plugin)
{
	gc_channel_close(plugin->channel);
	free(plugin);
}

DEFINE_REFCOUNT(struct sim_plugin, sim_plugin, sim_plugin_free)

int sim_resource_get(struct sim *sim, const char *name, bool create, struct sim_resource **ret_resource)
{
	for (size_t i = 0; i < sim->n_resources; i++) {
		if (strcmp(sim->resources[i].name, name) == 0) {
			*ret_resource = &sim->resources[i];
			return 0;
		}
	}
	if (!create)
		return -ENOENT;
	if (sim->n_resources == SIM_MAX_RESOURCES)
		return -ENOSPC;
	struct sim_resource *res = &sim->resources[sim->n_resources];
	*res = (struct sim_resource){ 0 };
	int r = str_copy(res->name, sizeof(res->name), name);
	if (r < 0)
		return r;
	sim->n_resources++;
	*ret_resource = res;
	return 0;
}

static void print_devices(const struct sim_resource *res)
{
	struct out_line line, unhealthy;
	size_t healthy = 0;

	out_start(&unhealthy, NULL);
	for (size_t i = 0; i < res->n_devices; i++) {
		if (strcmp(res->devices[i].health, DP_HEALTHY) == 0)
			healthy++;
		else
			out_list_add(&unhealthy, res->devices[i].id);
	}
	out_start(&line, "devices");
	out_kv(&line, "resource", res->name);
	out_kv_u64(&line, "capacity", res->n_devices);
	out_kv_u64(&line, "allocatable", healthy);
	out_kv_list(&line, "unhealthy", &unhealthy);
	out_emit(&line);
}

void sim_resource_set_devices(struct sim_resource *res, struct sim_device *devices, size_t n)
{
	sim_devices_free(res->devices, res->n_devices);
	res->devices = devices;
	res->n_devices = n;
	print_devices(res);
}

void sim_resource_mark_unhealthy(struct sim_resource *res)
{
	for (size_t i = 0; i < res->n_devices; i++) {
		if (strcmp(res->devices[i].health, DP_UNHEALTHY) == 0)
			continue;
		char *health = strdup(DP_UNHEALTHY);
		if (!health)
			continue; /* keeps the old string; printed as is */
		free(res->devices[i].health);
		res->devices[i].health = health;
	}
	print_devices(res);
}

bool sim_resource_follows(const struct sim_resource *res, const struct sim_plugin *plugin)
{
	if (res->plugin == plugin)
		return true;
	for (size_t i = 0; i < res->n_older; i++)
		if (res->older[i].plugin == plugin && res->older[i].streaming)
			return true;
	return false;
}

bool sim_resource_holds(const struct sim_resource *res, const char *endpoint)
{
	if (res->plugin && res->streaming && strcmp(res->plugin->endpoint, endpoint) == 0)
		return true;
	for (size_t i = 0; i < res->n_older; i++)
		if (res->older[i].streaming && strcmp(res->older[i].plugin->endpoint, endpoint) == 0)
			return true;
	int64_t now = now_ms();
	for (size_t i = 0; i < SIM_MAX_HELD; i++)
		if (res->held[i].until_ms > now && strcmp(res->held[i].endpoint, endpoint) == 0)
			return true;
	return false;
}

void sim_resource_hold(struct sim *sim, struct sim_resource *res, const char *endpoint)
{
	if (sim->let_go_ms <= 0)
		return;
	struct sim_held *h = &res->held[res->next_held++ % SIM_MAX_HELD];
	if (str_copy(h->endpoint, sizeof(h->endpoint), endpoint) == 0)
		h->until_ms = now_ms() + sim->let_go_ms;
}

bool sim_resource_stream_ended(struct sim_resource *res, const struct sim_plugin *plugin)
{
	if (res->plugin != plugin) {
		for (size_t i = 0; i < res->n_older; i++)
			if (res->older[i].plugin == plugin)
				res->older[i].streaming = false;
		return true;
	}
	res->streaming = false;
	for (size_t i = res->n_older; i-- > 0;) {
		struct sim_older *o = &res->older[i];
		if (!o->streaming)
			continue;
		/* The ended one takes the older's place, to be joined later. */
		struct sim_older ended = { .plugin = res->plugin, .follower = res->follower };
		res->plugin = o->plugin;
		res->follower = o->follower;
		res->streaming = true;
		*o = ended;
		return true;
	}
	return false;
}

size_t sim_resource_take_older(struct sim_resource *res, struct follower **followers, struct sim_plugin **plugins)
{
	size_t n = res->n_older;
	for (size_t i = 0; i < n; i++) {
		followers[i] = res->older[i].follower;
		plugins[i] = res->older[i].plugin;
		res->older[i] = (struct sim_older){ 0 };
	}
	res->n_older = 0;
	return n;
}

bool sim_resource_is_allocated(const struct sim_resource *res, const char *id)
{
	for (size_t i = 0; i < res->n_allocs; i++)
		for (size_t j = 0; j < res->allocs[i].n_ids; j++)
			if (strcmp(res->allocs[i].ids[j], id) == 0)
				return true;
	return false;
}

int sim_resource_add_allocation(struct sim *sim, struct sim_resource *res, char *const *ids, size_t n_ids,
				const uint8_t *response, size_t response_len)
{
	struct sim_allocation alloc = { 0 };
	struct sim_allocation *allocs = realloc(res->allocs, (res->n_allocs + 1) * sizeof(*allocs));
	if (!allocs)
		return -ENOMEM;
	res->allocs = allocs;

	alloc.ids = calloc(n_ids ? n_ids : 1, sizeof(*alloc.ids));
	alloc.response = malloc(response_len ? response_len : 1);
	if (!alloc.ids || !alloc.response)
		goto fail;
	for (; alloc.n_ids < n_ids; alloc.n_ids++) {
		alloc.ids[alloc.n_ids] = strdup(ids[alloc.n_ids]);
		if (!alloc.ids[alloc.n_ids])
			goto fail;
	}
	if (response_len)
		memcpy(alloc.response, response, response_len);
	alloc.response_len = response_len;
	alloc.serial = sim->next_serial++;
	res->allocs[res->n_allocs++] = alloc;
	return 0;

fail:
	allocation_clear(&alloc);
	return -ENOMEM;
}

static bool in_list(char *const *ids, size_t n, const char *id)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(ids[i], id) == 0)
			return true;
	return false;
}

size_t sim_resource_release(struct sim_resource *res, char *const *ids, size_t n_ids, bool all,
			    struct out_line *released)
{
	size_t count = 0;
	size_t kept_allocs = 0;
	for (size_t i = 0; i < res->n_allocs; i++) {
		struct sim_allocation *alloc = &res->allocs[i];
		size_t kept = 0;
		for (size_t j = 0; j < alloc->n_ids; j++) {
			if (all || in_list(ids, n_ids, alloc->ids[j])) {
				if (released)
					out_list_add(released, alloc->ids[j]);
				free(alloc->ids[j]);
				count++;
			} else {
				alloc->ids[kept++] = alloc->ids[j];
			}
		}
		alloc->n_ids = kept;
		if (kept == 0)
			allocation_clear(alloc);
		else
			res->allocs[kept_allocs++] = *alloc;
	}
	res->n_allocs = kept_allocs;
	return count;
}

void sim_devices_free(struct sim_device *devices, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(devices[i].id);
		free(devices[i].health);
	}
	free(devices);
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int sim_id_compare(const char *a, const char *b)
{
	const char *p = a, *q = b;
	while (*p && *q) {
		if (is_digit(*p) && is_digit(*q)) {
			while (*p == '0')
				p++;
			while (*q == '0')
				q++;
			size_t pl = 0, ql = 0;
			while (is_digit(p[pl]))
				pl++;
			while (is_digit(q[ql]))
				ql++;
			if (pl != ql)
				return pl < ql ? -1 : 1;
			int c = memcmp(p, q, pl);
			if (c != 0)
				return c < 0 ? -1 : 1;
			p += pl;
			q += ql;
			continue;
		}
		if (*p != *q)
			return (unsigned char)*p < (unsigned char)*q ? -1 : 1;
		p++;
		q++;
	}
	if (*p || *q)
		return *p ? 1 : -1;
	return strcmp(a, b);
}

int sim_id_ptr_compare(const void *a, const void *b)
{
	const char *const *x = a;
	const char *const *y = b;
	return sim_id_compare(*x, *y);
}

int sim_device_compare(const void *a, const void *b)
{
	const struct sim_device *x = a;
	const struct sim_device *y = b;
	return sim_id_compare(x->id, y->id);
}
