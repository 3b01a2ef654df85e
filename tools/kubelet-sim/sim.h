/* SPDX-License-Identifier: Apache-2.0 */
/* kubelet-sim's shared state: what the simulated device manager knows about
 * each extended resource (the registered plugin, its ListAndWatch follower,
 * the latest device list and the allocations made), guarded by one mutex.
 * Threads: the main thread runs commands, the kubelet.sock server thread
 * handles Register, one follower thread per followed stream. Lock order:
 * sim->lock, then the output lock (output.h); never join a follower while
 * holding sim->lock. */
#pragma once

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/k8s_names.h"
#include "base/parse.h"
#include "deviceplugin_api.h"
#include "dra.h"
#include "grpc/client.h"
#include "grpc/server.h"

/* As many as one plugin process may serve (src/plugin/resources.h), and more. */
#define SIM_MAX_RESOURCES 32
/* Devices kept per resource; a ListAndWatch answer with more is cut here. */
#define SIM_MAX_DEVICES 1024
/* Paths of files in the directory (the directory itself is bounded by the socket path). */
#define SIM_PATH_MAX 256

/* Device IDs longer than this are reported as invalid (the API's limit). */
#define DEVICE_ID_MAX 63
/* NUMA nodes kept per device; `list` shows the first ones and "..." */
#define SIM_DEVICE_NUMA_MAX 8

struct follower;
struct out_line;

/* One registered plugin endpoint. Reference counted so that commands can run
 * RPCs on its channel without holding the lock while a new registration
 * replaces it. */
struct sim_plugin {
	atomic_uint refs;
	struct gc_channel *channel;
	char resource[RESOURCE_NAME_MAX];
	char endpoint[SOCKET_PATH_MAX];
	bool preferred_allocation;
	bool pre_start;
};

struct sim_device {
	char *id;
	char *health;
	bool has_topology; /* the answer carried a TopologyInfo for it */
	size_t n_numa;     /* its NUMA nodes; the first SIM_DEVICE_NUMA_MAX are in numa */
	int64_t numa[SIM_DEVICE_NUMA_MAX];
};

/* One successful `allocate`: the kubelet's pod device entry. */
struct sim_allocation {
	unsigned long serial;
	char **ids;
	size_t n_ids;
	uint8_t *response; /* packed AllocateResponse, kept for the checkpoint */
	size_t response_len;
};

/* Endpoints of one resource followed beside its newest: the kubelet from
 * v1.36 on keeps one per socket path, so that a plugin's new instance can
 * register before the old one leaves (kubernetes/kubernetes#135437). */
#define SIM_MAX_OLDER 4

struct sim_older {
	struct sim_plugin *plugin;
	struct follower *follower; /* to be joined */
	bool streaming;            /* its stream is still open */
};

/* A socket path the kubelet still holds after its stream ended. */
struct sim_held {
	char endpoint[SOCKET_PATH_MAX];
	int64_t until_ms;
};
#define SIM_MAX_HELD 8

struct sim_resource {
	char name[RESOURCE_NAME_MAX];
	struct sim_held held[SIM_MAX_HELD]; /* a ring: the oldest is overwritten */
	size_t next_held;
	struct sim_plugin *plugin;     /* the newest registration; NULL when none */
	struct follower *follower;     /* NULL when none is running or waiting to be joined */
	bool streaming;                /* plugin's stream is open */
	struct sim_older older[SIM_MAX_OLDER];
	size_t n_older;
	struct sim_device *devices;    /* sorted in natural ID order, unique IDs */
	size_t n_devices;
	struct sim_allocation *allocs;
	size_t n_allocs;
};

struct sim {
	char dir[SIM_PATH_MAX];
	char kubelet_socket[SOCKET_PATH_MAX];

	pthread_mutex_t lock;
	struct sim_resource resources[SIM_MAX_RESOURCES];
	size_t n_resources;
	struct sim_resource *current; /* most recently registered; commands act on it */
	unsigned long next_serial;
	int64_t let_go_ms; /* --let-go-ms */

	/* The kubelet.sock server; started and stopped by the main thread only. */
	struct gs_server *server;
	/* The pod resources API server (podresources.h); NULL when not asked for. */
	struct gs_server *podres_server;
	/* The DRA mode (dra.h); its inotify_fd is -1 when not asked for. */
	struct dra_sim dra;
};

/* Returns 0, or -ENAMETOOLONG when DIR/kubelet.sock does not fit a socket
 * address (then *sim is untouched). */
int sim_init(struct sim *sim, const char *dir);
/* Frees every resource; followers must have been stopped, plugins dropped. */
void sim_fini(struct sim *sim);

/* Takes over channel. Returns 0 or -ENOMEM/-ENAMETOOLONG (channel closed). */
int sim_plugin_new(const char *resource, const char *endpoint, struct gc_channel *channel, bool preferred_allocation,
		   bool pre_start, struct sim_plugin **ret_plugin);
/* Both take NULL (base/refcount.h). The last reference closes the channel. */
struct sim_plugin *sim_plugin_ref(struct sim_plugin *plugin);
void sim_plugin_unref(struct sim_plugin *plugin);

/* The functions below are called with sim->lock held. */

/* Finds the resource, creating it when create is set (-ENOSPC when full). */
int sim_resource_get(struct sim *sim, const char *name, bool create, struct sim_resource **ret_resource);

/* Replaces the device list (taking over devices[0..n), already sorted and
 * unique) and prints the `devices` line. */
void sim_resource_set_devices(struct sim_resource *res, struct sim_device *devices, size_t n);
/* Marks every device unhealthy, like the kubelet when a stream ends, and
 * prints the `devices` line. */
void sim_resource_mark_unhealthy(struct sim_resource *res);

/* Whether plugin is one of the resource's followed registrations, the
 * newest or an older one whose stream is open. */
bool sim_resource_follows(const struct sim_resource *res, const struct sim_plugin *plugin);

/* Whether a Register naming endpoint is refused: a registration of that path
 * streams, or its stream ended less than let_go_ms ago. */
bool sim_resource_holds(const struct sim_resource *res, const char *endpoint);
/* Records that endpoint's stream ended now. */
void sim_resource_hold(struct sim *sim, struct sim_resource *res, const char *endpoint);

/* plugin's stream ended. Returns true when the devices stand: plugin was
 * replaced already, or it was the newest registration and an older one
 * still streams (which becomes the newest, as in the kubelet); false when
 * nothing streams any more. */
bool sim_resource_stream_ended(struct sim_resource *res, const struct sim_plugin *plugin);

/* Takes every older registration out of res into the arrays (at most
 * SIM_MAX_OLDER each): their followers to stop and plugins to unref, outside
 * the lock. Returns how many. */
size_t sim_resource_take_older(struct sim_resource *res, struct follower **followers, struct sim_plugin **plugins);
bool sim_resource_is_allocated(const struct sim_resource *res, const char *id);

/* Remembers a successful allocation (copies everything) under the next
 * serial. Returns 0 or -ENOMEM. */
int sim_resource_add_allocation(struct sim *sim, struct sim_resource *res, char *const *ids, size_t n_ids,
				const uint8_t *response, size_t response_len);

/* Forgets the given IDs (all of them when all is set); an allocation left
 * without IDs is dropped. Adds every ID released to *released (an output
 * list, see output.h; may be NULL) and returns how many there were. */
size_t sim_resource_release(struct sim_resource *res, char *const *ids, size_t n_ids, bool all,
			    struct out_line *released);

void sim_devices_free(struct sim_device *devices, size_t n);

/* Natural order of device IDs: digit runs compare as numbers, so "npu-2"
 * sorts before "npu-10". A total order (ties fall back to strcmp). */
int sim_id_compare(const char *a, const char *b);
/* qsort comparators for arrays of `char *` and of struct sim_device. */
int sim_id_ptr_compare(const void *a, const void *b);
int sim_device_compare(const void *a, const void *b);
