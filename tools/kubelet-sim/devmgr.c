/* SPDX-License-Identifier: Apache-2.0 */
/* The device manager's allocation; see devmgr.h. */
#include "devmgr.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "checkpoint.h"
#include "deviceplugin_api.h"

/* The kubelet sets no deadline on Allocate and GetPreferredAllocation; tests
 * need bounded waits, so kubelet-sim gives a generous one. */
#define ALLOCATE_TIMEOUT_MS 30000

static const uint8_t empty_message[1];

static int set_error(struct devmgr_error *err, int r, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int set_error(struct devmgr_error *err, int r, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	err->code = code;
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return r;
}

static void free_strings(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

static int copy_strings(char *const *src, size_t n, char ***ret)
{
	char **v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		v[i] = strdup(src[i]);
		if (!v[i]) {
			free_strings(v, i);
			return -ENOMEM;
		}
	}
	*ret = v;
	return 0;
}

void devmgr_pick_clear(struct devmgr_pick *pick)
{
	sim_plugin_unref(pick->plugin);
	free_strings(pick->ids, pick->n_ids);
	free_strings(pick->preferred, pick->n_preferred);
	*pick = (struct devmgr_pick){ 0 };
}

/* GetPreferredAllocation over the candidates (sorted), then the kubelet's
 * choice: the preferred IDs that are candidates, then the first remaining
 * candidates, up to want. Fills chosen (pointers into candidates) and
 * pick->preferred. */
static int ask_preferred(struct sim_plugin *plugin, char **candidates, size_t n_candidates, size_t want,
			 char **chosen, struct devmgr_pick *pick, struct devmgr_error *err)
{
	V1beta1__ContainerPreferredAllocationRequest container = V1BETA1__CONTAINER_PREFERRED_ALLOCATION_REQUEST__INIT;
	V1beta1__ContainerPreferredAllocationRequest *containers[1] = { &container };
	V1beta1__PreferredAllocationRequest req = V1BETA1__PREFERRED_ALLOCATION_REQUEST__INIT;
	V1beta1__PreferredAllocationResponse *resp = NULL;
	struct gc_result result = { 0 };
	uint8_t *packed = NULL;
	bool *taken = NULL;
	int r;

	container.available_deviceids = candidates;
	container.n_available_deviceids = n_candidates;
	container.allocation_size = (int32_t)want;
	req.container_requests = containers;
	req.n_container_requests = 1;
	size_t len = v1beta1__preferred_allocation_request__get_packed_size(&req);
	packed = malloc(len ? len : 1);
	taken = calloc(n_candidates ? n_candidates : 1, sizeof(*taken));
	if (!packed || !taken) {
		r = set_error(err, -ENOMEM, -1, "out of memory");
		goto out;
	}
	v1beta1__preferred_allocation_request__pack(&req, packed);

	r = gc_unary(plugin->channel, DP_METHOD_GET_PREFERRED, packed, len, ALLOCATE_TIMEOUT_MS, &result);
	if (r < 0) {
		r = set_error(err, r, -1, "cannot call GetPreferredAllocation: %s", strerror(-r));
		goto out;
	}
	if (result.status != GRPC_STATUS_OK) {
		r = set_error(err, -EIO, (int)result.status, "%s", result.details);
		goto out;
	}
	resp = v1beta1__preferred_allocation_response__unpack(NULL, result.len,
							      result.body ? result.body : empty_message);
	if (!resp) {
		r = set_error(err, -EBADMSG, -1, "cannot decode PreferredAllocationResponse");
		goto out;
	}

	char **preferred = NULL;
	size_t n_preferred = 0;
	if (resp->n_container_responses > 0) {
		preferred = resp->container_responses[0]->deviceids;
		n_preferred = resp->container_responses[0]->n_deviceids;
	}
	r = copy_strings(preferred, n_preferred, &pick->preferred);
	if (r < 0) {
		set_error(err, r, -1, "out of memory");
		goto out;
	}
	pick->n_preferred = n_preferred;
	pick->asked_preferred = true;

	size_t n = 0;
	for (size_t i = 0; i < n_candidates && n < want; i++) {
		for (size_t j = 0; j < n_preferred; j++) {
			if (strcmp(candidates[i], preferred[j]) == 0) {
				taken[i] = true;
				n++;
				break;
			}
		}
	}
	for (size_t i = 0; i < n_candidates && n < want; i++) {
		if (!taken[i]) {
			taken[i] = true;
			n++;
		}
	}
	n = 0;
	for (size_t i = 0; i < n_candidates; i++)
		if (taken[i])
			chosen[n++] = candidates[i];
	r = 0;

out:
	if (resp)
		v1beta1__preferred_allocation_response__free_unpacked(resp, NULL);
	gc_result_clear(&result);
	free(taken);
	free(packed);
	return r;
}

int devmgr_pick(struct sim *sim, struct sim_resource *res, size_t want, struct devmgr_pick *ret_pick,
		size_t *ret_available, struct devmgr_error *err)
{
	struct devmgr_pick pick = { 0 };
	char **candidates = NULL, **chosen = NULL;
	size_t n_candidates = 0;
	const char *name = NULL;
	bool oom = false;
	int r;

	pthread_mutex_lock(&sim->lock);
	if (!res)
		res = sim->current;
	if (res && res->plugin) {
		pick.plugin = res->plugin;
		sim_plugin_ref(pick.plugin);
		name = pick.plugin->resource;
		candidates = calloc(res->n_devices ? res->n_devices : 1, sizeof(*candidates));
		oom = !candidates;
		for (size_t i = 0; candidates && i < res->n_devices; i++) {
			const struct sim_device *dev = &res->devices[i];
			if (strcmp(dev->health, DP_HEALTHY) != 0 || sim_resource_is_allocated(res, dev->id))
				continue;
			candidates[n_candidates] = strdup(dev->id);
			if (!candidates[n_candidates]) {
				oom = true;
				break;
			}
			n_candidates++;
		}
	}
	pthread_mutex_unlock(&sim->lock);

	if (!pick.plugin) {
		r = set_error(err, -ENODEV, -1, "no device plugin registered");
		goto out;
	}
	if (oom) {
		r = set_error(err, -ENOMEM, -1, "out of memory");
		goto out;
	}
	if (n_candidates < want) {
		*ret_available = n_candidates;
		r = set_error(err, -ENOSPC, -1, "insufficient %s: want %zu, have %zu", name, want, n_candidates);
		goto out;
	}
	chosen = calloc(want ? want : 1, sizeof(*chosen));
	if (!chosen) {
		r = set_error(err, -ENOMEM, -1, "out of memory");
		goto out;
	}
	if (pick.plugin->preferred_allocation) {
		r = ask_preferred(pick.plugin, candidates, n_candidates, want, chosen, &pick, err);
		if (r < 0)
			goto out;
	} else {
		memcpy(chosen, candidates, want * sizeof(*chosen));
	}
	r = copy_strings(chosen, want, &pick.ids);
	if (r < 0) {
		set_error(err, r, -1, "out of memory");
		goto out;
	}
	pick.n_ids = want;
	*ret_pick = pick;
	pick = (struct devmgr_pick){ 0 };
	r = 0;

out:
	devmgr_pick_clear(&pick);
	free_strings(candidates, n_candidates);
	free(chosen);
	return r;
}

int devmgr_allocate(struct sim_plugin *plugin, size_t n_containers, char **ids, size_t n_ids,
		    V1beta1__AllocateResponse **ret_resp, struct gc_result *ret_raw, struct devmgr_error *err)
{
	V1beta1__ContainerAllocateRequest container = V1BETA1__CONTAINER_ALLOCATE_REQUEST__INIT;
	V1beta1__AllocateRequest req = V1BETA1__ALLOCATE_REQUEST__INIT;
	V1beta1__ContainerAllocateRequest **containers = NULL;
	uint8_t *packed = NULL;
	struct gc_result result = { 0 };
	int r;

	container.devices_ids = ids;
	container.n_devices_ids = n_ids;
	containers = calloc(n_containers ? n_containers : 1, sizeof(*containers));
	if (!containers) {
		r = set_error(err, -ENOMEM, -1, "cannot call Allocate: %s", strerror(ENOMEM));
		goto out;
	}
	for (size_t i = 0; i < n_containers; i++)
		containers[i] = &container;
	req.container_requests = containers;
	req.n_container_requests = n_containers;
	size_t len = v1beta1__allocate_request__get_packed_size(&req);
	packed = malloc(len ? len : 1);
	if (!packed) {
		r = set_error(err, -ENOMEM, -1, "cannot call Allocate: %s", strerror(ENOMEM));
		goto out;
	}
	v1beta1__allocate_request__pack(&req, packed);

	r = gc_unary(plugin->channel, DP_METHOD_ALLOCATE, packed, len, ALLOCATE_TIMEOUT_MS, &result);
	if (r < 0) {
		r = set_error(err, r, -1, "cannot call Allocate: %s", strerror(-r));
		goto out;
	}
	if (result.status != GRPC_STATUS_OK) {
		r = set_error(err, -EIO, (int)result.status, "%s", result.details);
		goto out;
	}
	V1beta1__AllocateResponse *resp =
		v1beta1__allocate_response__unpack(NULL, result.len, result.body ? result.body : empty_message);
	if (!resp) {
		r = set_error(err, -EBADMSG, -1, "cannot decode AllocateResponse");
		goto out;
	}
	*ret_resp = resp;
	*ret_raw = result;
	result = (struct gc_result){ 0 };
	r = 0;

out:
	gc_result_clear(&result);
	free(packed);
	free(containers);
	return r;
}

void devmgr_write_checkpoint(struct sim *sim)
{
	pthread_mutex_lock(&sim->lock);
	int r = checkpoint_write(sim);
	pthread_mutex_unlock(&sim->lock);
	if (r < 0)
		log_warn("cannot write the checkpoint in %s: %s", sim->dir, strerror(-r));
}

void devmgr_record(struct sim *sim, struct sim_resource *res, char *const *ids, size_t n_ids,
		   const struct gc_result *raw)
{
	pthread_mutex_lock(&sim->lock);
	int r = sim_resource_add_allocation(sim, res, ids, n_ids, raw->body, raw->len);
	pthread_mutex_unlock(&sim->lock);
	if (r < 0)
		log_warn("cannot remember the allocation: %s", strerror(-r));
	devmgr_write_checkpoint(sim);
}
