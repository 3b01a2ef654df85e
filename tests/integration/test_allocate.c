/* SPDX-License-Identifier: Apache-2.0 */
/* Allocate as the kubelet calls it, over the plugin's real unix socket: the
 * container response (device nodes by physical id, the family's shared
 * nodes and the driver paths that exist on the host, read-only, and
 * ASCEND_VISIBLE_DEVICES), paths given as host paths, and every bad request
 * answered with the exact gRPC status and a message naming the problem while
 * the plugin keeps serving. Requests go through kubelet-sim's `allocate*`
 * commands, and straight through gc_unary where the test needs bytes
 * kubelet-sim would never send. */
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "base/file.h"
#include "deviceplugin.pb-c.h"
#include "deviceplugin_api.h"
#include "harness/harness.h"
#include "node/status_files.h"
#include "plugin/allocate.h"

#define BLOCK_LINES 64
#define BLOCK_LINE_SIZE 512

/* --- kubelet-sim answers -------------------------------------------------- */

/* The lines of one `allocate ...` answer: `allocate ok` up to and including
 * `allocate end`, or the single `allocate error` line. */
struct block {
	char lines[BLOCK_LINES][BLOCK_LINE_SIZE];
	size_t n;
	/* What every answer carries besides the files it hands out, set apart
	 * so that the tests of those see them alone: the live status file's
	 * mount (the last one seen) and variables, the device metadata's, and
	 * ASCEND_RT_VISIBLE_DEVICES. */
	char status_mount[BLOCK_LINE_SIZE], metadata_mount[BLOCK_LINE_SIZE];
	size_t n_status_mounts, n_status_envs, n_rt_envs, n_metadata_mounts, n_metadata_envs;
};

/* Sets the line apart when it is one of those; says whether it was. */
static bool set_apart(struct block *b, const char *line)
{
	if (strncmp(line, "allocate mount ", 15) == 0 && strstr(line, " container=" STATUS_CONTAINER_DIR " ")) {
		snprintf(b->status_mount, sizeof(b->status_mount), "%s", line);
		b->n_status_mounts++;
		return true;
	}
	if (strncmp(line, "allocate env name=" STATUS_ENV " ", strlen("allocate env name=" STATUS_ENV " ")) == 0) {
		assert_string_equal(line, "allocate env name=" STATUS_ENV " value=" STATUS_CONTAINER_DIR "/" STATUS_FILE_NAME);
		b->n_status_envs++;
		return true;
	}
	if (strncmp(line, "allocate mount ", 15) == 0 && strstr(line, " container=" ALLOCATE_METADATA_PATH " ")) {
		snprintf(b->metadata_mount, sizeof(b->metadata_mount), "%s", line);
		b->n_metadata_mounts++;
		return true;
	}
	if (strncmp(line, "allocate env name=" ALLOCATE_METADATA_ENV " ",
		    strlen("allocate env name=" ALLOCATE_METADATA_ENV " ")) == 0) {
		assert_string_equal(line, "allocate env name=" ALLOCATE_METADATA_ENV " value=" ALLOCATE_METADATA_PATH);
		b->n_metadata_envs++;
		return true;
	}
	if (strncmp(line, "allocate env name=ASCEND_RT_VISIBLE_DEVICES ", 44) == 0) {
		b->n_rt_envs++;
		return true;
	}
	return false;
}

static void block_add(struct block *b, const char *line)
{
	assert_true(b->n < BLOCK_LINES);
	assert_true(strlen(line) < BLOCK_LINE_SIZE);
	snprintf(b->lines[b->n++], BLOCK_LINE_SIZE, "%s", line);
}

/* The next line of kubelet-sim's that starts with "allocate ". */
static const char *next_allocate_line(struct proc *k)
{
	for (;;) {
		const char *line = proc_expect(k, "allocate ", WAIT_MS);
		assert_non_null(line);
		if (strncmp(line, "allocate ", 9) == 0)
			return line;
	}
}

/* Sends one command and collects its answer. */
static void sim_allocate(struct proc *k, const char *command, struct block *b)
{
	memset(b, 0, sizeof(*b));
	proc_send(k, command);
	const char *line = next_allocate_line(k);
	block_add(b, line);
	if (strncmp(line, "allocate error", 14) == 0)
		return;
	if (strncmp(line, "allocate ok", 11) != 0)
		fail_msg("'%s' answered '%s'", command, line);
	do {
		line = next_allocate_line(k);
		if (!set_apart(b, line))
			block_add(b, line);
	} while (strcmp(line, "allocate end") != 0);
}

static bool block_has(const struct block *b, const char *line)
{
	for (size_t i = 0; i < b->n; i++)
		if (strcmp(b->lines[i], line) == 0)
			return true;
	return false;
}

static size_t block_count(const struct block *b, const char *prefix)
{
	size_t n = 0;
	for (size_t i = 0; i < b->n; i++)
		n += strncmp(b->lines[i], prefix, strlen(prefix)) == 0;
	return n;
}

static bool block_mentions(const struct block *b, const char *text)
{
	for (size_t i = 0; i < b->n; i++)
		if (strstr(b->lines[i], text))
			return true;
	return false;
}

static void dump_block(const struct block *b)
{
	for (size_t i = 0; i < b->n; i++)
		fprintf(stderr, "    | %s\n", b->lines[i]);
}

static void expect_line(const struct block *b, const char *line)
{
	if (!block_has(b, line)) {
		dump_block(b);
		fail_msg("missing line '%s'", line);
	}
}

static void expect_no_mention(const struct block *b, const char *text)
{
	if (block_mentions(b, text)) {
		dump_block(b);
		fail_msg("the answer mentions '%s'", text);
	}
}

static void expect_device(const struct block *b, const char *path)
{
	char line[BLOCK_LINE_SIZE];
	snprintf(line, sizeof(line), "allocate device host=%s container=%s permissions=rw", path, path);
	expect_line(b, line);
}

static void expect_mount(const struct block *b, const char *path)
{
	char line[BLOCK_LINE_SIZE];
	snprintf(line, sizeof(line), "allocate mount host=%s container=%s read_only=1", path, path);
	expect_line(b, line);
}

/* An `allocate error` with this gRPC code whose message contains every
 * given fragment (NULL-terminated). */
static void expect_error(const struct block *b, unsigned code, ...)
{
	char want[64];
	snprintf(want, sizeof(want), "allocate error code=%u message=", code);
	if (b->n != 1 || strncmp(b->lines[0], want, strlen(want)) != 0) {
		dump_block(b);
		fail_msg("expected a line starting with '%s'", want);
	}
	va_list ap;
	va_start(ap, code);
	for (const char *fragment = va_arg(ap, const char *); fragment; fragment = va_arg(ap, const char *)) {
		if (!strstr(b->lines[0], fragment)) {
			va_end(ap);
			fail_msg("'%s' does not name '%s'", b->lines[0], fragment);
		}
	}
	va_end(ap);
}

/* A plain one-device allocation still succeeds: the plugin kept serving. */
static void expect_still_serves(struct proc *k, const char *id)
{
	char command[96], want[96];
	snprintf(command, sizeof(command), "allocate-ids %s", id);
	snprintf(want, sizeof(want), "allocate ok ids=%s", id);
	struct block b;
	sim_allocate(k, command, &b);
	expect_line(&b, want);
}

/* --- nodes -------------------------------------------------------------- */

/* Builds the node and waits until kubelet-sim lists all its chips healthy. */
static void start_node(struct node *node, const struct node_options *options)
{
	node_init(node, options);
	node_start_registered(node, NULL);
}

/* --- direct gRPC -------------------------------------------------------- */

/* Packs an AllocateRequest of one container asking for ids. */
static uint8_t *pack_request(const char *const ids[], size_t n, size_t *ret_len)
{
	V1beta1__ContainerAllocateRequest container = V1BETA1__CONTAINER_ALLOCATE_REQUEST__INIT;
	V1beta1__ContainerAllocateRequest *containers[1] = { &container };
	V1beta1__AllocateRequest req = V1BETA1__ALLOCATE_REQUEST__INIT;
	char *copies[16];
	assert_true(n <= 16);
	for (size_t i = 0; i < n; i++)
		copies[i] = (char *)(uintptr_t)ids[i];
	container.devices_ids = copies;
	container.n_devices_ids = n;
	req.container_requests = containers;
	req.n_container_requests = 1;
	size_t len = v1beta1__allocate_request__get_packed_size(&req);
	uint8_t *buf = malloc(len);
	assert_non_null(buf);
	v1beta1__allocate_request__pack(&req, buf);
	*ret_len = len;
	return buf;
}

/* Allocate with a deadline; returns the decoded answer (status OK) or NULL
 * with the status in *res. */
static V1beta1__AllocateResponse *call_allocate(struct gc_channel *ch, const uint8_t *body, size_t len,
						 struct gc_result *res)
{
	assert_int_equal(gc_unary(ch, DP_METHOD_ALLOCATE, body, len, WAIT_MS, res), 0);
	if (res->status != GRPC_STATUS_OK)
		return NULL;
	static const uint8_t empty[1];
	V1beta1__AllocateResponse *resp =
		v1beta1__allocate_response__unpack(NULL, res->len, res->body ? res->body : empty);
	assert_non_null(resp);
	return resp;
}

static V1beta1__AllocateResponse *allocate_ids(struct gc_channel *ch, const char *const ids[], size_t n)
{
	size_t len;
	uint8_t *body = pack_request(ids, n, &len);
	struct gc_result res;
	V1beta1__AllocateResponse *resp = call_allocate(ch, body, len, &res);
	if (!resp)
		fail_msg("Allocate answered status %d: %s", (int)res.status, res.details);
	gc_result_clear(&res);
	free(body);
	assert_int_equal(resp->n_container_responses, 1);
	return resp;
}

static int device_index(const V1beta1__ContainerAllocateResponse *c, const char *path)
{
	for (size_t i = 0; i < c->n_devices; i++)
		if (strcmp(c->devices[i]->host_path, path) == 0)
			return (int)i;
	return -1;
}

static const char *env_value(const V1beta1__ContainerAllocateResponse *c, const char *key)
{
	for (size_t i = 0; i < c->n_envs; i++)
		if (strcmp(c->envs[i]->key, key) == 0)
			return c->envs[i]->value;
	return NULL;
}

static json_object *member(json_object *o, const char *key)
{
	json_object *v = NULL;
	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("no \"%s\" in %s", key, json_object_to_json_string(o));
	return v;
}

static int64_t int_attribute(json_object *attrs, const char *name)
{
	return json_object_get_int64(member(member(attrs, name), "int"));
}

/* The device metadata of an answer: the file mounted at
 * ALLOCATE_METADATA_PATH (read at its host path) and named by
 * ASCEND_NPU_METADATA lists the chips phys[n] in the container's order,
 * numbered 0 to n-1 as ASCEND_RT_VISIBLE_DEVICES numbers them, in both API
 * versions. */
static void expect_metadata(const V1beta1__ContainerAllocateResponse *c, const unsigned *phys, size_t n)
{
	const char *host = NULL;
	for (size_t i = 0; i < c->n_mounts; i++)
		if (strcmp(c->mounts[i]->container_path, ALLOCATE_METADATA_PATH) == 0) {
			assert_null(host);
			assert_true(c->mounts[i]->read_only);
			host = c->mounts[i]->host_path;
		}
	assert_non_null(host);
	assert_string_equal(env_value(c, ALLOCATE_METADATA_ENV), ALLOCATE_METADATA_PATH);
	char *text = NULL, why[128];
	size_t len = 0;
	if (file_read_bounded(host, 1 << 20, &text, &len, why, sizeof(why)) < 0)
		fail_msg("%s: %s", host, why);
	static const char *const versions[] = { "metadata.resource.k8s.io/v1beta1", "metadata.resource.k8s.io/v1alpha1" };
	json_tokener *tok = json_tokener_new();
	assert_non_null(tok);
	size_t at = 0;
	for (size_t v = 0; v < 2; v++) {
		json_object *doc = json_tokener_parse_ex(tok, text + at, (int)(len - at));
		assert_non_null(doc);
		at += (size_t)json_tokener_get_parse_end(tok);
		json_tokener_reset(tok);
		assert_string_equal(json_object_get_string(member(doc, "kind")), "DeviceMetadata");
		assert_string_equal(json_object_get_string(member(doc, "apiVersion")), versions[v]);
		json_object *req = json_object_array_get_idx(member(doc, "requests"), 0);
		assert_non_null(req);
		assert_string_equal(json_object_get_string(member(req, "name")), "ascend.com/npu");
		json_object *devices = member(req, "devices");
		assert_int_equal(json_object_array_length(devices), n);
		for (size_t i = 0; i < n; i++) {
			json_object *d = json_object_array_get_idx(devices, i), *attrs = member(d, "attributes");
			char id[32];
			snprintf(id, sizeof(id), "npu-%u", phys[i]);
			assert_string_equal(json_object_get_string(member(d, "name")), id);
			assert_string_equal(json_object_get_string(member(d, "driver")), "ascend.com/npu");
			assert_int_equal(int_attribute(attrs, "physicalID"), phys[i]);
			assert_int_equal(int_attribute(attrs, "containerLogicalID"), i);
			assert_string_equal(json_object_get_string(member(member(attrs, "family"), "string")), "910B");
		}
		json_object_put(doc);
	}
	/* The two objects and nothing else, each on a line of its own. */
	assert_int_equal(at, len);
	assert_int_equal(text[len - 1], '\n');
	json_tokener_free(tok);
	free(text);
}

/* "allocate 2" on a node that has no dev/dvpp_cmdlist: npu-0 and npu-1,
 * their nodes and the three shared ones, and no other device node. */
static void expect_first_two(struct proc *k, struct block *b)
{
	sim_allocate(k, "allocate 2", b);
	expect_line(b, "allocate ok ids=npu-0,npu-1");
	expect_device(b, "/dev/davinci0");
	expect_device(b, "/dev/davinci1");
	expect_device(b, "/dev/davinci_manager");
	expect_device(b, "/dev/devmm_svm");
	expect_device(b, "/dev/hisi_hdc");
	assert_int_equal(block_count(b, "allocate device "), 5);
	expect_line(b, "allocate env name=ASCEND_VISIBLE_DEVICES value=0,1");
}

/* dev/dvpp_cmdlist appearing: once the plugin says it saw it, request
 * (for one chip) gets it and the chip's node chip_dev, of 5 device nodes. */
static void expect_dvpp_handed_out(struct node *node, const char *request, const char *chip_dev, struct block *b)
{
	node_touch(node, "dev/dvpp_cmdlist");
	expect_event(node->plugin, "host-files.changed", "change", "/dev/dvpp_cmdlist appeared");
	sim_allocate(node->kubelet, request, b);
	expect_device(b, chip_dev);
	expect_device(b, "/dev/dvpp_cmdlist");
	assert_int_equal(block_count(b, "allocate device "), 5);
}

/* --- tests -------------------------------------------------------------- */

static void test_two_npus_on_910b(void **state)
{
	(void)state;
	struct node node;
	start_node(&node, &(struct node_options){ .chips = 8 });
	struct proc *k = node.kubelet;

	struct block b;
	/* dvpp_cmdlist is optional and this node has none. */
	expect_first_two(k, &b);
	expect_mount(&b, "/usr/local/Ascend/driver/lib64");
	expect_mount(&b, "/usr/local/Ascend/driver/version.info");
	expect_mount(&b, "/usr/local/bin/npu-smi");
	expect_mount(&b, "/etc/ascend_install.info");
	/* No include/ and no /usr/local/dcmi on this node. */
	assert_int_equal(block_count(&b, "allocate mount "), 4);
	/* Host paths, never the plugin's view of them. */
	expect_no_mention(&b, node.root);
	expect_no_mention(&b, "dvpp_cmdlist");

	/* An optional node that appears is handed out once the plugin has
	 * looked again, which the node's event makes it do at once. */
	expect_dvpp_handed_out(&node, "allocate 1", "/dev/davinci2", &b);
	expect_line(&b, "allocate ok ids=npu-2");
	expect_device(&b, "/dev/davinci_manager");
	expect_line(&b, "allocate env name=ASCEND_VISIBLE_DEVICES value=2");
	expect_no_mention(&b, "davinci0");

	/* Several containers in one request: each gets its own answer. */
	sim_allocate(k, "allocate-many 2 npu-6,npu-4", &b);
	expect_line(&b, "allocate container index=0");
	expect_line(&b, "allocate container index=1");
	assert_int_equal(block_count(&b, "allocate env name=ASCEND_VISIBLE_DEVICES value=4,6"), 2);
	node_fini(&node);
}

static void test_ids_out_of_order_follow_phy_order(void **state)
{
	(void)state;
	struct node node;
	start_node(&node, &(struct node_options){ .chips = 16 });
	struct gc_channel *ch = node_plugin_channel(&node);

	V1beta1__AllocateResponse *resp = allocate_ids(ch, (const char *[]){ "npu-5", "npu-2" }, 2);
	const V1beta1__ContainerAllocateResponse *c = resp->container_responses[0];
	assert_string_equal(env_value(c, "ASCEND_VISIBLE_DEVICES"), "2,5");
	assert_true(c->n_devices >= 2);
	assert_string_equal(c->devices[0]->host_path, "/dev/davinci2");
	assert_string_equal(c->devices[0]->container_path, "/dev/davinci2");
	assert_string_equal(c->devices[1]->host_path, "/dev/davinci5");
	assert_string_equal(c->devices[1]->container_path, "/dev/davinci5");
	for (size_t i = 0; i < c->n_devices; i++)
		assert_string_equal(c->devices[i]->permissions, "rw");
	for (size_t i = 0; i < c->n_mounts; i++) {
		assert_true(c->mounts[i]->read_only);
		if (strcmp(c->mounts[i]->container_path, STATUS_CONTAINER_DIR) != 0 &&
		    strcmp(c->mounts[i]->container_path, ALLOCATE_METADATA_PATH) != 0)
			assert_string_equal(c->mounts[i]->host_path, c->mounts[i]->container_path);
	}
	expect_metadata(c, (const unsigned[]){ 2, 5 }, 2);
	v1beta1__allocate_response__free_unpacked(resp, NULL);

	/* Numeric order, not string order: 9 before 10. */
	resp = allocate_ids(ch, (const char *[]){ "npu-10", "npu-9", "npu-15", "npu-0" }, 4);
	c = resp->container_responses[0];
	assert_string_equal(env_value(c, "ASCEND_VISIBLE_DEVICES"), "0,9,10,15");
	int at0 = device_index(c, "/dev/davinci0"), at9 = device_index(c, "/dev/davinci9");
	int at10 = device_index(c, "/dev/davinci10"), at15 = device_index(c, "/dev/davinci15");
	assert_true(at0 >= 0 && at9 > at0 && at10 > at9 && at15 > at10);
	assert_int_equal(device_index(c, "/dev/davinci1"), -1);
	expect_metadata(c, (const unsigned[]){ 0, 9, 10, 15 }, 4);
	v1beta1__allocate_response__free_unpacked(resp, NULL);

	gc_channel_close(ch);
	node_fini(&node);
}

/* The shared nodes and driver paths are looked at by the loop, not by each
 * Allocate (which touches no file system): a file that appears or goes is
 * in the answers after the next refresh. Device nodes send events; driver
 * paths are seen at the health timer's refresh. */
static void test_paths_are_checked_at_each_refresh(void **state)
{
	(void)state;
	struct node node;
	node_init(&node, &(struct node_options){ .chips = 2 });
	node_start_registered(&node, (const char *[]){ "--health-interval", "1s", NULL });
	struct proc *k = node.kubelet;

	struct block b;
	sim_allocate(k, "allocate-ids npu-0", &b);
	expect_mount(&b, "/etc/ascend_install.info");
	assert_int_equal(block_count(&b, "allocate mount "), 4);

	node_remove(&node, "etc/ascend_install.info");
	node_touch(&node, "usr/local/dcmi/libdcmi.so");
	node_touch(&node, "usr/local/Ascend/driver/include/dcmi_interface_api.h");
	/* The next refresh sees the three changes, or two refreshes share them. */
	const char *seen[] = { "/etc/ascend_install.info went", "/usr/local/dcmi appeared",
			       "/usr/local/Ascend/driver/include appeared" };
	bool found[3] = { false };
	while (!found[0] || !found[1] || !found[2]) {
		char change[512];
		event_field(expect_event(node.plugin, "host-files.changed"), "change", change, sizeof(change));
		for (size_t i = 0; i < 3; i++)
			found[i] |= strstr(change, seen[i]) != NULL;
	}
	sim_allocate(k, "allocate-ids npu-0", &b);
	expect_no_mention(&b, "ascend_install.info");
	expect_mount(&b, "/usr/local/dcmi");
	expect_mount(&b, "/usr/local/Ascend/driver/include");
	expect_mount(&b, "/usr/local/Ascend/driver/lib64");
	assert_int_equal(block_count(&b, "allocate mount "), 5);

	/* A shared node that disappears is not handed out either. */
	node_remove(&node, "dev/hisi_hdc");
	expect_event(node.plugin, "host-files.changed", "change", "/dev/hisi_hdc went");
	sim_allocate(k, "allocate-ids npu-1", &b);
	expect_device(&b, "/dev/davinci1");
	expect_no_mention(&b, "hisi_hdc");
	assert_int_equal(block_count(&b, "allocate device "), 3);

	/* A chip whose device node disappears turns Unhealthy and is refused,
	 * with the reason. */
	node_remove(&node, "dev/davinci1");
	assert_non_null(proc_expect(k, "capacity=2 allocatable=1 unhealthy=npu-1", WAIT_MS));
	sim_allocate(k, "allocate-ids npu-1", &b);
	expect_error(&b, 9, "npu-1", "davinci1", NULL);
	expect_still_serves(k, "npu-0");

	/* Without davinci_manager the driver is not ready: nothing is allocatable. */
	node_remove(&node, "dev/davinci_manager");
	assert_non_null(proc_expect(k, "capacity=2 allocatable=0", WAIT_MS));
	sim_allocate(k, "allocate-ids npu-0", &b);
	expect_error(&b, 9, "npu-0", "davinci_manager", NULL);
	node_fini(&node);
}

static void test_bad_requests_are_rejected_precisely(void **state)
{
	(void)state;
	struct node node;
	start_node(&node, &(struct node_options){ .chips = 8 });
	struct proc *k = node.kubelet;
	struct block b;

	sim_allocate(k, "allocate-none", &b);
	expect_error(&b, 3, "no container requests", NULL);
	expect_still_serves(k, "npu-0");

	sim_allocate(k, "allocate-ids -", &b);
	expect_error(&b, 3, "no devices", NULL);
	expect_still_serves(k, "npu-0");

	sim_allocate(k, "allocate-ids npu-0,npu-1,npu-2,npu-3,npu-4,npu-5,npu-6,npu-7,npu-8", &b);
	expect_error(&b, 3, "9 devices", "advertises 8", NULL);
	expect_still_serves(k, "npu-0");

	/* 64 characters: too long. 63 is a legal length, merely unknown. */
	char command[128];
	char id[65];
	memset(id, 'x', 64);
	id[64] = '\0';
	snprintf(command, sizeof(command), "allocate-ids %s", id);
	sim_allocate(k, command, &b);
	expect_error(&b, 3, "longer than 63", NULL);
	expect_still_serves(k, "npu-0");
	id[63] = '\0';
	snprintf(command, sizeof(command), "allocate-ids npu-0,%s", id);
	sim_allocate(k, command, &b);
	expect_error(&b, 3, "unknown device ID", id, NULL);

	sim_allocate(k, "allocate-ids npu-1,npu-42", &b);
	expect_error(&b, 3, "unknown device ID", "npu-42", NULL);
	expect_still_serves(k, "npu-0");

	sim_allocate(k, "allocate-ids npu-1,npu-2,npu-1", &b);
	expect_error(&b, 3, "duplicate", "npu-1", NULL);
	expect_still_serves(k, "npu-0");

	/* A bad container anywhere in the request fails the whole request. */
	sim_allocate(k, "allocate-many 2 npu-1,npu-99", &b);
	expect_error(&b, 3, "npu-99", NULL);
	expect_still_serves(k, "npu-0");

	/* A known device that went Unhealthy: FAILED_PRECONDITION, once the
	 * kubelet has seen it Unhealthy too. */
	node_write_health(&node, 8, 3, 2);
	assert_non_null(proc_expect(k, "capacity=8 allocatable=7 unhealthy=npu-3", WAIT_MS));
	sim_allocate(k, "allocate-ids npu-3", &b);
	expect_error(&b, 9, "npu-3", "Unhealthy", NULL);
	sim_allocate(k, "allocate-ids npu-2,npu-3", &b);
	expect_error(&b, 9, "npu-3", NULL);
	expect_still_serves(k, "npu-2");

	/* Bytes that are no AllocateRequest at all; and an empty body, which
	 * decodes as a request without containers. */
	struct gc_channel *ch = node_plugin_channel(&node);
	static const uint8_t garbage[] = { 0x0a, 0x05, 'a', 'b' }; /* a field longer than the body */
	struct gc_result res;
	assert_null(call_allocate(ch, garbage, sizeof(garbage), &res));
	assert_int_equal(res.status, GRPC_STATUS_INVALID_ARGUMENT);
	assert_non_null(strstr(res.details, "malformed"));
	static const uint8_t bad_wire_type[] = { 0x0f, 0xff, 0xff };
	assert_null(call_allocate(ch, bad_wire_type, sizeof(bad_wire_type), &res));
	assert_int_equal(res.status, GRPC_STATUS_INVALID_ARGUMENT);
	assert_null(call_allocate(ch, NULL, 0, &res));
	assert_int_equal(res.status, GRPC_STATUS_INVALID_ARGUMENT);
	assert_non_null(strstr(res.details, "no container requests"));

	/* An empty ID (kubelet-sim cannot send one). */
	size_t len;
	uint8_t *body = pack_request((const char *[]){ "npu-0", "" }, 2, &len);
	assert_null(call_allocate(ch, body, len, &res));
	free(body);
	assert_int_equal(res.status, GRPC_STATUS_INVALID_ARGUMENT);
	assert_non_null(strstr(res.details, "unknown device ID \"\""));

	/* More container requests than the plugin accepts in one call. */
	V1beta1__ContainerAllocateRequest container = V1BETA1__CONTAINER_ALLOCATE_REQUEST__INIT;
	char *one[] = { (char *)(uintptr_t)"npu-0" };
	container.devices_ids = one;
	container.n_devices_ids = 1;
	V1beta1__ContainerAllocateRequest *containers[65];
	for (size_t i = 0; i < 65; i++)
		containers[i] = &container;
	V1beta1__AllocateRequest many = V1BETA1__ALLOCATE_REQUEST__INIT;
	many.container_requests = containers;
	many.n_container_requests = 65;
	len = v1beta1__allocate_request__get_packed_size(&many);
	body = malloc(len);
	assert_non_null(body);
	v1beta1__allocate_request__pack(&many, body);
	assert_null(call_allocate(ch, body, len, &res));
	assert_int_equal(res.status, GRPC_STATUS_INVALID_ARGUMENT);
	assert_non_null(strstr(res.details, "65 container requests"));
	/* 64 is the most the plugin takes, and it answers each. */
	many.n_container_requests = 64;
	len = v1beta1__allocate_request__pack(&many, body);
	V1beta1__AllocateResponse *resp = call_allocate(ch, body, len, &res);
	free(body);
	assert_non_null(resp);
	assert_int_equal(resp->n_container_responses, 64);
	assert_string_equal(env_value(resp->container_responses[63], "ASCEND_VISIBLE_DEVICES"), "0");
	v1beta1__allocate_response__free_unpacked(resp, NULL);
	gc_result_clear(&res);

	resp = allocate_ids(ch, (const char *[]){ "npu-7" }, 1);
	assert_string_equal(env_value(resp->container_responses[0], "ASCEND_VISIBLE_DEVICES"), "7");
	v1beta1__allocate_response__free_unpacked(resp, NULL);
	gc_channel_close(ch);

	/* Recovered: allocatable again. */
	node_write_health(&node, 8, 3, 0);
	assert_non_null(proc_expect(k, "capacity=8 allocatable=8 unhealthy=-", WAIT_MS));
	expect_still_serves(k, "npu-3");
	node_fini(&node);
}

/* protobuf-c hands strings over NUL-terminated, so an ID with an embedded
 * NUL reads as its prefix: "npu-0\0x" must not be taken for npu-0, an ID
 * the plugin never advertised is unknown. */
static void test_id_with_embedded_nul_is_unknown(void **state)
{
	(void)state;
	struct node node;
	start_node(&node, &(struct node_options){ .chips = 2 });
	struct gc_channel *ch = node_plugin_channel(&node);

	/* AllocateRequest { container_requests { devices_ids: "npu-0\0x" } } */
	static const uint8_t request[] = { 0x0a, 0x09, 0x0a, 0x07, 'n', 'p', 'u', '-', '0', 0x00, 'x' };
	struct gc_result res;
	V1beta1__AllocateResponse *resp = call_allocate(ch, request, sizeof(request), &res);
	if (resp) {
		const char *visible = env_value(resp->container_responses[0], "ASCEND_VISIBLE_DEVICES");
		char message[128];
		snprintf(message, sizeof(message), "the ID \"npu-0\\0x\" was allocated as ASCEND_VISIBLE_DEVICES=%s",
			 visible ? visible : "(none)");
		v1beta1__allocate_response__free_unpacked(resp, NULL);
		gc_result_clear(&res);
		gc_channel_close(ch);
		node_fini(&node);
		fail_msg("%s", message);
	}
	assert_int_equal(res.status, GRPC_STATUS_INVALID_ARGUMENT);
	gc_channel_close(ch);
	expect_still_serves(node.kubelet, "npu-0");
	node_fini(&node);
}

/* Allocates chip 0 on one channel over and over until told to stop. */
struct allocator {
	struct gc_channel *ch;
	const uint8_t *body;
	size_t len;
	atomic_bool stop;
	unsigned calls, failures;
	char first_failure[640];
};

static void *allocate_loop(void *arg)
{
	struct allocator *a = arg;
	while (!atomic_load(&a->stop)) {
		struct gc_result res;
		int r = gc_unary(a->ch, DP_METHOD_ALLOCATE, a->body, a->len, WAIT_MS, &res);
		a->calls++;
		if (r < 0 || res.status != GRPC_STATUS_OK) {
			if (!a->failures++)
				snprintf(a->first_failure, sizeof(a->first_failure), "r %d, status %d: %s", r,
					 r < 0 ? -1 : (int)res.status, r < 0 ? "" : res.details);
		}
		if (r == 0)
			gc_result_clear(&res);
	}
	return NULL;
}

/* SIGHUP re-reads everything and keeps the registration and its server:
 * no Allocate on the kubelet's connection fails, in flight or after, paced
 * or in a storm, and the kubelet sees no registration but the first. */
static void test_no_allocate_fails_across_sighup(void **state)
{
	(void)state;
	struct node node;
	node_init(&node, &(struct node_options){ .chips = 2 });
	node_start_registered(&node, (const char *[]){ "--log-level", "debug", NULL });
	size_t len;
	const char *ids[] = { "npu-0" };
	uint8_t *body = pack_request(ids, 1, &len);
	struct allocator a = { .ch = node_plugin_channel(&node), .body = body, .len = len };
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, allocate_loop, &a), 0);
	/* Each SIGHUP once the last reload is through, as an operator sends
	 * them. */
	for (int i = 0; i < 20; i++) {
		proc_kill(node.plugin, SIGHUP);
		expect_event(node.plugin, "config.applied", "trigger", "SIGHUP");
	}
	/* Then a storm, each SIGHUP before the last one's reload is through:
	 * the reloads rewrite the running configuration while the Allocates
	 * read theirs (under ThreadSanitizer a race ends the plugin). The last
	 * reload's registration shows the plugin came through. */
	for (int i = 0; i < 200; i++)
		proc_kill(node.plugin, SIGHUP);
	while (wait_event(node.plugin, 2000, "config.applied", "trigger", "SIGHUP"))
		;
	assert_int_equal(count_events(node.plugin, "plugin.reregistered"), 0);
	expect_still_serves(node.kubelet, "npu-0");
	atomic_store(&a.stop, true);
	assert_int_equal(pthread_join(t, NULL), 0);
	gc_channel_close(a.ch);
	free(body);
	if (a.failures) {
		proc_kill(node.plugin, SIGTERM);
		proc_wait(node.plugin, WAIT_MS);
		const char *l;
		while ((l = proc_expect_err(node.plugin, "", 100)))
			fprintf(stderr, "  %s\n", l);
		fail_msg("%u of %u Allocates failed across 220 SIGHUPs, the first: %s", a.failures, a.calls,
			 a.first_failure);
	}
	assert_true(a.calls > 20);
	node_fini(&node);
}

/* Each container gets a live status file of its chips: the set's directory
 * mounted at STATUS_CONTAINER_DIR, named by ASCEND_NPU_STATUS, rewritten
 * when a chip's health changes; the numbers CANN gives the chips inside
 * the container in ASCEND_RT_VISIBLE_DEVICES and the file alike. */
static void test_live_status_file(void **state)
{
	(void)state;
	struct node node;
	node_init(&node, &(struct node_options){ .chips = 8 });
	node_start_registered(&node, (const char *[]){ "--health-interval", "100ms", NULL });
	struct proc *k = node.kubelet;

	struct block b;
	sim_allocate(k, "allocate-ids npu-5,npu-2", &b);
	assert_int_equal(b.n_status_mounts, 1);
	assert_int_equal(b.n_status_envs, 1);
	assert_int_equal(b.n_rt_envs, 1);
	assert_int_equal(b.n_metadata_mounts, 1);
	assert_int_equal(b.n_metadata_envs, 1);
	char dir[PATH_MAX], want[PATH_MAX + 128], metadata[PATH_MAX + 128];
	snprintf(dir, sizeof(dir), "%s/npu-status/set-npu-2+npu-5", node.state_dir);
	snprintf(want, sizeof(want), "allocate mount host=%s container=%s read_only=1", dir, STATUS_CONTAINER_DIR);
	assert_string_equal(b.status_mount, want);
	/* The set's metadata lives in its directory, and goes with it. */
	snprintf(metadata, sizeof(metadata), "allocate mount host=%s/" ALLOCATE_METADATA_FILE_NAME " container=%s read_only=1",
		 dir, ALLOCATE_METADATA_PATH);
	assert_string_equal(b.metadata_mount, metadata);
	char *text = wait_file_text(dir, STATUS_FILE_NAME, "\"device\":\"npu-5\"", 5000);
	assert_non_null(strstr(text, "{\"version\":1,\"chips\":[{\"device\":\"npu-2\",\"logical_id\":0,\"phy_id\":2,"));
	assert_non_null(strstr(text, "{\"device\":\"npu-5\",\"logical_id\":1,\"phy_id\":5,\"family\":\"910B\",\"healthy\":true,"
				     "\"level\":\"None\",\"code\":\"\",\"since\":\""));
	free(text);

	/* The same set again: the same directory. */
	sim_allocate(k, "allocate-ids npu-2,npu-5", &b);
	assert_string_equal(b.status_mount, want);

	/* A fault on npu-5 reaches the file at the next refresh. */
	node_write_health(&node, 8, 5, 3);
	text = wait_file_text(dir, STATUS_FILE_NAME, "\"healthy\":false", 5000);
	const char *npu5 = strstr(text, "\"device\":\"npu-5\"");
	assert_non_null(npu5);
	assert_non_null(strstr(npu5, "\"healthy\":false,\"level\":\""));
	assert_null(strstr(npu5, "\"level\":\"None\""));
	assert_non_null(strstr(npu5, "\"reason\":\"DCMI health 3 (critical)"));
	assert_non_null(strstr(text, "\"device\":\"npu-2\",\"logical_id\":0,\"phy_id\":2,\"family\":\"910B\",\"healthy\":true"));
	free(text);
	node_fini(&node);
}

static void test_310p_shared_nodes(void **state)
{
	(void)state;
	struct node node;
	start_node(&node, &(struct node_options){ .chips = 2, .chip_name = "310P3" });
	struct proc *k = node.kubelet;
	expect_event(node.plugin, "chips.found", "families", "310P");

	struct block b;
	expect_first_two(k, &b);
	assert_int_equal(block_count(&b, "allocate mount "), 4);

	/* 310P inference cards use DVPP: its node is handed out once present. */
	expect_dvpp_handed_out(&node, "allocate-ids npu-1", "/dev/davinci1", &b);
	node_fini(&node);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_npus_on_910b),
		cmocka_unit_test(test_ids_out_of_order_follow_phy_order),
		cmocka_unit_test(test_paths_are_checked_at_each_refresh),
		cmocka_unit_test(test_bad_requests_are_rejected_precisely),
		cmocka_unit_test(test_id_with_embedded_nul_is_unknown),
		cmocka_unit_test(test_310p_shared_nodes),
		cmocka_unit_test(test_live_status_file),
		cmocka_unit_test(test_no_allocate_fails_across_sighup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
