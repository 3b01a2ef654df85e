/* SPDX-License-Identifier: Apache-2.0 */
/* ascend-bench: measures ascend-device-plugin as the kubelet experiences it,
 * on simulated nodes (device files, a driver tree with the DCMI simulator as
 * libdcmi.so, a state file) with kubelet-sim as the kubelet. It runs the real
 * plugin and kubelet-sim as processes and prints a table of measured values
 * against targets:
 *
 *   - plugin RSS (VmRSS) idle and after N Allocate calls, 8 and 128 chips;
 *   - Allocate latency p50/p99 from a gRPC client (gc_unary in a loop);
 *   - fault -> ListAndWatch update latency p50/p99, from the (atomic) write
 *     of the state file to the moment a ListAndWatch client here receives
 *     the list showing the change, with DCMI fault events and without
 *     (polling);
 *   - kubelet restart -> registered again, from kubelet-sim's `restarted`
 *     line to its next `register` line (both timestamped by kubelet-sim),
 *     also while a DCMI health call hangs for 30 s (the simulator's hang=);
 *   - start -> registered, from spawning the plugin to kubelet-sim's
 *     `register` line;
 *   - the same fault latency with the plugin logging at debug level to a
 *     stderr pipe that is full and never read, and SIGTERM -> exit then.
 *   - plugin RSS and fds under connection floods: 2,000 connections held
 *     open, then 5,000 connect/close rounds, and what is left after each;
 *   - sharing: GetPreferredAllocation latency with 8 chips x 64 time-slicing
 *     replicas (512 devices) and on a 16-die A3 node; with 16 chips x 64
 *     replicas (1,024 devices) the fault -> ListAndWatch update time, the
 *     size of that update and the plugin's RSS.
 *   - flap damping: the ListAndWatch updates a watcher gets while one chip
 *     flaps 1,000 times, with the fault policy's recovery hold 0 and at its
 *     default (5 s);
 *   - /metrics scrape latency p50/p99 at 16 chips (8 replicas each) held
 *     by 100 pods of kubelet-sim (pod labels from its pod resources API),
 *     and the plugin's RSS after the scrapes;
 *   - with --kubeconfig, the plugin's RSS with the DRA front end on: the
 *     API-server module loaded and the node's ResourceSlices published;
 *     and with both front ends on a 16-chip node (8 chips each);
 *     with --dra-claims, NodePrepareResources p50/p99 for claims the driver
 *     reads from the API server, through kubelet-sim, from the bench's
 *     write of the command to kubelet-sim's timestamp of the answer's line;
 *     with --kubectl, fault -> tainted device in the ResourceSlice, from the
 *     state file's write to the line of a `kubectl get --watch` showing it,
 *     and on a 64-chip node start -> ResourceSlices, from spawning the
 *     plugin to the watch's line that completes the pool, and the same on
 *     16 chips without and with every vNPU template (--dra-dynamic-vnpus),
 *     with the slices' count, devices and JSON bytes;
 *   - with --dra-dynamic-claims, on an 8-chip node carved on demand,
 *     NodePrepareResources and NodeUnprepareResources p50/p99 of whole
 *     chips and of dynamic vNPUs (created at prepare and destroyed at
 *     unprepare through DCMI), taken in turn over the same rounds;
 *   - with --peer-driver, the same for upstream's DRA test driver
 *     (Kubernetes' test/e2e/dra/test-driver) beside ours: start -> its
 *     ResourceSlices with 64 devices, its RSS and, with --peer-claims, its
 *     NodePrepareResources p50/p99 through the same kubelet-sim commands.
 * Every plugin runs with its metrics endpoint on (a free port on
 * 127.0.0.1) and an NFD features file, so every RSS is with metrics on.
 *
 * scripts/bench.sh (make bench) gives it the binaries' paths and a work
 * directory; docs/performance.md describes the method and the latest table.
 * Every wait has a deadline; children are stopped and node directories
 * removed on every path, and a SIGINT or SIGTERM kills the children. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "base/file.h"
#include "base/parse.h"
#include "deviceplugin.pb-c.h"
#include "grpc/client.h"
#include "support/node_tree.h"
#include "support/proc.h"
#include "support/tmpdir.h"

#define RESOURCE "ascend.com/npu"
#define METHOD_ALLOCATE "/v1beta1.DevicePlugin/Allocate"
#define METHOD_LIST_AND_WATCH "/v1beta1.DevicePlugin/ListAndWatch"
#define METHOD_GET_OPTIONS "/v1beta1.DevicePlugin/GetDevicePluginOptions"
#define METHOD_PREFERRED "/v1beta1.DevicePlugin/GetPreferredAllocation"
#define SHARING_REPLICAS 64

/* Deadlines: every wait is bounded by one of these. */
#define WAIT_MS 10000      /* a line, a registration, a device list */
#define STOP_WAIT_MS 5000  /* a child's exit after SIGTERM, then SIGKILL */
#define CALL_TIMEOUT_MS 5000

#define FAULTY_CHIP 3
#define WARMUP_CALLS 100
#define READ_BUF_BYTES (256 * 1024)
#define PATH_BYTES 512

/* --- settings --------------------------------------------------------------- */

/* The Nodes the DRA drivers publish for: scripts/bench.sh makes them. A
 * start measured on a Node of its own sees no slices of an earlier run. */
#define DRA_NODE "bench-node"       /* ours, 8 chips */
#define DRA_NODE_64 "bench-node-64" /* ours, 64 chips */
#define DRA_NODE_16 "bench-node-16" /* ours, 16 chips, no vNPUs carved on demand */
#define DRA_NODE_16_DYNAMIC "bench-node-16-dynamic" /* ours, 16 chips with every template */
#define PEER_NODE "bench-peer"      /* the peer, 8 devices */
#define PEER_NODE_64 "bench-peer-64"
/* The peer's default driver name, the one its claims are allocated from. */
#define PEER_DRIVER "test-driver.cdi.k8s.io"
#define DRA_CLAIMS_MAX 1000 /* prepare samples per round */
#define DRA_ROUNDS_MAX 20

struct settings {
	const char *plugin_bin;
	const char *sim_bin;
	const char *dcmi_lib;
	const char *work_dir; /* NULL: a fresh one under /tmp, removed at the end */
	const char *kubeconfig; /* an API server with the Node DRA_NODE: the DRA row; NULL: none */
	const char *kubectl;    /* kubectl for the watches of slices; NULL: no fault -> slice, start -> slices rows */
	const char *dra_claims; /* "NAME UID" lines of allocated claims in default; NULL: no prepare row */
	const char *dra_dynamic_claims; /* as dra_claims, each a placement of a dynamic vNPU; NULL: no such row */
	const char *only;       /* comma-separated scenarios to run; NULL: all */
	const char *peer_bin;    /* upstream's dra-test-driver; NULL: no peer rows */
	const char *peer_claims; /* as dra_claims, allocated from PEER_DRIVER on PEER_NODE */
	uint32_t allocate_calls;
	uint32_t fault_cycles;
	uint32_t restarts;
	uint32_t starts;
	uint32_t poll_interval_ms;
	uint32_t dra_rounds;
};

/* The scenarios, as --only names them, in the order they run. */
#define SCENARIO_NAMES \
	"events,polling,flaps,big,blocked-stderr,flood,sharing,metrics,dra,dra-both,dra-dynamic,dra-slices,peer"

/* Whether the comma-separated list holds the name of len bytes. */
static bool name_in(const char *list, const char *name, size_t len)
{
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		if (n == len && strncmp(p, name, len) == 0)
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

static void usage(FILE *f)
{
	fputs("Usage: ascend-bench --plugin PATH --kubelet-sim PATH --dcmi-lib PATH [options]\n"
	      "\n"
	      "Runs ascend-device-plugin on simulated nodes and prints a table of RSS and\n"
	      "latencies against targets (see docs/performance.md).\n"
	      "\n"
	      "  --plugin PATH            the ascend-device-plugin binary\n"
	      "  --kubelet-sim PATH       the kubelet-sim binary\n"
	      "  --dcmi-lib PATH          the DCMI simulator (libdcmi.so)\n"
	      "  --work-dir DIR           root-owned directory for the nodes (default: a new one in /tmp)\n"
	      "  --kubeconfig PATH        an API server holding the Node " DRA_NODE " for the DRA front end's row\n"
	      "                           (ASCEND_KUBE_MODULE: the module; default: no DRA row)\n"
	      "  --kubectl PATH           kubectl, to watch the slices for the fault -> ResourceSlice row and\n"
	      "                           start -> ResourceSlices on the Node " DRA_NODE_64 "\n"
	      "  --dra-claims PATH        \"NAME UID\" lines of claims in default allocated on " DRA_NODE "\n"
	      "                           (the NodePrepareResources row)\n"
	      "  --dra-dynamic-claims PATH as --dra-claims, each allocated a placement of a dynamic vNPU\n"
	      "                           (npu-<chip>-vir05-1c-8g-0) on " DRA_NODE "; needs --dra-claims\n"
	      "  --only NAMES             run only these scenarios, comma-separated (" SCENARIO_NAMES ")\n"
	      "  --peer-driver PATH       upstream's dra-test-driver, measured beside the DRA front end\n"
	      "                           (needs --kubeconfig and --kubectl; the Nodes " PEER_NODE " and " PEER_NODE_64 ")\n"
	      "  --peer-claims PATH       as --dra-claims, allocated from " PEER_DRIVER " on " PEER_NODE "\n"
	      "  --allocate-calls N       Allocate calls per node (default 10000)\n"
	      "  --fault-cycles N         fault/recovery cycles per mode (default 50)\n"
	      "  --restarts N             kubelet restarts (default 20)\n"
	      "  --starts N               plugin starts (default 10)\n"
	      "  --dra-rounds N           prepare/unprepare rounds over the claims, ours and the peer's (default 5)\n"
	      "  --poll-interval-ms N     --health-interval of the no-events run (default 100)\n",
	      f);
}

static int parse_settings(int argc, char **argv, struct settings *s)
{
	*s = (struct settings){
		.allocate_calls = 10000, .fault_cycles = 50, .restarts = 20, .starts = 10, .poll_interval_ms = 100,
		.dra_rounds = 5,
	};
	static const struct {
		const char *name;
		size_t offset;
	} paths[] = {
		{ "--plugin", offsetof(struct settings, plugin_bin) },
		{ "--kubelet-sim", offsetof(struct settings, sim_bin) },
		{ "--dcmi-lib", offsetof(struct settings, dcmi_lib) },
		{ "--work-dir", offsetof(struct settings, work_dir) },
		{ "--kubeconfig", offsetof(struct settings, kubeconfig) },
		{ "--kubectl", offsetof(struct settings, kubectl) },
		{ "--dra-claims", offsetof(struct settings, dra_claims) },
		{ "--dra-dynamic-claims", offsetof(struct settings, dra_dynamic_claims) },
		{ "--only", offsetof(struct settings, only) },
		{ "--peer-driver", offsetof(struct settings, peer_bin) },
		{ "--peer-claims", offsetof(struct settings, peer_claims) },
	};
	static const struct {
		const char *name;
		size_t offset;
		uint32_t min, max;
	} numbers[] = {
		{ "--allocate-calls", offsetof(struct settings, allocate_calls), 1, 10000000 },
		{ "--fault-cycles", offsetof(struct settings, fault_cycles), 1, 10000 },
		{ "--restarts", offsetof(struct settings, restarts), 1, 10000 },
		{ "--starts", offsetof(struct settings, starts), 1, 10000 },
		{ "--poll-interval-ms", offsetof(struct settings, poll_interval_ms), 100, 60000 },
		{ "--dra-rounds", offsetof(struct settings, dra_rounds), 1, DRA_ROUNDS_MAX },
	};

	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (strcmp(arg, "--help") == 0) {
			usage(stdout);
			exit(0);
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "ascend-bench: %s needs a value\n", arg);
			return -EINVAL;
		}
		const char *value = argv[++i];
		bool known = false;
		for (size_t k = 0; k < sizeof(paths) / sizeof(paths[0]) && !known; k++) {
			if (strcmp(arg, paths[k].name) == 0) {
				memcpy((char *)s + paths[k].offset, &value, sizeof(value));
				known = true;
			}
		}
		for (size_t k = 0; k < sizeof(numbers) / sizeof(numbers[0]) && !known; k++) {
			if (strcmp(arg, numbers[k].name) != 0)
				continue;
			uint32_t v;
			if (parse_u32(value, 10, numbers[k].max, &v) < 0 || v < numbers[k].min) {
				fprintf(stderr, "ascend-bench: %s: '%s' is not a number in %u..%u\n", arg, value,
					numbers[k].min, numbers[k].max);
				return -EINVAL;
			}
			memcpy((char *)s + numbers[k].offset, &v, sizeof(v));
			known = true;
		}
		if (!known) {
			fprintf(stderr, "ascend-bench: unknown option '%s'\n\n", arg);
			usage(stderr);
			return -EINVAL;
		}
	}
	if (!s->plugin_bin || !s->sim_bin || !s->dcmi_lib) {
		fprintf(stderr, "ascend-bench: --plugin, --kubelet-sim and --dcmi-lib are required\n\n");
		usage(stderr);
		return -EINVAL;
	}
	if (s->peer_bin && (!s->kubeconfig || !s->kubectl)) {
		fprintf(stderr, "ascend-bench: --peer-driver needs --kubeconfig and --kubectl\n");
		return -EINVAL;
	}
	if (s->dra_dynamic_claims && !s->dra_claims) {
		fprintf(stderr, "ascend-bench: --dra-dynamic-claims needs --dra-claims\n");
		return -EINVAL;
	}
	for (const char *p = s->only; p && *p;) {
		size_t len = strcspn(p, ",");
		if (!name_in(SCENARIO_NAMES, p, len)) {
			fprintf(stderr, "ascend-bench: --only: no scenario '%.*s' (%s)\n", (int)len, p, SCENARIO_NAMES);
			return -EINVAL;
		}
		p += len + (p[len] == ',');
	}
	return 0;
}

/* --- time and samples ---------------------------------------------------------- */

static int64_t mono_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Latencies in nanoseconds (Allocate) or microseconds (the rest). */
struct samples {
	int64_t *v;
	size_t n, cap;
	bool sorted;
};

static int samples_init(struct samples *s, size_t cap)
{
	*s = (struct samples){ .v = calloc(cap ? cap : 1, sizeof(int64_t)), .cap = cap };
	return s->v ? 0 : -ENOMEM;
}

static void samples_add(struct samples *s, int64_t value)
{
	if (s->n < s->cap)
		s->v[s->n++] = value;
	s->sorted = false;
}

static int compare_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Nearest-rank percentile; -1 when there are no samples. */
static int64_t percentile(struct samples *s, unsigned p)
{
	if (s->n == 0)
		return -1;
	if (!s->sorted) {
		qsort(s->v, s->n, sizeof(s->v[0]), compare_i64);
		s->sorted = true;
	}
	size_t rank = (s->n * p + 99) / 100;
	return s->v[rank ? rank - 1 : 0];
}

static void samples_free(struct samples *s)
{
	free(s->v);
	*s = (struct samples){ 0 };
}

/* --- children ---------------------------------------------------------------- */

/* A SIGINT or SIGTERM kills the children (tests/support/proc.c keeps their
 * pids for that) and ends the bench. */
static void on_fatal_signal(int sig)
{
	proc_kill_all();
	_exit(128 + sig);
}

/* Starts a child with stdout a pipe of READ_BUF_BYTES (device lists of a
 * thousand devices make long lines) and stderr appended to stderr_path. */
static int start_child(const char *const argv[], const char *const extra_env[], const char *stderr_path,
		       bool with_stdin, struct proc **ret_proc)
{
	const struct proc_options options = {
		.argv = argv,
		.extra_env = extra_env,
		.stderr_path = stderr_path,
		.null_stdin = !with_stdin,
		.buffer_size = READ_BUF_BYTES,
		.stop_timeout_ms = STOP_WAIT_MS,
	};
	int r = proc_spawn(&options, ret_proc);
	if (r < 0)
		fprintf(stderr, "ascend-bench: cannot start %s: %s\n", argv[0], strerror(-r));
	return r;
}

static int send_line(struct proc *p, const char *line)
{
	int r = proc_write_line(p, line);
	if (r < 0)
		fprintf(stderr, "ascend-bench: cannot write '%s': %s\n", line, strerror(-r));
	return r;
}

/* kubelet-sim's `ts=<microseconds>` prefix (CLOCK_MONOTONIC, like mono_us). */
static int line_ts(const char *line, int64_t *ret_us)
{
	char digits[24];
	if (strncmp(line, "ts=", 3) != 0)
		return -EINVAL;
	size_t n = strspn(line + 3, "0123456789");
	if (n == 0 || n >= sizeof(digits))
		return -EINVAL;
	memcpy(digits, line + 3, n);
	digits[n] = '\0';
	uint64_t v;
	int r = parse_u64(digits, 10, INT64_MAX, &v);
	if (r == 0)
		*ret_us = (int64_t)v;
	return r;
}

/* --- simulated nodes ----------------------------------------------------------- */

struct node {
	unsigned chips;
	unsigned replicas; /* time-slicing replicas per chip through a --config file; 0: none */
	bool a3;           /* A3 dies (board id 0xb0) rather than 910B3 chips */
	bool events;
	bool default_hold; /* the fault policy's default recovery hold, not 0 */
	const char *hang; /* the faulty chip's hang= in the next state written, or NULL */
	char root[PATH_BYTES];
	char dev[PATH_BYTES];
	char sockets[PATH_BYTES];
	char state[PATH_BYTES];
	char plugin_socket[PATH_BYTES];
	char plugin_log[PATH_BYTES];
	char sim_log[PATH_BYTES];
	char nfd_file[PATH_BYTES];
	char metrics_addr[32];     /* 127.0.0.1:<port> */
	char podres[PATH_BYTES];   /* kubelet-sim's pod resources socket, empty when none */
	uint16_t metrics_port;
	struct proc *sim;    /* NULL when not running */
	struct proc *plugin; /* NULL when not running */
	const char *const *extra_flags; /* start_plugin's, NULL-terminated; NULL: none */
	bool plugin_stderr_pipe;        /* the plugin's stderr a pipe (proc_expect_err), not plugin_log */
};

/* Writes the DCMI state: every chip healthy except the faulty one at the
 * given health (0 for none), replacing the file atomically. *ret_written_us
 * is the time just before the write, some microseconds before the rename
 * that the simulator acts on. */
static int node_write_state(struct node *n, unsigned faulty_health, int64_t *ret_written_us)
{
	char (*attrs)[128] = calloc(n->chips, sizeof(*attrs));
	const char **attr_ptrs = calloc(n->chips, sizeof(*attr_ptrs));
	int r = -ENOMEM;
	if (!attrs || !attr_ptrs)
		goto out;
	for (unsigned i = 0; i < n->chips; i++) {
		unsigned health = i == FAULTY_CHIP ? faulty_health : 0;
		/* Each chip with a RoCE address and its link up, as on a real
		 * training or inference server: Allocate and the DRA prepare
		 * then carry the chips' network identity. */
		snprintf(attrs[i], sizeof(attrs[i]), "health=%u%s%s%s%s ip=10.0.%u.%u/16 link=up", health,
			 health ? " errors=80E01801" : "", n->a3 ? " board=0xb0" : "",
			 i == FAULTY_CHIP && n->hang ? " hang=" : "", i == FAULTY_CHIP && n->hang ? n->hang : "", i / 250,
			 i % 250 + 1);
		attr_ptrs[i] = attrs[i];
	}
	/* At most 64 cards, as real DCMI reports: big nodes put several chips on a card. */
	const struct chip_state state = {
		.chips = n->chips,
		.name = n->a3 ? "910_9391" : "910B3",
		.head = n->events ? "subscribe on\n" : "subscribe off\n",
		.attrs = attr_ptrs,
		.per_card = (n->chips + 63) / 64,
	};
	int64_t t = mono_us();
	r = chip_state_write(n->state, &state);
	if (r == 0 && ret_written_us)
		*ret_written_us = t;
out:
	free(attr_ptrs);
	free(attrs);
	return r;
}

/* The --config file start_plugin passes: the fault policy's recovery hold
 * off (unless n->default_hold), so that recovery rows measure the plugin's
 * path and not the hold (which adds its 5 s by design), and time-slicing
 * with replicas. */
static int node_write_config(struct node *n, unsigned replicas)
{
	char path[PATH_BYTES + 16];
	snprintf(path, sizeof(path), "%s/config.yaml", n->root);
	FILE *f = fopen(path, "we");
	if (!f)
		return -errno;
	fprintf(f, "version: v1\n%s", n->default_hold ? "" : "faultPolicy:\n  recoveryHold: 0\n");
	if (replicas)
		fprintf(f, "sharing:\n  timeSlicing:\n    resources:\n    - name: %s\n      replicas: %u\n", RESOURCE,
			replicas);
	if (fclose(f) != 0)
		return -EIO;
	n->replicas = replicas;
	return 0;
}

/* The devices the plugin advertises: each chip, or each of its replicas. */
static unsigned node_devices(const struct node *n)
{
	return n->chips * (n->replicas ? n->replicas : 1);
}

static int node_create(struct node *n, const char *work_dir, const char *name, unsigned chips, bool events,
		       const char *dcmi_lib)
{
	*n = (struct node){ .chips = chips, .events = events };
	if (str_printf(n->root, sizeof(n->root), "%s/%s", work_dir, name) < 0 ||
	    str_printf(n->dev, sizeof(n->dev), "%s/" NODE_TREE_DEV_DIR, n->root) < 0 ||
	    str_printf(n->sockets, sizeof(n->sockets), "%s/" NODE_TREE_SOCKET_DIR, n->root) < 0 ||
	    str_printf(n->state, sizeof(n->state), "%s/" NODE_TREE_STATE_FILE, n->root) < 0 ||
	    str_printf(n->plugin_socket, sizeof(n->plugin_socket), "%s/" NODE_TREE_PLUGIN_SOCKET, n->sockets) < 0 ||
	    str_printf(n->plugin_log, sizeof(n->plugin_log), "%s/plugin.log", n->root) < 0 ||
	    str_printf(n->sim_log, sizeof(n->sim_log), "%s/kubelet-sim.log", n->root) < 0 ||
	    str_printf(n->nfd_file, sizeof(n->nfd_file), "%s/features.d/ascend", n->root) < 0)
		return -ENAMETOOLONG;

	/* The layout of the integration tests' nodes (tests/support/node_tree.h),
	 * and a features.d directory for the NFD file. */
	char nfd_dir[PATH_BYTES];
	int r;
	if (str_printf(nfd_dir, sizeof(nfd_dir), "%s/features.d", n->root) < 0)
		return -ENAMETOOLONG;
	const struct node_tree_options options = { .chips = chips, .dcmi_lib = dcmi_lib };
	if ((r = node_tree_build(n->root, &options)) < 0 || (r = mkdir_p(nfd_dir, 0755)) < 0 ||
	    (r = node_write_config(n, 0)) < 0)
		return r;
	return node_write_state(n, 0, NULL);
}

static int start_sim(struct node *n, const struct settings *s)
{
	const char *argv[] = { s->sim_bin, "--dir", n->sockets, "--timestamps",
			       n->podres[0] ? "--pod-resources-socket" : NULL, n->podres, NULL };
	int r = start_child(argv, NULL, n->sim_log, true, &n->sim);
	if (r < 0)
		return r;
	return proc_expect(n->sim, " ready", WAIT_MS) ? 0 : -ETIMEDOUT;
}

/* A TCP port free on 127.0.0.1 now (the kernel's pick), for the metrics
 * endpoint: the plugin is told it rather than asked, and nothing else is
 * expected to take it in between. 0 when none could be had. */
static uint16_t free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	uint16_t port = 0;
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

/* Spawns the plugin; *ret_spawned_us is the time just before the spawn. */
static int start_plugin(struct node *n, const struct settings *s, int64_t *ret_spawned_us)
{
	char env[PATH_BYTES + 32], dev_env[PATH_BYTES + 32], interval[32], config[PATH_BYTES + 32],
		state_dir[PATH_BYTES + 32];
	snprintf(env, sizeof(env), "ASCEND_FAKE_DCMI_STATE=%s", n->state);
	/* Where the simulator makes the node of a vNPU it carves, as the driver does in /dev. */
	snprintf(dev_env, sizeof(dev_env), "ASCEND_FAKE_DCMI_DEV_DIR=%s", n->dev);
	const char *extra_env[] = { env, dev_env, NULL };
	snprintf(interval, sizeof(interval), "--health-interval=%ums", s->poll_interval_ms);
	snprintf(config, sizeof(config), "--config=%s/config.yaml", n->root);
	/* The record of separated chips stays in the node, not the host's /var/lib. */
	snprintf(state_dir, sizeof(state_dir), "--state-dir=%s/state", n->root);
	n->metrics_port = free_port();
	snprintf(n->metrics_addr, sizeof(n->metrics_addr), "127.0.0.1:%u", n->metrics_port);
	const char *argv[40] = {
		s->plugin_bin, "--socket-dir", n->sockets, "--dev-dir", n->dev, "--host-root", n->root,
		"--driver-path", NODE_TREE_DRIVER_PATH, "--metrics-addr", n->metrics_addr, "--nfd-features-file", n->nfd_file,
		"--pod-resources-socket", n->podres,
	};
	size_t argc = 15;
	argv[argc++] = config;
	argv[argc++] = state_dir;
	/* Without events the plugin polls; the default 5 s would make the run long. */
	if (!n->events)
		argv[argc++] = interval;
	for (size_t i = 0; n->extra_flags && n->extra_flags[i] && argc < sizeof(argv) / sizeof(argv[0]) - 1; i++)
		argv[argc++] = n->extra_flags[i];
	argv[argc] = NULL;
	if (ret_spawned_us)
		*ret_spawned_us = mono_us();
	return start_child(argv, extra_env, n->plugin_stderr_pipe ? NULL : n->plugin_log, false, &n->plugin);
}

/* Waits for kubelet-sim's `register` line (returning its timestamp) and then
 * for the device list with every chip allocatable. */
static int wait_registered(struct node *n, int64_t *ret_register_us)
{
	const char *line = proc_expect(n->sim, "register resource=" RESOURCE " ", WAIT_MS);
	if (!line)
		return -ETIMEDOUT;
	if (ret_register_us && line_ts(line, ret_register_us) < 0) {
		fprintf(stderr, "ascend-bench: no timestamp in '%s'\n", line);
		return -EINVAL;
	}
	char want[128];
	snprintf(want, sizeof(want), "devices resource=%s capacity=%u allocatable=%u ", RESOURCE, node_devices(n),
		 node_devices(n));
	return proc_expect(n->sim, want, WAIT_MS) ? 0 : -ETIMEDOUT;
}

/* Stops the plugin; an exit status other than 0 is reported. */
static int stop_plugin(struct node *n)
{
	if (!n->plugin)
		return 0;
	/* A status other than 0 shows the end of the plugin's log too. */
	int status = proc_free(n->plugin);
	n->plugin = NULL;
	if (status == 0)
		return 0;
	fprintf(stderr, "ascend-bench: the plugin exited with status %d\n", status);
	return -EIO;
}

/* Stops both processes. */
static int node_stop(struct node *n)
{
	int r = stop_plugin(n);
	proc_free(n->sim);
	n->sim = NULL;
	return r;
}

static void node_destroy(struct node *n)
{
	node_stop(n);
	tmpdir_remove(n->root);
}

/* --- measurements ---------------------------------------------------------------- */


/* CPU time (user + system, all threads) of a process in microseconds;
 * -1 when unreadable. Resolution: one clock tick. */
static int64_t process_cpu_us(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* Fields after the command name, which may hold spaces: state is
	 * field 3, utime 14, stime 15. */
	char *p = strrchr(buf, ')');
	if (!p)
		return -1;
	uint64_t ticks = 0;
	unsigned field = 2;
	char *save = NULL;
	for (char *tok = strtok_r(p + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		field++;
		if (field == 14 || field == 15) {
			uint64_t v;
			if (parse_u64(tok, 10, UINT64_MAX / 4, &v) < 0)
				return -1;
			ticks += v;
		}
		if (field == 15)
			break;
	}
	long hz = sysconf(_SC_CLK_TCK);
	return field == 15 && hz > 0 ? (int64_t)(ticks * 1000000 / (uint64_t)hz) : -1;
}

static int64_t self_cpu_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* CPU spent per call, in microseconds, by the plugin and by this client. */
struct cpu_cost {
	double plugin_us;
	double client_us;
};

/* calls unary calls of method (after warm-up calls that open the
 * connection), each timed in nanoseconds. */
static int measure_unary(struct node *n, const char *method, const uint8_t *req, size_t len, uint32_t calls,
			 struct samples *out, struct cpu_cost *cost)
{
	struct gc_channel *ch;
	int64_t plugin_cpu = -1, client_cpu = 0;
	int r = gc_channel_open(n->plugin_socket, &ch);
	if (r < 0)
		return r;
	for (uint32_t i = 0; i < WARMUP_CALLS + calls; i++) {
		if (i == WARMUP_CALLS) {
			plugin_cpu = process_cpu_us(proc_pid(n->plugin));
			client_cpu = self_cpu_us();
		}
		struct gc_result res;
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		r = gc_unary(ch, method, req, len, CALL_TIMEOUT_MS, &res);
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (r == 0 && res.status != GRPC_STATUS_OK) {
			fprintf(stderr, "ascend-bench: %s failed: status %d: %s\n", method, res.status, res.details);
			r = -EIO;
		}
		gc_result_clear(&res);
		if (r < 0)
			break;
		if (i >= WARMUP_CALLS)
			samples_add(out, (int64_t)(b.tv_sec - a.tv_sec) * 1000000000 + (b.tv_nsec - a.tv_nsec));
	}
	int64_t plugin_end = process_cpu_us(proc_pid(n->plugin));
	cost->plugin_us = plugin_cpu >= 0 && plugin_end >= 0 ? (double)(plugin_end - plugin_cpu) / calls : -1;
	cost->client_us = (double)(self_cpu_us() - client_cpu) / calls;
	gc_channel_close(ch);
	return r;
}

/* Allocate for one healthy device (npu-0), one container. */
static int measure_allocate(struct node *n, uint32_t calls, struct samples *out, struct cpu_cost *cost)
{
	char id[] = "npu-0";
	char *ids[] = { id };
	V1beta1__ContainerAllocateRequest container = V1BETA1__CONTAINER_ALLOCATE_REQUEST__INIT;
	V1beta1__ContainerAllocateRequest *containers[] = { &container };
	V1beta1__AllocateRequest req = V1BETA1__ALLOCATE_REQUEST__INIT;
	container.devices_ids = ids;
	container.n_devices_ids = 1;
	req.container_requests = containers;
	req.n_container_requests = 1;
	uint8_t packed[64];
	size_t len = v1beta1__allocate_request__get_packed_size(&req);
	if (len > sizeof(packed))
		return -E2BIG;
	v1beta1__allocate_request__pack(&req, packed);
	return measure_unary(n, METHOD_ALLOCATE, packed, len, calls, out, cost);
}

/* Health of the faulty chip (its first replica with time-slicing) in a
 * ListAndWatch answer of devices devices: 1 healthy, 0 unhealthy, -1 absent
 * or undecodable. */
static int faulty_health_in(const uint8_t *body, size_t len, unsigned devices, bool replicas)
{
	static const uint8_t empty[1];
	char want[24];
	snprintf(want, sizeof(want), "npu-%d%s", FAULTY_CHIP, replicas ? "::0" : "");
	V1beta1__ListAndWatchResponse *resp = v1beta1__list_and_watch_response__unpack(NULL, len, body ? body : empty);
	if (!resp)
		return -1;
	int health = -1;
	if (resp->n_devices == devices) {
		for (size_t i = 0; i < resp->n_devices; i++)
			if (strcmp(resp->devices[i]->id, want) == 0)
				health = strcmp(resp->devices[i]->health, "Healthy") == 0;
	}
	v1beta1__list_and_watch_response__free_unpacked(resp, NULL);
	return health;
}

/* Reads the stream until the faulty chip's health is as wanted; returns the
 * time the answer arrived in *ret_us and its size in *ret_bytes. */
static int await_health(struct gc_stream *stream, const struct node *n, bool healthy, int64_t *ret_us,
			size_t *ret_bytes)
{
	int64_t deadline = mono_us() + (int64_t)WAIT_MS * 1000;
	for (;;) {
		int64_t left_ms = (deadline - mono_us() + 999) / 1000;
		if (left_ms <= 0)
			break;
		uint8_t *body = NULL;
		size_t len = 0;
		int r = gc_stream_next(stream, left_ms, &body, &len);
		int64_t now = mono_us();
		if (r == -ETIMEDOUT)
			break;
		if (r < 0) {
			fprintf(stderr, "ascend-bench: the ListAndWatch stream ended\n");
			return r;
		}
		int h = faulty_health_in(body, len, node_devices(n), n->replicas > 0);
		free(body);
		if (h == (healthy ? 1 : 0)) {
			*ret_us = now;
			*ret_bytes = len;
			return 0;
		}
	}
	fprintf(stderr, "ascend-bench: no ListAndWatch update with npu-%d %s within %d ms\n", FAULTY_CHIP,
		healthy ? "Healthy" : "Unhealthy", WAIT_MS);
	return -ETIMEDOUT;
}

/* A small reproducible generator for the stimulus jitter. */
static uint32_t next_random(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return (uint32_t)(*state >> 32);
}

/* Fault and recovery cycles: each change of the state file is one sample,
 * in microseconds, from just before the state file is written to the
 * update's arrival.
 * With jitter_ms > 0 each change is made a random 0..jitter_ms after the
 * previous update arrived: a polling plugin sends updates right after its
 * timer fires, so back-to-back changes would always land at the start of an
 * interval and measure the worst case only. The pause is the stimulus
 * timing, not a wait for anything. */
static int measure_faults(struct node *n, uint32_t cycles, uint32_t jitter_ms, struct samples *out,
			  size_t *ret_bytes)
{
	struct gc_channel *ch;
	struct gc_stream *stream = NULL;
	uint64_t seed = 0x9E3779B97F4A7C15ULL;
	int r = gc_channel_open(n->plugin_socket, &ch);
	if (r < 0)
		return r;
	r = gc_stream_open(ch, METHOD_LIST_AND_WATCH, NULL, 0, &stream);
	int64_t t0, t1;
	size_t bytes = 0;
	if (r == 0)
		r = await_health(stream, n, true, &t1, &bytes);
	for (uint32_t i = 0; r == 0 && i < cycles * 2; i++) {
		bool fault = i % 2 == 0;
		if (jitter_ms > 0) {
			uint32_t us = next_random(&seed) % (jitter_ms * 1000);
			struct timespec pause = { .tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000 };
			while (nanosleep(&pause, &pause) < 0 && errno == EINTR)
				;
		}
		r = node_write_state(n, fault ? 2 : 0, &t0);
		if (r == 0)
			r = await_health(stream, n, !fault, &t1, &bytes);
		if (r == 0)
			samples_add(out, t1 - t0);
	}
	if (ret_bytes)
		*ret_bytes = bytes;
	gc_stream_close(stream);
	gc_channel_close(ch);
	return r;
}

/* Flaps the faulty chip flaps times (fault, then clean) and counts the
 * ListAndWatch updates a watcher gets meanwhile and until the chip is
 * Healthy again at the end (the kubelet's stream gets the same lists). Each
 * change is written once the previous one was answered, or after
 * FLAP_ANSWER_MS without an answer: with the recovery hold a clean state
 * sends nothing, which is the point. */
#define FLAP_ANSWER_MS 10
static int measure_flaps(struct node *n, uint32_t flaps, long long *ret_updates)
{
	struct gc_channel *ch;
	struct gc_stream *stream = NULL;
	int64_t t;
	size_t bytes;
	long long updates = 0;
	int health = 1;
	int r = gc_channel_open(n->plugin_socket, &ch);
	if (r < 0)
		return r;
	r = gc_stream_open(ch, METHOD_LIST_AND_WATCH, NULL, 0, &stream);
	if (r == 0)
		r = await_health(stream, n, true, &t, &bytes);
	for (uint32_t i = 0; r == 0 && i < flaps * 2; i++) {
		r = node_write_state(n, i % 2 == 0 ? 2 : 0, NULL);
		uint8_t *body = NULL;
		size_t len = 0;
		int got = r == 0 ? gc_stream_next(stream, FLAP_ANSWER_MS, &body, &len) : r;
		if (got == 0) {
			updates++;
			health = faulty_health_in(body, len, node_devices(n), false);
		} else if (got != -ETIMEDOUT) {
			r = got;
		}
		free(body);
	}
	/* The hold's end: one more update, Healthy. */
	int64_t deadline = mono_us() + (int64_t)WAIT_MS * 1000;
	while (r == 0 && health != 1) {
		int64_t left_ms = (deadline - mono_us() + 999) / 1000;
		uint8_t *body = NULL;
		size_t len = 0;
		r = left_ms > 0 ? gc_stream_next(stream, left_ms, &body, &len) : -ETIMEDOUT;
		if (r == 0) {
			updates++;
			health = faulty_health_in(body, len, node_devices(n), false);
		}
		free(body);
	}
	if (r == -ETIMEDOUT)
		fprintf(stderr, "ascend-bench: npu-%d not Healthy within %d ms of the last flap\n", FAULTY_CHIP, WAIT_MS);
	if (r == 0)
		*ret_updates = updates;
	gc_stream_close(stream);
	gc_channel_close(ch);
	return r;
}

/* kubelet-sim `restart`: from its `restarted` line to its next `register`
 * line, in microseconds, then the full device list again. The plugin may
 * register before kubelet-sim prints `restarted` (the socket is up first);
 * such a sample counts as 0 and is counted in *ret_reordered. */
static int measure_restarts(struct node *n, uint32_t restarts, unsigned allocatable, struct samples *out,
			    unsigned *ret_reordered)
{
	char want_devices[128];
	snprintf(want_devices, sizeof(want_devices), "devices resource=%s capacity=%u allocatable=%u ", RESOURCE,
		 n->chips, allocatable);
	*ret_reordered = 0;
	for (uint32_t i = 0; i < restarts; i++) {
		proc_discard(n->sim);
		if (send_line(n->sim, "restart") < 0)
			return -EIO;
		int64_t restarted = -1, registered = -1;
		int64_t deadline = mono_us() + (int64_t)WAIT_MS * 1000;
		while (restarted < 0 || registered < 0) {
			int left_ms = (int)((deadline - mono_us() + 999) / 1000);
			const char *line = left_ms > 0 ? proc_expect(n->sim, " re", left_ms) : NULL;
			if (!line) {
				fprintf(stderr, "ascend-bench: restart %u: %s%s missing\n", i + 1,
					restarted < 0 ? "`restarted` " : "", registered < 0 ? "`register`" : "");
				return -ETIMEDOUT;
			}
			int64_t ts = 0;
			if (line_ts(line, &ts) < 0)
				continue;
			if (strstr(line, " restarted ") && restarted < 0)
				restarted = ts;
			else if (strstr(line, " register resource=" RESOURCE " ") && registered < 0)
				registered = ts;
		}
		if (registered < restarted)
			(*ret_reordered)++;
		samples_add(out, registered > restarted ? registered - restarted : 0);
		if (!proc_expect(n->sim, want_devices, WAIT_MS))
			return -ETIMEDOUT;
	}
	return 0;
}

/* Plugin start -> kubelet-sim's `register` line, in microseconds; the
 * plugin is stopped (and must exit 0) after each start. */
static int measure_starts(struct node *n, const struct settings *s, uint32_t starts, struct samples *out)
{
	for (uint32_t i = 0; i < starts; i++) {
		int64_t spawned, registered;
		int r = start_plugin(n, s, &spawned);
		if (r == 0)
			r = wait_registered(n, &registered);
		if (r == 0)
			samples_add(out, registered - spawned);
		int stop = stop_plugin(n);
		if (r == 0)
			r = stop;
		if (r < 0)
			return r;
	}
	return 0;
}

/* --- scenarios -------------------------------------------------------------------- */

/* Start -> ResourceSlices: microseconds from the spawn to the watch's line
 * completing the pool, the slices and devices then and the JSON bytes of
 * the slices; -1 when not measured. */
struct slices_start {
	long long us, slices, devices, bytes;
};

struct results {
	/* [0]: 8 chips, [1]: 128 chips; -1 when not measured. */
	long long rss_idle_kib[2];
	long long rss_after_kib[2];
	long long hwm_kib[2];
	long long anon_kib[2]; /* after the Allocate calls */
	long long file_kib[2];
	struct samples allocate_ns[2];
	struct samples options_ns; /* GetDevicePluginOptions: the cost of a gRPC round trip alone */
	struct cpu_cost allocate_cpu[2];
	struct cpu_cost options_cpu;
	struct samples fault_events_us;
	struct samples fault_poll_us;
	struct samples fault_blocked_us; /* events, debug logging, stderr a full pipe nobody reads */
	int64_t blocked_exit_us;         /* SIGTERM -> exit with that stderr; -1 when not measured */
	struct samples restart_us;
	struct samples restart_hang_us; /* the same while a DCMI call hangs */
	struct samples start_us;
	unsigned reordered;
	/* Connection floods, 8 chips. */
	long long flood_idle_kib;
	long long flood_open_kib;   /* 2,000 connections open */
	long long flood_closed_kib; /* after they closed */
	long long rounds_kib;       /* after 5,000 connect/close rounds */
	long long flood_fds_before, flood_fds_after;
	/* Sharing. */
	struct samples preferred_512_ns;  /* 8 chips x 64 replicas, 2 wanted */
	struct samples preferred_a3_ns;   /* 16 A3 dies, 4 wanted */
	struct samples update_1024_us;    /* fault -> ListAndWatch, 16 chips x 64 replicas */
	long long update_1024_bytes;
	long long rss_1024_kib;
	/* /metrics at 16 chips, 100 pods. */
	struct samples scrape_us;
	long long scrape_rss_kib;
	long long dra_rss_kib, dra_anon_kib, dra_file_kib; /* the DRA front end on, publishing */
	long long both_rss_kib, both_anon_kib, both_file_kib; /* both front ends, 16 chips */
	struct samples dra_prepare_us; /* NodePrepareResources, the claim read from the API server */
	struct samples dra_status_us;  /* prepare sent -> the claim's status.devices stored (first round) */
	struct samples dra_fault_us;   /* fault -> the device tainted in the ResourceSlice */
	struct slices_start dra_start, peer_start; /* ours, upstream's DRA test driver */
	struct slices_start slices_16[2];          /* 16 chips: [0] plain, [1] with every vNPU template */
	/* Prepare and unprepare on a node carved on demand: [0] whole chips, [1] vNPUs. */
	struct samples dynamic_prepare_us[2], dynamic_unprepare_us[2];
	long long peer_rss_kib;
	struct samples peer_prepare_us;
	long long scrape_bytes;
	long long flap_updates[2]; /* recovery hold 0, default */
};

static void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void progress(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("ascend-bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* built: what building the node work_dir/name returned. When it failed,
 * says so; else starts kubelet-sim and the plugin on it and waits for the
 * plugin's registration and full device list. */
static int node_start_built(struct node *n, const struct settings *s, const char *work_dir, const char *name, int built)
{
	int r = built;
	if (r < 0) {
		fprintf(stderr, "ascend-bench: cannot build the node in %s/%s: %s\n", work_dir, name, strerror(-r));
		return r;
	}
	if ((r = start_sim(n, s)) < 0 || (r = start_plugin(n, s, NULL)) < 0 || (r = wait_registered(n, NULL)) < 0)
		return r;
	return 0;
}

/* A new node, up as node_start_built says. */
static int node_up(struct node *n, const struct settings *s, const char *work_dir, const char *name, unsigned chips,
		   bool events)
{
	return node_start_built(n, s, work_dir, name, node_create(n, work_dir, name, chips, events, s->dcmi_lib));
}

/* The end of a run on n that came to r: the plugin's log when it failed,
 * the node stopped (a failure to stop fails a run that had not) and
 * destroyed. Returns the run's result. */
static int node_down(struct node *n, int r)
{
	if (r < 0)
		proc_print_log("plugin log", n->plugin_log);
	if (node_stop(n) < 0 && r == 0)
		r = -EIO;
	node_destroy(n);
	return r;
}

/* Allocate calls with RSS before and after; slot 0 for 8 chips, 1 for 128. */
static int allocate_with_rss(struct node *n, const struct settings *s, struct results *res, int slot)
{
	res->rss_idle_kib[slot] = proc_status_kib(proc_pid(n->plugin), "VmRSS");
	progress("%u chips: %u Allocate calls", n->chips, s->allocate_calls);
	int r = measure_allocate(n, s->allocate_calls, &res->allocate_ns[slot], &res->allocate_cpu[slot]);
	if (r < 0)
		return r;
	res->rss_after_kib[slot] = proc_status_kib(proc_pid(n->plugin), "VmRSS");
	res->hwm_kib[slot] = proc_status_kib(proc_pid(n->plugin), "VmHWM");
	res->anon_kib[slot] = proc_status_kib(proc_pid(n->plugin), "RssAnon");
	res->file_kib[slot] = proc_status_kib(proc_pid(n->plugin), "RssFile");
	if (slot == 0) {
		progress("%u chips: %u GetDevicePluginOptions calls (gRPC baseline)", n->chips, s->allocate_calls);
		r = measure_unary(n, METHOD_GET_OPTIONS, NULL, 0, s->allocate_calls, &res->options_ns, &res->options_cpu);
	}
	return r;
}

/* 8 chips with fault events: RSS, Allocate, faults, kubelet restarts, starts. */
static int scenario_events(const struct settings *s, const char *work_dir, struct results *res)
{
	struct node n;
	int r = node_up(&n, s, work_dir, "node-8", 8, true);
	if (r == 0)
		r = allocate_with_rss(&n, s, res, 0);
	if (r == 0) {
		progress("8 chips, DCMI fault events: %u fault/recovery cycles", s->fault_cycles);
		r = measure_faults(&n, s->fault_cycles, 0, &res->fault_events_us, NULL);
	}
	if (r == 0) {
		progress("8 chips: %u kubelet restarts", s->restarts);
		r = measure_restarts(&n, s->restarts, n.chips, &res->restart_us, &res->reordered);
	}
	if (r == 0) {
		/* The faulty chip's health call hangs for 30 s; a device node
		 * touched makes the plugin refresh (and meet the hang) at once. */
		progress("8 chips: %u kubelet restarts while a DCMI call hangs for 30 s", s->restarts);
		n.hang = "health:30";
		r = node_write_state(&n, 0, NULL);
		n.hang = NULL;
		char node_file[32];
		snprintf(node_file, sizeof(node_file), "dev/davinci%d", FAULTY_CHIP);
		if (r == 0)
			r = node_tree_touch(n.root, node_file);
		char want[64];
		snprintf(want, sizeof(want), "unhealthy=npu-%d", FAULTY_CHIP);
		if (r == 0 && !proc_expect(n.sim, want, WAIT_MS))
			r = -ETIMEDOUT;
		unsigned reordered = 0;
		if (r == 0)
			r = measure_restarts(&n, s->restarts, n.chips - 1, &res->restart_hang_us, &reordered);
		res->reordered += reordered;
		if (r == 0)
			r = node_write_state(&n, 0, NULL);
	}
	if (r == 0)
		r = stop_plugin(&n);
	if (r == 0) {
		progress("8 chips: %u plugin starts", s->starts);
		r = measure_starts(&n, s, s->starts, &res->start_us);
	}
	if (r < 0)
		proc_print_log("plugin log", n.plugin_log);
	node_destroy(&n);
	return r;
}

/* 8 chips without fault events: the plugin polls health. */
static int scenario_polling(const struct settings *s, const char *work_dir, struct results *res)
{
	struct node n;
	int r = node_up(&n, s, work_dir, "node-8-poll", 8, false);
	if (r == 0) {
		progress("8 chips, no fault events (--health-interval %ums): %u fault/recovery cycles, "
			 "changes at a random phase of the interval",
			 s->poll_interval_ms, s->fault_cycles);
		r = measure_faults(&n, s->fault_cycles, s->poll_interval_ms, &res->fault_poll_us, NULL);
	}
	return node_down(&n, r);
}

/* 8 chips with fault events: 1,000 flaps of one chip with the recovery
 * hold off, then with its default (flap damping). */
#define FLAPS 1000
static int scenario_flaps(const struct settings *s, const char *work_dir, struct results *res)
{
	for (int damped = 0; damped < 2; damped++) {
		struct node n;
		const char *name = damped ? "node-8-flap-damped" : "node-8-flap";
		int built = node_create(&n, work_dir, name, 8, true, s->dcmi_lib);
		n.default_hold = damped;
		if (built == 0)
			built = node_write_config(&n, 0);
		int r = node_start_built(&n, s, work_dir, name, built);
		progress("8 chips, DCMI fault events: %d flaps of npu-%d, recovery hold %s", FLAPS, FAULTY_CHIP,
			 damped ? "5 s (default)" : "0");
		if (r == 0)
			r = measure_flaps(&n, FLAPS, &res->flap_updates[damped]);
		if ((r = node_down(&n, r)) < 0)
			return r;
	}
	return 0;
}

/* 128 chips: RSS and Allocate. */
static int scenario_big(const struct settings *s, const char *work_dir, struct results *res)
{
	struct node n;
	int r = node_up(&n, s, work_dir, "node-128", 128, true);
	if (r == 0)
		r = allocate_with_rss(&n, s, res, 1);
	return node_down(&n, r);
}

/* GetPreferredAllocation for size devices among every device of the node. */
static int measure_preferred(struct node *n, unsigned size, uint32_t calls, struct samples *out)
{
	unsigned count = node_devices(n);
	char (*names)[32] = calloc(count, sizeof(*names));
	char **ids = calloc(count, sizeof(*ids));
	uint8_t *packed = NULL;
	int r = -ENOMEM;
	if (!names || !ids)
		goto out;
	for (unsigned i = 0; i < count; i++) {
		if (n->replicas)
			snprintf(names[i], sizeof(names[i]), "npu-%u::%u", i / n->replicas, i % n->replicas);
		else
			snprintf(names[i], sizeof(names[i]), "npu-%u", i);
		ids[i] = names[i];
	}
	V1beta1__ContainerPreferredAllocationRequest container = V1BETA1__CONTAINER_PREFERRED_ALLOCATION_REQUEST__INIT;
	V1beta1__ContainerPreferredAllocationRequest *containers[] = { &container };
	V1beta1__PreferredAllocationRequest req = V1BETA1__PREFERRED_ALLOCATION_REQUEST__INIT;
	container.available_deviceids = ids;
	container.n_available_deviceids = count;
	container.allocation_size = (int32_t)size;
	req.container_requests = containers;
	req.n_container_requests = 1;
	size_t len = v1beta1__preferred_allocation_request__get_packed_size(&req);
	packed = malloc(len);
	if (!packed)
		goto out;
	v1beta1__preferred_allocation_request__pack(&req, packed);
	struct cpu_cost cost;
	r = measure_unary(n, METHOD_PREFERRED, packed, len, calls, out, &cost);
out:
	free(packed);
	free(ids);
	free(names);
	return r;
}

/* A node with time-slicing (replicas > 0) or of A3 dies, up and registered. */
static int sharing_node_up(struct node *n, const struct settings *s, const char *work_dir, const char *name,
			   unsigned chips, unsigned replicas, bool a3)
{
	int r = node_create(n, work_dir, name, chips, true, s->dcmi_lib);
	if (r == 0) {
		n->a3 = a3;
		r = node_write_state(n, 0, NULL);
	}
	if (r == 0 && replicas)
		r = node_write_config(n, replicas);
	return node_start_built(n, s, work_dir, name, r);
}

/* A node of chips (x replicas, or A3 dies) up for GetPreferredAllocation
 * calls asking for size devices, then gone. */
static int preferred_on(const struct settings *s, const char *work_dir, const char *name, unsigned chips,
			unsigned replicas, bool a3, unsigned size, struct samples *out)
{
	struct node n;
	progress("%s: %u GetPreferredAllocation calls for %u devices", name, s->allocate_calls, size);
	int r = sharing_node_up(&n, s, work_dir, name, chips, replicas, a3);
	if (r == 0)
		r = measure_preferred(&n, size, s->allocate_calls, out);
	return node_down(&n, r);
}

/* Sharing at scale: GetPreferredAllocation over 512 replicas and over 16
 * A3 dies; with 1,024 replicas the fault -> ListAndWatch update, its size,
 * and RSS. */
static int scenario_sharing(const struct settings *s, const char *work_dir, struct results *res)
{
	int r = preferred_on(s, work_dir, "node-8x64", 8, SHARING_REPLICAS, false, 2, &res->preferred_512_ns);
	if (r == 0)
		r = preferred_on(s, work_dir, "node-a3", 16, 0, true, 4, &res->preferred_a3_ns);
	if (r < 0)
		return r;

	struct node n;
	progress("16 chips x %d replicas: RSS, %u fault/recovery cycles", SHARING_REPLICAS, s->fault_cycles);
	r = sharing_node_up(&n, s, work_dir, "node-16x64", 16, SHARING_REPLICAS, false);
	size_t bytes = 0;
	if (r == 0) {
		res->rss_1024_kib = proc_status_kib(proc_pid(n.plugin), "VmRSS");
		r = measure_faults(&n, s->fault_cycles, 0, &res->update_1024_us, &bytes);
		res->update_1024_bytes = r == 0 ? (long long)bytes : -1;
	}
	return node_down(&n, r);
}

/* Fills a pipe so that the next blocking write to it blocks. O_NONBLOCK is
 * set on this process's own file description only, and cleared. */
static int fill_pipe(int fd)
{
	int flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -errno;
	static const char chunk[4096];
	for (size_t size = sizeof(chunk); size > 0; size /= 2)
		while (write(fd, chunk, size) > 0)
			;
	int r = errno == EAGAIN ? 0 : -errno;
	if (fcntl(fd, F_SETFL, flags) < 0 && r == 0)
		r = -errno;
	return r;
}

/* The plugin at --log-level debug with its stderr at stderr_path. */
static int start_plugin_logging_to(struct node *n, const struct settings *s, const char *stderr_path)
{
	char env[PATH_BYTES + 32], config[PATH_BYTES + 32];
	snprintf(env, sizeof(env), "ASCEND_FAKE_DCMI_STATE=%s", n->state);
	snprintf(config, sizeof(config), "--config=%s/config.yaml", n->root);
	const char *extra_env[] = { env, NULL };
	const char *argv[] = {
		s->plugin_bin, "--socket-dir", n->sockets, "--dev-dir", n->dev, "--host-root", n->root,
		"--driver-path", NODE_TREE_DRIVER_PATH, "--log-level", "debug", "--metrics-addr=127.0.0.1:0",
		"--nfd-features-file", n->nfd_file, "--pod-resources-socket=", config, NULL,
	};
	return start_child(argv, extra_env, stderr_path, false, &n->plugin);
}

/* 8 chips with fault events, the plugin logging at debug level to a stderr
 * pipe that is full and never read (a log collector that hangs): fault ->
 * ListAndWatch latency, to compare with the drained run, and SIGTERM ->
 * exit, which may only wait for the log's flush deadline. */
static int scenario_blocked_stderr(const struct settings *s, const char *work_dir, struct results *res)
{
	struct node n;
	int fds[2] = { -1, -1 };
	int r = node_create(&n, work_dir, "node-8-blocked-stderr", 8, true, s->dcmi_lib);
	if (r < 0) {
		fprintf(stderr, "ascend-bench: cannot build the node in %s: %s\n", work_dir, strerror(-r));
		node_destroy(&n);
		return r;
	}
	if (pipe2(fds, O_CLOEXEC) < 0)
		r = -errno;
	if (r == 0)
		r = fill_pipe(fds[1]);
	/* Opened anew by the child before exec: a file description of its own,
	 * blocking, on the same full pipe. */
	char stderr_path[64];
	snprintf(stderr_path, sizeof(stderr_path), "/proc/self/fd/%d", fds[1]);
	if (r == 0 && (r = start_sim(&n, s)) == 0 && (r = start_plugin_logging_to(&n, s, stderr_path)) == 0)
		r = wait_registered(&n, NULL);
	if (r == 0) {
		progress("8 chips, DCMI fault events, debug logging to a stderr nobody reads: %u fault/recovery cycles",
			 s->fault_cycles);
		r = measure_faults(&n, s->fault_cycles, 0, &res->fault_blocked_us, NULL);
	}
	if (r == 0) {
		int64_t t0 = mono_us();
		int status = proc_free(n.plugin);
		n.plugin = NULL;
		res->blocked_exit_us = mono_us() - t0;
		if (status != 0) {
			fprintf(stderr, "ascend-bench: with stderr blocked the plugin exited with status %d\n", status);
			r = -EIO;
		}
	}
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	node_destroy(&n);
	return r;
}

/* --- connection floods --------------------------------------------------------------- */

#define FLOOD_CONNECTIONS 2000
#define FLOOD_ROUNDS 5000
/* The plugin trims its heap after 500 ms without new connections. */
#define FLOOD_QUIET_MS 1000

static long long count_fds(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	long long n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* A non-blocking connect: -1 when refused or the backlog is full. */
static int dial(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(addr.sun_path))
		return -1;
	memcpy(addr.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Waits until the plugin answers a new client again, then lets it be quiet
 * for FLOOD_QUIET_MS: the settled state the rows report. */
static int settle_after_flood(struct node *n)
{
	int64_t deadline = mono_us() + (int64_t)WAIT_MS * 6000;
	for (;;) {
		struct gc_channel *ch;
		struct gc_result res;
		if (gc_channel_open(n->plugin_socket, &ch) < 0)
			return -EIO;
		int r = gc_unary(ch, METHOD_GET_OPTIONS, NULL, 0, WAIT_MS, &res);
		gc_channel_close(ch);
		if (r == 0) {
			gc_result_clear(&res);
			if (res.status == GRPC_STATUS_OK)
				break;
		}
		if (mono_us() > deadline)
			return -ETIMEDOUT;
		/* Refused while the plugin works through its backlog: pace the retries. */
		poll(NULL, 0, 10);
	}
	poll(NULL, 0, FLOOD_QUIET_MS);
	return 0;
}

static int scenario_flood(const struct settings *s, const char *work_dir, struct results *res)
{
	struct node n;
	int *fds = NULL;
	int r = node_up(&n, s, work_dir, "node-8-flood", 8, true);
	if (r < 0)
		goto out;

	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < FLOOD_CONNECTIONS + 256) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	fds = calloc(FLOOD_CONNECTIONS, sizeof(*fds));
	if (!fds) {
		r = -ENOMEM;
		goto out;
	}
	res->flood_idle_kib = proc_status_kib(proc_pid(n.plugin), "VmRSS");
	res->flood_fds_before = count_fds(proc_pid(n.plugin));
	progress("8 chips: %d connections held open (half of them sending garbage)", FLOOD_CONNECTIONS);
	static const char garbage[] = "GET / HTTP/1.1\r\n\r\nnot HTTP/2";
	for (int i = 0; i < FLOOD_CONNECTIONS; i++) {
		fds[i] = dial(n.plugin_socket);
		if (fds[i] >= 0 && i % 2)
			(void)!send(fds[i], garbage, sizeof(garbage), MSG_NOSIGNAL);
	}
	/* The plugin has dealt with every connection once it serves a new one. */
	struct gc_channel *ch;
	struct gc_result one;
	if (gc_channel_open(n.plugin_socket, &ch) == 0) {
		if (gc_unary(ch, METHOD_GET_OPTIONS, NULL, 0, WAIT_MS, &one) == 0)
			gc_result_clear(&one);
		gc_channel_close(ch);
	}
	res->flood_open_kib = proc_status_kib(proc_pid(n.plugin), "VmRSS");
	for (int i = 0; i < FLOOD_CONNECTIONS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if ((r = settle_after_flood(&n)) < 0)
		goto out;
	res->flood_closed_kib = proc_status_kib(proc_pid(n.plugin), "VmRSS");

	progress("8 chips: %d connect/close rounds", FLOOD_ROUNDS);
	for (int i = 0; i < FLOOD_ROUNDS; i++) {
		int fd = dial(n.plugin_socket);
		if (fd >= 0)
			close(fd);
	}
	if ((r = settle_after_flood(&n)) < 0)
		goto out;
	res->rounds_kib = proc_status_kib(proc_pid(n.plugin), "VmRSS");
	res->flood_fds_after = count_fds(proc_pid(n.plugin));

out:
	free(fds);
	return node_down(&n, r);
}

/* One GET of path on 127.0.0.1:port, read until the server closes: the
 * body's length in *ret_len and, when want is not NULL, whether it holds
 * want. Returns the HTTP status, or a negative errno. */
static int http_get(uint16_t port, const char *path, const char *want, size_t *ret_len, bool *ret_found)
{
	static char buf[4 * 1024 * 1024];
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { .tv_sec = CALL_TIMEOUT_MS / 1000 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	int r = 0;
	char req[256];
	int n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", path);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
		r = -errno;
		goto out;
	}
	size_t len = 0;
	for (;;) {
		if (len == sizeof(buf) - 1) {
			r = -E2BIG;
			goto out;
		}
		ssize_t got = recv(fd, buf + len, sizeof(buf) - 1 - len, 0);
		if (got == 0)
			break;
		if (got < 0) {
			r = -errno;
			goto out;
		}
		len += (size_t)got;
	}
	buf[len] = '\0';
	int status = 0;
	if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1) {
		r = -EBADMSG;
		goto out;
	}
	const char *body = strstr(buf, "\r\n\r\n");
	*ret_len = body ? len - (size_t)(body + 4 - buf) : 0;
	if (ret_found)
		*ret_found = want && body && strstr(body, want);
	r = status;
out:
	close(fd);
	return r;
}

#define SCRAPE_CHIPS 16
#define SCRAPE_PODS 100
#define SCRAPES 1000

/* 16 chips time-sliced 8 ways, 100 pods holding replicas (kubelet-sim's
 * `allocate 1`, pod labels through its pod resources API): /metrics latency
 * and the plugin's RSS after the scrapes. */
static int scenario_metrics(const struct settings *s, const char *work_dir, struct results *res)
{
	struct node n;
	int r = node_create(&n, work_dir, "node-16-metrics", SCRAPE_CHIPS, true, s->dcmi_lib);
	if (r < 0) {
		fprintf(stderr, "ascend-bench: cannot build the node in %s: %s\n", work_dir, strerror(-r));
		return r;
	}
	if (str_printf(n.podres, sizeof(n.podres), "%s/pod-resources.sock", n.root) < 0) {
		r = -ENAMETOOLONG;
		goto out;
	}
	if ((r = node_write_config(&n, 8)) < 0 || (r = start_sim(&n, s)) < 0 || (r = start_plugin(&n, s, NULL)) < 0)
		goto out;
	if (!proc_expect(n.sim, "register resource=", WAIT_MS) ||
	    !proc_expect(n.sim, "capacity=128 allocatable=128", WAIT_MS)) {
		r = -ETIMEDOUT;
		goto out;
	}
	progress("16 chips x 8 replicas: %d pods", SCRAPE_PODS);
	for (int i = 0; i < SCRAPE_PODS && r == 0; i++) {
		if ((r = send_line(n.sim, "allocate 1")) == 0 && !proc_expect(n.sim, "allocate ok", WAIT_MS))
			r = -ETIMEDOUT;
		proc_discard(n.sim);
	}
	if (r < 0)
		goto out;
	/* Scrapes make the plugin list the pods (at most once a second): until
	 * the last pod shows, each scrape is also the wait. */
	char last[64];
	snprintf(last, sizeof(last), "pod=\"kubelet-sim-pod-%d\"", SCRAPE_PODS);
	int64_t deadline = mono_us() + (int64_t)WAIT_MS * 1000;
	bool found = false;
	size_t len = 0;
	while (!found) {
		if ((r = http_get(n.metrics_port, "/metrics", last, &len, &found)) != 200) {
			fprintf(stderr, "ascend-bench: GET /metrics: %s\n", r < 0 ? strerror(-r) : "not 200");
			r = r < 0 ? r : -EIO;
			goto out;
		}
		if (mono_us() > deadline) {
			fprintf(stderr, "ascend-bench: the pods' labels did not show on /metrics\n");
			r = -ETIMEDOUT;
			goto out;
		}
	}
	r = 0;
	res->scrape_bytes = (long long)len;
	progress("16 chips, %d pods: %d scrapes of /metrics (%zu bytes each)", SCRAPE_PODS, SCRAPES, len);
	for (int i = 0; i < SCRAPES; i++) {
		int64_t t0 = mono_us();
		int status = http_get(n.metrics_port, "/metrics", NULL, &len, NULL);
		if (status != 200) {
			r = status < 0 ? status : -EIO;
			goto out;
		}
		samples_add(&res->scrape_us, mono_us() - t0);
	}
	res->scrape_rss_kib = proc_status_kib(proc_pid(n.plugin), "VmRSS");
out:
	return node_down(&n, r);
}

/* The taint the publisher puts on an Unhealthy device (src/kube/slices.h). */
#define DRA_TAINT_KEY "npu.ascend.com/unhealthy"
#define DRA_FAULT_CYCLES 20

/* One kubelet-sim command for the claim with this uid, and its answer line
 * (" uid=UID" followed by end or a space): the microseconds from just before
 * the command was written to kubelet-sim's timestamp of the line, which it
 * takes once the gRPC answer has arrived. want: the line's first word when
 * the call worked. */
static int dra_call(struct proc *sim, const char *cmd, const char *uid, const char *want, int64_t *ret_us)
{
	char needle[128];
	snprintf(needle, sizeof(needle), " uid=%s", uid);
	int64_t t0 = mono_us(), ts = 0;
	if (send_line(sim, cmd) < 0)
		return -EIO;
	const char *line = proc_expect(sim, needle, WAIT_MS);
	if (!line) {
		fprintf(stderr, "ascend-bench: no answer to '%s' within %d ms\n", cmd, WAIT_MS);
		return -ETIMEDOUT;
	}
	const char *word = strchr(line, ' ');
	if (!word || strncmp(word + 1, want, strlen(want)) != 0 || word[1 + strlen(want)] != ' ') {
		fprintf(stderr, "ascend-bench: '%s' answered: %s\n", cmd, line);
		return -EIO;
	}
	if (line_ts(line, &ts) < 0)
		return -EINVAL;
	*ret_us = ts - t0;
	return 0;
}

/* Reads the watch of the claims (one line per event: the claim's name and
 * its status.devices' devices, or <none>) until the claim's line names a
 * device: a sample, in microseconds, from t0 (just before the prepare was
 * sent) to that line's arrival. */
static int await_claim_status(struct proc *watch, const char *name, int64_t t0, struct samples *out)
{
	int64_t deadline = mono_us() + (int64_t)WAIT_MS * 1000;
	for (;;) {
		int64_t left_ms = (deadline - mono_us()) / 1000;
		const char *line = left_ms > 0 ? proc_expect(watch, name, (int)left_ms) : NULL;
		if (!line) {
			fprintf(stderr, "ascend-bench: the status of claim %s did not come within %d ms\n", name, WAIT_MS);
			return -ETIMEDOUT;
		}
		if (strncmp(line, name, strlen(name)) == 0 && line[strlen(name)] == ' ' && strstr(line, " npu-")) {
			samples_add(out, mono_us() - t0);
			return 0;
		}
	}
}

/* Claims prepared and unprepared, and where their latencies go. */
struct claim_set {
	const char *path;          /* "NAME UID" lines (scripts/bench.sh made and allocated the claims) */
	struct samples *prepare;   /* NodePrepareResources, microseconds */
	struct samples *unprepare; /* NodeUnprepareResources; NULL: not kept */
};

#define CLAIM_SETS_MAX 2

/* NodePrepareResources, then NodeUnprepareResources, for each claim of each
 * set, the sets' files taken line by line in turn (a claim of the first,
 * then of the second...), the whole files rounds times: the driver reads
 * each claim from the API server in every prepare, as an unprepared claim
 * is new to it. More rounds than claims keep one slow call from being the
 * p99 on its own; taking the sets in turn puts them under the same load. */
static int measure_dra_prepare(struct proc *sim, const struct claim_set *sets, size_t n_sets, uint32_t rounds,
			       struct proc *status_watch, struct samples *status_out)
{
	FILE *files[CLAIM_SETS_MAX] = { 0 };
	char line[256], name[128], uid[64], cmd[256];
	int r = n_sets <= CLAIM_SETS_MAX ? 0 : -E2BIG;
	for (size_t k = 0; r == 0 && k < n_sets; k++) {
		files[k] = fopen(sets[k].path, "re");
		if (!files[k]) {
			r = -errno;
			fprintf(stderr, "ascend-bench: %s: %s\n", sets[k].path, strerror(errno));
		}
	}
	for (uint32_t round = 0; r == 0 && round < rounds; round++) {
		for (size_t k = 0; k < n_sets; k++)
			rewind(files[k]);
		for (bool more = true; r == 0 && more;) {
			more = false;
			for (size_t k = 0; r == 0 && k < n_sets; k++) {
				if (!fgets(line, sizeof(line), files[k]))
					continue;
				more = true;
				if (sscanf(line, "%127s %63s", name, uid) != 2)
					continue;
				int64_t us, t0 = mono_us();
				snprintf(cmd, sizeof(cmd), "dra-prepare default %s %s", name, uid);
				r = dra_call(sim, cmd, uid, "dra-prepared", &us);
				if (r == 0)
					samples_add(sets[k].prepare, us);
				/* The first round writes each claim's status; later
				 * rounds apply the same, which the server stores as no
				 * change. */
				if (r == 0 && status_watch && round == 0)
					r = await_claim_status(status_watch, name, t0, status_out);
				snprintf(cmd, sizeof(cmd), "dra-unprepare default %s %s", name, uid);
				if (r == 0)
					r = dra_call(sim, cmd, uid, "dra-unprepared", &us);
				if (r == 0 && sets[k].unprepare)
					samples_add(sets[k].unprepare, us);
			}
		}
	}
	for (size_t k = 0; k < n_sets; k++) {
		if (r == 0 && sets[k].prepare->n == 0) {
			fprintf(stderr, "ascend-bench: no claims in %s\n", sets[k].path);
			r = -ENOENT;
		}
		if (files[k])
			fclose(files[k]);
	}
	return r;
}

/* Fault and recovery cycles of the faulty chip seen through a watch of the
 * node's ResourceSlices (kubectl get --watch, one line per event): a
 * sample, in microseconds, from just
 * before the fault is written to the state file to the arrival of the line
 * with the chip tainted. The recovery is waited for, not sampled. */
static int measure_dra_faults(struct node *n, const struct settings *s, uint32_t cycles, struct samples *out)
{
	char log[PATH_BYTES + 16], columns[128];
	if (str_printf(log, sizeof(log), "%s/kubectl-watch.log", n->root) < 0)
		return -ENAMETOOLONG;
	/* One line per event: the pool's generation and the faulty chip's taint
	 * keys, or <none>. (kubectl 1.37's -o jsonpath with a range printed the
	 * first event of the watch only.) */
	snprintf(columns, sizeof(columns),
		 "custom-columns=GENERATION:.spec.pool.generation,TAINTS:.spec.devices[?(@.name==\"npu-%d\")].taints[*].key",
		 FAULTY_CHIP);
	const char *const argv[] = { s->kubectl, "--kubeconfig", s->kubeconfig, "get", "resourceslices", "--watch",
				     "--field-selector", "spec.nodeName=" DRA_NODE, "--no-headers", "-o", columns, NULL };
	const char *const tainted = " " DRA_TAINT_KEY, *const clean = " <none>";
	struct proc *watch;
	int r = start_child(argv, NULL, log, false, &watch);
	if (r < 0)
		return r;
	if (!proc_expect(watch, clean, WAIT_MS))
		r = -ETIMEDOUT;
	for (uint32_t i = 0; r == 0 && i < cycles; i++) {
		int64_t t0;
		proc_discard(watch);
		r = node_write_state(n, 2, &t0);
		if (r == 0 && !proc_expect(watch, tainted, WAIT_MS))
			r = -ETIMEDOUT;
		if (r == 0)
			samples_add(out, mono_us() - t0);
		if (r == 0)
			r = node_write_state(n, 0, NULL);
		if (r == 0 && !proc_expect(watch, clean, WAIT_MS))
			r = -ETIMEDOUT;
	}
	if (r == -ETIMEDOUT)
		fprintf(stderr, "ascend-bench: the slices' watch did not show npu-%d as expected within %d ms\n",
			FAULTY_CHIP, WAIT_MS);
	if (r < 0)
		proc_print_log("kubectl log", log);
	proc_free(watch);
	return r;
}

/* How many chips the start -> ResourceSlices rows publish. */
#define SLICES_CHIPS 64
/* The most slices of one node the watch below keeps apart. */
#define SLICES_MAX 16

/* Starts kubectl watching the ResourceSlices of node, one line per event:
 * the slice's name, its pool's generation and slice count, and its devices'
 * names, comma-separated (<none> for no devices). Waits until the watch
 * request is answered (kubectl's -v=6 line of it on stderr): a slice
 * published after that arrives as an event, and kubectl's own start stays
 * out of the measurement. */
static int slices_watch(const struct settings *s, const char *node, struct proc **ret_watch)
{
	char field[128];
	if (str_printf(field, sizeof(field), "spec.nodeName=%s", node) < 0)
		return -ENAMETOOLONG;
	const char *const argv[] = { s->kubectl, "--kubeconfig", s->kubeconfig, "-v=6", "get", "resourceslices",
				     "--watch", "--field-selector", field, "--no-headers", "-o",
				     "custom-columns=NAME:.metadata.name,GENERATION:.spec.pool.generation,"
				     "COUNT:.spec.pool.resourceSliceCount,DEVICES:.spec.devices[*].name",
				     NULL };
	struct proc *watch;
	int r = start_child(argv, NULL, NULL, false, &watch);
	if (r < 0)
		return r;
	if (!proc_expect_err(watch, "watch=true\" status=\"200 OK\"", WAIT_MS)) {
		fprintf(stderr, "ascend-bench: kubectl's watch of the slices of %s did not open\n", node);
		proc_free(watch);
		return -ETIMEDOUT;
	}
	*ret_watch = watch;
	return 0;
}

/* What the slices of a node hold, each slice's latest event counting. */
struct slices_seen {
	int64_t complete_us; /* the arrival of the line that completed them */
	long long slices;    /* slices of the pool's generation, with devices or counter sets */
	long long devices;
};

/* One slice in the watch's lines: its latest event. */
struct slice_event {
	char name[256];
	long long generation;
	unsigned count;   /* the pool's slices, as the slice says */
	unsigned devices;
};

/* Reads the watch until every slice of the pool's newest generation has
 * come (as many as the slices say the pool has) with devices devices or
 * more in all: the pool is complete on the API server. */
static int slices_await(struct proc *watch, unsigned devices, struct slices_seen *ret)
{
	struct slice_event seen[SLICES_MAX];
	size_t n = 0;
	int64_t deadline = mono_us() + (int64_t)WAIT_MS * 1000;
	for (;;) {
		int left_ms = (int)((deadline - mono_us() + 999) / 1000);
		const char *line = left_ms > 0 ? proc_expect(watch, "", left_ms) : NULL;
		if (!line)
			break;
		int64_t now = mono_us();
		struct slice_event e = { 0 };
		int list_at = 0;
		if (sscanf(line, "%255s %lld %u %n", e.name, &e.generation, &e.count, &list_at) != 3 || list_at == 0)
			continue;
		const char *list = line + list_at;
		if (*list && strncmp(list, "<none>", 6) != 0)
			for (e.devices = 1; *list && *list != ' ' && *list != '\n'; list++)
				e.devices += *list == ',';
		size_t i = 0;
		while (i < n && strcmp(seen[i].name, e.name) != 0)
			i++;
		if (i == SLICES_MAX) {
			fprintf(stderr, "ascend-bench: more than %d ResourceSlices for one node\n", SLICES_MAX);
			return -E2BIG;
		}
		n += i == n;
		seen[i] = e;
		long long newest = 0;
		for (size_t k = 0; k < n; k++)
			newest = seen[k].generation > newest ? seen[k].generation : newest;
		struct slices_seen got = { .complete_us = now };
		unsigned count = 0;
		for (size_t k = 0; k < n; k++) {
			if (seen[k].generation != newest)
				continue;
			got.slices++;
			got.devices += seen[k].devices;
			count = seen[k].count;
		}
		if (got.slices == count && got.devices >= devices) {
			*ret = got;
			return 0;
		}
	}
	fprintf(stderr, "ascend-bench: the watch did not show a complete pool with %u devices within %d ms\n", devices,
		WAIT_MS);
	return -ETIMEDOUT;
}

/* The size of the node's ResourceSlices as the API server answers them in
 * JSON: the body of its list of them (kubectl get --raw), counted by wc. */
static int slices_bytes(const struct settings *s, const char *node, long long *ret_bytes)
{
	char url[192];
	if (str_printf(url, sizeof(url), "/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName%%3D%s",
		       node) < 0)
		return -ENAMETOOLONG;
	const char *const argv[] = { "/bin/sh", "-c", "\"$0\" --kubeconfig \"$1\" get --raw \"$2\" | wc -c",
				     s->kubectl, s->kubeconfig, url, NULL };
	struct proc *count;
	int r = start_child(argv, NULL, NULL, false, &count);
	if (r < 0)
		return r;
	const char *line = proc_expect(count, "", WAIT_MS);
	uint64_t bytes = 0;
	if (!line || parse_u64(line + strspn(line, " "), 10, INT64_MAX, &bytes) < 0 || bytes == 0)
		r = -EIO;
	/* The shell is ended by its own exit, not proc_free's SIGTERM. */
	if (proc_wait(count, WAIT_MS) != 0 && r == 0)
		r = -EIO;
	proc_free(count);
	if (r < 0)
		fprintf(stderr, "ascend-bench: cannot read the ResourceSlices of %s with kubectl\n", node);
	else
		*ret_bytes = (long long)bytes;
	return r;
}

/* What a node with the DRA front end on is. */
struct dra_shape {
	const char *name;      /* its directory in the work directory */
	unsigned chips;
	const char *node_name; /* the Node it publishes for */
	const char *front_end; /* --front-end; NULL: dra */
	const char *dra_chips; /* --dra-chips; NULL: all */
	const char *dynamic;   /* --dra-dynamic-vnpus; NULL: none */
	const char *also;      /* a line of kubelet-sim awaited as well; NULL: none */
};

/* A node of chips with the DRA front end on for its Node: kubelet-sim in
 * its DRA mode, then the plugin (spawned at *ret_spawned_us, its stderr a
 * pipe), up to kubelet-sim's registration of the driver and, when also is
 * not NULL, a line of kubelet-sim containing it as well, in either order
 * (the device plugin's first device list comes before or after the driver's
 * registration). node_down ends it. */
static int dra_node_up(struct node *n, const struct settings *s, const char *work_dir, const struct dra_shape *shape,
		       int64_t *ret_spawned_us)
{
	/* Its chips are 910B3s with 20 AI cores and 64 GiB of HBM
	 * (tests/support/node_tree.c), which vNPUs are carved from. */
	int r = node_create(n, work_dir, shape->name, shape->chips, true, s->dcmi_lib);
	if (r < 0) {
		fprintf(stderr, "ascend-bench: cannot build the node in %s/%s: %s\n", work_dir, shape->name, strerror(-r));
		return r;
	}
	char kubelet_dir[PATH_BYTES + 16], registry[PATH_BYTES + 40], cdi_dir[PATH_BYTES + 8];
	if (str_printf(kubelet_dir, sizeof(kubelet_dir), "%s/kubelet-root", n->root) < 0 ||
	    str_printf(registry, sizeof(registry), "%s/plugins_registry", kubelet_dir) < 0 ||
	    str_printf(cdi_dir, sizeof(cdi_dir), "%s/cdi", n->root) < 0)
		return -ENAMETOOLONG;
	const char *const sim_argv[] = { s->sim_bin, "--dir", n->sockets, "--dra-registry", registry, "--timestamps",
					 NULL };
	const char *const flags[] = { "--front-end", shape->front_end ? shape->front_end : "dra", "--dra-chips",
				      shape->dra_chips ? shape->dra_chips : "all", "--kubelet-dir", kubelet_dir,
				      "--node-name", shape->node_name, "--cdi-dir", cdi_dir, "--kubeconfig", s->kubeconfig,
				      shape->dynamic ? "--dra-dynamic-vnpus" : NULL, shape->dynamic, NULL };
	n->plugin_stderr_pipe = true;
	if ((r = start_child(sim_argv, NULL, n->sim_log, true, &n->sim)) < 0)
		return r;
	if (!proc_expect(n->sim, "ready", WAIT_MS))
		return -ETIMEDOUT;
	n->extra_flags = flags;
	r = start_plugin(n, s, ret_spawned_us);
	n->extra_flags = NULL; /* flags is gone after the return */
	const char *const lines[] = { "dra-registered", shape->also };
	if (r == 0 && !proc_expect_all(n->sim, lines, shape->also ? 2 : 1, WAIT_MS))
		r = -ETIMEDOUT;
	return r;
}

/* The DRA front end on an 8-chip node: the module loaded, its client made,
 * kubelet-sim's DRA mode registered, and the node's ResourceSlices
 * published to the API server of --kubeconfig; the plugin's RSS then, and
 * the prepare and fault -> slice latencies where the settings allow. */
static int scenario_dra(const struct settings *s, const char *work_dir, struct results *res)
{
	struct node n;
	progress("8 chips, the DRA front end publishing to %s", s->kubeconfig);
	int r = dra_node_up(&n, s, work_dir, &(struct dra_shape){ .name = "node-8-dra", .chips = 8, .node_name = DRA_NODE },
			    NULL);
	if (r == 0 && !proc_expect_err(n.plugin, "published the ResourceSlices of node " DRA_NODE, WAIT_MS))
		r = -ETIMEDOUT;
	if (r < 0)
		goto out;
	res->dra_rss_kib = proc_status_kib(proc_pid(n.plugin), "VmRSS");
	res->dra_anon_kib = proc_status_kib(proc_pid(n.plugin), "RssAnon");
	res->dra_file_kib = proc_status_kib(proc_pid(n.plugin), "RssFile");
	if (s->dra_claims) {
		progress("8 chips, DRA: NodePrepareResources/NodeUnprepareResources for the claims of %s",
			 s->dra_claims);
		struct proc *watch = NULL;
		if (s->kubectl) {
			char log[PATH_BYTES + 24];
			const char *const argv[] = { s->kubectl, "--kubeconfig", s->kubeconfig, "-n", "default", "get",
						     "resourceclaims", "--watch", "--no-headers", "-o",
						     "custom-columns=NAME:.metadata.name,DEVICES:.status.devices[*].device",
						     NULL };
			if (str_printf(log, sizeof(log), "%s/kubectl-claims.log", n.root) < 0)
				r = -ENAMETOOLONG;
			else
				r = start_child(argv, NULL, log, false, &watch);
		}
		if (r == 0)
			r = measure_dra_prepare(n.sim, &(struct claim_set){ s->dra_claims, &res->dra_prepare_us, NULL }, 1,
						s->dra_rounds, watch, &res->dra_status_us);
		proc_free(watch);
	}
	if (r == 0 && s->kubectl) {
		progress("8 chips, DRA: %d fault/recovery cycles seen in the ResourceSlice", DRA_FAULT_CYCLES);
		r = measure_dra_faults(&n, s, DRA_FAULT_CYCLES, &res->dra_fault_us);
	}
out:
	/* The plugin's stderr is a pipe here: node_down has no log file to show. */
	if (r < 0 && n.plugin)
		proc_dump(n.plugin);
	return node_down(&n, r);
}

/* Both front ends on a 16-chip node (--front-end=both --dra-chips=0-7):
 * the DRA driver publishing 8 chips, the device plugin registered with
 * kubelet-sim for the other 8; the plugin's RSS then. The Node is
 * DRA_NODE's, whose slices it publishes anew. */
static int scenario_dra_both(const struct settings *s, const char *work_dir, struct results *res)
{
	struct node n;
	progress("16 chips, both front ends: the DRA driver 8, the device plugin 8");
	const struct dra_shape shape = {
		.name = "node-16-both", .chips = 16, .node_name = DRA_NODE, .front_end = "both", .dra_chips = "0-7",
		.also = "devices resource=" RESOURCE " capacity=8 allocatable=8 ",
	};
	int r = dra_node_up(&n, s, work_dir, &shape, NULL);
	if (r == 0 && !proc_expect_err(n.plugin, "published the ResourceSlices of node " DRA_NODE, WAIT_MS))
		r = -ETIMEDOUT;
	if (r == 0) {
		res->both_rss_kib = proc_status_kib(proc_pid(n.plugin), "VmRSS");
		res->both_anon_kib = proc_status_kib(proc_pid(n.plugin), "RssAnon");
		res->both_file_kib = proc_status_kib(proc_pid(n.plugin), "RssFile");
	}
	if (r < 0 && n.plugin)
		proc_dump(n.plugin);
	return node_down(&n, r);
}

/* NodePrepareResources and NodeUnprepareResources on an 8-chip node whose
 * chips are carved on demand (--dra-dynamic-vnpus=all), for the Node
 * DRA_NODE (whose slices it publishes anew): the whole chips of
 * --dra-claims and the vNPU placements of --dra-dynamic-claims taken in
 * turn, so that each vNPU's prepare creates it through DCMI and its
 * unprepare destroys it. */
static int scenario_dra_dynamic(const struct settings *s, const char *work_dir, struct results *res)
{
	struct node n;
	progress("8 chips carved on demand, DRA: NodePrepareResources/NodeUnprepareResources, whole chips and vNPUs");
	const struct dra_shape shape = { .name = "node-8-dynamic", .chips = 8, .node_name = DRA_NODE, .dynamic = "all" };
	const struct claim_set sets[] = {
		{ s->dra_claims, &res->dynamic_prepare_us[0], &res->dynamic_unprepare_us[0] },
		{ s->dra_dynamic_claims, &res->dynamic_prepare_us[1], &res->dynamic_unprepare_us[1] },
	};
	int r = dra_node_up(&n, s, work_dir, &shape, NULL);
	if (r == 0 && !proc_expect_err(n.plugin, "published the ResourceSlices of node " DRA_NODE, WAIT_MS))
		r = -ETIMEDOUT;
	if (r == 0)
		r = measure_dra_prepare(n.sim, sets, 2, s->dra_rounds, NULL, NULL);
	/* The vNPUs were made and unmade: the plugin said so (its first such
	 * lines are still in the pipe). */
	if (r == 0 && (!proc_expect_err(n.plugin, "created vNPU ", WAIT_MS) ||
		       !proc_expect_err(n.plugin, "destroyed vNPU ", WAIT_MS)))
		r = -EIO;
	if (r < 0 && n.plugin)
		proc_dump(n.plugin);
	return node_down(&n, r);
}

/* Start -> ResourceSlices for the node of shape: from just before the
 * plugin's spawn to the arrival of the watch's line that completes the pool
 * (the API server has stored every slice and sent it out); then the
 * plugin's own log line of the publication is awaited as well, and the
 * slices' JSON is counted. */
static int scenario_dra_slices(const struct settings *s, const char *work_dir, const struct dra_shape *shape,
			       struct slices_start *out)
{
	struct node n = { 0 };
	struct proc *watch = NULL;
	struct slices_seen seen;
	int64_t spawned = 0;
	char published[128];
	snprintf(published, sizeof(published), "published the ResourceSlices of node %s", shape->node_name);
	progress("%u chips%s, DRA: start -> ResourceSlices on the API server", shape->chips,
		 shape->dynamic ? ", every vNPU template" : "");
	int r = slices_watch(s, shape->node_name, &watch);
	if (r < 0)
		return r;
	r = dra_node_up(&n, s, work_dir, shape, &spawned);
	if (r == 0)
		r = slices_await(watch, shape->chips, &seen);
	if (r == 0 && !proc_expect_err(n.plugin, published, WAIT_MS))
		r = -ETIMEDOUT;
	long long bytes = -1;
	if (r == 0)
		r = slices_bytes(s, shape->node_name, &bytes);
	if (r == 0)
		*out = (struct slices_start){ seen.complete_us - spawned, seen.slices, seen.devices, bytes };
	if (r < 0 && n.plugin)
		proc_dump(n.plugin);
	proc_free(watch);
	return n.root[0] ? node_down(&n, r) : r;
}

/* Upstream's DRA test driver as a kubelet plugin on a directory of its own
 * (its data, registration and CDI directories), with a kubelet-sim in its
 * DRA mode as ours has. */
struct peer {
	char root[PATH_BYTES];
	char log[PATH_BYTES + 16];
	char sim_log[PATH_BYTES + 16];
	struct proc *sim;
	struct proc *driver;
};

/* Starts kubelet-sim, then the driver (spawned at *ret_spawned_us)
 * publishing devices devices for node, up to its registration. */
static int peer_up(struct peer *p, const struct settings *s, const char *work_dir, const char *name,
		   const char *node, unsigned devices, int64_t *ret_spawned_us)
{
	*p = (struct peer){ 0 };
	char plugins[PATH_BYTES + 16], data[PATH_BYTES + 64], registry[PATH_BYTES + 32], cdi[PATH_BYTES + 8],
		sockets[PATH_BYTES + 16], count[16];
	if (str_printf(p->root, sizeof(p->root), "%s/%s", work_dir, name) < 0 ||
	    str_printf(p->log, sizeof(p->log), "%s/driver.log", p->root) < 0 ||
	    str_printf(p->sim_log, sizeof(p->sim_log), "%s/kubelet-sim.log", p->root) < 0 ||
	    str_printf(plugins, sizeof(plugins), "%s/plugins", p->root) < 0 ||
	    str_printf(data, sizeof(data), "%s/" PEER_DRIVER, plugins) < 0 ||
	    str_printf(registry, sizeof(registry), "%s/plugins_registry", p->root) < 0 ||
	    str_printf(cdi, sizeof(cdi), "%s/cdi", p->root) < 0 ||
	    str_printf(sockets, sizeof(sockets), "%s/device-plugins", p->root) < 0)
		return -ENAMETOOLONG;
	snprintf(count, sizeof(count), "%u", devices);
	/* The driver makes the parent of its data directory, not the directory. */
	int r = mkdir_p(data, 0750);
	if (r < 0) {
		fprintf(stderr, "ascend-bench: cannot make %s: %s\n", data, strerror(-r));
		return r;
	}
	const char *const sim_argv[] = { s->sim_bin, "--dir", sockets, "--dra-registry", registry, "--timestamps",
					 NULL };
	const char *const argv[] = { s->peer_bin, "--kubeconfig", s->kubeconfig, "kubelet-plugin", "--node-name", node,
				     "--num-devices", count, "--datadir", plugins, "--plugin-registration-path",
				     registry, "--cdi-dir", cdi, NULL };
	if ((r = start_child(sim_argv, NULL, p->sim_log, true, &p->sim)) < 0)
		return r;
	if (!proc_expect(p->sim, "ready", WAIT_MS))
		return -ETIMEDOUT;
	if (ret_spawned_us)
		*ret_spawned_us = mono_us();
	if ((r = start_child(argv, NULL, p->log, false, &p->driver)) < 0)
		return r;
	return proc_expect(p->sim, "dra-registered", WAIT_MS) ? 0 : -ETIMEDOUT;
}

/* Stops the driver (which must exit 0) and kubelet-sim and removes the
 * directory; returns r, or a failure to stop when r was 0. */
static int peer_down(struct peer *p, int r)
{
	if (r < 0)
		proc_print_log("dra-test-driver log", p->log);
	int status = proc_free(p->driver);
	if (status != 0) {
		fprintf(stderr, "ascend-bench: dra-test-driver exited with status %d\n", status);
		if (r == 0)
			r = -EIO;
	}
	proc_free(p->sim);
	if (p->root[0])
		tmpdir_remove(p->root);
	*p = (struct peer){ 0 };
	return r;
}

/* The peer, measured as ours: start -> its ResourceSlices with 64 devices on
 * a Node of its own, then on an 8-device node its RSS once its slices are
 * on the API server and NodePrepareResources for the claims of
 * --peer-claims through kubelet-sim. */
static int scenario_peer(const struct settings *s, const char *work_dir, struct results *res)
{
	struct peer p = { 0 };
	struct proc *watch = NULL;
	struct slices_seen seen;
	int64_t spawned = 0;
	progress("upstream's DRA test driver, %d devices: start -> ResourceSlices on the API server", SLICES_CHIPS);
	int r = slices_watch(s, PEER_NODE_64, &watch);
	if (r == 0)
		r = peer_up(&p, s, work_dir, "peer-64", PEER_NODE_64, SLICES_CHIPS, &spawned);
	if (r == 0)
		r = slices_await(watch, SLICES_CHIPS, &seen);
	if (r == 0)
		res->peer_start = (struct slices_start){ seen.complete_us - spawned, seen.slices, seen.devices, -1 };
	proc_free(watch);
	watch = NULL;
	r = peer_down(&p, r);
	if (r < 0)
		return r;

	progress("upstream's DRA test driver, 8 devices: RSS, NodePrepareResources/NodeUnprepareResources");
	r = slices_watch(s, PEER_NODE, &watch);
	if (r == 0)
		r = peer_up(&p, s, work_dir, "peer-8", PEER_NODE, 8, NULL);
	if (r == 0)
		r = slices_await(watch, 8, &seen);
	if (r == 0)
		res->peer_rss_kib = proc_status_kib(proc_pid(p.driver), "VmRSS");
	if (r == 0 && s->peer_claims)
		r = measure_dra_prepare(p.sim, &(struct claim_set){ s->peer_claims, &res->peer_prepare_us, NULL }, 1,
					s->dra_rounds, NULL, NULL);
	proc_free(watch);
	return peer_down(&p, r);
}

/* --- the table ---------------------------------------------------------------------- */

#define ROW_FORMAT "%-46s %11s  %-28s %s\n"

/* With --only, the rows of the scenarios not run are left out, not failed. */
static bool partial_run;

/* One row: value < 0 means not measured; target <= 0 means none. */
static void row(const char *label, double value, const char *unit, double target, const char *target_note,
		unsigned *misses)
{
	char measured[32] = "n/a", goal[48] = "-";
	const char *verdict = "-";
	if (value < 0 && partial_run)
		return;
	if (value >= 0)
		snprintf(measured, sizeof(measured), value < 100 ? "%.2f %s" : "%.1f %s", value, unit);
	if (target > 0) {
		snprintf(goal, sizeof(goal), "<= %g %s%s%s", target, unit, target_note ? " " : "",
			 target_note ? target_note : "");
		verdict = value < 0 ? "FAIL" : value <= target ? "PASS" : "MISS";
		if (value < 0 || value > target)
			(*misses)++;
	}
	printf(ROW_FORMAT, label, measured, goal, verdict);
}

static double mib(long long kib)
{
	return kib < 0 ? -1.0 : (double)kib / 1024.0;
}

/* Microseconds as milliseconds; -1 stays "not measured". */
static double ms(long long us)
{
	return us < 0 ? -1.0 : (double)us / 1000;
}

/* A percentile scaled to the unit (divisor 1000: ns -> us or us -> ms). */
static double pct(struct samples *s, unsigned p, double divisor)
{
	int64_t v = percentile(s, p);
	return v < 0 ? -1.0 : (double)v / divisor;
}

static void print_machine(void)
{
	char model[256] = "unknown", line[512];
	FILE *f = fopen("/proc/cpuinfo", "re");
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "model name", 10) != 0)
			continue;
		const char *colon = strchr(line, ':');
		if (colon) {
			colon += strspn(colon + 1, " \t") + 1;
			snprintf(model, sizeof(model), "%.*s", (int)strcspn(colon, "\n"), colon);
		}
		break;
	}
	if (f)
		fclose(f);
	struct utsname u;
	if (uname(&u) < 0)
		memset(&u, 0, sizeof(u));
	printf("machine: %ld CPUs online, %s, %s %s %s\n", sysconf(_SC_NPROCESSORS_ONLN), model, u.sysname, u.release,
	       u.machine);
}

static unsigned print_table(const struct settings *s, struct results *res)
{
	unsigned misses = 0;
	char label[96], note[48];

	printf("\n");
	print_machine();
	printf("runs: %u Allocate calls per node (+%d warm-up), %u fault/recovery cycles per mode, %u kubelet "
	       "restarts, %u plugin starts\n\n",
	       s->allocate_calls, WARMUP_CALLS, s->fault_cycles, s->restarts, s->starts);
	printf(ROW_FORMAT, "measurement", "measured", "target", "result");

	static const unsigned chips[2] = { 8, 128 };
	for (int k = 0; k < 2; k++) {
		snprintf(label, sizeof(label), "plugin RSS idle, %u chips", chips[k]);
		row(label, mib(res->rss_idle_kib[k]), "MiB", 10, NULL, &misses);
		snprintf(label, sizeof(label), "plugin RSS after %u Allocate, %u chips", s->allocate_calls, chips[k]);
		row(label, mib(res->rss_after_kib[k]), "MiB", 10, NULL, &misses);
		snprintf(label, sizeof(label), "  of which anonymous (RssAnon), %u chips", chips[k]);
		row(label, mib(res->anon_kib[k]), "MiB", 0, NULL, &misses);
		snprintf(label, sizeof(label), "  of which file-backed (RssFile), %u chips", chips[k]);
		row(label, mib(res->file_kib[k]), "MiB", 0, NULL, &misses);
		snprintf(label, sizeof(label), "plugin peak RSS (VmHWM), %u chips", chips[k]);
		row(label, mib(res->hwm_kib[k]), "MiB", 0, NULL, &misses);
	}
	for (int k = 0; k < 2; k++) {
		snprintf(label, sizeof(label), "Allocate latency p50, %u chips", chips[k]);
		row(label, pct(&res->allocate_ns[k], 50, 1000), "us", 200, NULL, &misses);
		snprintf(label, sizeof(label), "Allocate latency p99, %u chips", chips[k]);
		row(label, pct(&res->allocate_ns[k], 99, 1000), "us", 0, NULL, &misses);
		snprintf(label, sizeof(label), "  CPU per Allocate: plugin, %u chips", chips[k]);
		row(label, res->allocate_cpu[k].plugin_us, "us", 0, NULL, &misses);
		snprintf(label, sizeof(label), "  CPU per Allocate: gRPC client, %u chips", chips[k]);
		row(label, res->allocate_cpu[k].client_us, "us", 0, NULL, &misses);
	}
	row("GetDevicePluginOptions p50 (gRPC baseline)", pct(&res->options_ns, 50, 1000), "us", 0, NULL, &misses);
	row("GetDevicePluginOptions p99 (gRPC baseline)", pct(&res->options_ns, 99, 1000), "us", 0, NULL, &misses);
	row("  CPU per call: plugin", res->options_cpu.plugin_us, "us", 0, NULL, &misses);
	row("  CPU per call: gRPC client", res->options_cpu.client_us, "us", 0, NULL, &misses);
	row("fault -> ListAndWatch p50, events", pct(&res->fault_events_us, 50, 1000), "ms", 0, NULL, &misses);
	row("fault -> ListAndWatch p99, events", pct(&res->fault_events_us, 99, 1000), "ms", 100, NULL, &misses);
	/* Polling: bounded by the interval; the target allows one interval plus 10%. */
	double bound = s->poll_interval_ms * 1.1;
	snprintf(note, sizeof(note), "(interval %u ms)", s->poll_interval_ms);
	snprintf(label, sizeof(label), "fault -> ListAndWatch p50, polling %u ms", s->poll_interval_ms);
	row(label, pct(&res->fault_poll_us, 50, 1000), "ms", 0, NULL, &misses);
	snprintf(label, sizeof(label), "fault -> ListAndWatch p99, polling %u ms", s->poll_interval_ms);
	row(label, pct(&res->fault_poll_us, 99, 1000), "ms", bound, note, &misses);
	row("fault -> ListAndWatch max, events", pct(&res->fault_events_us, 100, 1000), "ms", 0, NULL, &misses);
	/* Flap damping: the chip goes out once and comes back once. */
	row("ListAndWatch updates, 1,000 flaps, hold 0", (double)res->flap_updates[0], "", 0, NULL, &misses);
	row("ListAndWatch updates, 1,000 flaps, hold 5 s", (double)res->flap_updates[1], "", 2, NULL, &misses);
	/* A blocked stderr may not slow health reporting down: the same target
	 * as with stderr drained, for the worst sample. */
	row("fault -> ListAndWatch p50, stderr blocked", pct(&res->fault_blocked_us, 50, 1000), "ms", 0, NULL, &misses);
	row("fault -> ListAndWatch max, stderr blocked", pct(&res->fault_blocked_us, 100, 1000), "ms", 100, NULL,
	    &misses);
	/* The log's flush at exit waits LOG_STOP_TIMEOUT_MS (1 s) at most, the
	 * rest of the stop takes milliseconds. */
	row("SIGTERM -> exit, stderr blocked", res->blocked_exit_us < 0 ? -1.0 : (double)res->blocked_exit_us / 1000,
	    "ms", 1500, "(flush 1 s)", &misses);
	row("kubelet restart -> registered p50", pct(&res->restart_us, 50, 1000), "ms", 500, NULL, &misses);
	row("kubelet restart -> registered p99", pct(&res->restart_us, 99, 1000), "ms", 500, NULL, &misses);
	row("kubelet restart -> registered p50, a DCMI call hanging 30 s", pct(&res->restart_hang_us, 50, 1000), "ms",
	    500, NULL, &misses);
	row("kubelet restart -> registered p99, a DCMI call hanging 30 s", pct(&res->restart_hang_us, 99, 1000), "ms",
	    500, NULL, &misses);
	row("plugin start -> registered p50", pct(&res->start_us, 50, 1000), "ms", 100, NULL, &misses);
	row("plugin start -> registered p99", pct(&res->start_us, 99, 1000), "ms", 100, NULL, &misses);
	/* Two decimals, like the measured column. */
	double idle = mib(res->flood_idle_kib) < 0 ? -1 : (double)(long long)(mib(res->flood_idle_kib) * 100) / 100;
	row("plugin RSS idle before the floods, 8 chips", idle, "MiB", 0, NULL, &misses);
	row("plugin RSS with 2,000 connections open", mib(res->flood_open_kib), "MiB", idle < 0 ? 0 : idle + 16,
	    "(idle + 16)", &misses);
	row("plugin RSS after they closed", mib(res->flood_closed_kib), "MiB", idle < 0 ? 0 : idle + 2, "(idle + 2)",
	    &misses);
	row("plugin RSS after 5,000 connect/close rounds", mib(res->rounds_kib), "MiB", idle < 0 ? 0 : idle + 2,
	    "(idle + 2)", &misses);
	row("plugin fds before the floods", (double)res->flood_fds_before, "", 0, NULL, &misses);
	row("plugin fds after the floods", (double)res->flood_fds_after, "", (double)res->flood_fds_before, NULL,
	    &misses);
	row("GetPreferredAllocation p50, 8x64 replicas", pct(&res->preferred_512_ns, 50, 1000), "us", 0, NULL,
	    &misses);
	row("GetPreferredAllocation p99, 8x64 replicas", pct(&res->preferred_512_ns, 99, 1000), "us", 1000, NULL,
	    &misses);
	row("GetPreferredAllocation p50, 16 A3 dies", pct(&res->preferred_a3_ns, 50, 1000), "us", 0, NULL, &misses);
	row("GetPreferredAllocation p99, 16 A3 dies", pct(&res->preferred_a3_ns, 99, 1000), "us", 1000, NULL, &misses);
	row("plugin RSS idle, 16 chips x 64 replicas", mib(res->rss_1024_kib), "MiB", 10, NULL, &misses);
	row("fault -> ListAndWatch p50, 1,024 devices", pct(&res->update_1024_us, 50, 1000), "ms", 0, NULL, &misses);
	row("fault -> ListAndWatch p99, 1,024 devices", pct(&res->update_1024_us, 99, 1000), "ms", 5, NULL, &misses);
	row("ListAndWatch update size, 1,024 devices",
	    res->update_1024_bytes < 0 ? -1.0 : (double)res->update_1024_bytes / 1024, "KiB", 0, NULL, &misses);
	row("scrape /metrics p50, 16 chips, 100 pods", pct(&res->scrape_us, 50, 1000), "ms", 0, NULL, &misses);
	row("scrape /metrics p99, 16 chips, 100 pods", pct(&res->scrape_us, 99, 1000), "ms", 5, NULL, &misses);
	row("  size of a scrape", res->scrape_bytes < 0 ? -1.0 : (double)res->scrape_bytes / 1024, "KiB", 0, NULL,
	    &misses);
	row("plugin RSS after 1,000 scrapes, 16 chips", mib(res->scrape_rss_kib), "MiB", 10, NULL, &misses);
	if (s->kubeconfig) {
		row("RSS with the DRA front end on (8 chips, module loaded, publishing)", mib(res->dra_rss_kib), "MiB", 10,
		    NULL, &misses);
		row("  of which anonymous (RssAnon), DRA", mib(res->dra_anon_kib), "MiB", 0, NULL, &misses);
		row("  of which file-backed (RssFile), DRA", mib(res->dra_file_kib), "MiB", 0, NULL, &misses);
		row("RSS with both front ends on (16 chips: 8 DRA, 8 device plugin)", mib(res->both_rss_kib), "MiB", 10,
		    NULL, &misses);
		row("  of which anonymous (RssAnon), both", mib(res->both_anon_kib), "MiB", 0, NULL, &misses);
		row("  of which file-backed (RssFile), both", mib(res->both_file_kib), "MiB", 0, NULL, &misses);
		if (s->peer_bin)
			row("  peer: Kubernetes' DRA test driver RSS, 8 devices", mib(res->peer_rss_kib), "MiB", 0, NULL,
			    &misses);
		if (s->dra_claims) {
			row("NodePrepareResources p50, claim read from the API server", pct(&res->dra_prepare_us, 50, 1000),
			    "ms", 0, NULL, &misses);
			if (s->peer_claims)
				row("  peer: Kubernetes' DRA test driver, p50", pct(&res->peer_prepare_us, 50, 1000), "ms", 0,
				    NULL, &misses);
			row("NodePrepareResources p99, claim read from the API server", pct(&res->dra_prepare_us, 99, 1000),
			    "ms", 20, NULL, &misses);
			if (s->peer_claims)
				row("  peer: Kubernetes' DRA test driver, p99", pct(&res->peer_prepare_us, 99, 1000), "ms", 0,
				    NULL, &misses);
		}
		if (s->dra_dynamic_claims) {
			/* Whole chips and vNPUs of the same node and rounds, row by row. */
			static const char *const calls[2] = { "NodePrepareResources", "NodeUnprepareResources" };
			static const char *const steps[2] = { "create", "destroy" };
			for (int call = 0; call < 2; call++) {
				struct samples *samples = call == 0 ? res->dynamic_prepare_us : res->dynamic_unprepare_us;
				for (unsigned p = 50; p <= 99; p += 49) {
					snprintf(label, sizeof(label), "%s p%u, whole chip, dynamic vNPUs on", calls[call], p);
					row(label, pct(&samples[0], p, 1000), "ms", 0, NULL, &misses);
					snprintf(label, sizeof(label), "  %s p%u, dynamic vNPU (its %s)", calls[call], p, steps[call]);
					row(label, pct(&samples[1], p, 1000), "ms", 0, NULL, &misses);
				}
			}
		}
		if (s->kubectl && s->dra_claims) {
			row("prepare -> claim status stored p50 (its chips' network identity)",
			    pct(&res->dra_status_us, 50, 1000), "ms", 0, NULL, &misses);
			row("prepare -> claim status stored p99", pct(&res->dra_status_us, 99, 1000), "ms", 1000, NULL,
			    &misses);
		}
		if (s->kubectl) {
			row("fault -> ResourceSlice updated p50", pct(&res->dra_fault_us, 50, 1000), "ms", 0, NULL, &misses);
			row("fault -> ResourceSlice updated p99", pct(&res->dra_fault_us, 99, 1000), "ms", 1000, NULL,
			    &misses);
			snprintf(label, sizeof(label), "start -> ResourceSlices on the API server, %d chips", SLICES_CHIPS);
			row(label, ms(res->dra_start.us), "ms", 0, NULL, &misses);
			snprintf(label, sizeof(label), "  peer: Kubernetes' DRA test driver, %d devices", SLICES_CHIPS);
			if (s->peer_bin)
				row(label, ms(res->peer_start.us), "ms", 0, NULL, &misses);
			row("  ResourceSlices published", (double)res->dra_start.slices, "", 0, NULL, &misses);
			if (s->peer_bin)
				row("  peer: ResourceSlices published", (double)res->peer_start.slices, "", 0, NULL, &misses);
			row("  devices in them", (double)res->dra_start.devices, "", 0, NULL, &misses);
			if (s->peer_bin)
				row("  peer: devices in them", (double)res->peer_start.devices, "", 0, NULL, &misses);
			for (int k = 0; k < 2; k++) {
				const struct slices_start *st = &res->slices_16[k];
				const char *with = k ? ", every vNPU template" : "";
				snprintf(label, sizeof(label), "start -> ResourceSlices, 16 chips%s", with);
				row(label, ms(st->us), "ms", 0, NULL, &misses);
				snprintf(label, sizeof(label), "  ResourceSlices, 16 chips%s", with);
				row(label, (double)st->slices, "", 0, NULL, &misses);
				snprintf(label, sizeof(label), "  devices in them, 16 chips%s", with);
				row(label, (double)st->devices, "", 0, NULL, &misses);
				snprintf(label, sizeof(label), "  their JSON, 16 chips%s", with);
				row(label, st->bytes < 0 ? -1.0 : (double)st->bytes / 1024, "KiB", 0, NULL, &misses);
			}
		}
	}
	if (res->reordered)
		printf("\nnote: in %u of %u restarts the plugin registered before kubelet-sim printed `restarted` "
		       "(counted as 0 ms)\n",
		       res->reordered, s->restarts);
	return misses;
}

/* --- main ------------------------------------------------------------------------------ */

/* Whether the scenario is to run: every one, or those --only names. */
static bool will_run(const struct settings *s, const char *name)
{
	return !s->only || name_in(s->only, name, strlen(name));
}

int main(int argc, char **argv)
{
	struct settings s;
	if (parse_settings(argc, argv, &s) < 0)
		return 2;

	struct sigaction fatal = { .sa_handler = on_fatal_signal };
	sigaction(SIGINT, &fatal, NULL);
	sigaction(SIGTERM, &fatal, NULL);
	struct sigaction ignore = { .sa_handler = SIG_IGN };
	sigaction(SIGPIPE, &ignore, NULL);

	char own_dir[64];
	const char *work_dir = s.work_dir;
	if (!work_dir) {
		int made = tmpdir_make(own_dir, sizeof(own_dir), "ascend-bench");
		if (made < 0) {
			fprintf(stderr, "ascend-bench: cannot make a directory under /tmp: %s\n", strerror(-made));
			return 1;
		}
		/* Root-owned, not group/world-writable: DCMI's ownership check passes. */
		chmod(own_dir, 0755);
		work_dir = own_dir;
	}

	struct results res = {
		.rss_idle_kib = { -1, -1 }, .rss_after_kib = { -1, -1 }, .hwm_kib = { -1, -1 },
		.anon_kib = { -1, -1 }, .file_kib = { -1, -1 },
		.allocate_cpu = { { -1, -1 }, { -1, -1 } }, .options_cpu = { -1, -1 },
		.blocked_exit_us = -1,
		.flood_idle_kib = -1, .flood_open_kib = -1, .flood_closed_kib = -1, .rounds_kib = -1,
		.flood_fds_before = -1, .flood_fds_after = -1,
		.update_1024_bytes = -1, .rss_1024_kib = -1,
		.scrape_rss_kib = -1, .scrape_bytes = -1, .dra_rss_kib = -1, .dra_anon_kib = -1, .dra_file_kib = -1,
		.both_rss_kib = -1, .both_anon_kib = -1, .both_file_kib = -1,
		.dra_start = { -1, -1, -1, -1 }, .peer_start = { -1, -1, -1, -1 }, .peer_rss_kib = -1,
		.slices_16 = { { -1, -1, -1, -1 }, { -1, -1, -1, -1 } },
		.flap_updates = { -1, -1 },
	};
	size_t n_faults = (size_t)s.fault_cycles * 2;
	if (samples_init(&res.allocate_ns[0], s.allocate_calls) < 0 ||
	    samples_init(&res.allocate_ns[1], s.allocate_calls) < 0 || samples_init(&res.options_ns, s.allocate_calls) < 0 ||
	    samples_init(&res.fault_events_us, n_faults) < 0 || samples_init(&res.fault_poll_us, n_faults) < 0 ||
	    samples_init(&res.fault_blocked_us, n_faults) < 0 ||
	    samples_init(&res.restart_us, s.restarts) < 0 ||
	    samples_init(&res.restart_hang_us, s.restarts) < 0 || samples_init(&res.start_us, s.starts) < 0 ||
	    samples_init(&res.preferred_512_ns, s.allocate_calls) < 0 ||
	    samples_init(&res.preferred_a3_ns, s.allocate_calls) < 0 || samples_init(&res.update_1024_us, n_faults) < 0 ||
	    samples_init(&res.scrape_us, SCRAPES) < 0 || samples_init(&res.dra_prepare_us, DRA_CLAIMS_MAX * DRA_ROUNDS_MAX) < 0 ||
	    samples_init(&res.dra_status_us, DRA_CLAIMS_MAX) < 0 ||
	    samples_init(&res.dra_fault_us, DRA_FAULT_CYCLES) < 0 || samples_init(&res.peer_prepare_us, DRA_CLAIMS_MAX * DRA_ROUNDS_MAX) < 0 ||
	    samples_init(&res.dynamic_prepare_us[0], DRA_CLAIMS_MAX * DRA_ROUNDS_MAX) < 0 ||
	    samples_init(&res.dynamic_prepare_us[1], DRA_CLAIMS_MAX * DRA_ROUNDS_MAX) < 0 ||
	    samples_init(&res.dynamic_unprepare_us[0], DRA_CLAIMS_MAX * DRA_ROUNDS_MAX) < 0 ||
	    samples_init(&res.dynamic_unprepare_us[1], DRA_CLAIMS_MAX * DRA_ROUNDS_MAX) < 0) {
		fprintf(stderr, "ascend-bench: out of memory\n");
		return 1;
	}

	int64_t started = mono_us();
	int failed = 0;
	partial_run = s.only != NULL;
	static const struct {
		const char *name;
		int (*run)(const struct settings *, const char *, struct results *);
	} scenarios[] = {
		{ "events", scenario_events }, { "polling", scenario_polling }, { "flaps", scenario_flaps },
		{ "big", scenario_big }, { "blocked-stderr", scenario_blocked_stderr }, { "flood", scenario_flood },
		{ "sharing", scenario_sharing }, { "metrics", scenario_metrics },
	};
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		if (will_run(&s, scenarios[i].name))
			failed += scenarios[i].run(&s, work_dir, &res) < 0;
	if (s.kubeconfig && will_run(&s, "dra"))
		failed += scenario_dra(&s, work_dir, &res) < 0;
	if (s.kubeconfig && will_run(&s, "dra-both"))
		failed += scenario_dra_both(&s, work_dir, &res) < 0;
	if (s.kubeconfig && s.dra_dynamic_claims && will_run(&s, "dra-dynamic"))
		failed += scenario_dra_dynamic(&s, work_dir, &res) < 0;
	if (s.kubeconfig && s.kubectl && will_run(&s, "dra-slices")) {
		/* 64 chips, then 16 without and with every vNPU template. */
		static const struct dra_shape shapes[] = {
			{ .name = "node-64-dra", .chips = SLICES_CHIPS, .node_name = DRA_NODE_64 },
			{ .name = "node-16-dra", .chips = 16, .node_name = DRA_NODE_16 },
			{ .name = "node-16-dynamic", .chips = 16, .node_name = DRA_NODE_16_DYNAMIC, .dynamic = "all" },
		};
		struct slices_start *outs[] = { &res.dra_start, &res.slices_16[0], &res.slices_16[1] };
		for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
			failed += scenario_dra_slices(&s, work_dir, &shapes[i], outs[i]) < 0;
	}
	if (s.peer_bin && will_run(&s, "peer"))
		failed += scenario_peer(&s, work_dir, &res) < 0;
	unsigned misses = print_table(&s, &res);
	printf("\n%s in %.1f s: %u target(s) missed%s\n", failed ? "incomplete" : "done",
	       (double)(mono_us() - started) / 1e6, misses, failed ? ", some measurements failed (see above)" : "");

	for (int k = 0; k < 2; k++)
		samples_free(&res.allocate_ns[k]);
	samples_free(&res.options_ns);
	samples_free(&res.fault_events_us);
	samples_free(&res.fault_poll_us);
	samples_free(&res.fault_blocked_us);
	samples_free(&res.restart_us);
	samples_free(&res.restart_hang_us);
	samples_free(&res.start_us);
	samples_free(&res.preferred_512_ns);
	samples_free(&res.preferred_a3_ns);
	samples_free(&res.update_1024_us);
	samples_free(&res.scrape_us);
	samples_free(&res.dra_prepare_us);
	samples_free(&res.dra_status_us);
	samples_free(&res.dra_fault_us);
	samples_free(&res.peer_prepare_us);
	for (int k = 0; k < 2; k++) {
		samples_free(&res.dynamic_prepare_us[k]);
		samples_free(&res.dynamic_unprepare_us[k]);
	}
	if (!s.work_dir)
		tmpdir_remove(own_dir);
	return failed ? 1 : 0;
}
