/* SPDX-License-Identifier: Apache-2.0 */
/* The CDI spec writer: names derived from the resource name, the spec's JSON
 * for a known node read back with json-c (version, kind, one device per chip
 * with its node's real numbers, the shared nodes and read-only driver
 * mounts), and the file: replaced atomically (a reader holds the old file or
 * the new one, never a part; no temp file is left, whatever happened),
 * 0644 whatever the umask, and removed. The device nodes are symlinks to
 * /dev/null and friends, so real character devices are read without mknod. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "support/node_tree.h"
#include "support/tmpdir.h"
#include <json-c/json.h>

#include "base/file.h"
#include "base/parse.h"
#include "node/cdi.h"

struct fixture {
	char root[64];     /* also the host root */
	char dev[96];
	char cdi_dir[96];
	struct cdi_names names;
};

static void make_file(const char *path)
{
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	assert_int_equal(fclose(f), 0);
}

static void make_dirs(const char *root, const char *relative)
{
	char path[256];
	assert_int_equal(path_join(path, sizeof(path), root, relative), 0);
	assert_int_equal(mkdir_p(path, 0755), 0);
}

static void under(const struct fixture *f, const char *relative, char *buf, size_t size)
{
	assert_true((size_t)snprintf(buf, size, "%s/%s", f->root, relative) < size);
}

static void dev_link(const struct fixture *f, const char *name, const char *target)
{
	char path[160];
	snprintf(path, sizeof(path), "%s/%s", f->dev, name);
	assert_int_equal(symlink(target, path), 0);
}

static void dev_file(const struct fixture *f, const char *name)
{
	char path[160];
	snprintf(path, sizeof(path), "%s/%s", f->dev, name);
	make_file(path);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	assert_int_equal(tmpdir_make(f->root, sizeof(f->root), "cdi-unit"), 0);
	snprintf(f->dev, sizeof(f->dev), "%s/dev", f->root);
	snprintf(f->cdi_dir, sizeof(f->cdi_dir), "%s/cdi", f->root);
	assert_int_equal(mkdir(f->dev, 0755), 0);
	assert_int_equal(mkdir(f->cdi_dir, 0755), 0);
	char why[256];
	assert_int_equal(cdi_names_from_resource("ascend.com/npu", &f->names, why, sizeof(why)), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	tmpdir_remove(f->root);
	free(f);
	return 0;
}

static struct npu_snapshot *snapshot(size_t count, const uint32_t *phys, enum npu_family family)
{
	struct npu_snapshot *s = npu_snapshot_new(count);
	assert_non_null(s);
	for (size_t i = 0; i < count; i++) {
		snprintf(s->devices[i].id, sizeof(s->devices[i].id), "npu-%u", phys[i]);
		s->devices[i].chip.phy_id = phys[i];
		s->devices[i].chip.family = family;
		s->devices[i].healthy = true;
	}
	s->healthy = count;
	return s;
}

static json_object *render(const struct fixture *f, const struct npu_snapshot *snap, char **ret_text)
{
	const struct host_paths paths = { .dev_dir = f->dev, .host_root = f->root, .driver_path = "/usr/local/Ascend/driver" };
	char *text = NULL;
	struct host_files *files;
	assert_int_equal(host_files_scan(&paths, &files), 0);
	assert_int_equal(cdi_spec_render(&f->names, snap, &paths, files, &text), 0);
	host_files_unref(files);
	assert_non_null(text);
	assert_true(strlen(text) > 0 && text[strlen(text) - 1] == '\n');
	json_object *spec = json_tokener_parse(text);
	if (!spec)
		fail_msg("the spec is not JSON:\n%s", text);
	if (ret_text)
		*ret_text = text;
	else
		free(text);
	return spec;
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;
	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("no \"%s\" in %s", key, json_object_to_json_string(o));
	return v;
}

static bool has(json_object *o, const char *key)
{
	return json_object_object_get_ex(o, key, NULL);
}

static const char *get_string(json_object *o, const char *key)
{
	return json_object_get_string(get(o, key));
}

/* A device node with the numbers of the character device target. */
static void expect_char_node(json_object *node, const char *path, const char *host_path, const char *target)
{
	struct stat st;
	assert_int_equal(stat(target, &st), 0);
	assert_string_equal(get_string(node, "path"), path);
	assert_string_equal(get_string(node, "hostPath"), host_path);
	assert_string_equal(get_string(node, "type"), "c");
	assert_int_equal(json_object_get_int64(get(node, "major")), major(st.st_rdev));
	assert_int_equal(json_object_get_int64(get(node, "minor")), minor(st.st_rdev));
	assert_int_equal(json_object_get_int64(get(node, "fileMode")), st.st_mode & 0777);
	assert_string_equal(get_string(node, "permissions"), "rw");
}

static void expect_mount(json_object *mount, const char *path)
{
	assert_string_equal(get_string(mount, "hostPath"), path);
	assert_string_equal(get_string(mount, "containerPath"), path);
	assert_string_equal(get_string(mount, "type"), "bind");
	json_object *options = get(mount, "options");
	bool ro = false, bind = false;
	for (size_t i = 0; i < json_object_array_length(options); i++) {
		const char *o = json_object_get_string(json_object_array_get_idx(options, i));
		ro |= strcmp(o, "ro") == 0;
		bind |= strcmp(o, "rbind") == 0 || strcmp(o, "bind") == 0;
	}
	assert_true(ro && bind);
}

static void test_names(void **state)
{
	(void)state;
	struct cdi_names n;
	char why[256];

	assert_int_equal(cdi_names_from_resource("ascend.com/npu", &n, why, sizeof(why)), 0);
	assert_string_equal(n.kind, "ascend.com/npu");
	assert_string_equal(n.file_name, "ascend.com-npu.json");
	assert_string_equal(n.annotation_key, "cdi.k8s.io/ascend.com_npu");
	assert_string_equal(n.version, "0.5.0");

	/* A dot in the class needs 0.6.0. */
	assert_int_equal(cdi_names_from_resource("example.com/npu.v2", &n, why, sizeof(why)), 0);
	assert_string_equal(n.version, "0.6.0");
	assert_string_equal(n.file_name, "example.com-npu.v2.json");

	assert_int_equal(cdi_names_from_resource("4paradigm.com/npu", &n, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "start with a letter"));
	assert_int_equal(cdi_names_from_resource("ascend.com/910", &n, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "('910')"));

	/* The annotation key's name part holds at most 63 characters. */
	char resource[128];
	snprintf(resource, sizeof(resource), "%s.example.com/npu", "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz");
	assert_int_equal(cdi_names_from_resource(resource, &n, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "longer than 63 characters"));
	snprintf(resource, sizeof(resource), "%s.example.com/npu", "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstu");
	assert_int_equal(strlen(resource), 63); /* so is <vendor>_<class>: the limit */
	assert_int_equal(cdi_names_from_resource(resource, &n, why, sizeof(why)), 0);
}

/* Two 910B chips, one of them Unhealthy (health is not in the spec). */
static void test_spec_content(void **state)
{
	struct fixture *f = *state;
	dev_link(f, "davinci0", "/dev/null");
	dev_link(f, "davinci2", "/dev/zero");
	dev_link(f, "davinci_manager", "/dev/full");
	dev_link(f, "devmm_svm", "/dev/random");
	dev_file(f, "hisi_hdc"); /* not a device node here: no numbers */
	make_dirs(f->root, "usr/local/Ascend/driver/lib64");
	make_dirs(f->root, "etc");
	char path[160];
	under(f, "usr/local/Ascend/driver/version.info", path, sizeof(path));
	make_file(path);
	under(f, "etc/ascend_install.info", path, sizeof(path));
	make_file(path);

	const uint32_t phys[] = { 0, 2 };
	struct npu_snapshot *snap = snapshot(2, phys, NPU_FAMILY_910B);
	char *text;
	json_object *spec = render(f, snap, &text);

	assert_string_equal(get_string(spec, "cdiVersion"), "0.5.0");
	assert_string_equal(get_string(spec, "kind"), "ascend.com/npu");
	json_object *devices = get(spec, "devices");
	assert_int_equal(json_object_array_length(devices), 2);
	const char *names[] = { "0", "2" };
	const char *nodes[] = { "/dev/davinci0", "/dev/davinci2" };
	const char *targets[] = { "/dev/null", "/dev/zero" };
	for (size_t i = 0; i < 2; i++) {
		json_object *device = json_object_array_get_idx(devices, i);
		assert_string_equal(get_string(device, "name"), names[i]);
		json_object *device_nodes = get(get(device, "containerEdits"), "deviceNodes");
		assert_int_equal(json_object_array_length(device_nodes), 1);
		expect_char_node(json_object_array_get_idx(device_nodes, 0), nodes[i], nodes[i], targets[i]);
	}

	/* Spec-wide: the 910B shared nodes that exist, in mount order. */
	json_object *edits = get(spec, "containerEdits");
	assert_false(has(edits, "env"));
	json_object *shared = get(edits, "deviceNodes");
	assert_int_equal(json_object_array_length(shared), 3);
	expect_char_node(json_object_array_get_idx(shared, 0), "/dev/davinci_manager", "/dev/davinci_manager",
			 "/dev/full");
	expect_char_node(json_object_array_get_idx(shared, 1), "/dev/devmm_svm", "/dev/devmm_svm", "/dev/random");
	json_object *hdc = json_object_array_get_idx(shared, 2);
	assert_string_equal(get_string(hdc, "path"), "/dev/hisi_hdc");
	assert_false(has(hdc, "type"));
	assert_false(has(hdc, "major"));
	assert_false(has(hdc, "minor"));

	/* The driver paths that exist, as host paths; include and npu-smi do not. */
	json_object *mounts = get(edits, "mounts");
	assert_int_equal(json_object_array_length(mounts), 3);
	expect_mount(json_object_array_get_idx(mounts, 0), "/usr/local/Ascend/driver/lib64");
	expect_mount(json_object_array_get_idx(mounts, 1), "/usr/local/Ascend/driver/version.info");
	expect_mount(json_object_array_get_idx(mounts, 2), "/etc/ascend_install.info");
	assert_null(strstr(text, "\\/")); /* paths are written plainly */
	json_object_put(spec);

	/* A vNPU: named vnpu-<id>, its host node vdavinci<id> seen as davinci<id>. */
	dev_link(f, "vdavinci132", "/dev/urandom");
	struct npu_snapshot *vsnap = snapshot(1, (const uint32_t[]){ 2 }, NPU_FAMILY_910B);
	vsnap->devices[0].kind = NPU_DEVICE_VNPU;
	vsnap->devices[0].vnpu = (struct npu_vnpu){ .id = 132, .phy_id = 2, .template_name = "vir04" };
	char *vtext;
	json_object *vspec = render(f, vsnap, &vtext);
	json_object *vdevice = json_object_array_get_idx(get(vspec, "devices"), 0);
	assert_string_equal(get_string(vdevice, "name"), "vnpu-132");
	expect_char_node(json_object_array_get_idx(get(get(vdevice, "containerEdits"), "deviceNodes"), 0),
			 "/dev/davinci132", "/dev/vdavinci132", "/dev/urandom");
	json_object_put(vspec);
	free(vtext);
	npu_snapshot_unref(vsnap);

	/* Health changes nothing in the text: the daemon does not rewrite it. */
	snap->devices[1].healthy = false;
	snap->devices[1].fault = NPU_FAULT_HEALTH_LEVEL;
	snap->healthy = 1;
	char *again;
	json_object_put(render(f, snap, &again));
	assert_string_equal(again, text);
	free(again);
	free(text);
	npu_snapshot_unref(snap);
}

/* 310B with its docker-specific manager, plus a chip of another family:
 * each shared node once, the manager under its usual name inside. */
static void test_spec_310b_and_mixed_families(void **state)
{
	struct fixture *f = *state;
	dev_link(f, "davinci1", "/dev/null");
	dev_link(f, "davinci_manager", "/dev/full");
	dev_link(f, "davinci_manager_docker", "/dev/zero");
	dev_file(f, "svm0");
	dev_file(f, "dvpp_cmdlist");

	const uint32_t phys[] = { 1 };
	struct npu_snapshot *snap = snapshot(1, phys, NPU_FAMILY_310B);
	json_object *spec = render(f, snap, NULL);
	json_object *shared = get(get(spec, "containerEdits"), "deviceNodes");
	expect_char_node(json_object_array_get_idx(shared, 0), "/dev/davinci_manager", "/dev/davinci_manager_docker",
			 "/dev/zero");
	size_t n = json_object_array_length(shared);
	assert_int_equal(n, 3); /* davinci_manager, svm0, dvpp_cmdlist */
	assert_false(has(get(spec, "containerEdits"), "mounts")); /* no driver on this host: none */
	json_object_put(spec);
	npu_snapshot_unref(snap);

	struct npu_snapshot *mixed = npu_snapshot_new(2);
	assert_non_null(mixed);
	for (uint32_t i = 0; i < 2; i++) {
		snprintf(mixed->devices[i].id, sizeof(mixed->devices[i].id), "npu-%u", i);
		mixed->devices[i].chip.phy_id = i;
		mixed->devices[i].chip.family = i ? NPU_FAMILY_310P : NPU_FAMILY_310;
	}
	spec = render(f, mixed, NULL);
	shared = get(get(spec, "containerEdits"), "deviceNodes");
	/* 310 and 310P share davinci_manager and dvpp_cmdlist: each once. */
	assert_int_equal(json_object_array_length(shared), 2);
	assert_string_equal(get_string(json_object_array_get_idx(shared, 0), "path"), "/dev/davinci_manager");
	assert_string_equal(get_string(json_object_array_get_idx(shared, 1), "path"), "/dev/dvpp_cmdlist");
	json_object_put(spec);
	npu_snapshot_unref(mixed);
}

static void test_spec_needs_devices(void **state)
{
	struct fixture *f = *state;
	struct npu_snapshot *empty = npu_snapshot_new(0);
	const struct host_paths paths = { .dev_dir = f->dev, .host_root = f->root, .driver_path = "/d" };
	char *text = NULL;
	assert_int_equal(cdi_spec_render(&f->names, empty, &paths, NULL, &text), -EINVAL);
	assert_null(text);
	npu_snapshot_unref(empty);
}

/* The names in the spec directory, sorted, comma separated. */
static void list_dir(const char *dir, char *buf, size_t size)
{
	assert_int_equal(node_tree_list(dir, buf, size), 0);
}

static void read_all(int fd, char *buf, size_t size)
{
	ssize_t n = pread(fd, buf, size - 1, 0);
	assert_true(n >= 0);
	buf[n] = '\0';
}

static void read_path(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	read_all(fd, buf, size);
	close(fd);
}

static void test_write_is_atomic(void **state)
{
	struct fixture *f = *state;
	char path[160], tmp[160], listing[256], buf[256];
	snprintf(path, sizeof(path), "%s/ascend.com-npu.json", f->cdi_dir);
	snprintf(tmp, sizeof(tmp), "%s/.ascend.com-npu.json.tmp", f->cdi_dir);

	/* A temp file left by a crash is replaced, and does not survive. */
	int fd = open(tmp, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "{\"partial", 9), 9);
	close(fd);

	mode_t old_umask = umask(077);
	assert_int_equal(cdi_spec_write(f->cdi_dir, "ascend.com-npu.json", "{\"v\": 1}\n"), 0);
	umask(old_umask);
	list_dir(f->cdi_dir, listing, sizeof(listing));
	assert_string_equal(listing, "ascend.com-npu.json");
	struct stat first;
	assert_int_equal(stat(path, &first), 0);
	assert_int_equal(first.st_mode & 07777, 0644);

	/* A reader that opened the file before the rewrite keeps reading the
	 * whole old text; the path gives the whole new one: the file is
	 * replaced, never rewritten in place. */
	int reader = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(reader >= 0);
	assert_int_equal(cdi_spec_write(f->cdi_dir, "ascend.com-npu.json", "{\"v\": 2, \"more\": true}\n"), 0);
	read_all(reader, buf, sizeof(buf));
	assert_string_equal(buf, "{\"v\": 1}\n");
	close(reader);
	read_path(path, buf, sizeof(buf));
	assert_string_equal(buf, "{\"v\": 2, \"more\": true}\n");
	struct stat second;
	assert_int_equal(stat(path, &second), 0);
	assert_true(second.st_ino != first.st_ino);
	list_dir(f->cdi_dir, listing, sizeof(listing));
	assert_string_equal(listing, "ascend.com-npu.json");
}

static void test_write_failure_leaves_old_file(void **state)
{
	struct fixture *f = *state;
	char listing[256], buf[64], blocker[160], blocked[176];

	/* The rename cannot replace a directory: the write fails, the temp
	 * file goes. */
	snprintf(blocker, sizeof(blocker), "%s/ascend.com-npu.json", f->cdi_dir);
	assert_int_equal(mkdir(blocker, 0755), 0);
	snprintf(blocked, sizeof(blocked), "%s/keep", blocker);
	make_file(blocked);
	int r = cdi_spec_write(f->cdi_dir, "ascend.com-npu.json", "{}\n");
	assert_true(r == -EISDIR || r == -ENOTEMPTY || r == -EEXIST);
	list_dir(f->cdi_dir, listing, sizeof(listing));
	assert_string_equal(listing, "ascend.com-npu.json");
	unlink(blocked);
	rmdir(blocker);

	/* A failed write leaves the previous spec as it was. */
	assert_int_equal(cdi_spec_write(f->cdi_dir, "ascend.com-npu.json", "{\"v\": 1}\n"), 0);
	char missing[160];
	snprintf(missing, sizeof(missing), "%s/missing", f->cdi_dir);
	assert_int_equal(cdi_spec_write(missing, "ascend.com-npu.json", "{}\n"), -ENOENT);
	read_path(blocker, buf, sizeof(buf));
	assert_string_equal(buf, "{\"v\": 1}\n");
}

static void test_remove(void **state)
{
	struct fixture *f = *state;
	char listing[256], tmp[160];
	assert_int_equal(cdi_spec_write(f->cdi_dir, "ascend.com-npu.json", "{}\n"), 0);
	snprintf(tmp, sizeof(tmp), "%s/.ascend.com-npu.json.tmp", f->cdi_dir);
	make_file(tmp); /* as a crash mid-write leaves it */
	char other[160];
	snprintf(other, sizeof(other), "%s/other-vendor.json", f->cdi_dir);
	make_file(other);

	assert_int_equal(cdi_spec_remove(f->cdi_dir, "ascend.com-npu.json"), 0);
	list_dir(f->cdi_dir, listing, sizeof(listing));
	assert_string_equal(listing, "other-vendor.json");
	/* Nothing left to remove is no error. */
	assert_int_equal(cdi_spec_remove(f->cdi_dir, "ascend.com-npu.json"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test_setup_teardown(test_spec_content, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spec_310b_and_mixed_families, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spec_needs_devices, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_is_atomic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_failure_leaves_old_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remove, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
