/* SPDX-License-Identifier: Apache-2.0 */
/* kubelet-sim's pod worker; see pods.h. */
#include "pods.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "base/log.h"
#include "base/macro.h"
#include "base/parse.h"
#include "base/strbuf.h"
#include "cri.h"
#include "crilog.h"
#include "devmgr.h"
#include "output.h"
#include "podspec.h"

/* Extended resources a container may ask for at once. */
#define MAX_ALLOCS 8
/* A container's first exit restarts it at once; later exits back off from
 * 1 s, doubling up to 30 s (the kubelet's 10 s to 5 min would make tests
 * slow; the rule is the same, see relist_container). */
#define BACKOFF_START_MS 1000
#define BACKOFF_MAX_MS 30000
/* Sandbox and volume problems are retried on this period. */
#define RETRY_MS 2000
/* `exec` commands get this long. */
#define EXEC_TIMEOUT_S 30
/* The most `logs` prints: the end of the log. */
#define LOGS_MAX_BYTES (256 * 1024)
/* A probe's output kept in its event line. */
#define PROBE_OUTPUT_MAX 512
/* Containers get at most one second to stop when kubelet-sim exits. */
#define EXIT_GRACE_S 1

enum pod_phase { PHASE_PENDING, PHASE_RUNNING, PHASE_SUCCEEDED, PHASE_FAILED };
static const char *const phase_names[] = { "Pending", "Running", "Succeeded", "Failed" };

enum ctr_state { CTR_WAITING, CTR_RUNNING, CTR_EXITED };

struct probe_state {
	const struct podspec_probe *spec;
	int64_t next_ms;
	uint32_t successes, failures; /* consecutive */
	int last;                     /* -1 none yet, 0 failure, 1 success */
};

/* One extended resource allocated to a container. */
struct alloc {
	struct sim_resource *res;
	unsigned long serial; /* the device manager's record, 0 when none */
	char **ids;
	size_t n_ids;
	V1beta1__ContainerAllocateResponse *answer; /* within resp */
	V1beta1__AllocateResponse *resp;
};

struct ctr {
	const struct podspec_container *spec;
	char *id; /* the runtime's container, NULL when there is none */
	uint32_t attempt;
	uint32_t restarts; /* the kubelet's restartCount: the latest container's attempt */
	enum ctr_state state;
	bool done; /* exited and will not be restarted */
	bool ever_ran;
	bool ready;
	int32_t exit_code;
	int64_t next_start_ms;
	int64_t backoff_ms;
	char waiting[1100]; /* the last waiting message printed, to print changes only */
	struct probe_state liveness, readiness;
	struct alloc allocs[MAX_ALLOCS];
	size_t n_allocs;
};

struct pod {
	struct podspec *spec;
	char name[256];
	char key[320]; /* namespace/name */
	char uid[37];
	char log_dir[PATH_MAX];
	char *sandbox_id;
	enum pod_phase phase;
	bool ended; /* sandbox stopped and devices released */
	int64_t next_sandbox_ms;
	char event[PATH_MAX + 256]; /* the last pod event printed */
	struct ctr *ctrs;
	size_t n_ctrs;
};

struct pods {
	struct sim *sim;
	struct cri *cri;
	struct pods_options opts;
	int timer_fd;
	struct pod *pods[PODS_MAX];
	size_t n_pods;
};

/* ---- small helpers ---- */

static void out_pod(struct out_line *line, const char *word, const struct pod *pod)
{
	out_start(line, word);
	out_kv(line, "pod", pod->key);
}

static void print_pod_line(const struct pod *pod, const char *word, const char *k1, const char *v1, const char *k2,
			   const char *v2)
{
	struct out_line line;
	out_pod(&line, word, pod);
	if (k1)
		out_kv(&line, k1, v1);
	if (k2)
		out_kv_quoted(&line, k2, v2);
	out_emit(&line);
}

static void print_event(struct pod *pod, const char *reason, const char *message)
{
	/* Like the kubelet's events, a repeated one is not printed again. */
	if (strcmp(pod->event, message) == 0)
		return;
	str_copy(pod->event, sizeof(pod->event), message);
	print_pod_line(pod, "pod-event", "reason", reason, "message", message);
}

static void print_waiting(struct pod *pod, struct ctr *c, const char *reason, const char *message)
{
	if (strcmp(c->waiting, message) == 0)
		return;
	str_copy(c->waiting, sizeof(c->waiting), message);
	struct out_line line;
	out_pod(&line, "container-waiting", pod);
	out_kv(&line, "container", c->spec->name);
	out_kv(&line, "reason", reason);
	out_kv_quoted(&line, "message", message);
	out_emit(&line);
}

static void set_phase(struct pod *pod, enum pod_phase phase, const char *reason, const char *message)
{
	if (pod->phase == phase && !reason)
		return;
	pod->phase = phase;
	struct out_line line;
	out_pod(&line, "pod-phase", pod);
	out_kv(&line, "phase", phase_names[phase]);
	if (reason) {
		out_kv(&line, "reason", reason);
		out_kv_quoted(&line, "message", message);
	}
	out_emit(&line);
}

/* The names grpc-go gives status codes, as the kubelet quotes them. */
static const char *grpc_code_name(int code)
{
	static const char *const names[] = { "OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded",
					     "NotFound", "AlreadyExists", "PermissionDenied", "ResourceExhausted",
					     "FailedPrecondition", "Aborted", "OutOfRange", "Unimplemented",
					     "Internal", "Unavailable", "DataLoss", "Unauthenticated" };
	return code >= 0 && (size_t)code < ELEMENTSOF(names) ? names[code] : "Unknown";
}

/* "rpc error: code = X desc = Y", the Go text of a gRPC error. */
static void format_rpc_error(char *buf, size_t size, int code, const char *message)
{
	if (code < 0)
		snprintf(buf, size, "%s", message);
	else
		snprintf(buf, size, "rpc error: code = %s desc = %s", grpc_code_name(code), message);
}

static void free_strings(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

/* A host path, under the node root when there is one. */
static int node_path(const struct pods *pods, const char *path, char *buf, size_t size)
{
	const char *root = pods->opts.node_root;
	if (!root || !root[0] || path[0] != '/')
		return str_copy(buf, size, path);
	return str_printf(buf, size, "%s%s", root, path);
}

static const char *image_of(const struct pods *pods, const char *image)
{
	for (size_t i = 0; i < pods->opts.n_aliases; i++)
		if (strcmp(pods->opts.alias_from[i], image) == 0)
			return pods->opts.alias_to[i];
	return image;
}

static int new_uid(char *buf, size_t size)
{
	uint8_t b[16];
	ssize_t n = getrandom(b, sizeof(b), 0);
	if (n < 0)
		return -errno;
	if (n != (ssize_t)sizeof(b))
		return -EIO;
	b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
	b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
	return str_printf(buf, size, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
			  b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

static int mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	int r = str_copy(buf, sizeof(buf), path);
	if (r < 0)
		return r;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static struct pod *find_pod(struct pods *pods, const char *name, size_t *ret_index)
{
	for (size_t i = 0; i < pods->n_pods; i++) {
		struct pod *pod = pods->pods[i];
		if (strcmp(pod->key, name) == 0 || strcmp(pod->name, name) == 0) {
			if (ret_index)
				*ret_index = i;
			return pod;
		}
	}
	return NULL;
}

static struct ctr *find_ctr(struct pod *pod, const char *name)
{
	for (size_t i = 0; i < pod->n_ctrs; i++)
		if (strcmp(pod->ctrs[i].spec->name, name) == 0)
			return &pod->ctrs[i];
	return NULL;
}

/* ---- admission: the device manager's part ---- */

static bool is_extended_resource(const char *name)
{
	return strchr(name, '/') && strncmp(name, "kubernetes.io/", 14) != 0 && !strstr(name, ".kubernetes.io/") &&
	       strncmp(name, "requests.", 9) != 0;
}

static void release_allocs(struct pods *pods, struct ctr *c)
{
	for (size_t i = 0; i < c->n_allocs; i++) {
		struct alloc *a = &c->allocs[i];
		if (a->serial)
			devmgr_release(pods->sim, a->res, a->serial);
		free_strings(a->ids, a->n_ids);
		if (a->resp)
			v1beta1__allocate_response__free_unpacked(a->resp, NULL);
		*a = (struct alloc){ 0 };
	}
	c->n_allocs = 0;
}

/* Allocates what c asks for. On refusal fills reason and message as the
 * kubelet would and returns -EPERM. */
static int admit_container(struct pods *pods, const struct pod *pod, struct ctr *c, char *reason,
			   size_t reason_size, char *message, size_t message_size)
{
	const struct podspec_container *spec = c->spec;
	for (size_t i = 0; i < spec->n_limits; i++) {
		const struct podspec_quantity *q = &spec->limits[i];
		if (!is_extended_resource(q->name))
			continue;
		if (!q->is_integer || q->value < 0) {
			snprintf(reason, reason_size, "UnexpectedAdmissionError");
			snprintf(message, message_size, "Allocate failed due to invalid quantity %s for %s, which is unexpected",
				 q->text, q->name);
			return -EPERM;
		}
		if (q->value == 0)
			continue;
		if (c->n_allocs == MAX_ALLOCS) {
			snprintf(reason, reason_size, "UnexpectedAdmissionError");
			snprintf(message, message_size, "kubelet-sim allocates at most %d extended resources per container",
				 MAX_ALLOCS);
			return -EPERM;
		}

		struct sim_resource *res = NULL;
		pthread_mutex_lock(&pods->sim->lock);
		int r = sim_resource_get(pods->sim, q->name, false, &res);
		pthread_mutex_unlock(&pods->sim->lock);
		if (r < 0) {
			/* No plugin ever registered it: the device manager skips it and
			 * the node's capacity check refuses the pod. */
			snprintf(reason, reason_size, "OutOf%s", q->name);
			snprintf(message, message_size,
				 "Node didn't have enough resource: %s, requested: %lld, used: 0, capacity: 0", q->name,
				 (long long)q->value);
			return -EPERM;
		}

		struct devmgr_pick pick = { 0 };
		struct devmgr_error err;
		size_t available = 0;
		V1beta1__AllocateResponse *resp = NULL;
		struct gc_result raw = { 0 };
		char detail[600];
		r = devmgr_pick(pods->sim, res, (size_t)q->value, &pick, &available, &err);
		if (r == -ENOSPC || r == -ENODEV) {
			snprintf(detail, sizeof(detail), "requested number of devices unavailable for %s. Requested: %lld, Available: %zu",
				 q->name, (long long)q->value, r == -ENODEV ? (size_t)0 : available);
		} else if (r < 0) {
			format_rpc_error(detail, sizeof(detail), err.code, err.message);
		} else {
			r = devmgr_allocate(pick.plugin, 1, pick.ids, pick.n_ids, &resp, &raw, &err);
			if (r < 0)
				format_rpc_error(detail, sizeof(detail), err.code, err.message);
			else if (resp->n_container_responses == 0) {
				r = -EBADMSG;
				snprintf(detail, sizeof(detail), "no containers return in allocation response");
			}
		}
		if (r < 0) {
			snprintf(reason, reason_size, "UnexpectedAdmissionError");
			snprintf(message, message_size, "Allocate failed due to %s, which is unexpected", detail);
			if (resp)
				v1beta1__allocate_response__free_unpacked(resp, NULL);
			gc_result_clear(&raw);
			devmgr_pick_clear(&pick);
			return -EPERM;
		}
		unsigned long serial = devmgr_record(pods->sim, res, pick.ids, pick.n_ids, &raw);
		gc_result_clear(&raw);
		pthread_mutex_lock(&pods->sim->lock);
		sim_resource_set_holder(res, serial, pod->spec->namespace, pod->name, spec->name);
		pthread_mutex_unlock(&pods->sim->lock);
		c->allocs[c->n_allocs++] = (struct alloc){ .res = res,
							    .serial = serial,
							    .ids = pick.ids,
							    .n_ids = pick.n_ids,
							    .resp = resp,
							    .answer = resp->container_responses[0] };
		pick.ids = NULL;
		pick.n_ids = 0;
		devmgr_pick_clear(&pick);
	}
	return 0;
}

static void print_allocs(const struct pod *pod, const struct ctr *c)
{
	for (size_t i = 0; i < c->n_allocs; i++) {
		struct out_line line, list;
		out_pod(&line, "pod-allocated", pod);
		out_kv(&line, "container", c->spec->name);
		out_kv(&line, "resource", c->allocs[i].res->name);
		out_start(&list, NULL);
		for (size_t j = 0; j < c->allocs[i].n_ids; j++)
			out_list_add(&list, c->allocs[i].ids[j]);
		out_kv_list(&line, "ids", &list);
		out_emit(&line);
	}
}

/* ---- volumes ---- */

/* The kubelet's hostPath type check (pkg/volume/hostpath). */
static int check_host_path(const struct pods *pods, const struct podspec_volume *v, char *message, size_t size)
{
	char path[PATH_MAX];
	int r = node_path(pods, v->host_path, path, sizeof(path));
	if (r < 0) {
		snprintf(message, size, "MountVolume.SetUp failed for volume \"%s\" : path %s is too long", v->name,
			 v->host_path);
		return r;
	}
	const char *type = v->host_path_type ? v->host_path_type : "";
	struct stat st;
	bool exists = stat(path, &st) == 0;
	const char *want = NULL;
	bool ok = true;
	if (strcmp(type, "DirectoryOrCreate") == 0 && !exists) {
		r = mkdir_p(path, 0755);
		if (r < 0) {
			snprintf(message, size, "MountVolume.SetUp failed for volume \"%s\" : mkdir %s: %s", v->name,
				 v->host_path, strerror(-r));
			return r;
		}
		return 0;
	}
	if (strcmp(type, "FileOrCreate") == 0 && !exists) {
		int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		if (fd < 0) {
			r = -errno;
			snprintf(message, size, "MountVolume.SetUp failed for volume \"%s\" : open %s: %s", v->name,
				 v->host_path, strerror(-r));
			return r;
		}
		close(fd);
		return 0;
	}
	if (strcmp(type, "Directory") == 0 || strcmp(type, "DirectoryOrCreate") == 0) {
		want = "a directory";
		ok = exists && S_ISDIR(st.st_mode);
	} else if (strcmp(type, "File") == 0 || strcmp(type, "FileOrCreate") == 0) {
		want = "a file";
		ok = exists && S_ISREG(st.st_mode);
	} else if (strcmp(type, "Socket") == 0) {
		want = "a socket file";
		ok = exists && S_ISSOCK(st.st_mode);
	} else if (strcmp(type, "CharDevice") == 0) {
		want = "a character device";
		ok = exists && S_ISCHR(st.st_mode);
	} else if (strcmp(type, "BlockDevice") == 0) {
		want = "a block device";
		ok = exists && S_ISBLK(st.st_mode);
	} else if (type[0] == '\0') {
		/* No check; the runtime creates a missing directory. */
		ok = true;
	} else {
		snprintf(message, size, "MountVolume.SetUp failed for volume \"%s\" : invalid HostPathType %s", v->name,
			 type);
		return -EINVAL;
	}
	if (!ok) {
		snprintf(message, size, "MountVolume.SetUp failed for volume \"%s\" : hostPath type check failed: %s is not %s",
			 v->name, v->host_path, want);
		return -ENOENT;
	}
	return 0;
}

/* ---- the sandbox ---- */

static void sandbox_config(const struct pod *pod, struct cri_kv *labels, struct cri_sandbox_config *cfg)
{
	const struct podspec *spec = pod->spec;
	labels[0] = (struct cri_kv){ "io.kubernetes.pod.name", pod->name };
	labels[1] = (struct cri_kv){ "io.kubernetes.pod.namespace", spec->namespace };
	labels[2] = (struct cri_kv){ "io.kubernetes.pod.uid", pod->uid };
	bool privileged = false;
	for (size_t i = 0; i < pod->n_ctrs; i++)
		privileged = privileged || pod->ctrs[i].spec->privileged;
	*cfg = (struct cri_sandbox_config){
		.name = pod->name,
		.uid = pod->uid,
		.namespace = spec->namespace,
		/* With its own network a pod has its own host name, its name. */
		.hostname = spec->host_network ? NULL : pod->name,
		.log_directory = pod->log_dir,
		.labels = labels,
		.n_labels = 3,
		/* A pod network needs a CNI plugin configured in the runtime. */
		.host_network = spec->host_network,
		.host_pid = spec->host_pid,
		.host_ipc = spec->host_ipc,
		.privileged = privileged,
		.has_run_as_user = spec->has_run_as_user,
		.run_as_user = spec->run_as_user,
		.has_run_as_group = spec->has_run_as_group,
		.run_as_group = spec->run_as_group,
		.supplemental_groups = spec->supplemental_groups,
		.n_supplemental_groups = spec->n_supplemental_groups,
	};
}

/* Volumes checked, log directory made, sandbox running. 0 when it is. */
static int ensure_sandbox(struct pods *pods, struct pod *pod, int64_t now)
{
	if (pod->sandbox_id)
		return 0;
	if (now < pod->next_sandbox_ms)
		return -EAGAIN;
	pod->next_sandbox_ms = now + RETRY_MS;

	char message[PATH_MAX + 256];
	for (size_t i = 0; i < pod->spec->n_volumes; i++) {
		const struct podspec_volume *v = &pod->spec->volumes[i];
		if (!v->host_path)
			continue;
		if (check_host_path(pods, v, message, sizeof(message)) < 0) {
			print_event(pod, "FailedMount", message);
			return -EAGAIN;
		}
	}
	int r = mkdir_p(pod->log_dir, 0755);
	if (r < 0) {
		snprintf(message, sizeof(message), "cannot create the pod log directory %s: %s", pod->log_dir,
			 strerror(-r));
		print_event(pod, "FailedCreatePodSandBox", message);
		return r;
	}

	struct cri_kv labels[3];
	struct cri_sandbox_config cfg;
	struct cri_status status;
	sandbox_config(pod, labels, &cfg);
	r = cri_run_sandbox(pods->cri, &cfg, &pod->sandbox_id, &status);
	if (r < 0) {
		snprintf(message, sizeof(message), "Failed to create pod sandbox: %s", status.message);
		print_event(pod, "FailedCreatePodSandBox", message);
		return r;
	}
	print_pod_line(pod, "pod-sandbox", "id", pod->sandbox_id, NULL, NULL);
	return 0;
}

/* ---- containers ---- */

/* Everything a CreateContainer needs, owned here. */
struct ctr_config {
	struct cri_container_config cfg;
	struct cri_kv *envs;
	size_t n_envs;
	char **env_names;  /* for $(VAR) expansion, in order */
	char **env_values;
	struct cri_mount *mounts;
	char **mount_paths; /* host paths (node-translated) owned here */
	size_t n_mounts;
	struct cri_device *devices;
	char **device_paths;
	size_t n_devices;
	struct cri_kv *annotations;
	size_t n_annotations;
	const char **cdi;
	size_t n_cdi;
	char **command;
	char **args;
	struct cri_kv labels[4];
	char log_path[PATH_MAX];
	char attempt_text[16];
};

static void ctr_config_clear(struct ctr_config *cc)
{
	free_strings(cc->env_names, cc->n_envs);
	free_strings(cc->env_values, cc->n_envs);
	free(cc->envs);
	free_strings(cc->mount_paths, cc->n_mounts);
	free(cc->mounts);
	free_strings(cc->device_paths, cc->n_devices);
	free(cc->devices);
	free(cc->annotations);
	free(cc->cdi);
	free_strings(cc->command, cc->cfg.n_command);
	free_strings(cc->args, cc->cfg.n_args);
	*cc = (struct ctr_config){ 0 };
}

static int add_env(struct ctr_config *cc, const char *name, const char *value)
{
	/* A later definition of the same name wins, as in the kubelet. */
	for (size_t i = 0; i < cc->n_envs; i++) {
		if (strcmp(cc->env_names[i], name) == 0) {
			char *v = strdup(value);
			if (!v)
				return -ENOMEM;
			free(cc->env_values[i]);
			cc->env_values[i] = v;
			return 0;
		}
	}
	cc->env_names[cc->n_envs] = strdup(name);
	cc->env_values[cc->n_envs] = strdup(value);
	cc->n_envs++;
	return cc->env_names[cc->n_envs - 1] && cc->env_values[cc->n_envs - 1] ? 0 : -ENOMEM;
}

/* The value of a fieldRef the kubelet resolves; NULL when unknown. */
static const char *field_value(const struct pod *pod, const char *path, char *buf, size_t size)
{
	if (strcmp(path, "metadata.name") == 0)
		return pod->name;
	if (strcmp(path, "metadata.namespace") == 0)
		return pod->spec->namespace;
	if (strcmp(path, "metadata.uid") == 0)
		return pod->uid;
	if (strcmp(path, "spec.nodeName") == 0) {
		if (gethostname(buf, size) < 0)
			return NULL;
		buf[size - 1] = '\0';
		return buf;
	}
	if (strcmp(path, "spec.serviceAccountName") == 0)
		return "default"; /* the API's default; kubelet-sim has no others */
	/* kubelet-sim does not ask the runtime for the pod's address; with the
	 * node's network, the pod has the node's. */
	if (strcmp(path, "status.hostIP") == 0 || (strcmp(path, "status.podIP") == 0 && pod->spec->host_network))
		return "127.0.0.1";
	return NULL;
}

static int expand(const struct ctr_config *cc, const char *s, char **ret)
{
	return podspec_expand(s, cc->env_names, cc->env_values, cc->n_envs, ret);
}

static int expand_list(const struct ctr_config *cc, char *const *src, size_t n, char ***ret)
{
	char **v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int r = expand(cc, src[i], &v[i]);
		if (r < 0) {
			free_strings(v, i);
			return r;
		}
	}
	*ret = v;
	return 0;
}

/* Builds the container's config. On a problem the kubelet reports as
 * CreateContainerConfigError, fills message and returns -EINVAL. */
static int build_config(struct pods *pods, struct pod *pod, struct ctr *c, struct ctr_config *cc, char *message,
			size_t size)
{
	const struct podspec_container *spec = c->spec;
	const struct podspec *pspec = pod->spec;
	int r = -ENOMEM;

	size_t max_envs = spec->n_env;
	size_t max_mounts = spec->n_mounts;
	size_t max_devices = 0, max_annotations = 0, max_cdi = 0;
	for (size_t i = 0; i < c->n_allocs; i++) {
		const V1beta1__ContainerAllocateResponse *a = c->allocs[i].answer;
		max_envs += a->n_envs;
		max_mounts += a->n_mounts;
		max_devices += a->n_devices;
		max_annotations += a->n_annotations;
		max_cdi += a->n_cdi_devices;
	}
	cc->env_names = calloc(max_envs + 1, sizeof(char *));
	cc->env_values = calloc(max_envs + 1, sizeof(char *));
	cc->mounts = calloc(max_mounts + 1, sizeof(*cc->mounts));
	cc->mount_paths = calloc(max_mounts + 1, sizeof(char *));
	cc->devices = calloc(max_devices + 1, sizeof(*cc->devices));
	cc->device_paths = calloc(max_devices + 1, sizeof(char *));
	cc->annotations = calloc(max_annotations + 1, sizeof(*cc->annotations));
	cc->cdi = calloc(max_cdi + 1, sizeof(char *));
	if (!cc->env_names || !cc->env_values || !cc->mounts || !cc->mount_paths || !cc->devices || !cc->device_paths ||
	    !cc->annotations || !cc->cdi)
		goto fail;

	/* The device plugins' envs first, then the container's own, which may
	 * refer to them and to each other in order. */
	for (size_t i = 0; i < c->n_allocs; i++) {
		const V1beta1__ContainerAllocateResponse *a = c->allocs[i].answer;
		for (size_t j = 0; j < a->n_envs; j++) {
			r = add_env(cc, a->envs[j]->key, a->envs[j]->value);
			if (r < 0)
				goto fail;
		}
	}
	for (size_t i = 0; i < spec->n_env; i++) {
		const struct podspec_env *e = &spec->env[i];
		char buf[256];
		char *value = NULL;
		if (e->field_ref) {
			const char *v = field_value(pod, e->field_ref, buf, sizeof(buf));
			if (!v) {
				snprintf(message, size, "env %s: fieldRef %s is not supported by kubelet-sim", e->name,
					 e->field_ref);
				r = -EINVAL;
				goto fail;
			}
			value = strdup(v);
			r = value ? 0 : -ENOMEM;
		} else {
			r = expand(cc, e->value ? e->value : "", &value);
		}
		if (r < 0)
			goto fail;
		r = add_env(cc, e->name, value);
		free(value);
		if (r < 0)
			goto fail;
	}
	cc->envs = calloc(cc->n_envs + 1, sizeof(*cc->envs));
	if (!cc->envs) {
		r = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < cc->n_envs; i++)
		cc->envs[i] = (struct cri_kv){ cc->env_names[i], cc->env_values[i] };

	r = expand_list(cc, spec->command, spec->n_command, &cc->command);
	if (r < 0)
		goto fail;
	cc->cfg.n_command = spec->n_command;
	r = expand_list(cc, spec->args, spec->n_args, &cc->args);
	if (r < 0)
		goto fail;
	cc->cfg.n_args = spec->n_args;

	char path[PATH_MAX];
	for (size_t i = 0; i < spec->n_mounts; i++) {
		const struct podspec_mount *m = &spec->mounts[i];
		const struct podspec_volume *v = podspec_find_volume(pspec, m->name);
		if (!v || !v->host_path)
			continue; /* reported when the pod was read */
		r = node_path(pods, v->host_path, path, sizeof(path));
		if (r < 0 || !(cc->mount_paths[cc->n_mounts] = strdup(path))) {
			r = r < 0 ? r : -ENOMEM;
			goto fail;
		}
		cc->mounts[cc->n_mounts] = (struct cri_mount){ m->mount_path, cc->mount_paths[cc->n_mounts],
							       m->read_only };
		cc->n_mounts++;
	}
	for (size_t i = 0; i < c->n_allocs; i++) {
		const V1beta1__ContainerAllocateResponse *a = c->allocs[i].answer;
		for (size_t j = 0; j < a->n_mounts; j++) {
			r = node_path(pods, a->mounts[j]->host_path, path, sizeof(path));
			if (r < 0 || !(cc->mount_paths[cc->n_mounts] = strdup(path))) {
				r = r < 0 ? r : -ENOMEM;
				goto fail;
			}
			cc->mounts[cc->n_mounts] = (struct cri_mount){ a->mounts[j]->container_path,
								       cc->mount_paths[cc->n_mounts],
								       a->mounts[j]->read_only };
			cc->n_mounts++;
		}
		for (size_t j = 0; j < a->n_devices; j++) {
			r = node_path(pods, a->devices[j]->host_path, path, sizeof(path));
			if (r < 0 || !(cc->device_paths[cc->n_devices] = strdup(path))) {
				r = r < 0 ? r : -ENOMEM;
				goto fail;
			}
			cc->devices[cc->n_devices] = (struct cri_device){ a->devices[j]->container_path,
									  cc->device_paths[cc->n_devices],
									  a->devices[j]->permissions };
			cc->n_devices++;
		}
		for (size_t j = 0; j < a->n_annotations; j++)
			cc->annotations[cc->n_annotations++] =
				(struct cri_kv){ a->annotations[j]->key, a->annotations[j]->value };
		for (size_t j = 0; j < a->n_cdi_devices; j++)
			cc->cdi[cc->n_cdi++] = a->cdi_devices[j]->name;
	}

	r = str_printf(cc->log_path, sizeof(cc->log_path), "%s/%u.log", spec->name, c->attempt);
	if (r < 0)
		goto fail;
	snprintf(cc->attempt_text, sizeof(cc->attempt_text), "%u", c->attempt);
	cc->labels[0] = (struct cri_kv){ "io.kubernetes.container.name", spec->name };
	cc->labels[1] = (struct cri_kv){ "io.kubernetes.pod.name", pod->name };
	cc->labels[2] = (struct cri_kv){ "io.kubernetes.pod.namespace", pspec->namespace };
	cc->labels[3] = (struct cri_kv){ "io.kubernetes.pod.uid", pod->uid };

	bool has_uid = spec->has_run_as_user || pspec->has_run_as_user;
	int64_t uid = spec->has_run_as_user ? spec->run_as_user : pspec->run_as_user;
	bool non_root = spec->has_run_as_non_root ? spec->run_as_non_root : pspec->run_as_non_root;
	if (non_root && (!has_uid || uid == 0)) {
		/* The kubelet also looks at the image's user; kubelet-sim needs a uid. */
		snprintf(message, size, "container has runAsNonRoot and %s",
			 has_uid ? "runAsUser is 0 (root)" : "no runAsUser: kubelet-sim cannot verify the image's user");
		r = -EINVAL;
		goto fail;
	}

	cc->cfg = (struct cri_container_config){
		.name = spec->name,
		.attempt = c->attempt,
		.image = image_of(pods, spec->image),
		.command = (const char *const *)cc->command,
		.n_command = spec->n_command,
		.args = (const char *const *)cc->args,
		.n_args = spec->n_args,
		.working_dir = spec->working_dir,
		.envs = cc->envs,
		.n_envs = cc->n_envs,
		.mounts = cc->mounts,
		.n_mounts = cc->n_mounts,
		.devices = cc->devices,
		.n_devices = cc->n_devices,
		.labels = cc->labels,
		.n_labels = ELEMENTSOF(cc->labels),
		.annotations = cc->annotations,
		.n_annotations = cc->n_annotations,
		.cdi_devices = cc->cdi,
		.n_cdi_devices = cc->n_cdi,
		.log_path = cc->log_path,
		.privileged = spec->privileged,
		.readonly_rootfs = spec->read_only_root,
		.has_run_as_user = has_uid,
		.run_as_user = uid,
		.has_run_as_group = spec->has_run_as_group || pspec->has_run_as_group,
		.run_as_group = spec->has_run_as_group ? spec->run_as_group : pspec->run_as_group,
		.supplemental_groups = pspec->supplemental_groups,
		.n_supplemental_groups = pspec->n_supplemental_groups,
		.add_capabilities = (const char *const *)spec->cap_add,
		.n_add_capabilities = spec->n_cap_add,
		.drop_capabilities = (const char *const *)spec->cap_drop,
		.n_drop_capabilities = spec->n_cap_drop,
		.host_network = pspec->host_network,
		.host_pid = pspec->host_pid,
		.host_ipc = pspec->host_ipc,
	};
	return 0;

fail:
	if (r == -ENOMEM)
		snprintf(message, size, "out of memory");
	else if (r != -EINVAL)
		snprintf(message, size, "%s", strerror(-r));
	return r;
}

static void schedule_probes(struct ctr *c, int64_t now)
{
	c->liveness = (struct probe_state){ .spec = &c->spec->liveness, .last = -1 };
	c->readiness = (struct probe_state){ .spec = &c->spec->readiness, .last = -1 };
	c->liveness.next_ms = now + (int64_t)c->spec->liveness.initial_delay_s * 1000;
	c->readiness.next_ms = now + (int64_t)c->spec->readiness.initial_delay_s * 1000;
	/* Without a readiness probe a running container is ready. */
	c->ready = !c->spec->readiness.set;
}

/* The grace period CRI takes: the API allows more than a runtime does. */
static int64_t grace_of(int64_t grace_s)
{
	return grace_s < 0 ? 0 : grace_s > CRI_MAX_TIMEOUT_S ? CRI_MAX_TIMEOUT_S : grace_s;
}

/* Stops (within grace_s) and removes the container. Returns 0, or -EIO
 * with status filled when the runtime may still run it: then it is kept,
 * and so are its devices. */
static int remove_container(struct pods *pods, struct ctr *c, int64_t grace_s, struct cri_status *status)
{
	if (!c->id)
		return 0;
	/* RemoveContainer kills what still runs; a stop that failed is
	 * therefore not fatal by itself. */
	if (c->state == CTR_RUNNING && cri_stop_container(pods->cri, c->id, grace_of(grace_s), status) < 0)
		log_warn("cannot stop container %s: %s", c->id, status->message);
	int r = cri_remove_container(pods->cri, c->id, status);
	if (r < 0)
		return r;
	free(c->id);
	c->id = NULL;
	return 0;
}

static void start_failed(struct pod *pod, struct ctr *c, int64_t now, const char *reason, const char *message)
{
	print_waiting(pod, c, reason, message);
	c->backoff_ms = c->backoff_ms ? c->backoff_ms * 2 : BACKOFF_START_MS;
	if (c->backoff_ms > BACKOFF_MAX_MS)
		c->backoff_ms = BACKOFF_MAX_MS;
	c->next_start_ms = now + c->backoff_ms;
}

static void start_container(struct pods *pods, struct pod *pod, struct ctr *c, int64_t now)
{
	struct ctr_config cc = { 0 };
	struct cri_status status;
	char message[1024];
	struct cri_kv sandbox_labels[3];
	struct cri_sandbox_config sandbox;
	const char *image = image_of(pods, c->spec->image);
	bool present = false;

	int r = cri_image_present(pods->cri, image, &present, &status);
	if (r < 0) {
		snprintf(message, sizeof(message), "image status of %s: %s", image, status.message);
		start_failed(pod, c, now, "ErrImagePull", message);
		return;
	}
	if (!present) {
		snprintf(message, sizeof(message),
			 "image \"%s\" is not in the container runtime and kubelet-sim cannot pull images: import it first",
			 image);
		start_failed(pod, c, now, "ErrImageNeverPull", message);
		return;
	}
	r = build_config(pods, pod, c, &cc, message, sizeof(message));
	if (r < 0) {
		start_failed(pod, c, now, "CreateContainerConfigError", message);
		goto out;
	}
	char dir[PATH_MAX];
	if (path_join(dir, sizeof(dir), pod->log_dir, c->spec->name) == 0)
		mkdir_p(dir, 0755);
	sandbox_config(pod, sandbox_labels, &sandbox);
	r = cri_create_container(pods->cri, pod->sandbox_id, &cc.cfg, &sandbox, &c->id, &status);
	if (r < 0) {
		start_failed(pod, c, now, "CreateContainerError", status.message);
		goto out;
	}
	r = cri_start_container(pods->cri, c->id, &status);
	if (r < 0) {
		snprintf(message, sizeof(message), "%s", status.message);
		struct cri_status ignored;
		if (remove_container(pods, c, 0, &ignored) < 0)
			log_warn("cannot remove container %s: %s", c->id, ignored.message);
		start_failed(pod, c, now, "RunContainerError", message);
		goto out;
	}
	c->state = CTR_RUNNING;
	c->ever_ran = true;
	/* The kubelet counts restarts by the attempt of the latest container
	 * created, so a back-off does not count until it ends. */
	c->restarts = c->attempt;
	c->waiting[0] = '\0';
	/* Events are printed once while a problem repeats (a retried mount);
	 * a new container is a new occurrence (its liveness kill, say). */
	pod->event[0] = '\0';
	schedule_probes(c, now);

	struct out_line line;
	out_pod(&line, "container-started", pod);
	out_kv(&line, "container", c->spec->name);
	out_kv(&line, "id", c->id);
	out_kv_u64(&line, "attempt", c->attempt);
	out_emit(&line);

out:
	ctr_config_clear(&cc);
}

/* ---- probes ---- */

/* Runs one probe now. Returns 1 when it succeeded, 0 when it failed (a
 * non-zero exit or the probe's timeout), with its output (or the timeout's
 * message) in output and its exit code (-1 for a timeout) in *ret_exit; or
 * -EIO when the runtime could not run it, a result the kubelet throws away
 * (then only output is written). */
static int run_probe(struct pods *pods, struct ctr *c, const struct podspec_probe *probe, char *output, size_t size,
		     int32_t *ret_exit)
{
	struct cri_exec_result res = { 0 };
	struct cri_status status;
	int r = cri_exec_sync(pods->cri, c->id, (const char *const *)probe->exec, probe->n_exec, probe->timeout_s,
			      &res, &status);
	if (r < 0) {
		snprintf(output, size, "%s", status.message);
		if (status.code != GRPC_STATUS_DEADLINE_EXCEEDED)
			return -EIO;
		*ret_exit = -1;
		return 0;
	}
	struct strbuf sb;
	strbuf_init(&sb, output, size, "...");
	strbuf_printf(&sb, "%.*s%.*s", (int)(res.out_len > size ? size : res.out_len), res.out ? (char *)res.out : "",
		      (int)(res.err_len > size ? size : res.err_len), res.err ? (char *)res.err : "");
	*ret_exit = res.exit_code;
	int ok = res.exit_code == 0 ? 1 : 0;
	cri_exec_result_clear(&res);
	return ok;
}

static void print_probe(const struct pod *pod, const struct ctr *c, const char *kind, int ok, int32_t exit_code,
			const char *output)
{
	struct out_line line;
	out_pod(&line, "probe", pod);
	out_kv(&line, "container", c->spec->name);
	out_kv(&line, "probe", kind);
	out_kv(&line, "result", ok < 0 ? "error" : ok ? "success" : "failure");
	char code[16];
	snprintf(code, sizeof(code), "%d", (int)exit_code);
	out_kv(&line, "exit_code", exit_code < 0 ? "-" : code);
	out_kv_quoted(&line, "output", output);
	out_emit(&line);
}

static void print_ready(const struct pod *pod, const struct ctr *c)
{
	struct out_line line;
	out_pod(&line, "container-ready", pod);
	out_kv(&line, "container", c->spec->name);
	out_kv_bool(&line, "ready", c->ready);
	out_emit(&line);
}

/* Runs a due probe and acts on the thresholds, like the kubelet's prober. */
static void probe_tick(struct pods *pods, struct pod *pod, struct ctr *c, struct probe_state *ps, bool liveness,
		       int64_t now, bool force)
{
	if (!ps->spec->set || c->state != CTR_RUNNING || (!force && now < ps->next_ms))
		return;
	char output[PROBE_OUTPUT_MAX];
	int32_t exit_code = -1;
	int ok = run_probe(pods, c, ps->spec, output, sizeof(output), &exit_code);
	ps->next_ms = now_ms() + (int64_t)ps->spec->period_s * 1000;
	if (ok < 0) {
		if (force)
			print_probe(pod, c, liveness ? "liveness" : "readiness", ok, -1, output);
		else
			log_warn("%s probe of %s in %s could not run: %s", liveness ? "liveness" : "readiness",
				 c->spec->name, pod->key, output);
		return;
	}
	if (ok) {
		ps->successes++;
		ps->failures = 0;
	} else {
		ps->failures++;
		ps->successes = 0;
	}
	/* Results are printed when they change (and always when asked for). */
	if (force || ps->last != ok)
		print_probe(pod, c, liveness ? "liveness" : "readiness", ok, exit_code, output);
	ps->last = ok;

	if (!liveness) {
		bool ready = c->ready;
		if (ok && ps->successes >= ps->spec->success_threshold)
			ready = true;
		else if (!ok && ps->failures >= ps->spec->failure_threshold)
			ready = false;
		if (ready != c->ready) {
			c->ready = ready;
			print_ready(pod, c);
		}
		return;
	}
	if (!ok && ps->failures >= ps->spec->failure_threshold) {
		/* The kubelet kills the container; the restart policy decides the
		 * rest. Its events: Unhealthy with the probe's output, Killing. */
		char message[PROBE_OUTPUT_MAX + 64];
		snprintf(message, sizeof(message), "Liveness probe failed: %s", output);
		print_event(pod, "Unhealthy", message);
		snprintf(message, sizeof(message), "Container %s failed liveness probe%s", c->spec->name,
			 strcmp(pod->spec->restart_policy, "Never") != 0 ? ", will be restarted" : "");
		print_event(pod, "Killing", message);
		struct cri_status status;
		if (cri_stop_container(pods->cri, c->id, grace_of(pod->spec->termination_grace_s), &status) < 0)
			log_warn("cannot stop container %s: %s", c->id, status.message);
		ps->failures = 0;
	}
}

/* ---- the relist ---- */

static bool should_restart(const struct pod *pod, int32_t exit_code)
{
	const char *policy = pod->spec->restart_policy;
	if (strcmp(policy, "Always") == 0)
		return true;
	if (strcmp(policy, "OnFailure") == 0)
		return exit_code != 0;
	return false;
}

static void relist_container(struct pods *pods, struct pod *pod, struct ctr *c, int64_t now)
{
	if (c->state != CTR_RUNNING || !c->id)
		return;
	struct cri_container_status st;
	struct cri_status status;
	if (cri_container_status(pods->cri, c->id, &st, &status) < 0) {
		if (status.code != GRPC_STATUS_NOT_FOUND) {
			log_warn("status of container %s: %s", c->id, status.message);
			return;
		}
		/* Removed behind kubelet-sim's back: the kubelet reports such a
		 * container as terminated, exit code 137. */
		st = (struct cri_container_status){ .state = CRI_CONTAINER_EXITED, .exit_code = 137 };
		str_copy(st.reason, sizeof(st.reason), "ContainerStatusUnknown");
		str_copy(st.message, sizeof(st.message), "The container could not be located");
		free(c->id);
		c->id = NULL;
	}
	if (st.state != CRI_CONTAINER_EXITED)
		return;
	c->state = CTR_EXITED;
	c->exit_code = st.exit_code;
	if (c->ready && c->spec->readiness.set) {
		c->ready = false;
		print_ready(pod, c);
	}
	struct out_line line;
	out_pod(&line, "container-exited", pod);
	out_kv(&line, "container", c->spec->name);
	char code[16];
	snprintf(code, sizeof(code), "%d", (int)st.exit_code);
	out_kv(&line, "exit_code", code);
	out_kv(&line, "reason", st.reason[0] ? st.reason : st.exit_code == 0 ? "Completed" : "Error");
	if (st.message[0])
		out_kv_quoted(&line, "message", st.message);
	out_emit(&line);

	if (!should_restart(pod, st.exit_code)) {
		c->done = true;
		return;
	}
	/* The next attempt. As in the kubelet (kuberuntime's doBackOff), the
	 * first exit has no back-off yet and restarts at once; each later one
	 * waits a back-off that doubles (CrashLoopBackOff), carrying on from
	 * where start failures left it, as the kubelet keys one back-off per
	 * container. The exited container goes; so does the log of the one
	 * before it (the kubelet keeps one dead container's log). */
	struct cri_status rm;
	if (remove_container(pods, c, 0, &rm) < 0)
		log_warn("cannot remove exited container %s: %s", c->id, rm.message);
	if (c->attempt >= 1) {
		char old[PATH_MAX];
		if (str_printf(old, sizeof(old), "%s/%s/%u.log", pod->log_dir, c->spec->name, c->attempt - 1) == 0)
			unlink(old);
	}
	c->attempt++;
	c->state = CTR_WAITING;
	if (c->attempt == 1) {
		c->backoff_ms = 0;
		c->next_start_ms = now;
		return;
	}
	c->backoff_ms = c->backoff_ms ? c->backoff_ms * 2 : BACKOFF_START_MS;
	if (c->backoff_ms > BACKOFF_MAX_MS)
		c->backoff_ms = BACKOFF_MAX_MS;
	c->next_start_ms = now + c->backoff_ms;
	char message[640];
	snprintf(message, sizeof(message), "back-off %llds restarting failed container=%s pod=%s",
		 (long long)(c->backoff_ms / 1000), c->spec->name, pod->name);
	print_waiting(pod, c, "CrashLoopBackOff", message);
}

/* The kubelet's getPhase, for the containers kubelet-sim runs. */
static enum pod_phase compute_phase(const struct pod *pod)
{
	size_t pending = 0, running = 0, stopped = 0, failed = 0;
	for (size_t i = 0; i < pod->n_ctrs; i++) {
		const struct ctr *c = &pod->ctrs[i];
		if (c->state == CTR_RUNNING)
			running++;
		else if (c->done || c->ever_ran) {
			stopped++;
			if (c->done && c->exit_code != 0)
				failed++;
		} else
			pending++;
	}
	if (pending > 0)
		return PHASE_PENDING;
	if (running > 0)
		return PHASE_RUNNING;
	bool all_done = stopped == pod->n_ctrs;
	for (size_t i = 0; i < pod->n_ctrs; i++)
		all_done = all_done && pod->ctrs[i].done;
	if (!all_done)
		return PHASE_RUNNING; /* waiting for a restart */
	return failed > 0 ? PHASE_FAILED : PHASE_SUCCEEDED;
}

static void release_pod_devices(struct pods *pods, struct pod *pod)
{
	for (size_t i = 0; i < pod->n_ctrs; i++)
		release_allocs(pods, &pod->ctrs[i]);
}

/* A pod that ended keeps its containers (for logs) but not its sandbox or devices. */
static void end_pod(struct pods *pods, struct pod *pod)
{
	if (pod->ended)
		return;
	pod->ended = true;
	release_pod_devices(pods, pod);
	if (pod->sandbox_id) {
		struct cri_status status;
		if (cri_stop_sandbox(pods->cri, pod->sandbox_id, &status) < 0)
			log_warn("cannot stop sandbox %s: %s", pod->sandbox_id, status.message);
	}
}

static void sync_pod(struct pods *pods, struct pod *pod, int64_t now)
{
	if (pod->ended)
		return;
	for (size_t i = 0; i < pod->n_ctrs; i++)
		relist_container(pods, pod, &pod->ctrs[i], now);
	if (ensure_sandbox(pods, pod, now) == 0) {
		for (size_t i = 0; i < pod->n_ctrs; i++) {
			struct ctr *c = &pod->ctrs[i];
			if (c->state != CTR_RUNNING && !c->done && now >= c->next_start_ms)
				start_container(pods, pod, c, now);
		}
	}
	for (size_t i = 0; i < pod->n_ctrs; i++) {
		struct ctr *c = &pod->ctrs[i];
		probe_tick(pods, pod, c, &c->readiness, false, now, false);
		probe_tick(pods, pod, c, &c->liveness, true, now, false);
	}
	enum pod_phase phase = compute_phase(pod);
	if (phase != pod->phase)
		set_phase(pod, phase, NULL, NULL);
	if (phase == PHASE_SUCCEEDED || phase == PHASE_FAILED)
		end_pod(pods, pod);
}

void pods_tick(struct pods *pods)
{
	uint64_t expirations;
	if (read(pods->timer_fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		log_warn("relist timer: %s", strerror(errno));
	int64_t now = now_ms();
	for (size_t i = 0; i < pods->n_pods; i++)
		sync_pod(pods, pods->pods[i], now);
}

/* ---- life cycle of the table ---- */

static void pod_free(struct pod *pod)
{
	if (!pod)
		return;
	for (size_t i = 0; i < pod->n_ctrs; i++) {
		free(pod->ctrs[i].id);
		for (size_t j = 0; j < pod->ctrs[i].n_allocs; j++) {
			free_strings(pod->ctrs[i].allocs[j].ids, pod->ctrs[i].allocs[j].n_ids);
			if (pod->ctrs[i].allocs[j].resp)
				v1beta1__allocate_response__free_unpacked(pod->ctrs[i].allocs[j].resp, NULL);
		}
	}
	free(pod->ctrs);
	free(pod->sandbox_id);
	podspec_free(pod->spec);
	free(pod);
}

/* Stops and removes the pod's containers and sandbox, then releases its
 * devices. Returns 0, or -EIO with status filled when the runtime failed
 * to remove something: the devices are then kept, as a container may still
 * use them, and the pod can be deleted again. */
static int teardown_pod(struct pods *pods, struct pod *pod, int64_t grace_s, struct cri_status *status)
{
	int r = 0;
	for (size_t i = 0; i < pod->n_ctrs; i++) {
		int q = remove_container(pods, &pod->ctrs[i], grace_s, status);
		r = r < 0 ? r : q;
	}
	if (r < 0)
		return r;
	if (pod->sandbox_id) {
		if (cri_stop_sandbox(pods->cri, pod->sandbox_id, status) < 0)
			log_warn("cannot stop sandbox %s: %s", pod->sandbox_id, status->message);
		r = cri_remove_sandbox(pods->cri, pod->sandbox_id, status);
		if (r < 0)
			return r;
		free(pod->sandbox_id);
		pod->sandbox_id = NULL;
	}
	release_pod_devices(pods, pod);
	return 0;
}

int pods_new(struct sim *sim, const struct pods_options *options, struct pods **ret_pods)
{
	struct pods *pods = calloc(1, sizeof(*pods));
	if (!pods)
		return -ENOMEM;
	pods->sim = sim;
	pods->opts = *options;
	pods->timer_fd = -1;
	int r = cri_open(options->runtime_endpoint, &pods->cri);
	if (r < 0)
		goto fail;
	pods->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (pods->timer_fd < 0) {
		r = -errno;
		goto fail;
	}
	int64_t ms = options->relist_ms;
	struct itimerspec its = {
		.it_interval = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 },
		.it_value = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 },
	};
	if (timerfd_settime(pods->timer_fd, 0, &its, NULL) < 0) {
		r = -errno;
		goto fail;
	}
	*ret_pods = pods;
	return 0;

fail:
	pods_free(pods);
	return r;
}

void pods_free(struct pods *pods)
{
	if (!pods)
		return;
	for (size_t i = 0; i < pods->n_pods; i++) {
		struct pod *pod = pods->pods[i];
		int64_t grace = pod->spec->termination_grace_s < EXIT_GRACE_S ? pod->spec->termination_grace_s
									      : EXIT_GRACE_S;
		struct cri_status status;
		/* At exit a pod the runtime will not remove is reported and
		 * forgotten: nothing is left to retry it. */
		if (teardown_pod(pods, pod, grace, &status) < 0)
			print_pod_line(pod, "delete error", NULL, NULL, "message", status.message);
		else
			print_pod_line(pod, "pod-deleted", NULL, NULL, NULL, NULL);
		pod_free(pod);
	}
	pods->n_pods = 0;
	if (pods->timer_fd >= 0)
		close(pods->timer_fd);
	cri_close(pods->cri);
	free(pods);
}

int pods_timer_fd(const struct pods *pods)
{
	return pods->timer_fd;
}

/* ---- commands ---- */

static void run_error(const char *message)
{
	struct out_line line;
	out_start(&line, "run error");
	out_kv_quoted(&line, "message", message);
	out_emit(&line);
}

static void print_notes(struct pods *pods, const struct pod *pod)
{
	const struct podspec *spec = pod->spec;
	for (size_t i = 0; i < spec->n_ignored; i++)
		print_pod_line(pod, "pod-ignored", "field", spec->ignored[i], NULL, NULL);
	if (spec->n_ignored_more > 0) {
		char more[64];
		snprintf(more, sizeof(more), "%zu more", spec->n_ignored_more);
		print_pod_line(pod, "pod-ignored", "field", more, NULL, NULL);
	}
	for (size_t i = 0; i < spec->n_volumes; i++) {
		if (!spec->volumes[i].empty_dir)
			continue;
		char note[320];
		snprintf(note, sizeof(note), "volume %s (emptyDir) is not mounted: kubelet-sim mounts hostPath volumes only",
			 spec->volumes[i].name);
		print_pod_line(pod, "pod-note", NULL, NULL, "note", note);
	}
	for (size_t i = 0; i < spec->n_containers; i++) {
		const char *image = spec->containers[i].image;
		const char *alias = image_of(pods, image);
		if (alias != image) {
			char note[512];
			snprintf(note, sizeof(note), "container %s: image %s runs as %s (--image-alias)",
				 spec->containers[i].name, image, alias);
			print_pod_line(pod, "pod-note", NULL, NULL, "note", note);
		}
	}
}

void pods_run(struct pods *pods, const char *path)
{
	char err[512];
	struct podspec *spec = NULL;
	struct pod *pod = NULL;
	int r = podspec_load(path, &spec, err, sizeof(err));
	if (r < 0) {
		run_error(err); /* it names the file */
		return;
	}
	if (pods->n_pods == PODS_MAX) {
		run_error("too many pods: delete some first");
		goto fail;
	}
	if (spec->n_init_containers > 0) {
		run_error("init containers are not supported by kubelet-sim");
		goto fail;
	}
	pod = calloc(1, sizeof(*pod));
	if (!pod || !(pod->ctrs = calloc(spec->n_containers, sizeof(*pod->ctrs)))) {
		run_error("out of memory");
		goto fail;
	}
	pod->spec = spec;
	spec = NULL;
	r = new_uid(pod->uid, sizeof(pod->uid));
	if (r < 0) {
		run_error("cannot make a pod UID");
		goto fail;
	}
	/* A workload's pod gets a generated suffix, as its controller would. */
	if (strcmp(pod->spec->kind, "Pod") == 0)
		r = str_copy(pod->name, sizeof(pod->name), pod->spec->name);
	else
		r = str_printf(pod->name, sizeof(pod->name), "%s-%.5s", pod->spec->name, pod->uid);
	if (r == 0)
		r = str_printf(pod->key, sizeof(pod->key), "%s/%s", pod->spec->namespace, pod->name);
	if (r == 0)
		r = str_printf(pod->log_dir, sizeof(pod->log_dir), "%s/%s_%s_%s", pods->opts.log_dir,
			       pod->spec->namespace, pod->name, pod->uid);
	if (r < 0) {
		run_error("the pod's name or log directory is too long");
		goto fail;
	}
	if (find_pod(pods, pod->key, NULL)) {
		char message[400];
		snprintf(message, sizeof(message), "pod %s already exists", pod->key);
		run_error(message);
		goto fail;
	}
	pod->n_ctrs = pod->spec->n_containers;
	for (size_t i = 0; i < pod->n_ctrs; i++) {
		struct ctr *c = &pod->ctrs[i];
		c->spec = &pod->spec->containers[i];
		c->liveness = (struct probe_state){ .spec = &c->spec->liveness, .last = -1 };
		c->readiness = (struct probe_state){ .spec = &c->spec->readiness, .last = -1 };
	}

	struct out_line line;
	out_pod(&line, "pod-created", pod);
	out_kv(&line, "uid", pod->uid);
	out_kv(&line, "kind", pod->spec->kind);
	out_emit(&line);
	print_notes(pods, pod);

	/* Admission: the device manager allocates for each container in turn;
	 * a refusal undoes what was allocated and fails the pod. */
	char reason[SIM_RESOURCE_NAME_MAX + 16], message[1024];
	for (size_t i = 0; i < pod->n_ctrs; i++) {
		if (admit_container(pods, pod, &pod->ctrs[i], reason, sizeof(reason), message, sizeof(message)) < 0) {
			release_pod_devices(pods, pod);
			char full[1100];
			snprintf(full, sizeof(full), "Pod was rejected: %s", message);
			set_phase(pod, PHASE_FAILED, reason, full);
			pod->ended = true;
			pods->pods[pods->n_pods++] = pod;
			return;
		}
	}
	for (size_t i = 0; i < pod->n_ctrs; i++)
		print_allocs(pod, &pod->ctrs[i]);
	/* Pending is the phase a pod starts in: printed once here, as set_phase
	 * prints only changes. */
	pod->phase = PHASE_PENDING;
	print_pod_line(pod, "pod-phase", "phase", phase_names[PHASE_PENDING], NULL, NULL);
	pods->pods[pods->n_pods++] = pod;
	sync_pod(pods, pod, now_ms());
	return;

fail:
	podspec_free(spec);
	pod_free(pod);
}

void pods_delete(struct pods *pods, const char *name, int64_t grace_s)
{
	size_t index;
	struct pod *pod = find_pod(pods, name, &index);
	if (!pod) {
		out_error("no pod %s", name);
		return;
	}
	struct cri_status status;
	if (teardown_pod(pods, pod, grace_s >= 0 ? grace_s : pod->spec->termination_grace_s, &status) < 0) {
		print_pod_line(pod, "delete error", NULL, NULL, "message", status.message);
		return;
	}
	print_pod_line(pod, "pod-deleted", NULL, NULL, NULL, NULL);
	pod_free(pod);
	memmove(&pods->pods[index], &pods->pods[index + 1], (pods->n_pods - index - 1) * sizeof(pods->pods[0]));
	pods->n_pods--;
}

void pods_list(struct pods *pods)
{
	struct out_line line;
	out_block_begin();
	for (size_t i = 0; i < pods->n_pods; i++) {
		const struct pod *pod = pods->pods[i];
		size_t ready = 0, restarts = 0;
		for (size_t j = 0; j < pod->n_ctrs; j++) {
			ready += pod->ctrs[j].ready && pod->ctrs[j].state == CTR_RUNNING;
			restarts += pod->ctrs[j].restarts;
		}
		char text[32];
		out_start(&line, "pod");
		out_kv(&line, "name", pod->key);
		out_kv(&line, "phase", phase_names[pod->phase]);
		snprintf(text, sizeof(text), "%zu/%zu", ready, pod->n_ctrs);
		out_kv(&line, "ready", text);
		out_kv_u64(&line, "restarts", restarts);
		out_emit(&line);
	}
	out_start(&line, "pods end");
	out_emit(&line);
	out_block_end();
}

struct log_print {
	const struct pod *pod;
	const char *container;
	size_t count;
};

static void print_log_line(void *ctx, const struct crilog_line *l)
{
	struct log_print *lp = ctx;
	char *text = strndup(l->text, l->len);
	struct out_line line;
	out_pod(&line, "log", lp->pod);
	out_kv(&line, "container", lp->container);
	out_kv(&line, "stream", l->stream);
	out_kv_quoted(&line, "text", text ? text : "(out of memory)");
	if (l->cut)
		out_kv_bool(&line, "cut", true);
	out_emit(&line);
	free(text);
	lp->count++;
}

/* Prints the lines of a container's log file (its last LOGS_MAX_BYTES).
 * Returns how many. */
static size_t print_log_file(const struct pod *pod, const char *container, const char *path)
{
	struct log_print lp = { .pod = pod, .container = container };
	char *buf = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	struct stat st;
	if (fstat(fd, &st) < 0 || !(buf = malloc(LOGS_MAX_BYTES)))
		goto out;
	off_t start = st.st_size > LOGS_MAX_BYTES ? st.st_size - LOGS_MAX_BYTES : 0;
	ssize_t n = pread(fd, buf, LOGS_MAX_BYTES, start);
	if (n <= 0)
		goto out;
	const char *data = buf;
	size_t len = (size_t)n;
	if (start > 0) {
		/* The tail starts inside a record: begin at the next one. */
		const char *nl = memchr(data, '\n', len);
		len = nl ? len - (size_t)(nl + 1 - data) : 0;
		data = nl ? nl + 1 : data;
	}
	size_t skipped;
	if (crilog_read(data, len, print_log_line, &lp, &skipped) == 0 && skipped > 0)
		log_warn("%s: %zu lines that are not CRI log records skipped", path, skipped);
out:
	free(buf);
	close(fd);
	return lp.count;
}

void pods_logs(struct pods *pods, const char *name, const char *container)
{
	struct pod *pod = find_pod(pods, name, NULL);
	struct ctr *c = pod ? find_ctr(pod, container) : NULL;
	if (!c) {
		out_error("no container %s in pod %s", container, name);
		return;
	}
	/* Like kubectl logs, the latest container's: between an exit and the
	 * next attempt (a back-off, a failed start) that is the one before. */
	uint32_t attempt = c->attempt;
	if (!c->id && attempt > 0)
		attempt--;
	char path[PATH_MAX];
	size_t count = 0;
	out_block_begin();
	if (str_printf(path, sizeof(path), "%s/%s/%u.log", pod->log_dir, container, attempt) == 0)
		count = print_log_file(pod, container, path);
	struct out_line line;
	out_pod(&line, "logs end", pod);
	out_kv(&line, "container", container);
	out_kv_u64(&line, "lines", count);
	out_emit(&line);
	out_block_end();
}

static struct ctr *running_ctr(struct pods *pods, const char *name, const char *container, struct pod **ret_pod)
{
	struct pod *pod = find_pod(pods, name, NULL);
	struct ctr *c = pod ? find_ctr(pod, container) : NULL;
	if (!c) {
		if (pod)
			out_error("no container %s in pod %s", container, name);
		else
			out_error("no pod %s", name);
		return NULL;
	}
	if (c->state != CTR_RUNNING || !c->id) {
		out_error("container %s in pod %s is not running", container, name);
		return NULL;
	}
	*ret_pod = pod;
	return c;
}

void pods_exec(struct pods *pods, const char *name, const char *container, const char *command_line)
{
	struct pod *pod;
	struct ctr *c = running_ctr(pods, name, container, &pod);
	if (!c)
		return;
	const char *cmd[] = { "/bin/sh", "-c", command_line };
	struct cri_exec_result res = { 0 };
	struct cri_status status;
	struct out_line line;
	if (cri_exec_sync(pods->cri, c->id, cmd, ELEMENTSOF(cmd), EXEC_TIMEOUT_S, &res, &status) < 0) {
		out_pod(&line, "exec error", pod);
		out_kv(&line, "container", container);
		out_kv_quoted(&line, "message", status.message);
		out_emit(&line);
		return;
	}
	char *out = strndup(res.out ? (char *)res.out : "", res.out_len);
	char *err = strndup(res.err ? (char *)res.err : "", res.err_len);
	out_pod(&line, "exec done", pod);
	out_kv(&line, "container", container);
	char code[16];
	snprintf(code, sizeof(code), "%d", (int)res.exit_code);
	out_kv(&line, "exit_code", code);
	out_kv_quoted(&line, "stdout", out ? out : "");
	out_kv_quoted(&line, "stderr", err ? err : "");
	out_emit(&line);
	free(out);
	free(err);
	cri_exec_result_clear(&res);
}

void pods_probe(struct pods *pods, const char *name, const char *container, const char *kind)
{
	struct pod *pod;
	struct ctr *c = running_ctr(pods, name, container, &pod);
	if (!c)
		return;
	bool liveness = strcmp(kind, "liveness") == 0;
	if (!liveness && strcmp(kind, "readiness") != 0) {
		out_error("usage: probe POD CONTAINER liveness|readiness");
		return;
	}
	struct probe_state *ps = liveness ? &c->liveness : &c->readiness;
	if (!ps->spec->set) {
		out_error("container %s in pod %s has no exec %s probe", container, name, kind);
		return;
	}
	probe_tick(pods, pod, c, ps, liveness, now_ms(), true);
}

void pods_runtime_version(struct pods *pods)
{
	struct cri_version v;
	struct cri_status status;
	struct out_line line;
	if (pods_check_runtime(pods, &v, &status) < 0) {
		out_start(&line, "runtime error");
		out_kv_quoted(&line, "message", status.message);
		out_emit(&line);
		return;
	}
	out_start(&line, "runtime");
	out_kv(&line, "name", v.runtime_name);
	out_kv(&line, "version", v.runtime_version);
	out_kv(&line, "api", v.runtime_api_version);
	out_emit(&line);
}

int pods_check_runtime(struct pods *pods, struct cri_version *ret_version, struct cri_status *status)
{
	return cri_version(pods->cri, ret_version, status);
}
