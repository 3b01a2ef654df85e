/* SPDX-License-Identifier: Apache-2.0 */
#include "node/status_files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/file.h"
#include "base/json_put.h"
#include "base/parse.h"
#include "base/strbuf.h"
#include "node/topology.h"
#include "npu/family.h"

/* How stale a directory's time may get before a hand-out touches it: far
 * below any idle time pruning waits for. */
#define STATUS_TOUCH_MS (60 * 1000)

struct status_dirs {
	char base[PATH_MAX];
	/* Held while a directory is made, touched or removed, so that pruning
	 * never removes one that Allocate has just handed out. */
	pthread_mutex_t lock;
};

/* "2026-12-05T10:11:12.345Z" */
static void put_time(struct json_put *b, json_object *o, const char *key, int64_t ms)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	char text[40], stamp[48];
	if (!gmtime_r(&s, &tm) || strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		return;
	(void)str_printf(stamp, sizeof(stamp), "%s.%03dZ", text, (int)(ms % 1000));
	json_put_string(b, o, key, stamp);
}

static const char *level_of(const struct npu_device *d)
{
	if (d->policy_judged)
		return d->policy_level_name ? d->policy_level_name : "None";
	return d->healthy ? "None" : "Unknown";
}

static void put_device(struct json_put *b, json_object *chips, const struct npu_device *d, size_t logical)
{
	json_object *o = json_put(b, chips, NULL, json_object_new_object());
	json_put_string(b, o, "device", d->id);
	json_put(b, o, "logical_id", json_object_new_int64((int64_t)logical));
	json_put(b, o, "phy_id", json_object_new_int64(d->chip.phy_id));
	if (d->kind == NPU_DEVICE_VNPU)
		json_put(b, o, "vnpu_id", json_object_new_int64(d->vnpu.id));
	json_put_string(b, o, "family", npu_family_name(d->chip.family));
	json_put(b, o, "healthy", json_object_new_boolean(d->healthy));
	json_put_string(b, o, "level", level_of(d));
	char code[16] = "", reason[256] = "";
	if (d->policy_code)
		(void)str_printf(code, sizeof(code), "%08" PRIX32, d->policy_code);
	json_put_string(b, o, "code", code);
	if (d->since_ms > 0)
		put_time(b, o, "since", d->since_ms);
	if (!d->healthy) {
		npu_device_describe(d, reason, sizeof(reason));
		json_put_string(b, o, "reason", reason);
	}
	if (d->has_numa)
		json_put(b, o, "numa_node", json_object_new_int64(d->numa_node));
	if (d->pci_address[0])
		json_put_string(b, o, "pci_address", d->pci_address);
	struct topology_group g;
	if (topology_interconnect(d, &g) == 0) {
		char group[64];
		(void)str_printf(group, sizeof(group), "%s-%ld", g.kind, g.index); /* fits */
		json_put_string(b, o, "interconnect_group", group);
	}
	char ip[NPU_NET_ADDRESS_MAX];
	if (d->kind == NPU_DEVICE_CHIP && npu_net_address(&d->net, false, ip))
		json_put_string(b, o, "device_ip", ip);
}

/* An entry for a device the snapshot no longer has. */
static void put_gone(struct json_put *b, json_object *chips, const char *id, size_t logical)
{
	json_object *o = json_put(b, chips, NULL, json_object_new_object());
	json_put_string(b, o, "device", id);
	json_put(b, o, "logical_id", json_object_new_int64((int64_t)logical));
	json_put(b, o, "healthy", json_object_new_boolean(false));
	json_put_string(b, o, "level", "Unknown");
	json_put_string(b, o, "code", "");
	json_put_string(b, o, "reason", "not on this node any more");
}

/* The document for n devices, each either devs[i] or, when that is NULL,
 * gone[i] by its id. */
static int render(const struct npu_device *const *devs, char (*gone)[NPU_DEVICE_ID_MAX], size_t n, char **ret_json)
{
	if (n == 0 || n > STATUS_FILE_MAX_DEVICES)
		return -EINVAL;
	struct json_put b = { 0 };
	json_object *doc = json_object_new_object();
	json_put(&b, doc, "version", json_object_new_int(STATUS_FILE_VERSION));
	json_object *chips = json_put(&b, doc, "chips", json_object_new_array());
	for (size_t i = 0; i < n; i++) {
		if (devs[i])
			put_device(&b, chips, devs[i], i);
		else
			put_gone(&b, chips, gone[i], i);
	}
	char *json = NULL;
	const char *text = b.failed ? NULL : json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (text) {
		size_t len = strlen(text);
		if ((json = malloc(len + 2))) {
			memcpy(json, text, len);
			json[len] = '\n';
			json[len + 1] = '\0';
		}
	}
	json_object_put(doc);
	if (!json)
		return -ENOMEM;
	*ret_json = json;
	return 0;
}

int status_file_render(const struct npu_device *const *devs, size_t n, char **ret_json)
{
	return render(devs, NULL, n, ret_json);
}

static int why_bad(char *why, size_t why_size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int why_bad(char *why, size_t why_size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(why, why_size, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* What an id looks like: "npu-<n>" or "vnpu-<n>". */
static bool device_id_ok(const char *s, size_t len)
{
	size_t digits = strncmp(s, "npu-", 4) == 0 ? 4 : strncmp(s, "vnpu-", 5) == 0 ? 5 : 0;
	if (!digits || len == digits || len >= NPU_DEVICE_ID_MAX)
		return false;
	for (size_t i = digits; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

int status_file_devices(const char *json, size_t len, char (*ids)[NPU_DEVICE_ID_MAX], size_t max, size_t *ret_n,
			char *why, size_t why_size)
{
	if (len > STATUS_FILE_MAX)
		return why_bad(why, why_size, "larger than %d bytes", STATUS_FILE_MAX);
	json_tokener *tok = json_tokener_new_ex(8);
	if (!tok)
		return -ENOMEM;
	json_object *doc = json_tokener_parse_ex(tok, json, (int)len);
	bool whole = doc && json_tokener_get_error(tok) == json_tokener_success &&
		     (size_t)json_tokener_get_parse_end(tok) <= len;
	json_tokener_free(tok);
	int r = 0;
	json_object *version, *chips;
	size_t n = 0;
	if (!whole || !json_object_is_type(doc, json_type_object)) {
		r = why_bad(why, why_size, "not a JSON object");
		goto out;
	}
	if (!json_object_object_get_ex(doc, "version", &version) || !json_object_is_type(version, json_type_int) ||
	    json_object_get_int64(version) != STATUS_FILE_VERSION) {
		r = why_bad(why, why_size, "version is not %d", STATUS_FILE_VERSION);
		goto out;
	}
	if (!json_object_object_get_ex(doc, "chips", &chips) || !json_object_is_type(chips, json_type_array)) {
		r = why_bad(why, why_size, "chips is not a list");
		goto out;
	}
	n = json_object_array_length(chips);
	if (n == 0 || n > max) {
		r = why_bad(why, why_size, "chips lists %zu devices, not 1 to %zu", n, max);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		json_object *dev, *entry = json_object_array_get_idx(chips, i);
		const char *id = NULL;
		if (json_object_is_type(entry, json_type_object) && json_object_object_get_ex(entry, "device", &dev) &&
		    json_object_is_type(dev, json_type_string))
			id = json_object_get_string(dev);
		if (!id || !device_id_ok(id, (size_t)json_object_get_string_len(dev))) {
			r = why_bad(why, why_size, "chips[%zu].device is not a device id", i);
			goto out;
		}
		(void)str_copy(ids[i], NPU_DEVICE_ID_MAX, id);
	}
	*ret_n = n;
out:
	json_object_put(doc);
	return r;
}

int status_dirs_new(const char *base, struct status_dirs **ret_dirs, char *why, size_t why_size)
{
	struct status_dirs *s = calloc(1, sizeof(*s));
	int r = -ENOMEM;
	if (!s)
		goto fail;
	if (str_copy(s->base, sizeof(s->base), base) < 0) {
		r = why_bad(why, why_size, "the status directory %.64s... is too long", base);
		goto fail;
	}
	if ((r = mkdir_p(base, 0755)) < 0) {
		(void)snprintf(why, why_size, "cannot make the status directory %s: %s", base, strerror(-r));
		goto fail;
	}
	if ((r = pthread_mutex_init(&s->lock, NULL)) != 0) {
		r = -r;
		goto fail;
	}
	*ret_dirs = s;
	return 0;
fail:
	free(s);
	return r;
}

void status_dirs_free(struct status_dirs *s)
{
	if (!s)
		return;
	pthread_mutex_destroy(&s->lock);
	free(s);
}

int status_set_name(const struct npu_device *const *devs, size_t n, char *buf, size_t size)
{
	if (n == 0)
		return -EINVAL;
	char name[STATUS_NAME_MAX + 1];
	struct strbuf sb;
	strbuf_init(&sb, name, sizeof(name), NULL);
	int r = strbuf_printf(&sb, "set-");
	for (size_t i = 0; i < n && r == 0; i++)
		r = strbuf_printf(&sb, "%s%s", i ? "+" : "", devs[i]->id);
	if (r < 0) {
		/* FNV-1a over the ids: a long set still gets one stable name. */
		uint64_t h = 14695981039346656037ULL;
		for (size_t i = 0; i < n; i++)
			for (const char *c = devs[i]->id;; c++) {
				h = (h ^ (unsigned char)*c) * 1099511628211ULL;
				if (!*c)
					break;
			}
		(void)str_printf(name, sizeof(name), "set-h%016" PRIx64, h);
	}
	return str_copy(buf, size, name);
}

static int path_of(const struct status_dirs *s, const char *name, const char *file, char *buf, size_t size)
{
	if (!name[0] || strchr(name, '/') || strlen(name) > STATUS_NAME_MAX || name[0] == '.')
		return -EINVAL;
	return file ? str_printf(buf, size, "%s/%s/%s", s->base, name, file)
		    : str_printf(buf, size, "%s/%s", s->base, name);
}

/* How many directories base holds, stopping past STATUS_DIRS_MAX. */
static size_t count_dirs(const char *base)
{
	DIR *dir = NULL;
	size_t n = 0;
	(void)dir_open(base, &dir);
	for (struct dirent *e; dir && n <= STATUS_DIRS_MAX && (e = readdir(dir));)
		n += e->d_name[0] != '.';
	if (dir)
		closedir(dir);
	return n;
}

static int write_file(const char *path, const char *json)
{
	return file_write_atomic(path, json, strlen(json), 0644, 0);
}

int status_dirs_ensure(struct status_dirs *s, const char *name, const struct npu_device *const *devs, size_t n,
		       char *host_dir, size_t size)
{
	char dir[PATH_MAX], file[PATH_MAX], *json = NULL;
	int r;
	if ((r = path_of(s, name, NULL, dir, sizeof(dir))) < 0 || (r = path_of(s, name, STATUS_FILE_NAME, file,
										    sizeof(file))) < 0)
		return r;
	pthread_mutex_lock(&s->lock);
	struct stat st;
	/* A directory is made with its file and removed with it, under the
	 * lock: one that is there has its file. */
	if (stat(dir, &st) == 0) {
		/* Handed out again: a fresh time keeps pruning away. Touched at
		 * most once a minute, so that Allocate's usual cost is one stat. */
		int64_t mtime = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
		if (wall_ms() - mtime > STATUS_TOUCH_MS)
			r = utimensat(AT_FDCWD, dir, NULL, 0) < 0 ? -errno : 0;
		goto out;
	}
	if (count_dirs(s->base) >= STATUS_DIRS_MAX) {
		r = -ENOSPC;
		goto out;
	}
	if ((r = render(devs, NULL, n, &json)) < 0 || (r = mkdir_ensure(dir, 0755)) < 0)
		goto out;
	r = write_file(file, json);
out:
	pthread_mutex_unlock(&s->lock);
	free(json);
	if (r == 0)
		r = str_copy(host_dir, size, dir);
	return r;
}

/* Files a directory holds at most: the status file, what a front end put
 * beside it, and their temp files. */
#define STATUS_DIR_FILES_MAX 128

/* Removes base/name and the files in it; under the lock. */
static int remove_locked(const struct status_dirs *s, const char *name)
{
	char dir[PATH_MAX];
	int r = path_of(s, name, NULL, dir, sizeof(dir));
	if (r < 0)
		return r;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	DIR *d = fdopendir(fd);
	if (!d) {
		r = -errno;
		close(fd);
		return r;
	}
	size_t seen = 0;
	for (struct dirent *e; seen < STATUS_DIR_FILES_MAX && (e = readdir(d));) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		seen++;
		if (unlinkat(fd, e->d_name, 0) < 0 && errno != ENOENT && !r)
			r = -errno;
	}
	closedir(d);
	if (r == 0 && rmdir(dir) < 0 && errno != ENOENT)
		r = -errno;
	return r;
}

/* Whether the file at path holds text already: a file handed out again
 * (the device plugin's metadata, at each Allocate of its set) is then left
 * as it is. Read no further than text is long. */
static bool same_text(const char *path, const char *text)
{
	char *old = NULL, why[64];
	size_t len = 0, want = strlen(text);
	bool same = file_read_bounded(path, want, &old, &len, why, sizeof(why)) == 0 && len == want &&
		    memcmp(old, text, len) == 0;
	free(old);
	return same;
}

int status_dirs_put(struct status_dirs *s, const char *name, const char *file_name, const char *text,
		    char *host_path, size_t size)
{
	char path[PATH_MAX], dir[PATH_MAX];
	struct stat st;
	if (!file_name[0] || file_name[0] == '.' || strchr(file_name, '/') || strcmp(file_name, STATUS_FILE_NAME) == 0)
		return -EINVAL;
	int r = path_of(s, name, file_name, path, sizeof(path));
	if (r < 0 || (r = path_of(s, name, NULL, dir, sizeof(dir))) < 0)
		return r;
	pthread_mutex_lock(&s->lock);
	r = stat(dir, &st) < 0 ? -errno : same_text(path, text) ? 0 : write_file(path, text);
	pthread_mutex_unlock(&s->lock);
	return r == 0 ? str_copy(host_path, size, path) : r;
}

int status_dirs_lookup(struct status_dirs *s, const char *name, const char *file_name, char *host_path,
		       size_t size)
{
	char path[PATH_MAX];
	struct stat st;
	if (!file_name[0] || file_name[0] == '.' || strchr(file_name, '/'))
		return -EINVAL;
	int r = path_of(s, name, file_name, path, sizeof(path));
	if (r < 0)
		return r;
	pthread_mutex_lock(&s->lock);
	r = stat(path, &st) < 0 ? -errno : S_ISREG(st.st_mode) ? 0 : -ENOENT;
	pthread_mutex_unlock(&s->lock);
	return r == 0 ? str_copy(host_path, size, path) : r;
}

int status_dirs_remove(struct status_dirs *s, const char *name)
{
	pthread_mutex_lock(&s->lock);
	int r = remove_locked(s, name);
	pthread_mutex_unlock(&s->lock);
	return r;
}

/* Reads a directory's file and the devices it lists: 0, -ENOENT when the
 * directory has none (yet), -EINVAL when it is not ours to read. */
static int read_entry(const struct status_dirs *s, const char *name, char **ret_text, size_t *ret_len,
		      char (*ids)[NPU_DEVICE_ID_MAX], size_t *ret_n)
{
	char file[PATH_MAX], why[128];
	char *text = NULL;
	size_t len = 0;
	int r = path_of(s, name, STATUS_FILE_NAME, file, sizeof(file));
	if (r == 0 && (r = file_read_bounded(file, STATUS_FILE_MAX, &text, &len, why, sizeof(why))) == 0 &&
	    (r = status_file_devices(text, len, ids, STATUS_FILE_MAX_DEVICES, ret_n, why, sizeof(why))) == 0) {
		*ret_text = text;
		*ret_len = len;
		return 0;
	}
	free(text);
	return r;
}

/* Calls each for every directory of base, at most STATUS_DIRS_MAX. */
static int each_dir(struct status_dirs *s, int (*each)(struct status_dirs *s, const char *name, void *ctx),
		    void *ctx)
{
	DIR *dir;
	int first = dir_open(s->base, &dir);
	if (first < 0)
		return first;
	size_t seen = 0;
	for (struct dirent *e; seen < STATUS_DIRS_MAX && (e = readdir(dir));) {
		if (e->d_name[0] == '.' || (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN))
			continue;
		seen++;
		int r = each(s, e->d_name, ctx);
		if (r < 0 && !first)
			first = r;
	}
	closedir(dir);
	return first;
}

struct refreshing {
	const struct npu_snapshot *snap;
	size_t rewritten;
};

static int refresh_one(struct status_dirs *s, const char *name, void *ctx)
{
	struct refreshing *f = ctx;
	char ids[STATUS_FILE_MAX_DEVICES][NPU_DEVICE_ID_MAX], file[PATH_MAX];
	const struct npu_device *devs[STATUS_FILE_MAX_DEVICES];
	char *old = NULL, *json = NULL;
	size_t len = 0, n = 0;
	int r = read_entry(s, name, &old, &len, ids, &n);
	if (r < 0)
		return r == -ENOENT ? 0 : r; /* a directory being made */
	for (size_t i = 0; i < n; i++)
		devs[i] = npu_snapshot_find(f->snap, ids[i]);
	if ((r = render(devs, ids, n, &json)) == 0 && (strlen(json) != len || memcmp(json, old, len) != 0) &&
	    (r = path_of(s, name, STATUS_FILE_NAME, file, sizeof(file))) == 0) {
		/* Under the lock: a directory pruned meanwhile is not made again. */
		pthread_mutex_lock(&s->lock);
		struct stat st;
		r = stat(file, &st) == 0 ? write_file(file, json) : 0;
		pthread_mutex_unlock(&s->lock);
		f->rewritten += r == 0;
	}
	free(old);
	free(json);
	return r;
}

int status_dirs_refresh(struct status_dirs *s, const struct npu_snapshot *snap, size_t *ret_rewritten)
{
	struct refreshing f = { .snap = snap };
	int r = each_dir(s, refresh_one, &f);
	*ret_rewritten = f.rewritten;
	return r;
}

struct pruning {
	int64_t before_ms;
	status_dirs_unused_fn fn;
	void *ctx;
	size_t removed;
};

static bool idle(const struct status_dirs *s, const char *name, int64_t before_ms)
{
	char dir[PATH_MAX];
	struct stat st;
	if (path_of(s, name, NULL, dir, sizeof(dir)) < 0 || stat(dir, &st) < 0)
		return false;
	return (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000 < before_ms;
}

static int prune_one(struct status_dirs *s, const char *name, void *ctx)
{
	struct pruning *p = ctx;
	char ids[STATUS_FILE_MAX_DEVICES][NPU_DEVICE_ID_MAX];
	char *text = NULL;
	size_t len = 0, n = 0;
	if (!idle(s, name, p->before_ms))
		return 0;
	int r = read_entry(s, name, &text, &len, ids, &n);
	free(text);
	if (r < 0 || !p->fn(p->ctx, name, ids, n))
		return r == -ENOENT ? 0 : r;
	pthread_mutex_lock(&s->lock);
	/* Looked at again under the lock: Allocate may have just handed it out. */
	bool gone = false;
	if (idle(s, name, p->before_ms))
		gone = (r = remove_locked(s, name)) == 0;
	pthread_mutex_unlock(&s->lock);
	p->removed += gone;
	return r;
}

int status_dirs_prune(struct status_dirs *s, int64_t idle_ms, status_dirs_unused_fn fn, void *ctx,
		      size_t *ret_removed)
{
	struct pruning p = { .before_ms = wall_ms() - idle_ms, .fn = fn, .ctx = ctx };
	int r = each_dir(s, prune_one, &p);
	*ret_removed = p.removed;
	return r;
}
