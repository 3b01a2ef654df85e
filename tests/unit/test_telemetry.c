/* SPDX-License-Identifier: Apache-2.0 */
/* The telemetry cache against the DCMI simulator: values in base units, a
 * failing call leaves its value out and is counted for its function, a
 * call the driver does not support is left out without counting, a chip
 * whose calls all fail keeps the time of its last good reading, and vNPUs
 * are not read. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "npu/inventory.h"
#include "support/tmpdir.h"
#include "telemetry/telemetry.h"

struct tree {
	char root[64], dev[96], state[96], lib[96];
};

static void put(const char *path, const char *text)
{
	char tmp[160];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(rename(tmp, path), 0);
}

static void make_tree(struct tree *t, const char *state)
{
	assert_int_equal(tmpdir_make(t->root, sizeof(t->root), "telemetry-test"), 0);
	snprintf(t->dev, sizeof(t->dev), "%s/dev", t->root);
	snprintf(t->state, sizeof(t->state), "%s/state", t->root);
	snprintf(t->lib, sizeof(t->lib), "%s/libdcmi.so", t->root);
	assert_int_equal(mkdir(t->dev, 0755), 0);
	put(t->state, state);
	char cmd[1024];
	/* A copy in the fresh root-owned temp dir passes DCMI's ownership check. */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && touch %s/davinci_manager %s/davinci0 %s/davinci1 %s/davinci2",
		 FAKE_DCMI_LIB, t->lib, t->dev, t->dev, t->dev, t->dev);
	assert_int_equal(system(cmd), 0);
	setenv("ASCEND_FAKE_DCMI_STATE", t->state, 1);
}

static void remove_tree(struct tree *t)
{
	assert_int_equal(tmpdir_remove(t->root), 0);
}

static void test_readings_and_failures(void **state)
{
	(void)state;
	struct tree t;
	make_tree(&t, "chip phy=0 temp=45 power=92.5 util=37 hbm_mb=65536 hbm_used_mb=1024 errors=80E01801\n"
		      "chip phy=1 temp=50 power=10 util=1 hbm_mb=32768 fail=temperature,power_info:-8012\n"
		      "chip phy=2 hbm_mb=16\n");
	struct inventory *inv;
	const struct inventory_options opt = {
		.backend = NPU_BACKEND_DCMI,
		.dcmi = { .explicit_path = t.lib },
		.dev_dir = t.dev,
		.host_root = t.root,
	};
	assert_int_equal(inventory_new(&opt, &inv), 0);
	bool changed;
	assert_int_equal(inventory_refresh(inv, &changed), 0);
	struct dcmi_lib *lib = inventory_dcmi(inv);
	assert_non_null(lib);
	struct npu_snapshot *snap = inventory_snapshot(inv);
	assert_int_equal(snap->count, 3);

	struct telemetry_errors errors = { 0 };
	struct telemetry_snapshot *t1;
	assert_int_equal(telemetry_read(lib, snap, NULL, 1000.0, &errors, &t1), 0);
	assert_int_equal(t1->count, 3);
	const struct telemetry_reading *r = telemetry_snapshot_find(t1, "npu-0");
	assert_non_null(r);
	assert_true(r->has_temperature && r->temperature_celsius == 45);
	assert_true(r->has_power && r->power_watts == 92.5);
	assert_true(r->has_utilization && r->aicore_utilization_ratio == 0.37);
	assert_true(r->has_hbm && r->hbm_total_bytes == 65536ull << 20 && r->hbm_used_bytes == 1024ull << 20);
	assert_true(r->has_error_codes && r->error_codes == 1);
	assert_true(r->has_timestamp && r->timestamp_seconds == 1000.0);

	/* Failed calls: left out, counted per function. */
	r = telemetry_snapshot_find(t1, "npu-1");
	assert_false(r->has_temperature);
	assert_false(r->has_power);
	assert_true(r->has_utilization && r->has_hbm);
	assert_int_equal(atomic_load(&errors.count[TELEMETRY_CALL_TEMPERATURE]), 1);
	assert_int_equal(atomic_load(&errors.count[TELEMETRY_CALL_POWER]), 1);
	assert_int_equal(atomic_load(&errors.count[TELEMETRY_CALL_UTILIZATION]), 0);

	/* Not supported (no value in the simulator, -8255): left out, not counted. */
	r = telemetry_snapshot_find(t1, "npu-2");
	assert_false(r->has_temperature || r->has_power || r->has_utilization);
	assert_true(r->has_hbm && r->hbm_total_bytes == 16ull << 20);

	/* npu-0's calls all fail now: no values, but the old timestamp. */
	put(t.state, "chip phy=0 fail=temperature,power_info,utilization_rate,hbm_info,errorcode_v2\n"
		     "chip phy=1 temp=50\n"
		     "chip phy=2\n");
	struct telemetry_snapshot *t2;
	assert_int_equal(telemetry_read(lib, snap, t1, 2000.0, &errors, &t2), 0);
	r = telemetry_snapshot_find(t2, "npu-0");
	assert_false(r->has_temperature || r->has_power || r->has_utilization || r->has_hbm || r->has_error_codes);
	assert_true(r->has_timestamp && r->timestamp_seconds == 1000.0);
	r = telemetry_snapshot_find(t2, "npu-1");
	assert_true(r->has_temperature && r->temperature_celsius == 50);
	assert_true(r->timestamp_seconds == 2000.0);
	assert_int_equal(atomic_load(&errors.count[TELEMETRY_CALL_TEMPERATURE]), 2);
	assert_int_equal(atomic_load(&errors.count[TELEMETRY_CALL_ERROR_CODES]), 1);

	/* Without DCMI (devfs) every reading is empty. */
	struct telemetry_snapshot *t3;
	assert_int_equal(telemetry_read(NULL, snap, NULL, 3000.0, NULL, &t3), 0);
	assert_int_equal(t3->count, 3);
	assert_false(t3->readings[0].has_timestamp);

	telemetry_snapshot_unref(t1);
	telemetry_snapshot_unref(t2);
	telemetry_snapshot_unref(t3);
	npu_snapshot_unref(snap);
	inventory_free(inv);
	remove_tree(&t);
}

static void test_vnpus_are_not_read(void **state)
{
	(void)state;
	struct npu_snapshot *s = npu_snapshot_new(2);
	snprintf(s->devices[0].id, sizeof(s->devices[0].id), "npu-0");
	s->devices[0].kind = NPU_DEVICE_CHIP;
	s->devices[0].chip.card_id = -1; /* from device files: nothing to ask DCMI */
	snprintf(s->devices[1].id, sizeof(s->devices[1].id), "vnpu-100");
	s->devices[1].kind = NPU_DEVICE_VNPU;
	struct telemetry_snapshot *t;
	assert_int_equal(telemetry_read(NULL, s, NULL, 1.0, NULL, &t), 0);
	assert_int_equal(t->count, 1);
	assert_string_equal(t->readings[0].id, "npu-0");
	assert_null(telemetry_snapshot_find(t, "vnpu-100"));
	telemetry_snapshot_unref(t);
	npu_snapshot_unref(s);
	assert_string_equal(telemetry_call_name(TELEMETRY_CALL_HBM), "dcmi_get_device_hbm_info");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_readings_and_failures),
		cmocka_unit_test(test_vnpus_are_not_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
