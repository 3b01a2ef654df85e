/* SPDX-License-Identifier: Apache-2.0 */
#include "npu/dcmi.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/macro.h"
#include "base/parse.h"
#include "base/strbuf.h"
#include "npu/vendor_call.h"

#define DCMI_LIB_NAME "libdcmi.so"
#define DCMI_DEFAULT_DRIVER_PATH "/usr/local/Ascend/driver"

/* One function pointer per symbol of the ABI table, so adding a call to
 * dcmi_abi.h is the only edit needed to load it. */
struct dcmi_fns {
#define DCMI_FN_POINTER(name, required, ret, params) ret(*name) params;
	DCMI_SYMBOLS(DCMI_FN_POINTER)
#undef DCMI_FN_POINTER
};

struct dcmi_lib {
	struct dcmi_fns fn;
	/* Every call after dcmi_init runs on the guard's worker, with a
	 * deadline (npu/vendor_call.h). */
	struct vendor_guard *guard;
	/* Written by the calls on the worker, read by dcmi_last_error() on the
	 * caller's thread; a stuck call may still write it. */
	pthread_mutex_t last_lock;
	struct dcmi_error last;
	/* The caller's side of a call's arguments and results (struct
	 * dcmi_call, below): one, since one thread makes the calls. On the
	 * heap rather than thread-local: static TLS is zeroed in every thread
	 * of the process, gRPC's included. */
	struct dcmi_call *call;
	char path[PATH_MAX];
};

/* Reasons are diagnostics for a log line: truncating them is better than
 * losing them, unlike paths, which str_printf refuses to truncate. */
static __attribute__((format(printf, 3, 4))) void why_set(char *why, size_t size, const char *fmt, ...)
{
	if (!why || size == 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(why, size, fmt, ap);
	va_end(ap);
	if (n < 0)
		why[0] = '\0';
}

/* Resolves path and checks it and every parent directory. On success the
 * resolved path is returned (malloc'd), so the caller loads exactly the file
 * that was checked, not whatever a symlink points to later. */
static int trust_check(const char *path, char **ret_real, char *why, size_t why_size)
{
	char *real = realpath(path, NULL);
	if (!real) {
		int r = -errno;
		why_set(why, why_size, "%s: %s", path, strerror(-r));
		return r;
	}

	int r = 0;
	/* The walk cuts a copy down component by component. */
	char *walk = strdup(real);
	if (!walk) {
		r = -ENOMEM;
		why_set(why, why_size, "out of memory");
		goto out;
	}
	bool is_target = true;
	for (;;) {
		struct stat st;
		/* realpath left no symlinks, so lstat sees what the loader will. */
		if (lstat(walk, &st) < 0) {
			r = -errno;
			why_set(why, why_size, "%s: %s", walk, strerror(-r));
			goto out;
		}
		if (st.st_uid != 0) {
			r = -EPERM;
			why_set(why, why_size, "%s: owned by uid %u, not root", walk, (unsigned)st.st_uid);
			goto out;
		}
		if (st.st_mode & (S_IWGRP | S_IWOTH)) {
			/* In a root-owned sticky directory such as /tmp, others can
			 * add entries but cannot rename or remove root's, so it is a
			 * safe ancestor. It is never a safe target. */
			bool sticky_ancestor = !is_target && S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX);
			if (!sticky_ancestor) {
				r = -EPERM;
				why_set(why, why_size, "%s: %s is group or other writable", walk,
					S_ISDIR(st.st_mode) ? "directory" : "file");
				goto out;
			}
		}
		if (strcmp(walk, "/") == 0)
			break;
		char *slash = strrchr(walk, '/');
		if (slash == walk)
			slash[1] = '\0';
		else
			*slash = '\0';
		is_target = false;
	}
	*ret_real = real;
	real = NULL;
out:
	free(walk);
	free(real);
	return r;
}

int dcmi_path_trusted(const char *path, char *why, size_t why_size)
{
	if (!path)
		return -EINVAL;
	char *real = NULL;
	int r = trust_check(path, &real, why, why_size);
	free(real);
	return r;
}

/* Looks a symbol up, remembering the first required one that is missing. */
static void *lookup_symbol(void *handle, const char *name, bool required, const char **missing)
{
	void *sym = dlsym(handle, name);
	if (!sym && required && !*missing)
		*missing = name;
	return sym;
}

static int resolve_symbols(void *handle, const char *path, struct dcmi_fns *ret_fns, char *why, size_t why_size)
{
	struct dcmi_fns fns = { 0 };
	const char *missing = NULL;

	/* POSIX guarantees that dlsym's void * converts to a function pointer. */
#define DCMI_RESOLVE(name, required, ret, params) \
	fns.name = (ret(*) params)lookup_symbol(handle, #name, (required), &missing);
	DCMI_SYMBOLS(DCMI_RESOLVE)
#undef DCMI_RESOLVE

	if (missing) {
		why_set(why, why_size, DCMI_LIB_NAME " at %s lacks required symbol %s", path, missing);
		return -ELIBBAD;
	}
	*ret_fns = fns;
	return 0;
}

/* Finishes loading an opened, trusted library. Before dcmi_init the vendor
 * library has started no threads, so a library we reject is closed again;
 * once dcmi_init has run it never is (see dcmi_lib_close). */
static int finish_open(void *handle, const char *real, struct dcmi_lib **ret_lib, char *why, size_t why_size)
{
	struct dcmi_lib *lib = calloc(1, sizeof(*lib));
	int r;
	if (!lib) {
		r = -ENOMEM;
		why_set(why, why_size, "out of memory");
		goto fail_close;
	}
	r = str_copy(lib->path, sizeof(lib->path), real);
	if (r < 0) {
		why_set(why, why_size, "%s: path too long", real);
		goto fail_close;
	}
	r = resolve_symbols(handle, real, &lib->fn, why, why_size);
	if (r < 0)
		goto fail_close;

	int rc = lib->fn.dcmi_init();
	if (rc != DCMI_OK) {
		why_set(why, why_size, "dcmi_init of %s failed with code %d", real, rc);
		free(lib);
		return -EIO;
	}
	r = vendor_guard_new(DCMI_CALL_DEADLINE_MS, DCMI_CRASH_WHAT, &lib->guard);
	if (r < 0) {
		why_set(why, why_size, "cannot start the thread DCMI calls run on: %s", strerror(-r));
		free(lib);
		return r;
	}
	pthread_mutex_init(&lib->last_lock, NULL);
	*ret_lib = lib;
	return 0;

fail_close:
	free(lib);
	dlclose(handle);
	return r;
}

/* Loads one candidate that exists: it decides the outcome of the search. */
static int load_candidate(const char *path, struct dcmi_lib **ret_lib, char *why, size_t why_size)
{
	char *real = NULL;
	int r = trust_check(path, &real, why, why_size);
	if (r < 0)
		return r;

	/* RTLD_NOW: an unresolvable vendor dependency fails here, not at the
	 * first call. RTLD_LOCAL: its symbols must not satisfy anyone else. */
	dlerror();
	void *handle = dlopen(real, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		const char *err = dlerror();
		why_set(why, why_size, "cannot load %s: %s", real, err ? err : "unknown dlopen error");
		r = -ELIBBAD;
		goto out;
	}
	r = finish_open(handle, real, ret_lib, why, why_size);
out:
	free(real);
	return r;
}

/* The last resort: the dynamic loader's own search (its cache and default
 * directories). The path is only known after loading, so the library's
 * constructors have run before the trust check; the cache and the directories
 * it lists are root-managed, which keeps that window small. */
static int load_from_loader_cache(const char *searched, struct dcmi_lib **ret_lib, char *why, size_t why_size)
{
	dlerror();
	void *handle = dlopen(DCMI_LIB_NAME, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		const char *err = dlerror();
		why_set(why, why_size, DCMI_LIB_NAME " not found (searched: %s%sldconfig cache: %s)", searched,
			searched[0] ? ", " : "", err ? err : "not found");
		return -ENOENT;
	}

	struct link_map *map = NULL;
	if (dlinfo(handle, RTLD_DI_LINKMAP, &map) < 0 || !map || !map->l_name || !map->l_name[0]) {
		why_set(why, why_size, "cannot tell where the loader found " DCMI_LIB_NAME);
		dlclose(handle);
		return -ELIBBAD;
	}
	char *real = NULL;
	int r = trust_check(map->l_name, &real, why, why_size);
	if (r < 0) {
		dlclose(handle);
		return r;
	}
	r = finish_open(handle, real, ret_lib, why, why_size);
	free(real);
	return r;
}

/* The candidates that did not exist, for the not-found message; a list too
 * long for it ends in ", ..." so that the message says it is partial. */
struct search_log {
	char text[1024];
	struct strbuf sb;
};

static void search_log_add(struct search_log *log, const char *path)
{
	strbuf_printf(&log->sb, "%s%s", log->sb.len > 0 ? ", " : "", path);
}

/* Whether a candidate exists; records it for the message when it does not. */
static bool candidate_exists(const char *path, struct search_log *log)
{
	if (path_exists(path))
		return true;
	search_log_add(log, path);
	return false;
}

int dcmi_lib_open(const struct dcmi_search *search, struct dcmi_lib **ret_lib, char *why, size_t why_size)
{
	if (!search || !ret_lib)
		return -EINVAL;

	if (search->explicit_path) {
		if (!path_exists(search->explicit_path)) {
			why_set(why, why_size, "%s: no such file", search->explicit_path);
			return -ENOENT;
		}
		return load_candidate(search->explicit_path, ret_lib, why, why_size);
	}

	struct search_log log;
	strbuf_init(&log.sb, log.text, sizeof(log.text), ", ...");
	char candidate[PATH_MAX];
	char dir[PATH_MAX];

	/* LD_LIBRARY_PATH entries are paths of the plugin's own filesystem, so
	 * host_root does not apply; empty entries are skipped rather than read
	 * as the current directory. */
	for (const char *p = search->ld_library_path; p && *p;) {
		size_t n = strcspn(p, ":");
		if (n > 0 && str_printf(dir, sizeof(dir), "%.*s", (int)n, p) == 0 &&
		    path_join(candidate, sizeof(candidate), dir, DCMI_LIB_NAME) == 0 && candidate_exists(candidate, &log))
			return load_candidate(candidate, ret_lib, why, why_size);
		p += n;
		if (*p == ':')
			p++;
	}

	const char *host_root = search->host_root ? search->host_root : "/";
	const char *driver = search->driver_path ? search->driver_path : DCMI_DEFAULT_DRIVER_PATH;
	char driver_root[PATH_MAX];
	int r = path_join(driver_root, sizeof(driver_root), host_root, driver);
	if (r < 0) {
		why_set(why, why_size, "driver path %s under %s is too long", driver, host_root);
		return r;
	}

	static const char *const driver_subdirs[] = { "lib64/driver", "lib64" };
	for (size_t i = 0; i < ELEMENTSOF(driver_subdirs); i++) {
		if (path_join(dir, sizeof(dir), driver_root, driver_subdirs[i]) == 0 &&
		    path_join(candidate, sizeof(candidate), dir, DCMI_LIB_NAME) == 0 && candidate_exists(candidate, &log))
			return load_candidate(candidate, ret_lib, why, why_size);
	}
	if (path_join(candidate, sizeof(candidate), host_root, "usr/local/dcmi/" DCMI_LIB_NAME) == 0 &&
	    candidate_exists(candidate, &log))
		return load_candidate(candidate, ret_lib, why, why_size);

	return load_from_loader_cache(log.text, ret_lib, why, why_size);
}

void dcmi_lib_close(struct dcmi_lib *lib)
{
	/* No dlclose: dcmi_init and dcmi_subscribe_fault_event start vendor
	 * threads that may still run, and unmapping their code under them
	 * would crash the process. A call still stuck in the library keeps
	 * using lib: it is left to it. */
	if (!lib || vendor_guard_free(lib->guard))
		return;
	pthread_mutex_destroy(&lib->last_lock);
	free(lib->call);
	free(lib);
}

const char *dcmi_lib_path(const struct dcmi_lib *lib)
{
	return lib ? lib->path : "";
}

struct dcmi_error dcmi_last_error(struct dcmi_lib *lib)
{
	if (!lib)
		return (struct dcmi_error){ .code = 0, .call = NULL };
	pthread_mutex_lock(&lib->last_lock);
	struct dcmi_error last = lib->last;
	pthread_mutex_unlock(&lib->last_lock);
	return last;
}

static void record_error(struct dcmi_lib *lib, const char *call, int code)
{
	pthread_mutex_lock(&lib->last_lock);
	lib->last = (struct dcmi_error){ .code = code, .call = call };
	pthread_mutex_unlock(&lib->last_lock);
}

static void clear_error(struct dcmi_lib *lib)
{
	record_error(lib, NULL, 0);
}

/* The one mapping of a failed DCMI call: its name and code are recorded
 * for dcmi_last_error(), and the caller gets if_unsupported when DCMI
 * answered "not supported" (-8255), -EIO otherwise. */
static int vendor_failed(struct dcmi_lib *lib, const char *call, int code, int if_unsupported)
{
	record_error(lib, call, code);
	return code == DCMI_ERR_NOT_SUPPORTED ? if_unsupported : -EIO;
}

/* DCMI fills fixed arrays and may use all 32 bytes without a terminator;
 * names also reach logs and resource names, so keep them printable. */
static void copy_vendor_name(char *dst, size_t size, const unsigned char *src, size_t src_size)
{
	size_t n = 0;
	while (n < src_size && n + 1 < size && src[n] != '\0') {
		unsigned char c = src[n];
		dst[n] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
		n++;
	}
	dst[n] = '\0';
}

/* Chips found by devfs have no DCMI address. */
static bool addressable(const struct npu_chip *chip)
{
	return chip && chip->card_id >= 0 && chip->device_id >= 0;
}

/* The one fault subscriber. DCMI keeps calling the trampoline for as long
 * as the process lives; the lock held around the call is what lets
 * dcmi_unsubscribe_faults promise that the subscriber is done. */
static struct {
	pthread_mutex_t lock;
	dcmi_fault_fn fn;
	void *ctx;
} subscriber = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void fault_trampoline(struct dcmi_event *event)
{
	pthread_mutex_lock(&subscriber.lock);
	if (subscriber.fn && event)
		subscriber.fn(subscriber.ctx, event);
	pthread_mutex_unlock(&subscriber.lock);
}

int dcmi_subscribe_faults(struct dcmi_lib *lib, dcmi_fault_fn fn, void *ctx)
{
	if (!lib || !fn)
		return -EINVAL;
	clear_error(lib);

	if (!lib->fn.dcmi_subscribe_fault_event)
		return -EOPNOTSUPP;
	pthread_mutex_lock(&subscriber.lock);
	bool busy = subscriber.fn && (subscriber.fn != fn || subscriber.ctx != ctx);
	if (!busy) {
		subscriber.fn = fn;
		subscriber.ctx = ctx;
	}
	pthread_mutex_unlock(&subscriber.lock);
	if (busy)
		return -EBUSY;

	/* An all-zero filter selects every event; card = device = -1 selects
	 * every chip, including ones that appear later. */
	struct dcmi_event_filter filter;
	memset(&filter, 0, sizeof(filter));
	int rc = lib->fn.dcmi_subscribe_fault_event(-1, -1, filter, fault_trampoline);
	if (rc == DCMI_OK)
		return 0;
	dcmi_unsubscribe_faults();
	return vendor_failed(lib, "dcmi_subscribe_fault_event", rc, -EOPNOTSUPP);
}

void dcmi_unsubscribe_faults(void)
{
	pthread_mutex_lock(&subscriber.lock);
	subscriber.fn = NULL;
	subscriber.ctx = NULL;
	pthread_mutex_unlock(&subscriber.lock);
}

/* --- the calls, through the guard ------------------------------------------ */

/* Every DCMI call made through the guard, one row each:
 *   (op, symbol, type, n, missing, unsupported)
 * op names the job that makes the call on the worker, job_<op>(), and its
 * result in struct dcmi_call, out.<op>: n elements of type (a list holds at
 * most n). symbol is the vendor call: its name goes to dcmi_last_error()
 * and to the guard, and when the driver lacks it the caller gets missing
 * (0 or -EOPNOTSUPP). A failure of the call is recorded and gives
 * unsupported when DCMI answered "not supported" (-8255), -EIO otherwise.
 * (A required symbol is never missing.) The deadline, the hand-over to
 * the worker and the mapping of failures are run_call's and run_job's,
 * the same for every row. */
#define DCMI_CALLS(X)                                                                                     \
	X(chips, dcmi_get_card_list, struct npu_chip, NPU_MAX_CHIPS, -EOPNOTSUPP, -EIO)                   \
	X(health, dcmi_get_device_health, unsigned int, 1, -EOPNOTSUPP, -EIO)                             \
	X(error_codes, dcmi_get_device_errorcode_v2, unsigned int, DCMI_MAX_ERROR_CODES, 0, -EIO)         \
	X(pcie, dcmi_get_device_pcie_info_v2, struct dcmi_pcie_info_all, 1, -EOPNOTSUPP, -EOPNOTSUPP)     \
	X(vnpus, dcmi_get_device_info, struct npu_vnpu, DCMI_VDEV_MAX_PER_CHIP, -EOPNOTSUPP, -EOPNOTSUPP) \
	X(version, dcmi_get_dcmi_version, char, 256, -EOPNOTSUPP, -EIO)                                   \
	X(temperature, dcmi_get_device_temperature, int, 1, -EOPNOTSUPP, -EOPNOTSUPP)                     \
	X(power, dcmi_get_device_power_info, int, 1, -EOPNOTSUPP, -EOPNOTSUPP)                            \
	X(utilization, dcmi_get_device_utilization_rate, unsigned int, 1, -EOPNOTSUPP, -EOPNOTSUPP)       \
	X(hbm, dcmi_get_device_hbm_info, struct dcmi_hbm_info, 1, -EOPNOTSUPP, -EOPNOTSUPP)               \
	X(roce_ip, dcmi_get_device_ip, struct dcmi_ip_addr, 2, -EOPNOTSUPP, -EOPNOTSUPP)                  \
	X(link, dcmi_get_device_network_health, unsigned int, 1, -EOPNOTSUPP, -EOPNOTSUPP)                \
	X(super_pod, dcmi_get_device_info, struct dcmi_spod_info, 1, -EOPNOTSUPP, -EOPNOTSUPP)          \
	X(share_get, dcmi_get_device_share_enable, int, 1, -EOPNOTSUPP, -EOPNOTSUPP)                      \
	X(share_set, dcmi_set_device_share_enable, int, 1, -EOPNOTSUPP, -EOPNOTSUPP)                      \
	X(processes, dcmi_get_device_resource_info, struct dcmi_proc_mem_info, DCMI_PROC_ROOM, -EOPNOTSUPP, -EIO) \
	X(brother, dcmi_get_netdev_brother_device, int, 1, -EOPNOTSUPP, -EOPNOTSUPP)

/* One call's arguments and results, in the guard's own storage while the
 * call runs (npu/vendor_call.h): the jobs write only here. run_call hands
 * every job a zeroed result. */
struct dcmi_call {
	struct dcmi_lib *lib;
	const struct dcmi_op *op;
	struct npu_chip chip; /* the chip asked about, if any */
	size_t max;           /* a list's room: the caller's, at most n */
	size_t count;         /* a list's length, as the job found it */
	bool too_many;        /* chips: more than max were found */
	union {
#define DCMI_CALL_RESULT(op, symbol, type, n, missing, unsupported) type op[n];
		DCMI_CALLS(DCMI_CALL_RESULT)
#undef DCMI_CALL_RESULT
	} out;
};

_Static_assert(sizeof(struct dcmi_call) <= VENDOR_CALL_ARG_MAX, "a DCMI call's arguments fit the guard");

/* A row of DCMI_CALLS. */
struct dcmi_op {
	const char *call;                           /* the symbol's name */
	int (*job)(struct dcmi_call *c);            /* on the worker: the call's DCMI code */
	bool (*present)(const struct dcmi_fns *fn); /* whether the driver has the call */
	/* The bytes of struct dcmi_call the guard copies in and out: up to
	 * the end of this result, not the whole union (its chip list is
	 * 20 KiB). */
	size_t size;
	size_t capacity, elem_size;
	int if_missing, if_unsupported;
};

/* op_<op> for each row, with job_<op> declared (it is written below, with
 * the public function it serves) and has_<op> telling whether the driver
 * has the call. */
#define DCMI_CALL_OP(op, symbol, type, n, missing, unsupported)               \
	static int job_##op(struct dcmi_call *c);                              \
	static bool has_##op(const struct dcmi_fns *fn)                        \
	{                                                                      \
		return fn->symbol != NULL;                                     \
	}                                                                      \
	static const struct dcmi_op op_##op = {                                \
		.call = #symbol,                                               \
		.job = job_##op,                                               \
		.present = has_##op,                                           \
		.size = offsetof(struct dcmi_call, out) + sizeof(type[n]),     \
		.capacity = (n),                                               \
		.elem_size = sizeof(type),                                     \
		.if_missing = (missing),                                       \
		.if_unsupported = (unsupported),                               \
	};
DCMI_CALLS(DCMI_CALL_OP)
#undef DCMI_CALL_OP

/* The library's call scratch, made at its first call. A library table
 * built by hand (unit tests: no guard, one thread) uses a static one. */
static struct dcmi_call *call_of(struct dcmi_lib *lib)
{
	static struct dcmi_call unguarded;
	if (!lib->guard)
		return &unguarded;
	if (!lib->call)
		lib->call = malloc(sizeof(*lib->call));
	return lib->call;
}

/* Runs on the worker: the op's job, when the driver has its call, and the
 * mapping of what DCMI answered. */
static int run_job(void *arg)
{
	struct dcmi_call *c = arg;
	const struct dcmi_op *op = c->op;
	clear_error(c->lib);
	if (!op->present(&c->lib->fn))
		return op->if_missing;
	int rc = op->job(c);
	if (rc != DCMI_OK)
		return vendor_failed(c->lib, op->call, rc, op->if_unsupported);
	return 0;
}

/* One call through the guard for chip (NULL: a call of no chip), with room
 * for max list elements; on 0 its results are in **ret_call. A call past
 * its deadline, or one not made because another is stuck, is recorded
 * under its own name with code 0. */
static int run_call(struct dcmi_lib *lib, const struct dcmi_op *op, const struct npu_chip *chip, size_t max,
		    struct dcmi_call **ret_call)
{
	struct dcmi_call *c = call_of(lib);
	if (!c)
		return -ENOMEM;
	*c = (struct dcmi_call){ .lib = lib, .op = op, .max = max < op->capacity ? max : op->capacity };
	if (chip)
		c->chip = *chip;
	int r;
	if (lib->guard) {
		r = vendor_call_run(lib->guard, op->call, chip ? (long)chip->phy_id : -1, run_job, c, op->size);
		if (r == -ETIMEDOUT || r == -EBUSY)
			record_error(lib, op->call, 0);
	} else {
		/* A library table built by hand, as in unit tests: no worker. */
		r = run_job(c);
	}
	if (r == 0)
		*ret_call = c;
	return r;
}

/* Copies a list result out to its caller. */
static void take_list(const struct dcmi_call *c, void *list, size_t *ret_count)
{
	if (c->count > 0)
		memcpy(list, &c->out, c->count * c->op->elem_size);
	*ret_count = c->count;
}

static bool phy_seen(const struct npu_chip *chips, size_t count, uint32_t phy)
{
	for (size_t i = 0; i < count; i++)
		if (chips[i].phy_id == phy)
			return true;
	return false;
}

/* Reads the identity of one chip. A failure is recorded and the chip skipped
 * by the caller: one broken chip must not hide the others. */
static int read_chip(struct dcmi_lib *lib, int card, int device, struct npu_chip *ret_chip)
{
	int logic = -1;
	int rc = lib->fn.dcmi_get_device_logic_id(&logic, card, device);
	if (rc != DCMI_OK)
		return vendor_failed(lib, "dcmi_get_device_logic_id", rc, -EIO);
	if (logic < 0) {
		/* Not a vendor code, but the closest description of the answer. */
		return vendor_failed(lib, "dcmi_get_device_logic_id", DCMI_ERR_INVALID_DEVICE_ID, -EIO);
	}

	unsigned int phy = 0;
	rc = lib->fn.dcmi_get_device_phyid_from_logicid((unsigned int)logic, &phy);
	if (rc != DCMI_OK)
		return vendor_failed(lib, "dcmi_get_device_phyid_from_logicid", rc, -EIO);

	struct dcmi_chip_info info;
	memset(&info, 0, sizeof(info));
	rc = lib->fn.dcmi_get_device_chip_info(card, device, &info);
	if (rc != DCMI_OK)
		return vendor_failed(lib, "dcmi_get_device_chip_info", rc, -EIO);

	struct npu_chip chip = {
		.phy_id = phy,
		.logic_id = (uint32_t)logic,
		.card_id = card,
		.device_id = device,
		.aicore_count = info.aicore_cnt,
	};
	copy_vendor_name(chip.name, sizeof(chip.name), info.chip_name, sizeof(info.chip_name));

	/* Board info only sharpens the family (A3); older drivers lack it and
	 * some chips answer "not supported", which is not worth reporting. */
	if (lib->fn.dcmi_get_device_board_info) {
		struct dcmi_board_info board;
		memset(&board, 0, sizeof(board));
		if (lib->fn.dcmi_get_device_board_info(card, device, &board) == DCMI_OK) {
			chip.has_board_id = true;
			chip.board_id = board.board_id;
		}
	}
	chip.family = npu_family_detect(chip.name, chip.has_board_id, chip.board_id);
	*ret_chip = chip;
	return 0;
}

static int job_chips(struct dcmi_call *c)
{
	struct dcmi_lib *lib = c->lib;
	int cards[DCMI_MAX_CARDS];
	memset(cards, 0, sizeof(cards));
	int card_num = 0;
	int rc = lib->fn.dcmi_get_card_list(&card_num, cards, DCMI_MAX_CARDS);
	if (rc != DCMI_OK)
		return rc;
	/* The count comes from the vendor: never trust it past our buffer. */
	if (card_num < 0)
		card_num = 0;
	if (card_num > DCMI_MAX_CARDS)
		card_num = DCMI_MAX_CARDS;

	for (int i = 0; i < card_num; i++) {
		int device_num = 0;
		rc = lib->fn.dcmi_get_device_num_in_card(cards[i], &device_num);
		if (rc != DCMI_OK) {
			record_error(lib, "dcmi_get_device_num_in_card", rc);
			continue;
		}
		if (device_num < 1)
			device_num = 1;
		if (device_num > DCMI_MAX_DEVICES_PER_CARD)
			device_num = DCMI_MAX_DEVICES_PER_CARD;

		for (int device = 0; device < device_num; device++) {
			struct npu_chip chip;
			if (read_chip(lib, cards[i], device, &chip) < 0)
				continue;
			/* Two answers for one /dev/davinciN would give two devices
			 * the same node: the first one wins. */
			if (phy_seen(c->out.chips, c->count, chip.phy_id))
				continue;
			if (c->count >= c->max) {
				/* The calls went well; dcmi_enumerate refuses the list. */
				c->too_many = true;
				return DCMI_OK;
			}
			c->out.chips[c->count++] = chip;
		}
	}

	if (c->count > 1)
		qsort(c->out.chips, c->count, sizeof(c->out.chips[0]), npu_chip_compare_phy);
	return DCMI_OK;
}

int dcmi_enumerate(struct dcmi_lib *lib, struct npu_chip *chips, size_t max, size_t *ret_count)
{
	if (!lib || (!chips && max > 0) || !ret_count)
		return -EINVAL;
	struct dcmi_call *c = NULL;
	int r = run_call(lib, &op_chips, NULL, max, &c);
	if (r < 0)
		return r;
	if (c->too_many)
		return -E2BIG;
	take_list(c, chips, ret_count);
	return 0;
}

static int job_health(struct dcmi_call *c)
{
	return c->lib->fn.dcmi_get_device_health(c->chip.card_id, c->chip.device_id, c->out.health);
}

int dcmi_chip_health(struct dcmi_lib *lib, const struct npu_chip *chip, unsigned int *ret_health)
{
	if (!lib || !addressable(chip) || !ret_health)
		return -EINVAL;
	struct dcmi_call *c = NULL;
	int r = run_call(lib, &op_health, chip, 0, &c);
	if (r == 0)
		*ret_health = c->out.health[0];
	return r;
}

static int job_error_codes(struct dcmi_call *c)
{
	int n = 0;
	int rc = c->lib->fn.dcmi_get_device_errorcode_v2(c->chip.card_id, c->chip.device_id, &n, c->out.error_codes,
							 (unsigned int)ELEMENTSOF(c->out.error_codes));
	/* The count comes from the vendor: never past the list (max is at
	 * most its length). */
	size_t count = n < 0 ? 0 : (size_t)n;
	c->count = count < c->max ? count : c->max;
	return rc;
}

int dcmi_chip_error_codes(struct dcmi_lib *lib, const struct npu_chip *chip, unsigned int *codes, size_t max,
			  size_t *ret_count)
{
	if (!lib || !addressable(chip) || (!codes && max > 0) || !ret_count)
		return -EINVAL;
	struct dcmi_call *c = NULL;
	int r = run_call(lib, &op_error_codes, chip, max, &c);
	if (r < 0)
		return r;
	take_list(c, codes, ret_count);
	return 0;
}

static int job_pcie(struct dcmi_call *c)
{
	return c->lib->fn.dcmi_get_device_pcie_info_v2(c->chip.card_id, c->chip.device_id, c->out.pcie);
}

int dcmi_chip_pci_address(struct dcmi_lib *lib, const struct npu_chip *chip, struct pci_address *ret_address)
{
	if (!lib || !addressable(chip) || !ret_address)
		return -EINVAL;
	struct dcmi_call *c = NULL;
	int r = run_call(lib, &op_pcie, chip, 0, &c);
	if (r < 0)
		return r;
	const struct dcmi_pcie_info_all *info = &c->out.pcie[0];
	if (info->domain < 0 || (unsigned)info->domain > PCI_DOMAIN_MAX || info->bdf_busid > UINT8_MAX ||
	    info->bdf_deviceid > PCI_DEVICE_MAX || info->bdf_funcid > PCI_FUNCTION_MAX)
		return -ERANGE;
	*ret_address = (struct pci_address){
		.domain = (uint32_t)info->domain,
		.bus = (uint8_t)info->bdf_busid,
		.device = (uint8_t)info->bdf_deviceid,
		.function = (uint8_t)info->bdf_funcid,
	};
	return 0;
}

static int job_vnpus(struct dcmi_call *c)
{
	const struct npu_chip *chip = &c->chip;
	/* Leading fields only (npu/dcmi_abi.h): a zeroed buffer larger than
	 * any release's structure. */
	static _Thread_local unsigned char buf[DCMI_VDEV_QUERY_BYTES];
	unsigned int size = sizeof(buf), count, id;
	memset(buf, 0, sizeof(buf));
	int rc = c->lib->fn.dcmi_get_device_info(chip->card_id, chip->device_id, DCMI_MAIN_CMD_VDEV_MNG,
						 DCMI_VMNG_SUB_CMD_GET_TOTAL_RESOURCE, buf, &size);
	if (rc != DCMI_OK)
		return rc;
	memcpy(&count, buf, sizeof(count));
	if (count > c->max)
		count = (unsigned)c->max;
	unsigned int ids[DCMI_VDEV_MAX_PER_CHIP];
	memcpy(ids, buf + sizeof(count), count * sizeof(ids[0]));

	for (unsigned i = 0; i < count; i++) {
		struct npu_vnpu *v = &c->out.vnpus[i];
		*v = (struct npu_vnpu){ .id = ids[i], .phy_id = chip->phy_id };
		memset(buf, 0, sizeof(buf));
		id = ids[i];
		memcpy(buf, &id, sizeof(id));
		size = sizeof(buf);
		rc = c->lib->fn.dcmi_get_device_info(chip->card_id, chip->device_id, DCMI_MAIN_CMD_VDEV_MNG,
						     DCMI_VMNG_SUB_CMD_GET_VDEV_RESOURCE, buf, &size);
		if (rc != DCMI_OK) {
			record_error(c->lib, "dcmi_get_device_info", rc);
			continue;
		}
		copy_vendor_name(v->template_name, sizeof(v->template_name), buf + sizeof(id), DCMI_VDEV_NAME_LEN);
	}
	c->count = count;
	return DCMI_OK;
}

int dcmi_chip_vnpus(struct dcmi_lib *lib, const struct npu_chip *chip, struct npu_vnpu *vnpus, size_t max,
		    size_t *ret_count)
{
	if (!lib || !addressable(chip) || (!vnpus && max > 0) || !ret_count)
		return -EINVAL;
	struct dcmi_call *c = NULL;
	int r = run_call(lib, &op_vnpus, chip, max, &c);
	if (r < 0)
		return r;
	take_list(c, vnpus, ret_count);
	return 0;
}

static int job_version(struct dcmi_call *c)
{
	return c->lib->fn.dcmi_get_dcmi_version(c->out.version, (int)sizeof(c->out.version));
}

int dcmi_driver_version(struct dcmi_lib *lib, char *buf, size_t size)
{
	if (!lib || !buf || size == 0)
		return -EINVAL;
	struct dcmi_call *c = NULL;
	int r = run_call(lib, &op_version, NULL, 0, &c);
	if (r < 0)
		return r;
	char clean[sizeof(c->out.version)];
	copy_vendor_name(clean, sizeof(clean), (const unsigned char *)c->out.version, sizeof(c->out.version));
	return str_copy(buf, size, clean);
}

/* --- telemetry ------------------------------------------------------------ */

static int job_temperature(struct dcmi_call *c)
{
	return c->lib->fn.dcmi_get_device_temperature(c->chip.card_id, c->chip.device_id, c->out.temperature);
}

int dcmi_chip_temperature(struct dcmi_lib *lib, const struct npu_chip *chip, int *ret_celsius)
{
	if (!lib || !addressable(chip) || !ret_celsius)
		return -EINVAL;
	struct dcmi_call *c = NULL;
	int r = run_call(lib, &op_temperature, chip, 0, &c);
	if (r == 0)
		*ret_celsius = c->out.temperature[0];
	return r;
}

static int job_power(struct dcmi_call *c)
{
	return c->lib->fn.dcmi_get_device_power_info(c->chip.card_id, c->chip.device_id, c->out.power);
}

int dcmi_chip_power(struct dcmi_lib *lib, const struct npu_chip *chip, double *ret_watts)
{
	if (!lib || !addressable(chip) || !ret_watts)
		return -EINVAL;
	struct dcmi_call *c = NULL;
	int r = run_call(lib, &op_power, chip, 0, &c);
	if (r < 0)
		return r;
	int tenths = c->out.power[0];
	if (tenths < 0)
		return -ERANGE;
	*ret_watts = tenths / 10.0;
	return 0;
}

static int job_utilization(struct dcmi_call *c)
{
	return c->lib->fn.dcmi_get_device_utilization_rate(c->chip.card_id, c->chip.device_id,
							    DCMI_UTILIZATION_AICORE, c->out.utilization);
}

int dcmi_chip_aicore_utilization(struct dcmi_lib *lib, const struct npu_chip *chip, unsigned int *ret_percent)
{
	if (!lib || !addressable(chip) || !ret_percent)
		return -EINVAL;
	struct dcmi_call *c = NULL;
	int r = run_call(lib, &op_utilization, chip, 0, &c);
	if (r < 0)
		return r;
	if (c->out.utilization[0] > 100)
		return -ERANGE;
	*ret_percent = c->out.utilization[0];
	return 0;
}

static int job_hbm(struct dcmi_call *c)
{
	return c->lib->fn.dcmi_get_device_hbm_info(c->chip.card_id, c->chip.device_id, c->out.hbm);
}

int dcmi_chip_hbm(struct dcmi_lib *lib, const struct npu_chip *chip, uint64_t *ret_total_mb, uint64_t *ret_used_mb)
{
	if (!lib || !addressable(chip) || !ret_total_mb || !ret_used_mb)
		return -EINVAL;
	struct dcmi_call *c = NULL;
	int r = run_call(lib, &op_hbm, chip, 0, &c);
	if (r < 0)
		return r;
	const struct dcmi_hbm_info *info = &c->out.hbm[0];
	if (info->memory_usage > info->memory_size)
		return -ERANGE;
	*ret_total_mb = info->memory_size;
	*ret_used_mb = info->memory_usage;
	return 0;
}

/* --- network identity ------------------------------------------------------ */

static int job_roce_ip(struct dcmi_call *c)
{
	return c->lib->fn.dcmi_get_device_ip(c->chip.card_id, c->chip.device_id, DCMI_ROCE_PORT, 0, &c->out.roce_ip[0],
					     &c->out.roce_ip[1]);
}

/* The length of the prefix a mask spells; -EPROTO when its ones are not
 * all leading. */
static int mask_prefix(const uint8_t *mask, size_t len)
{
	int n = 0;
	size_t i = 0;
	while (i < len && mask[i] == 0xff) {
		n += 8;
		i++;
	}
	if (i < len) {
		uint8_t b = mask[i++];
		while (b & 0x80) {
			n++;
			b = (uint8_t)(b << 1);
		}
		if (b)
			return -EPROTO;
	}
	for (; i < len; i++)
		if (mask[i])
			return -EPROTO;
	return n;
}

int dcmi_chip_roce_address(struct dcmi_lib *lib, const struct npu_chip *chip, struct npu_net *ret_net)
{
	if (!lib || !addressable(chip) || !ret_net)
		return -EINVAL;
	struct dcmi_call *c = NULL;
	int r = run_call(lib, &op_roce_ip, chip, 0, &c);
	if (r < 0)
		return r;
	const struct dcmi_ip_addr *ip = &c->out.roce_ip[0], *mask = &c->out.roce_ip[1];
	if (ip->ip_type != DCMI_IPADDR_TYPE_V4 && ip->ip_type != DCMI_IPADDR_TYPE_V6)
		return -EPROTO;
	bool v6 = ip->ip_type == DCMI_IPADDR_TYPE_V6;
	size_t len = v6 ? sizeof(ip->u_addr.ip6) : sizeof(ip->u_addr.ip4);
	static const uint8_t zero[16];
	int prefix = mask_prefix(mask->u_addr.ip6, len);
	if (prefix < 0)
		return prefix;
	ret_net->has_ip = memcmp(ip->u_addr.ip6, zero, len) != 0;
	ret_net->ipv6 = v6;
	memset(ret_net->ip, 0, sizeof(ret_net->ip));
	if (ret_net->has_ip)
		memcpy(ret_net->ip, ip->u_addr.ip6, len);
	ret_net->prefix_len = ret_net->has_ip ? (uint8_t)prefix : 0;
	return 0;
}

static int job_link(struct dcmi_call *c)
{
	return c->lib->fn.dcmi_get_device_network_health(c->chip.card_id, c->chip.device_id, c->out.link);
}

int dcmi_chip_link(struct dcmi_lib *lib, const struct npu_chip *chip, struct npu_net *ret_net)
{
	if (!lib || !addressable(chip) || !ret_net)
		return -EINVAL;
	struct dcmi_call *c = NULL;
	int r = run_call(lib, &op_link, chip, 0, &c);
	if (r < 0)
		return r;
	unsigned int code = c->out.link[0];
	/* Huawei's plugin, too, takes "not started" for no failure (it waits
	 * for OK or INIT after a reset); it is no proof of a working link
	 * either, so it is neither up nor down here. */
	if (code == DCMI_RDFX_DETECT_OK)
		ret_net->link = NPU_LINK_UP;
	else if (code == DCMI_RDFX_DETECT_INIT || code == DCMI_RDFX_DETECT_IP_SET)
		ret_net->link = NPU_LINK_UNKNOWN;
	else
		ret_net->link = NPU_LINK_DOWN;
	ret_net->link_code = code;
	return 0;
}

static int job_super_pod(struct dcmi_call *c)
{
	unsigned int size = sizeof(c->out.super_pod[0]);
	int rc = c->lib->fn.dcmi_get_device_info(c->chip.card_id, c->chip.device_id, DCMI_MAIN_CMD_CHIP_INF,
						 DCMI_CHIP_INF_SUB_CMD_SPOD_INFO, &c->out.super_pod[0], &size);
	/* A driver answering with less than the structure has not said it all. */
	if (rc == DCMI_OK && size < offsetof(struct dcmi_spod_info, chassis_id))
		return DCMI_ERR_NOT_SUPPORTED;
	return rc;
}

int dcmi_chip_super_pod(struct dcmi_lib *lib, const struct npu_chip *chip, struct npu_net *ret_net)
{
	if (!lib || !addressable(chip) || !ret_net)
		return -EINVAL;
	struct dcmi_call *c = NULL;
	int r = run_call(lib, &op_super_pod, chip, 0, &c);
	if (r < 0)
		return r;
	const struct dcmi_spod_info *info = &c->out.super_pod[0];
	ret_net->has_super_pod = true;
	ret_net->super_pod_id = info->super_pod_id;
	ret_net->sdid = info->sdid;
	ret_net->server_index = info->server_index;
	return 0;
}

/* --- device-share --------------------------------------------------------- */

static int job_share_get(struct dcmi_call *c)
{
	return c->lib->fn.dcmi_get_device_share_enable(c->chip.card_id, c->chip.device_id, c->out.share_get);
}

int dcmi_chip_share_mode(struct dcmi_lib *lib, const struct npu_chip *chip, bool *ret_on)
{
	if (!lib || !addressable(chip) || !ret_on)
		return -EINVAL;
	struct dcmi_call *c = NULL;
	int r = run_call(lib, &op_share_get, chip, 0, &c);
	if (r < 0)
		return r;
	int flag = c->out.share_get[0];
	if (flag != DCMI_DEVICE_SHARE_OFF && flag != DCMI_DEVICE_SHARE_ON)
		return -ERANGE;
	*ret_on = flag == DCMI_DEVICE_SHARE_ON;
	return 0;
}

static int job_share_set(struct dcmi_call *c)
{
	return c->lib->fn.dcmi_set_device_share_enable(c->chip.card_id, c->chip.device_id, DCMI_DEVICE_SHARE_ON);
}

int dcmi_chip_share_enable(struct dcmi_lib *lib, const struct npu_chip *chip)
{
	if (!lib || !addressable(chip))
		return -EINVAL;
	struct dcmi_call *c = NULL;
	return run_call(lib, &op_share_set, chip, 0, &c);
}

/* --- processes and the paired card (group resets) -------------------------- */

static int job_processes(struct dcmi_call *c)
{
	int n = 0;
	int rc = c->lib->fn.dcmi_get_device_resource_info(c->chip.card_id, c->chip.device_id, c->out.processes, &n);
	/* The count comes from the vendor: a negative one or one past what
	 * Huawei's own caller accepts is no answer. */
	if (rc == DCMI_OK && (n < 0 || n > DCMI_MAX_PROCS))
		return DCMI_ERR_INNER;
	c->count = (size_t)n;
	return rc;
}

int dcmi_chip_processes(struct dcmi_lib *lib, const struct npu_chip *chip, size_t *ret_count, int *ret_first_pid)
{
	if (!lib || !addressable(chip) || !ret_count || !ret_first_pid)
		return -EINVAL;
	struct dcmi_call *c = NULL;
	int r = run_call(lib, &op_processes, chip, DCMI_PROC_ROOM, &c);
	if (r < 0)
		return r;
	*ret_count = c->count;
	*ret_first_pid = c->count ? c->out.processes[0].proc_id : 0;
	return 0;
}

bool dcmi_can_list_processes(const struct dcmi_lib *lib)
{
	return lib && has_processes(&lib->fn);
}

static int job_brother(struct dcmi_call *c)
{
	return c->lib->fn.dcmi_get_netdev_brother_device(c->chip.card_id, c->chip.device_id, c->out.brother);
}

int dcmi_chip_brother_card(struct dcmi_lib *lib, const struct npu_chip *chip, int *ret_card)
{
	if (!lib || !addressable(chip) || !ret_card)
		return -EINVAL;
	struct dcmi_call *c = NULL;
	int r = run_call(lib, &op_brother, chip, 0, &c);
	if (r == 0)
		*ret_card = c->out.brother[0];
	return r;
}

/* --- calls in the background: chip reset, vNPU carving -------------------- */

/* A background call's arguments and outcome: the worker writes only here,
 * never the library's last error, which the loop's own calls use
 * meanwhile. One structure for every background call, so the start and the
 * take are the same for each. */
struct background_call {
	const struct dcmi_fns *fn;
	int card_id, device_id;
	char template_name[NPU_VNPU_TEMPLATE_MAX]; /* create: the template */
	uint32_t vnpu_id;                          /* create: the id asked for; destroy: the id */
	struct dcmi_carve_outcome outcome;         /* its result and error serve a reset too */
};

/* Records a failed vendor call in the outcome; true when it failed. */
static bool background_failed(struct background_call *c, const char *call, int rc)
{
	if (rc == DCMI_OK)
		return false;
	c->outcome.result = -EIO;
	c->outcome.error = (struct dcmi_error){ .code = rc, .call = call };
	return true;
}

/* Hands c to the worker as call (its name, the chip's physical id the
 * key), if the library can make it. */
static int background_start(struct dcmi_lib *lib, const struct npu_chip *chip, bool (*can)(const struct dcmi_lib *lib),
			    const char *call, int (*fn)(void *arg), struct background_call *c, void (*done)(void *ctx),
			    void *ctx)
{
	if (!lib || !addressable(chip))
		return -EINVAL;
	if (!can(lib))
		return -EOPNOTSUPP;
	if (!lib->guard)
		return -EINVAL;
	c->fn = &lib->fn;
	c->card_id = chip->card_id;
	c->device_id = chip->device_id;
	return vendor_call_start(lib->guard, call, (long)chip->phy_id, fn, c, sizeof(*c), done, ctx);
}

/* The outcome of the background call started last (see vendor_call_take). */
static int background_take(struct dcmi_lib *lib, bool give_up, struct dcmi_carve_outcome *ret_outcome)
{
	if (!lib || !lib->guard || !ret_outcome)
		return -EINVAL;
	struct background_call c;
	int result;
	int r = vendor_call_take(lib->guard, give_up, &c, sizeof(c), &result);
	if (r == 0)
		*ret_outcome = c.outcome;
	return r;
}

bool dcmi_can_reset(const struct dcmi_lib *lib)
{
	return lib && lib->fn.dcmi_set_device_pre_reset && lib->fn.dcmi_set_device_reset;
}

static int do_reset(void *arg)
{
	struct background_call *c = arg;
	if (!background_failed(c, "dcmi_set_device_pre_reset", c->fn->dcmi_set_device_pre_reset(c->card_id, c->device_id)))
		background_failed(c, "dcmi_set_device_reset",
				  c->fn->dcmi_set_device_reset(c->card_id, c->device_id, INBAND_CHANNEL));
	return 0;
}

int dcmi_chip_reset_start(struct dcmi_lib *lib, const struct npu_chip *chip, void (*done)(void *ctx), void *ctx)
{
	struct background_call c = { 0 };
	return background_start(lib, chip, dcmi_can_reset, "dcmi_set_device_reset", do_reset, &c, done, ctx);
}

int dcmi_chip_reset_take(struct dcmi_lib *lib, bool give_up, struct dcmi_reset_outcome *ret_outcome)
{
	struct dcmi_carve_outcome out;
	int r = background_take(lib, give_up, ret_outcome ? &out : NULL);
	if (r == 0)
		*ret_outcome = (struct dcmi_reset_outcome){ .result = out.result, .error = out.error };
	return r;
}

bool dcmi_can_carve(const struct dcmi_lib *lib)
{
	return lib && lib->fn.dcmi_create_vdevice && lib->fn.dcmi_set_destroy_vdevice;
}

static int do_create(void *arg)
{
	struct background_call *c = arg;
	struct dcmi_create_vdev_res_stru in;
	struct dcmi_create_vdev_out out;
	memset(&in, 0, sizeof(in));
	memset(&out, 0, sizeof(out));
	in.vdev_id = c->vnpu_id;
	in.vfg_id = DCMI_VDEV_ID_ANY;
	memcpy(in.template_name, c->template_name, sizeof(c->template_name));
	if (!background_failed(c, "dcmi_create_vdevice", c->fn->dcmi_create_vdevice(c->card_id, c->device_id, &in, &out)))
		c->outcome.vnpu_id = out.vdev_id;
	return 0;
}

static int do_destroy(void *arg)
{
	struct background_call *c = arg;
	c->outcome.vnpu_id = c->vnpu_id;
	background_failed(c, "dcmi_set_destroy_vdevice",
			  c->fn->dcmi_set_destroy_vdevice(c->card_id, c->device_id, c->vnpu_id));
	return 0;
}

int dcmi_vnpu_create_start(struct dcmi_lib *lib, const struct npu_chip *chip, const char *template_name,
			   uint32_t vnpu_id, void (*done)(void *ctx), void *ctx)
{
	struct background_call c = { .vnpu_id = vnpu_id };
	if (!template_name || !template_name[0] || str_copy(c.template_name, sizeof(c.template_name), template_name) < 0)
		return -EINVAL;
	return background_start(lib, chip, dcmi_can_carve, "dcmi_create_vdevice", do_create, &c, done, ctx);
}

int dcmi_vnpu_destroy_start(struct dcmi_lib *lib, const struct npu_chip *chip, uint32_t vnpu_id,
			    void (*done)(void *ctx), void *ctx)
{
	struct background_call c = { .vnpu_id = vnpu_id };
	return background_start(lib, chip, dcmi_can_carve, "dcmi_set_destroy_vdevice", do_destroy, &c, done, ctx);
}

int dcmi_vnpu_take(struct dcmi_lib *lib, bool give_up, struct dcmi_carve_outcome *ret_outcome)
{
	return background_take(lib, give_up, ret_outcome);
}
