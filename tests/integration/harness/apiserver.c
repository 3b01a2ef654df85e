/* SPDX-License-Identifier: Apache-2.0 */
#include "apiserver.h"

#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/parse.h"
#include "support/skip.h"
#include "support/tmpdir.h"

#define ROOT TEST_SOURCE_DIR "/.."

static uint16_t free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

static int exit_status(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int apiserver_cluster(struct apiserver *a, const char *fmt, ...)
{
	char script[1024], cmd[3072];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(script, sizeof(script), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd),
		 "CLUSTER_HOST_NET=1 CLUSTER_DIR=%s CLUSTER_PORT=%u CLUSTER_APISERVER_EXTRA='--audit-policy-file=%s/"
		 "audit-policy.yaml --audit-log-path=%s/audit.log --audit-log-maxbackup=0 %s' bash -c '. " ROOT
		 "/tests/cluster/cluster.sh && %s' >>%s/test.log 2>&1",
		 a->dir, a->api_port, a->dir, a->dir, a->extra, script, a->dir);
	return exit_status(system(cmd));
}

void apiserver_start(struct apiserver *a)
{
	if (apiserver_cluster(a, "cluster_apiserver_start %s %u %u", a->bin_dir, a->api_port, a->etcd_port) != 0) {
		char cmd[256];
		snprintf(cmd, sizeof(cmd), "tail -n 30 %s/test.log %s/logs/kube-apiserver.log >&2", a->dir, a->dir);
		int shown = system(cmd);
		fail_msg("kube-apiserver did not start (logs %s)", shown == 0 ? "above" : "missing");
	}
}

void apiserver_stop(struct apiserver *a)
{
	assert_int_equal(apiserver_cluster(a, "_cl_stop kube-apiserver"), 0);
}

void apiserver_restart(struct apiserver *a, const char *extra)
{
	apiserver_stop(a);
	snprintf(a->extra, sizeof(a->extra), "%s", extra ? extra : "");
	apiserver_start(a);
}

void apiserver_up(struct apiserver *a)
{
	*a = (struct apiserver){ 0 };
	FILE *f = popen(ROOT "/scripts/cluster-bins.sh --dir 2>/dev/null", "r");
	if (!f || !fgets(a->bin_dir, sizeof(a->bin_dir), f))
		a->bin_dir[0] = '\0';
	if (f)
		pclose(f);
	a->bin_dir[strcspn(a->bin_dir, "\n")] = '\0';
	bool have = a->bin_dir[0];
	const char *bins[] = { "etcd", "kube-apiserver", "kubectl" };
	for (size_t i = 0; have && i < sizeof(bins) / sizeof(bins[0]); i++) {
		char probe[600];
		snprintf(probe, sizeof(probe), "%s/%s", a->bin_dir, bins[i]);
		have = access(probe, X_OK) == 0;
	}
	if (!have || system("command -v openssl curl setsid >/dev/null") != 0) {
		exit(test_skip("the cluster's etcd, kube-apiserver and kubectl are not built (make cluster-bins), or "
			       "openssl, curl or setsid is missing"));
	}
	assert_int_equal(tmpdir_make(a->dir, sizeof(a->dir), "kube-apiserver"), 0);
	snprintf(a->kubeconfig, sizeof(a->kubeconfig), "%s/kubeconfig", a->dir);
	char policy[128];
	snprintf(policy, sizeof(policy), "%s/audit-policy.yaml", a->dir);
	FILE *out = fopen(policy, "we");
	assert_non_null(out);
	fputs("apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n",
	      out);
	assert_int_equal(fclose(out), 0);
	a->api_port = free_port();
	a->etcd_port = free_port();
	a->peer_port = free_port();
	assert_int_equal(apiserver_cluster(a,
					   "mkdir -p \"$CLUSTER_DIR\"/pids \"$CLUSTER_DIR\"/logs && _cl_pki && "
					   "cluster_etcd_start %s %u %u",
					   a->bin_dir, a->etcd_port, a->peer_port),
			 0);
	apiserver_start(a);
}

int apiserver_down(struct apiserver *a)
{
	if (!a->dir[0])
		return 0;
	if (apiserver_cluster(a, "_cl_stop kube-apiserver; _cl_stop etcd") != 0)
		return -1;
	int r = tmpdir_remove(a->dir);
	a->dir[0] = '\0';
	return r == 0 ? 0 : -1;
}

struct apiserver the_apiserver;

int apiserver_group_setup(void **state)
{
	(void)state;
	apiserver_up(&the_apiserver);
	return 0;
}

int apiserver_group_teardown(void **state)
{
	(void)state;
	return apiserver_down(&the_apiserver);
}

int apiserver_kubectl(struct apiserver *a, const char *stdin_text, const char *fmt, ...)
{
	char args[1024], cmd[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "%s/kubectl --kubeconfig %s %s >>%s/test.log 2>&1", a->bin_dir, a->kubeconfig,
		 args, a->dir);
	FILE *f = popen(cmd, "w");
	assert_non_null(f);
	if (stdin_text)
		fputs(stdin_text, f);
	return exit_status(pclose(f));
}

int apiserver_kubectl_output(struct apiserver *a, const char *stdin_text, char *out, size_t size, const char *fmt,
			     ...)
{
	char args[1024], cmd[2048], log[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(log, sizeof(log), "%s/kubectl-output.log", a->dir);
	snprintf(cmd, sizeof(cmd), "%s/kubectl --kubeconfig %s %s >%s 2>&1", a->bin_dir, a->kubeconfig, args, log);
	FILE *f = popen(cmd, "w");
	assert_non_null(f);
	if (stdin_text)
		fputs(stdin_text, f);
	int status = exit_status(pclose(f));
	FILE *in = fopen(log, "re");
	assert_non_null(in);
	size_t n = fread(out, 1, size - 1, in);
	out[n] = '\0';
	fclose(in);
	return status;
}

json_object *apiserver_kubectl_json(struct apiserver *a, const char *args)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "%s/kubectl --kubeconfig %s %s -o json 2>>%s/test.log", a->bin_dir, a->kubeconfig,
		 args, a->dir);
	FILE *f = popen(cmd, "r");
	assert_non_null(f);
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap);
	assert_non_null(buf);
	size_t n;
	while ((n = fread(buf + len, 1, cap - 1 - len, f)) > 0)
		len += n;
	buf[len] = '\0';
	assert_int_equal(pclose(f), 0);
	json_object *o = json_tokener_parse(buf);
	free(buf);
	assert_non_null(o);
	return o;
}

static void audit_path(const struct apiserver *a, char *out, size_t size)
{
	snprintf(out, size, "%s/audit.log", a->dir);
}

long apiserver_audit_mark(struct apiserver *a)
{
	char path[128];
	audit_path(a, path, sizeof(path));
	FILE *f = fopen(path, "re");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long end = ftell(f);
	fclose(f);
	return end;
}

/* Whether one audit event (a line) is a request counted by the filter. */
static bool audit_matches(json_object *e, const char *agent, const char *verb, const char *resource)
{
	const char *stage = json_str_at(e, "stage"), *v = json_str_at(e, "verb"), *ua = json_str_at(e, "userAgent"),
		   *res = json_str_at(e, "objectRef.resource");
	bool watch = v && strcmp(v, "watch") == 0;
	return stage && v && ua && res && strcmp(stage, watch ? "ResponseStarted" : "ResponseComplete") == 0 &&
	       strncmp(ua, agent, strlen(agent)) == 0 && strcmp(v, verb) == 0 && strcmp(res, resource) == 0;
}

unsigned apiserver_audit_count(struct apiserver *a, long from, const char *agent, const char *verb,
			       const char *resource)
{
	char path[128];
	audit_path(a, path, sizeof(path));
	FILE *f = fopen(path, "re");
	assert_non_null(f);
	assert_int_equal(fseek(f, from, SEEK_SET), 0);
	unsigned n = 0;
	char *line = NULL;
	size_t cap = 0;
	for (ssize_t len; (len = getline(&line, &cap, f)) > 0;) {
		if (line[len - 1] != '\n')
			break; /* being written */
		json_object *e = json_tokener_parse(line);
		n += e && audit_matches(e, agent, verb, resource);
		json_object_put(e);
	}
	free(line);
	fclose(f);
	return n;
}

unsigned apiserver_audit_wait(struct apiserver *a, long from, const char *agent, const char *verb,
			      const char *resource, unsigned n, int wait_ms)
{
	char path[128];
	audit_path(a, path, sizeof(path));
	int fd = inotify_init1(IN_CLOEXEC);
	assert_true(fd >= 0);
	assert_true(inotify_add_watch(fd, path, IN_MODIFY) >= 0);
	int64_t deadline = now_ms() + wait_ms;
	unsigned count;
	while ((count = apiserver_audit_count(a, from, agent, verb, resource)) < n) {
		int64_t left = deadline - now_ms();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			break;
		char buf[4096];
		if (read(fd, buf, sizeof(buf)) < 0)
			break;
	}
	close(fd);
	return count;
}

json_object *json_at(json_object *o, const char *path)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save)) {
		if (json_object_is_type(o, json_type_array))
			o = json_object_array_get_idx(o, strtoul(k, NULL, 10));
		else if (!json_object_object_get_ex(o, k, &o))
			return NULL;
	}
	return o;
}

const char *json_str_at(json_object *o, const char *path)
{
	json_object *v = json_at(o, path);
	return v ? json_object_get_string(v) : NULL;
}
