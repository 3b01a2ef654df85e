/* SPDX-License-Identifier: Apache-2.0 */
/* A throwaway control plane for integration tests: the real etcd and
 * kube-apiserver the e2e cluster is built from (scripts/cluster-bins.sh),
 * on free ports of this machine, started by tests/cluster/cluster.sh's own
 * functions (CLUSTER_HOST_NET=1: no network namespace, no root needed),
 * with an admin kubeconfig; and kubectl against it, its answers as json-c
 * objects. The server keeps an audit log of every request (Metadata level,
 * as scripts/bench-fleet.sh counts a driver's requests), for a test that
 * counts a client's requests by its user agent. Where the binaries were not
 * built the test is skipped (exit 77). */
#pragma once

#include <stdint.h>

#include <json-c/json.h>

struct apiserver {
	char bin_dir[512];    /* the cluster's binaries */
	char dir[64];         /* the control plane's own directory */
	char kubeconfig[128]; /* admin (system:masters) */
	uint16_t api_port, etcd_port, peer_port;
	char extra[512];      /* more kube-apiserver flags (apiserver_restart) */
};

/* The feature gates behind which a ResourceSlice's taints, counters and
 * shared capacity sit (kube/slices.h), off as Kubernetes 1.34 and 1.35 have
 * them by default; with the gates that depend on them, which 1.37 refuses
 * to run without them. */
#define APISERVER_OLD_DRA_GATES                                                                       \
	"--feature-gates=DRADeviceTaints=false,DRADeviceTaintRules=false,DRAPartitionableDevices=false," \
	"DRAConsumableCapacity=false,DRAFractionalCapacityRange=false"

/* Starts etcd and kube-apiserver; exits 77 when the binaries, openssl, curl
 * or setsid are missing; fails the test when they do not start. */
void apiserver_up(struct apiserver *a);

/* Stops both and removes the directory. Returns 0, or -1 when that failed
 * (for a cmocka teardown). Nothing to do when apiserver_up never ran. */
int apiserver_down(struct apiserver *a);

/* cmocka group setup and teardown around one control plane for the test
 * program, the_apiserver: apiserver_up and apiserver_down. */
extern struct apiserver the_apiserver;
int apiserver_group_setup(void **state);
int apiserver_group_teardown(void **state);

/* Stops kube-apiserver alone (etcd keeps the objects), and starts it again
 * until it is ready; the test fails when it does not come back. */
void apiserver_stop(struct apiserver *a);
void apiserver_start(struct apiserver *a);
/* Stops it and starts it again with extra flags (NULL: none), which stay
 * for every later start. */
void apiserver_restart(struct apiserver *a, const char *extra);

/* Runs cluster.sh's functions in bash with this control plane's settings;
 * the exit status. */
int apiserver_cluster(struct apiserver *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* kubectl ARGS with the admin kubeconfig, stdin_text (may be NULL) on its
 * stdin, its output to the directory's test.log; the exit status. */
int apiserver_kubectl(struct apiserver *a, const char *stdin_text, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The same with its stdout and stderr into out (cut at size - 1 bytes, a
 * string): for a refusal whose words matter. */
int apiserver_kubectl_output(struct apiserver *a, const char *stdin_text, char *out, size_t size, const char *fmt,
			     ...) __attribute__((format(printf, 5, 6)));

/* kubectl ARGS -o json, parsed; fails the test when kubectl fails. */
json_object *apiserver_kubectl_json(struct apiserver *a, const char *args);

/* The audit log's size now: a mark to count requests from. */
long apiserver_audit_mark(struct apiserver *a);

/* How many requests the audit log recorded after the mark from whose user
 * agent starts with agent, of verb ("list", "watch", "create", ...) on
 * resource ("resourceslices"): each once (a watch when it starts). */
unsigned apiserver_audit_count(struct apiserver *a, long from, const char *agent, const char *verb,
			       const char *resource);

/* Waits up to wait_ms for that count to reach n (woken by the log's
 * writes); returns the count then. */
unsigned apiserver_audit_wait(struct apiserver *a, long from, const char *agent, const char *verb,
			      const char *resource, unsigned n, int wait_ms);

/* o's member at a dotted path ("items.0.spec.devices"; numbers index
 * arrays), or NULL; and its string. */
json_object *json_at(json_object *o, const char *path);
const char *json_str_at(json_object *o, const char *path);
