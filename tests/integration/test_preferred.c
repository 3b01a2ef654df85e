/* SPDX-License-Identifier: Apache-2.0 */
/* GetPreferredAllocation over the plugin's real unix socket: advertised at
 * registration, and kubelet-sim's `allocate N` (which asks for preferred
 * devices and takes them, as the kubelet does) follows the topology rules
 * of the node's family: Volcano's HCCS ring preference on a 910 node, whole
 * die pairs on an A3 node (board id 0xb0), one card on a 310P node. Requests
 * the kubelet would never send are refused with INVALID_ARGUMENT and a
 * message naming the problem, one answer per container otherwise, and the
 * plugin keeps serving. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "deviceplugin.pb-c.h"
#include "deviceplugin_api.h"
#include "harness/harness.h"


/* --- kubelet-sim -------------------------------------------------------- */

/* Starts kubelet-sim and the plugin on a node whose state is written, and
 * waits for the registration (which must advertise GetPreferredAllocation)
 * and the first device list. */
static void start(struct node *node, const char *devices_line)
{
	struct proc *k = node_start_kubelet(node);
	node_start_plugin(node, NULL);
	const char *line = proc_expect(k, "register resource=ascend.com/npu", WAIT_MS);
	assert_non_null(line);
	assert_non_null(strstr(line, "preferred_allocation=1"));
	assert_non_null(proc_expect(k, devices_line, WAIT_MS));
}

/* `allocate N` gets exactly ids preferred, and allocated. */
static void expect_allocation(struct proc *k, unsigned n, const char *ids)
{
	char command[32], want[256];
	snprintf(command, sizeof(command), "allocate %u", n);
	proc_send(k, command);

	const char *line = proc_expect(k, "preferred ", WAIT_MS);
	assert_non_null(line);
	snprintf(want, sizeof(want), "preferred ids=%s", ids);
	if (strcmp(line, want) != 0)
		fail_msg("'%s' answered '%s', expected '%s'", command, line, want);
	line = proc_expect(k, "allocate ", WAIT_MS);
	assert_non_null(line);
	snprintf(want, sizeof(want), "allocate ok ids=%s", ids);
	if (strcmp(line, want) != 0)
		fail_msg("'%s' answered '%s', expected '%s'", command, line, want);
	assert_non_null(proc_expect(k, "allocate end", WAIT_MS));
}

/* --- direct gRPC -------------------------------------------------------- */

/* Packs a PreferredAllocationRequest of containers identical requests. */
static uint8_t *pack_request(size_t containers, const char *const available[], size_t n_available,
			     const char *const must[], size_t n_must, int32_t size, size_t *ret_len)
{
	V1beta1__ContainerPreferredAllocationRequest container = V1BETA1__CONTAINER_PREFERRED_ALLOCATION_REQUEST__INIT;
	V1beta1__ContainerPreferredAllocationRequest *list[70];
	V1beta1__PreferredAllocationRequest req = V1BETA1__PREFERRED_ALLOCATION_REQUEST__INIT;
	char *avail_copy[32], *must_copy[32];
	assert_true(containers <= 70 && n_available <= 32 && n_must <= 32);
	for (size_t i = 0; i < n_available; i++)
		avail_copy[i] = (char *)(uintptr_t)available[i];
	for (size_t i = 0; i < n_must; i++)
		must_copy[i] = (char *)(uintptr_t)must[i];
	container.available_deviceids = avail_copy;
	container.n_available_deviceids = n_available;
	container.must_include_deviceids = must_copy;
	container.n_must_include_deviceids = n_must;
	container.allocation_size = size;
	for (size_t i = 0; i < containers; i++)
		list[i] = &container;
	req.container_requests = list;
	req.n_container_requests = containers;
	size_t len = v1beta1__preferred_allocation_request__get_packed_size(&req);
	uint8_t *buf = malloc(len ? len : 1);
	assert_non_null(buf);
	v1beta1__preferred_allocation_request__pack(&req, buf);
	*ret_len = len;
	return buf;
}

/* Calls GetPreferredAllocation; returns the decoded answer (status OK) or
 * NULL with the status and details in *res. Frees body. */
static V1beta1__PreferredAllocationResponse *call(struct gc_channel *ch, uint8_t *body, size_t len,
						   struct gc_result *res)
{
	assert_int_equal(gc_unary(ch, DP_METHOD_GET_PREFERRED, body, len, WAIT_MS, res), 0);
	free(body);
	if (res->status != GRPC_STATUS_OK)
		return NULL;
	static const uint8_t empty[1];
	V1beta1__PreferredAllocationResponse *resp =
		v1beta1__preferred_allocation_response__unpack(NULL, res->len, res->body ? res->body : empty);
	assert_non_null(resp);
	gc_result_clear(res);
	return resp;
}

/* The request is refused with INVALID_ARGUMENT and details naming fragment. */
static void expect_refused(struct gc_channel *ch, uint8_t *body, size_t len, const char *fragment)
{
	struct gc_result res;
	V1beta1__PreferredAllocationResponse *resp = call(ch, body, len, &res);
	if (resp) {
		v1beta1__preferred_allocation_response__free_unpacked(resp, NULL);
		fail_msg("a request that should name '%s' was answered", fragment);
	}
	if (res.status != GRPC_STATUS_INVALID_ARGUMENT || !strstr(res.details, fragment))
		fail_msg("status %d \"%s\", expected %d naming '%s'", (int)res.status, res.details,
			 GRPC_STATUS_INVALID_ARGUMENT, fragment);
	gc_result_clear(&res);
}

static void expect_ids(const V1beta1__ContainerPreferredAllocationResponse *c, const char *const ids[], size_t n)
{
	assert_int_equal(c->n_deviceids, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(c->deviceids[i], ids[i]);
}

/* --- tests -------------------------------------------------------------- */

static void test_910_follows_the_ring_rule(void **state)
{
	struct node *node = *state;
	/* "910A" is an Ascend 910 (not 910B): two HCCS rings, 0-3 and 4-7. */
	node_init(node, &(struct node_options){ .chips = 8, .chip_name = "910A" });
	start(node, "capacity=8 allocatable=8 unhealthy=-");
	expect_event(node->plugin, "chips.found", "families", "910");
	struct proc *k = node->kubelet;

	expect_allocation(k, 1, "npu-0");
	/* 4 stays inside the ring that has all 4 free. */
	expect_allocation(k, 4, "npu-4,npu-5,npu-6,npu-7");
	proc_send(k, "release npu-4,npu-5,npu-6,npu-7");
	assert_non_null(proc_expect(k, "released ids=npu-4,npu-5,npu-6,npu-7", WAIT_MS));
	/* For 2 a ring with 4 free beats one with 3 (not npu-1,npu-2). */
	expect_allocation(k, 2, "npu-4,npu-5");
	/* For 1 a ring with 3 free beats one with 2 (leaving an even count). */
	expect_allocation(k, 1, "npu-1");
	/* 3 is no training topology: a best effort, not an error. */
	expect_allocation(k, 3, "npu-2,npu-3,npu-6");
	expect_allocation(k, 1, "npu-7");
	node_fini(node);
}

static void test_a3_takes_whole_pairs(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = 16 });
	/* A3 by board id (the name alone would say 910B); a die's card is phy / 2.
	 * Healthy: 0, 2, 3 and 4: a pair has one die taken, so a request of 2 must
	 * take the whole pair {2,3}. */
	char text[4096];
	size_t used = (size_t)snprintf(text, sizeof(text), "driver 24.1.rc1\n");
	for (unsigned i = 0; i < 16; i++)
		used += (size_t)snprintf(text + used, sizeof(text) - used,
					 "chip phy=%u card=%u device=%u name=910B3 board=0xb0 health=%u\n", i, i / 2,
					 i % 2, i == 0 || i == 2 || i == 3 || i == 4 ? 0 : 2);
	assert_true(used < sizeof(text));
	node_write_state(node, "%s", text);
	start(node, "capacity=16 allocatable=4");
	expect_event(node->plugin, "chips.found", "families", "A3");
	struct proc *k = node->kubelet;

	/* Free {0,2,3,4}, request 2 -> {2,3}. */
	expect_allocation(k, 2, "npu-2,npu-3");

	/* Every die Healthy but npu-1. */
	used = (size_t)snprintf(text, sizeof(text), "driver 24.1.rc1\n");
	for (unsigned i = 0; i < 16; i++)
		used += (size_t)snprintf(text + used, sizeof(text) - used,
					 "chip phy=%u card=%u device=%u name=910B3 board=0xb0 health=%u\n", i, i / 2,
					 i % 2, i == 1 ? 2 : 0);
	node_write_state(node, "%s", text);
	assert_non_null(proc_expect(k, "capacity=16 allocatable=15", WAIT_MS));
	/* A single die whose pair-mate is taken. */
	expect_allocation(k, 1, "npu-0");
	expect_allocation(k, 2, "npu-4,npu-5");
	expect_allocation(k, 1, "npu-6");
	/* Whole pair 8-9, not npu-7 (whose mate is taken) and npu-8. */
	expect_allocation(k, 2, "npu-8,npu-9");
	expect_allocation(k, 4, "npu-10,npu-11,npu-12,npu-13");
	node_fini(node);
}

static void test_310p_stays_on_one_card(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = 4 });
	/* Two Atlas 300I Duo cards; npu-1 is Unhealthy. */
	node_write_state(node, "driver 24.1.rc1\n"
			       "chip phy=0 card=0 device=0 name=310P3\n"
			       "chip phy=1 card=0 device=1 name=310P3 health=2\n"
			       "chip phy=2 card=1 device=0 name=310P3\n"
			       "chip phy=3 card=1 device=1 name=310P3\n");
	start(node, "capacity=4 allocatable=3");
	struct proc *k = node->kubelet;
	expect_allocation(k, 2, "npu-2,npu-3");
	expect_allocation(k, 1, "npu-0");
	node_fini(node);
}

static void test_bad_requests_are_refused(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = 8 });
	start(node, "capacity=8 allocatable=8 unhealthy=-");
	struct gc_channel *ch = node_plugin_channel(node);
	static const char *const all[] = { "npu-0", "npu-1", "npu-2", "npu-3", "npu-4", "npu-5", "npu-6", "npu-7" };
	size_t len;
	uint8_t *body;

	/* Bytes that are no request, and an empty one. */
	static const uint8_t garbage[] = { 0x0a, 0x05, 'a', 'b' };
	body = malloc(sizeof(garbage));
	assert_non_null(body);
	memcpy(body, garbage, sizeof(garbage));
	expect_refused(ch, body, sizeof(garbage), "malformed PreferredAllocationRequest");
	expect_refused(ch, NULL, 0, "no container requests");

	/* An ID with an embedded NUL must not read as npu-0:
	 * { container_requests { available_deviceIDs: "npu-0\0x" allocation_size: 1 } } */
	static const uint8_t nul[] = { 0x0a, 0x0b, 0x0a, 0x07, 'n', 'p', 'u', '-', '0', 0x00, 'x', 0x18, 0x01 };
	body = malloc(sizeof(nul));
	assert_non_null(body);
	memcpy(body, nul, sizeof(nul));
	expect_refused(ch, body, sizeof(nul), "NUL");

	body = pack_request(1, all, 8, NULL, 0, 0, &len);
	expect_refused(ch, body, len, "allocation_size 0 is not positive");
	body = pack_request(1, all, 8, NULL, 0, -3, &len);
	expect_refused(ch, body, len, "allocation_size -3");
	body = pack_request(1, all, 8, NULL, 0, 9, &len);
	expect_refused(ch, body, len, "allocation_size 9");
	body = pack_request(1, all, 2, NULL, 0, 3, &len);
	expect_refused(ch, body, len, "allocation_size 3 is more than the devices in available_deviceIDs");
	body = pack_request(1, (const char *[]){ "npu-0", "npu-99" }, 2, NULL, 0, 1, &len);
	expect_refused(ch, body, len, "unknown device ID \"npu-99\"");
	body = pack_request(1, all, 8, (const char *[]){ "gpu-0" }, 1, 1, &len);
	expect_refused(ch, body, len, "unknown device ID \"gpu-0\"");
	body = pack_request(1, all, 8, all, 3, 2, &len);
	expect_refused(ch, body, len, "must_include_deviceIDs holds more devices than allocation_size 2");
	body = pack_request(65, all, 8, NULL, 0, 1, &len);
	expect_refused(ch, body, len, "65 container requests");
	/* A bad container request fails the whole request, and is named. */
	body = pack_request(2, (const char *[]){ "npu-1", "npu-100" }, 2, NULL, 0, 1, &len);
	expect_refused(ch, body, len, "container request 0");

	/* One answer per container, each with must_include kept. */
	struct gc_result res;
	body = pack_request(3, all, 8, (const char *[]){ "npu-6" }, 1, 3, &len);
	V1beta1__PreferredAllocationResponse *resp = call(ch, body, len, &res);
	if (!resp)
		fail_msg("status %d \"%s\"", (int)res.status, res.details);
	assert_int_equal(resp->n_container_responses, 3);
	for (size_t c = 0; c < 3; c++)
		expect_ids(resp->container_responses[c], (const char *[]){ "npu-0", "npu-1", "npu-6" }, 3);
	v1beta1__preferred_allocation_response__free_unpacked(resp, NULL);
	gc_channel_close(ch);

	/* Still serving, through kubelet-sim too. */
	expect_allocation(node->kubelet, 2, "npu-0,npu-1");
	node_fini(node);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_910_follows_the_ring_rule, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_a3_takes_whole_pairs, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_310p_stays_on_one_card, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_bad_requests_are_refused, node_setup, node_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
