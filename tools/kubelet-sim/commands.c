/* SPDX-License-Identifier: Apache-2.0 */
/* kubelet-sim's stdin commands; see commands.h. */
#include "commands.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "base/parse.h"
#include "devmgr.h"
#include "deviceplugin.pb-c.h"
#include "follower.h"
#include "output.h"
#include "registration.h"

#define OPTIONS_TIMEOUT_MS 10000
/* Container requests sent by `allocate-many`. */
#define MAX_CONTAINERS 64
#define MAX_ARGS 8

static const uint8_t empty_message[1];

/* Splits on blanks; -E2BIG when there are more than max words. */
static int split_words(char *line, char **words, size_t max, size_t *ret_n)
{
	size_t n = 0;
	char *p = line;
	for (;;) {
		p += strspn(p, " \t\r");
		if (*p == '\0')
			break;
		if (n == max)
			return -E2BIG;
		words[n++] = p;
		p += strcspn(p, " \t\r");
		if (*p != '\0')
			*p++ = '\0';
	}
	*ret_n = n;
	return 0;
}

/* Splits "a,b,c" in place into a malloc'd array of pointers into s. */
static int split_ids(char *s, char ***ret_ids, size_t *ret_n)
{
	size_t n = 1;
	for (const char *p = s; *p; p++)
		if (*p == ',')
			n++;
	if (n > SIM_MAX_DEVICES)
		return -E2BIG;
	char **ids = calloc(n, sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	char *p = s;
	for (size_t i = 0; i < n; i++) {
		ids[i] = p;
		p += strcspn(p, ",");
		if (*p == ',')
			*p++ = '\0';
		if (ids[i][0] == '\0') {
			free(ids);
			return -EINVAL;
		}
	}
	*ret_ids = ids;
	*ret_n = n;
	return 0;
}

static void id_list_error(int r)
{
	out_error("bad ID list: %s", r == -E2BIG ? "too many IDs" : r == -EINVAL ? "empty ID" : strerror(-r));
}

static void add_ids(struct out_line *list, char *const *ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out_list_add(list, ids[i]);
}

/* `<word> error code=<grpc status, or - for a local error> message="..."`. */
static void print_rpc_error(const char *word, int code, const char *message)
{
	char head[64];
	snprintf(head, sizeof(head), "%s error", word);
	struct out_line line;
	out_start(&line, head);
	if (code < 0)
		out_kv(&line, "code", "-");
	else
		out_kv_u64(&line, "code", (unsigned long long)code);
	out_kv_quoted(&line, "message", message);
	out_emit(&line);
}

/* The registered plugin of the current resource, with a reference. */
static struct sim_plugin *current_plugin(struct sim *sim)
{
	struct sim_plugin *plugin = NULL;
	pthread_mutex_lock(&sim->lock);
	if (sim->current && sim->current->plugin) {
		plugin = sim->current->plugin;
		sim_plugin_ref(plugin);
	}
	pthread_mutex_unlock(&sim->lock);
	return plugin;
}

struct kv {
	const char *key;
	const char *value;
};

static int kv_compare(const void *a, const void *b)
{
	const struct kv *x = a;
	const struct kv *y = b;
	return strcmp(x->key, y->key);
}

/* Prints `allocate <word> name=K value=V` for each pair, sorted by name. */
static void print_pairs(const char *word, struct kv *pairs, size_t n)
{
	qsort(pairs, n, sizeof(*pairs), kv_compare);
	for (size_t i = 0; i < n; i++) {
		char head[32];
		snprintf(head, sizeof(head), "allocate %s", word);
		struct out_line line;
		out_start(&line, head);
		out_kv(&line, "name", pairs[i].key);
		out_kv(&line, "value", pairs[i].value);
		out_emit(&line);
	}
}

static void print_container(const V1beta1__ContainerAllocateResponse *c)
{
	struct out_line line;
	for (size_t i = 0; i < c->n_devices; i++) {
		out_start(&line, "allocate device");
		out_kv(&line, "host", c->devices[i]->host_path);
		out_kv(&line, "container", c->devices[i]->container_path);
		out_kv(&line, "permissions", c->devices[i]->permissions);
		out_emit(&line);
	}
	for (size_t i = 0; i < c->n_mounts; i++) {
		out_start(&line, "allocate mount");
		out_kv(&line, "host", c->mounts[i]->host_path);
		out_kv(&line, "container", c->mounts[i]->container_path);
		out_kv_bool(&line, "read_only", c->mounts[i]->read_only);
		out_emit(&line);
	}

	size_t n_pairs = c->n_envs > c->n_annotations ? c->n_envs : c->n_annotations;
	struct kv *pairs = calloc(n_pairs ? n_pairs : 1, sizeof(*pairs));
	if (!pairs) {
		out_error("out of memory printing the allocation");
		return;
	}
	for (size_t i = 0; i < c->n_envs; i++)
		pairs[i] = (struct kv){ c->envs[i]->key, c->envs[i]->value };
	print_pairs("env", pairs, c->n_envs);
	for (size_t i = 0; i < c->n_annotations; i++)
		pairs[i] = (struct kv){ c->annotations[i]->key, c->annotations[i]->value };
	print_pairs("annotation", pairs, c->n_annotations);
	free(pairs);

	for (size_t i = 0; i < c->n_cdi_devices; i++) {
		out_start(&line, "allocate cdi");
		out_kv(&line, "name", c->cdi_devices[i]->name);
		out_emit(&line);
	}
}

static void print_allocation(char *const *ids, size_t n_ids, const V1beta1__AllocateResponse *resp)
{
	struct out_line line, list;
	out_block_begin();
	out_start(&line, "allocate ok");
	out_start(&list, NULL);
	add_ids(&list, ids, n_ids);
	out_kv_list(&line, "ids", &list);
	out_emit(&line);
	for (size_t i = 0; i < resp->n_container_responses; i++) {
		if (resp->n_container_responses != 1) {
			out_start(&line, "allocate container");
			out_kv_u64(&line, "index", i);
			out_emit(&line);
		}
		print_container(resp->container_responses[i]);
	}
	out_start(&line, "allocate end");
	out_emit(&line);
	out_block_end();
}

static void print_error(const char *word, const struct devmgr_error *err)
{
	print_rpc_error(word, err->code, err->message);
}

static void cmd_allocate(struct sim *sim, char **args)
{
	uint32_t want;
	if (parse_u32(args[0], 10, SIM_MAX_DEVICES, &want) < 0 || want == 0) {
		out_error("usage: allocate N (1..%d)", SIM_MAX_DEVICES);
		return;
	}

	struct devmgr_pick pick = { 0 };
	struct devmgr_error err;
	V1beta1__AllocateResponse *resp = NULL;
	struct gc_result result = { 0 };
	size_t available;
	struct sim_resource *res;

	pthread_mutex_lock(&sim->lock);
	res = sim->current;
	pthread_mutex_unlock(&sim->lock);
	int r = devmgr_pick(sim, res, want, &pick, &available, &err);
	if (r < 0) {
		print_error("allocate", &err);
		goto out;
	}
	if (pick.asked_preferred) {
		struct out_line line, list;
		out_start(&line, "preferred");
		out_start(&list, NULL);
		add_ids(&list, pick.preferred, pick.n_preferred);
		out_kv_list(&line, "ids", &list);
		out_emit(&line);
	}
	r = devmgr_allocate(pick.plugin, 1, pick.ids, pick.n_ids, &resp, &result, &err);
	if (r < 0) {
		print_error("allocate", &err);
		goto out;
	}
	if (resp->n_container_responses == 0) {
		print_rpc_error("allocate", -1, "no containers returned in allocation response");
		goto out;
	}
	devmgr_record(sim, res, pick.ids, pick.n_ids, &result);
	print_allocation(pick.ids, pick.n_ids, resp);

out:
	if (resp)
		v1beta1__allocate_response__free_unpacked(resp, NULL);
	gc_result_clear(&result);
	devmgr_pick_clear(&pick);
}

/* allocate-ids, allocate-none, allocate-many: sent as given, not remembered. */
static void cmd_allocate_raw(struct sim *sim, size_t n_containers, char *id_list)
{
	char **ids = NULL;
	size_t n_ids = 0;
	V1beta1__AllocateResponse *resp = NULL;
	struct gc_result result = { 0 };
	struct sim_plugin *plugin = NULL;

	if (id_list && strcmp(id_list, "-") != 0) {
		int r = split_ids(id_list, &ids, &n_ids);
		if (r < 0) {
			id_list_error(r);
			return;
		}
	}
	plugin = current_plugin(sim);
	if (!plugin) {
		print_rpc_error("allocate", -1, "no device plugin registered");
		goto out;
	}
	struct devmgr_error err;
	if (devmgr_allocate(plugin, n_containers, ids, n_ids, &resp, &result, &err) < 0) {
		print_error("allocate", &err);
		goto out;
	}
	print_allocation(ids, n_ids, resp);

out:
	if (resp)
		v1beta1__allocate_response__free_unpacked(resp, NULL);
	gc_result_clear(&result);
	sim_plugin_unref(plugin);
	free(ids);
}

static void cmd_allocate_many(struct sim *sim, char **args)
{
	uint32_t k;
	if (parse_u32(args[0], 10, MAX_CONTAINERS, &k) < 0 || k == 0) {
		out_error("usage: allocate-many K ID[,ID...] (K 1..%d)", MAX_CONTAINERS);
		return;
	}
	cmd_allocate_raw(sim, k, args[1]);
}

static void cmd_release(struct sim *sim, char **args)
{
	bool all = strcmp(args[0], "all") == 0;
	char **ids = NULL;
	size_t n_ids = 0;
	if (!all) {
		int r = split_ids(args[0], &ids, &n_ids);
		if (r < 0) {
			id_list_error(r);
			return;
		}
	}

	struct out_line line, released;
	out_start(&released, NULL);
	size_t count = 0;
	pthread_mutex_lock(&sim->lock);
	if (sim->current)
		count = sim_resource_release(sim->current, ids, n_ids, all, &released);
	pthread_mutex_unlock(&sim->lock);
	free(ids);

	out_start(&line, "released");
	out_kv_list(&line, "ids", &released);
	out_emit(&line);
	if (count > 0)
		devmgr_write_checkpoint(sim);
}

static void cmd_options(struct sim *sim, char **args)
{
	(void)args;
	struct sim_plugin *plugin = current_plugin(sim);
	struct gc_result result = { 0 };
	if (!plugin) {
		print_rpc_error("options", -1, "no device plugin registered");
		return;
	}
	int r = gc_unary(plugin->channel, DP_METHOD_GET_OPTIONS, NULL, 0, OPTIONS_TIMEOUT_MS, &result);
	if (r < 0) {
		char message[128];
		snprintf(message, sizeof(message), "cannot call GetDevicePluginOptions: %s", strerror(-r));
		print_rpc_error("options", -1, message);
	} else if (result.status != GRPC_STATUS_OK) {
		print_rpc_error("options", (int)result.status, result.details);
	} else {
		V1beta1__DevicePluginOptions *opts = v1beta1__device_plugin_options__unpack(
			NULL, result.len, result.body ? result.body : empty_message);
		if (!opts) {
			print_rpc_error("options", -1, "cannot decode DevicePluginOptions");
		} else {
			struct out_line line;
			out_start(&line, "options");
			out_kv_bool(&line, "preferred_allocation", opts->get_preferred_allocation_available);
			out_kv_bool(&line, "pre_start", opts->pre_start_required);
			out_emit(&line);
			v1beta1__device_plugin_options__free_unpacked(opts, NULL);
		}
	}
	gc_result_clear(&result);
	sim_plugin_unref(plugin);
}

/* `use RESOURCE`: the followed resource the next commands act on. */
static void cmd_use(struct sim *sim, char **args)
{
	struct sim_resource *res;
	pthread_mutex_lock(&sim->lock);
	int r = sim_resource_get(sim, args[0], false, &res);
	if (r == 0)
		sim->current = res;
	pthread_mutex_unlock(&sim->lock);
	if (r < 0) {
		out_error("use: resource %s has not registered", args[0]);
		return;
	}
	struct out_line line;
	out_start(&line, "use");
	out_kv(&line, "resource", args[0]);
	out_emit(&line);
}

static void cmd_list(struct sim *sim, char **args)
{
	(void)args;
	struct out_line line;
	pthread_mutex_lock(&sim->lock);
	out_block_begin();
	const struct sim_resource *res = sim->current;
	for (size_t i = 0; res && i < res->n_devices; i++) {
		out_start(&line, "device");
		const struct sim_device *dev = &res->devices[i];
		out_kv(&line, "id", dev->id);
		out_kv(&line, "health", dev->health);
		if (dev->has_topology) {
			struct out_line numa;
			out_start(&numa, NULL);
			for (size_t j = 0; j < dev->n_numa && j < SIM_DEVICE_NUMA_MAX; j++) {
				char node[24];
				snprintf(node, sizeof(node), "%lld", (long long)dev->numa[j]);
				out_list_add(&numa, node);
			}
			if (dev->n_numa > SIM_DEVICE_NUMA_MAX)
				out_list_add(&numa, "...");
			out_kv_list(&line, "numa", &numa);
		}
		out_emit(&line);
	}
	out_start(&line, "list end");
	out_emit(&line);
	out_block_end();
	pthread_mutex_unlock(&sim->lock);
}

static void cmd_restart(struct sim *sim, char **args)
{
	(void)args;
	kubelet_stop(sim, "kubelet restarted");
	int r = kubelet_start(sim);
	if (r < 0) {
		out_error("restart failed: %s", strerror(-r));
		return;
	}
	struct out_line line;
	out_start(&line, "restarted");
	out_kv(&line, "dir", sim->dir);
	out_emit(&line);
}

static void cmd_end_stream(struct sim *sim, char **args)
{
	(void)args;
	struct follower *follower = NULL;
	pthread_mutex_lock(&sim->lock);
	if (sim->current) {
		follower = sim->current->follower;
		sim->current->follower = NULL;
	}
	pthread_mutex_unlock(&sim->lock);
	if (!follower) {
		out_error("no stream to end");
		return;
	}
	if (!follower_stop(follower, "ended by kubelet-sim"))
		out_error("the stream had already ended");
}

static void cmd_allocate_ids(struct sim *sim, char **args)
{
	cmd_allocate_raw(sim, 1, args[0]);
}

static void cmd_allocate_none(struct sim *sim, char **args)
{
	(void)args;
	cmd_allocate_raw(sim, 0, NULL);
}

static void cmd_dra_prepare(struct sim *sim, char **args)
{
	dra_sim_call(&sim->dra, true, args);
}

static void cmd_dra_unprepare(struct sim *sim, char **args)
{
	dra_sim_call(&sim->dra, false, args);
}

struct command {
	const char *name;
	size_t min_args, max_args; /* words after the command's name */
	const char *usage;
	void (*run)(struct sim *sim, char **args); /* args: the words after the name; NULL: quit */
};

static const struct command commands[] = {
	{ "allocate", 1, 1, "allocate N", cmd_allocate },
	{ "allocate-ids", 1, 1, "allocate-ids ID[,ID...] | allocate-ids -", cmd_allocate_ids },
	{ "allocate-none", 0, 0, "allocate-none", cmd_allocate_none },
	{ "allocate-many", 2, 2, "allocate-many K ID[,ID...]", cmd_allocate_many },
	{ "release", 1, 1, "release ID[,ID...] | release all", cmd_release },
	{ "options", 0, 0, "options", cmd_options },
	{ "list", 0, 0, "list", cmd_list },
	{ "use", 1, 1, "use RESOURCE", cmd_use },
	{ "restart", 0, 0, "restart", cmd_restart },
	{ "end-stream", 0, 0, "end-stream", cmd_end_stream },
	{ "dra-prepare", 3, 3, "dra-prepare NAMESPACE NAME UID", cmd_dra_prepare },
	{ "dra-unprepare", 3, 3, "dra-unprepare NAMESPACE NAME UID", cmd_dra_unprepare },
	{ "quit", 0, 0, "quit", NULL },
};

void commands_run(struct sim *sim, char *line, bool *ret_quit)
{
	char *argv[MAX_ARGS + 1] = { 0 };
	size_t argc = 0;
	if (split_words(line, argv, MAX_ARGS, &argc) < 0) {
		out_error("too many words");
		return;
	}
	/* Blank lines and # comments let scripts breathe. */
	if (argc == 0 || argv[0][0] == '#')
		return;

	for (size_t i = 0; i < ELEMENTSOF(commands); i++) {
		const struct command *c = &commands[i];
		if (strcmp(argv[0], c->name) != 0)
			continue;
		if (argc - 1 < c->min_args || argc - 1 > c->max_args) {
			out_error("usage: %s", c->usage);
			return;
		}
		if (!c->run) {
			*ret_quit = true;
			return;
		}
		c->run(sim, argv + 1);
		return;
	}
	out_error("unknown command %s", argv[0]);
}
