/* SPDX-License-Identifier: Apache-2.0 */
/* Time-slicing: replica IDs (plugin/replica.h), Allocate mapping replicas
 * back to chips (plugin/allocate.h) and GetPreferredAllocation spreading
 * replicas over chips (plugin/preferred.h), straight from snapshots. */
#include <setjmp.h>
#include <stdarg.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "deviceplugin.pb-c.h"
#include "plugin/allocate.h"
#include "node/cdi.h"
#include "plugin/preferred.h"
#include "plugin/replica.h"

/* count chips of family, chip unhealthy (count for none) Unhealthy. */
static struct npu_snapshot *snapshot(size_t count, enum npu_family family, size_t unhealthy)
{
	struct npu_snapshot *s = npu_snapshot_new(count);
	assert_non_null(s);
	for (size_t i = 0; i < count; i++) {
		struct npu_device *d = &s->devices[i];
		snprintf(d->id, sizeof(d->id), "npu-%u", (unsigned)(i % 1000));
		d->chip.phy_id = (uint32_t)i;
		d->chip.card_id = (int)(i / 2);
		d->chip.family = family;
		d->healthy = i != unhealthy;
		d->fault = d->healthy ? NPU_FAULT_NONE : NPU_FAULT_HEALTH_LEVEL;
		s->healthy += d->healthy;
	}
	return s;
}

static void test_ids(void **state)
{
	(void)state;
	struct npu_snapshot *snap = snapshot(8, NPU_FAMILY_910B, 8);
	char buf[REPLICA_ID_MAX];
	assert_int_equal(replica_format("npu-3", 2, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "npu-3::2");
	assert_int_equal(replica_format("npu-3", 2, buf, 6), -ENOBUFS);
	assert_int_equal(replica_format("npu-255", 63, buf, sizeof(buf)), 0);

	size_t index = 99;
	unsigned k = 99;
	assert_int_equal(replica_parse(snap, 4, "npu-3::3", &index, &k), 0);
	assert_int_equal(index, 3);
	assert_int_equal(k, 3);
	assert_int_equal(replica_parse(snap, 64, "npu-7::63", &index, &k), 0);
	assert_int_equal(index, 7);
	assert_int_equal(k, 63);
	static const char *const bad[] = { "npu-3::4", "npu-3::99", "npu-3::", "npu-3::x", "npu-3", "npu-3:1",
					   "npu-3::01", "npu-3::-1", "npu-3::+1", "npu-3::1 ", "::1", "npu-3::1::1",
					   "npu-3:::1", "npu-3::100", "npu-0123456789abcdef::1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (replica_parse(snap, 4, bad[i], &index, &k) != -EINVAL &&
		    replica_parse(snap, 4, bad[i], &index, &k) != -ENOENT)
			fail_msg("%s parsed", bad[i]);
	assert_int_equal(replica_parse(snap, 4, "npu-9::1", &index, &k), -ENOENT);
	assert_int_equal(replica_parse(snap, 4, "npu-3::x", &index, &k), -EINVAL);
	assert_int_equal(index, 7); /* untouched on failure */
	npu_snapshot_unref(snap);
}

/* A chip whose device-share mode is off is served whole: one replica,
 * "::0", for the device plugin and one share for the DRA driver; a mode
 * that is on or unknown serves the replicas configured, and without
 * time-slicing every chip is one device whatever its mode. */
static void test_device_share_off_serves_the_chip_whole(void **state)
{
	(void)state;
	struct npu_snapshot *snap = snapshot(3, NPU_FAMILY_910B, 3);
	snap->devices[0].share = NPU_SHARE_OFF;
	snap->devices[1].share = NPU_SHARE_ON;
	snap->devices[2].share = NPU_SHARE_UNKNOWN;
	const struct replica_options sliced = { .replicas = 4 }, whole = { .replicas = 0 }, one = { .replicas = 1 };

	assert_int_equal(replica_count(&sliced, &snap->devices[0]), 1);
	assert_true(replica_held_whole(&sliced, &snap->devices[0]));
	assert_int_equal(replica_count(&sliced, &snap->devices[1]), 4);
	assert_false(replica_held_whole(&sliced, &snap->devices[1]));
	assert_int_equal(replica_count(&sliced, &snap->devices[2]), 4);
	assert_false(replica_held_whole(&sliced, &snap->devices[2]));
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(replica_count(&whole, &snap->devices[i]), 1);
		assert_int_equal(replica_count(&one, &snap->devices[i]), 1);
		assert_false(replica_held_whole(&whole, &snap->devices[i]));
	}

	size_t index = 99;
	unsigned k = 99;
	assert_int_equal(replica_parse(snap, 4, "npu-0::0", &index, &k), 0);
	assert_int_equal(index, 0);
	assert_int_equal(k, 0);
	assert_int_equal(replica_parse(snap, 4, "npu-0::1", &index, &k), -EINVAL);
	assert_int_equal(replica_parse(snap, 4, "npu-1::3", &index, &k), 0);
	assert_int_equal(replica_parse(snap, 4, "npu-2::3", &index, &k), 0);
	npu_snapshot_unref(snap);
}

/* Allocate for one container asking for ids; the response or NULL, the
 * status in *ret_code and the details in details. */
static V1beta1__AllocateResponse *allocate(const struct npu_snapshot *snap, const struct allocate_options *options,
					   const char *const *ids, size_t n, grpc_status_code *ret_code,
					   char *details, size_t details_size)
{
	V1beta1__ContainerAllocateRequest container;
	v1beta1__container_allocate_request__init(&container);
	container.n_devices_ids = n;
	container.devices_ids = (char **)(uintptr_t)ids;
	V1beta1__ContainerAllocateRequest *containers[] = { &container };
	V1beta1__AllocateRequest req;
	v1beta1__allocate_request__init(&req);
	req.n_container_requests = 1;
	req.container_requests = containers;
	uint8_t buf[1024];
	assert_true(v1beta1__allocate_request__get_packed_size(&req) <= sizeof(buf));
	size_t len = v1beta1__allocate_request__pack(&req, buf);
	uint8_t *body = NULL;
	size_t body_len = 0;
	*ret_code = allocate_answer(snap, NULL, options, buf, len, &body, &body_len, details, details_size);
	if (*ret_code != GRPC_STATUS_OK) {
		assert_null(body);
		return NULL;
	}
	V1beta1__AllocateResponse *resp = v1beta1__allocate_response__unpack(NULL, body_len, body);
	free(body);
	assert_non_null(resp);
	return resp;
}

static void test_allocate_maps_replicas_to_chips(void **state)
{
	(void)state;
	struct npu_snapshot *snap = snapshot(8, NPU_FAMILY_910B, 6);
	struct cdi_names cdi;
	char details[512];
	assert_int_equal(cdi_names_from_resource("ascend.com/npu", &cdi, details, sizeof(details)), 0);
	struct allocate_options options = {
		.strategies = ALLOCATE_STRATEGY_NATIVE | ALLOCATE_STRATEGY_CDI,
		.cdi = &cdi,
		.sharing = { .replicas = 4 },
	};
	grpc_status_code code;

	/* Two replicas of chip 5 and one of chip 2: each chip once, in phy order. */
	const char *const ids[] = { "npu-5::3", "npu-2::0", "npu-5::1" };
	V1beta1__AllocateResponse *resp = allocate(snap, &options, ids, 3, &code, details, sizeof(details));
	assert_int_equal(code, GRPC_STATUS_OK);
	const V1beta1__ContainerAllocateResponse *c = resp->container_responses[0];
	assert_int_equal(c->n_devices, 2);
	assert_string_equal(c->devices[0]->host_path, "/dev/davinci2");
	assert_string_equal(c->devices[1]->host_path, "/dev/davinci5");
	assert_int_equal(c->n_envs, 2);
	assert_string_equal(c->envs[0]->key, "ASCEND_VISIBLE_DEVICES");
	assert_string_equal(c->envs[0]->value, "2,5");
	assert_int_equal(c->n_cdi_devices, 2);
	assert_string_equal(c->cdi_devices[0]->name, "ascend.com/npu=2");
	assert_string_equal(c->cdi_devices[1]->name, "ascend.com/npu=5");
	assert_string_equal(c->annotations[0]->value, "ascend.com/npu=2,ascend.com/npu=5");
	v1beta1__allocate_response__free_unpacked(resp, NULL);

	/* Unknown, malformed, repeated replicas; a chip ID alone; an Unhealthy chip. */
	static const char *const unknown[] = { "npu-3::99", "npu-3::", "npu-3::x", "npu-3::4", "npu-3", "npu-9::0" };
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		assert_null(allocate(snap, &options, &unknown[i], 1, &code, details, sizeof(details)));
		assert_int_equal(code, GRPC_STATUS_INVALID_ARGUMENT);
		assert_non_null(strstr(details, "unknown device ID"));
	}
	const char *const twice[] = { "npu-1::1", "npu-1::1" };
	assert_null(allocate(snap, &options, twice, 2, &code, details, sizeof(details)));
	assert_int_equal(code, GRPC_STATUS_INVALID_ARGUMENT);
	assert_string_equal(details, "duplicate device ID \"npu-1::1\"");
	const char *const sick[] = { "npu-6::2" };
	assert_null(allocate(snap, &options, sick, 1, &code, details, sizeof(details)));
	assert_int_equal(code, GRPC_STATUS_FAILED_PRECONDITION);

	/* failRequestsGreaterThanOne: one replica is fine, two are refused. */
	options.sharing.fail_requests_greater_than_one = true;
	resp = allocate(snap, &options, ids, 1, &code, details, sizeof(details));
	assert_int_equal(code, GRPC_STATUS_OK);
	v1beta1__allocate_response__free_unpacked(resp, NULL);
	assert_null(allocate(snap, &options, ids, 2, &code, details, sizeof(details)));
	assert_int_equal(code, GRPC_STATUS_INVALID_ARGUMENT);
	assert_string_equal(details, "container request 0 asks for 2 shared devices, but "
				     "sharing.timeSlicing.failRequestsGreaterThanOne is set: a container may ask for 1");
	npu_snapshot_unref(snap);
}

/* GetPreferredAllocation for one container; the IDs joined by ',' in out. */
static grpc_status_code prefer(const struct npu_snapshot *snap, unsigned replicas, const char *const *available,
			       size_t n_available, const char *const *must, size_t n_must, int size, char *out,
			       size_t out_size)
{
	V1beta1__ContainerPreferredAllocationRequest container;
	v1beta1__container_preferred_allocation_request__init(&container);
	container.n_available_deviceids = n_available;
	container.available_deviceids = (char **)(uintptr_t)available;
	container.n_must_include_deviceids = n_must;
	container.must_include_deviceids = (char **)(uintptr_t)must;
	container.allocation_size = size;
	V1beta1__ContainerPreferredAllocationRequest *containers[] = { &container };
	V1beta1__PreferredAllocationRequest req;
	v1beta1__preferred_allocation_request__init(&req);
	req.n_container_requests = 1;
	req.container_requests = containers;
	size_t len = v1beta1__preferred_allocation_request__get_packed_size(&req);
	uint8_t *buf = malloc(len);
	assert_non_null(buf);
	v1beta1__preferred_allocation_request__pack(&req, buf);
	const struct replica_options sharing = { .replicas = replicas };
	uint8_t *body = NULL;
	size_t body_len = 0;
	char details[512];
	grpc_status_code code = preferred_answer(snap, &sharing, buf, len, &body, &body_len, details, sizeof(details));
	free(buf);
	out[0] = '\0';
	if (code != GRPC_STATUS_OK) {
		snprintf(out, out_size, "%s", details);
		return code;
	}
	V1beta1__PreferredAllocationResponse *resp = v1beta1__preferred_allocation_response__unpack(NULL, body_len, body);
	free(body);
	assert_non_null(resp);
	const V1beta1__ContainerPreferredAllocationResponse *c = resp->container_responses[0];
	size_t used = 0;
	for (size_t i = 0; i < c->n_deviceids; i++)
		used += (size_t)snprintf(out + used, out_size - used, "%s%s", i ? "," : "", c->deviceids[i]);
	v1beta1__preferred_allocation_response__free_unpacked(resp, NULL);
	return code;
}

/* Every replica of the chips listed in free_chips, in available. */
static size_t all_replicas(const char *chips, unsigned replicas, char ids[][REPLICA_ID_MAX], const char **ptrs)
{
	size_t n = 0;
	for (const char *p = chips; *p; p++)
		for (unsigned k = 0; k < replicas; k++) {
			char chip[8];
			snprintf(chip, sizeof(chip), "npu-%c", *p);
			assert_int_equal(replica_format(chip, k, ids[n], REPLICA_ID_MAX), 0);
			ptrs[n] = ids[n];
			n++;
		}
	return n;
}

static void test_preferred_spreads_replicas(void **state)
{
	(void)state;
	char ids[64][REPLICA_ID_MAX];
	const char *avail[64];
	char out[512];

	/* 910B full mesh, 4 chips, 2 replicas, all free: distinct chips, lowest phy. */
	struct npu_snapshot *snap = snapshot(4, NPU_FAMILY_910B, 4);
	size_t n = all_replicas("0123", 2, ids, avail);
	assert_int_equal(prefer(snap, 2, avail, n, NULL, 0, 2, out, sizeof(out)), GRPC_STATUS_OK);
	assert_string_equal(out, "npu-0::0,npu-1::0");
	/* More than the chips: every chip once, then again. */
	assert_int_equal(prefer(snap, 2, avail, n, NULL, 0, 6, out, sizeof(out)), GRPC_STATUS_OK);
	assert_string_equal(out, "npu-0::0,npu-0::1,npu-1::0,npu-1::1,npu-2::0,npu-3::0");

	/* Chip 0 has one replica taken (npu-0::0 not offered), chip 1 both free:
	 * the least used chip 1 first. */
	assert_int_equal(prefer(snap, 2, avail + 1, n - 1, NULL, 0, 1, out, sizeof(out)), GRPC_STATUS_OK);
	assert_string_equal(out, "npu-1::0");
	/* must_include is honoured and counts as the chip's. */
	const char *must[] = { "npu-3::1" };
	assert_int_equal(prefer(snap, 2, avail, n, must, 1, 2, out, sizeof(out)), GRPC_STATUS_OK);
	assert_string_equal(out, "npu-0::0,npu-3::1");
	const char *must2[] = { "npu-3::1", "npu-3::0" };
	assert_int_equal(prefer(snap, 2, avail, n, must2, 2, 3, out, sizeof(out)), GRPC_STATUS_OK);
	assert_string_equal(out, "npu-0::0,npu-3::0,npu-3::1");
	assert_int_equal(prefer(snap, 2, avail, n, must2, 2, 1, out, sizeof(out)), GRPC_STATUS_INVALID_ARGUMENT);
	/* Unknown and malformed replicas are refused. */
	const char *bad[] = { "npu-3::9" };
	assert_int_equal(prefer(snap, 2, bad, 1, NULL, 0, 1, out, sizeof(out)), GRPC_STATUS_INVALID_ARGUMENT);
	assert_string_equal(out, "container request 0: unknown device ID \"npu-3::9\"");
	npu_snapshot_unref(snap);

	/* 910 rings {0-3} {4-7}, 2 replicas. Chips 0-2 fully taken, chip 3 has
	 * one replica taken, 4-7 free. Two chips: the topology rule on the
	 * least used chips (a ring with 4 free chips left with 2). */
	snap = snapshot(8, NPU_FAMILY_910, 8);
	n = all_replicas("34567", 2, ids, avail);
	assert_int_equal(prefer(snap, 2, avail + 1, n - 1, NULL, 0, 2, out, sizeof(out)), GRPC_STATUS_OK);
	assert_string_equal(out, "npu-4::0,npu-5::0");
	/* Five chips wanted, four unused: the used chip 3 widens the set. */
	assert_int_equal(prefer(snap, 2, avail + 1, n - 1, NULL, 0, 5, out, sizeof(out)), GRPC_STATUS_OK);
	assert_string_equal(out, "npu-3::1,npu-4::0,npu-5::0,npu-6::0,npu-7::0");
	npu_snapshot_unref(snap);

	/* An Unhealthy chip's replicas are not chosen. */
	snap = snapshot(2, NPU_FAMILY_910B, 0);
	n = all_replicas("01", 2, ids, avail);
	assert_int_equal(prefer(snap, 2, avail, n, NULL, 0, 2, out, sizeof(out)), GRPC_STATUS_OK);
	assert_string_equal(out, "npu-1::0,npu-1::1");
	npu_snapshot_unref(snap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ids),
		cmocka_unit_test(test_device_share_off_serves_the_chip_whole),
		cmocka_unit_test(test_allocate_maps_replicas_to_chips),
		cmocka_unit_test(test_preferred_spreads_replicas),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
