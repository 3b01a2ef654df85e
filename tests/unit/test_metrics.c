/* SPDX-License-Identifier: Apache-2.0 */
/* The metrics text: per-chip series with their labels (and one per holder
 * when pods hold the chip), a failed telemetry reading left out, vNPUs left
 * to their chip, per-resource counters and the histogram's cumulative
 * buckets, escaping, and the format's own rules (HELP and TYPE once per
 * family, each series once, a final newline). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "telemetry/metrics.h"

static struct npu_snapshot *node(void)
{
	struct npu_snapshot *s = npu_snapshot_new(3);
	for (unsigned i = 0; i < 2; i++) {
		struct npu_device *d = &s->devices[i];
		snprintf(d->id, sizeof(d->id), "npu-%u", i);
		d->kind = NPU_DEVICE_CHIP;
		d->chip.phy_id = i;
		d->chip.card_id = (int)i;
		snprintf(d->chip.name, sizeof(d->chip.name), "910B3");
		d->healthy = i == 0;
		d->fault = i == 0 ? NPU_FAULT_NONE : NPU_FAULT_HEALTH_LEVEL;
		d->dcmi_health = i == 0 ? 0 : 3;
	}
	struct npu_device *v = &s->devices[2];
	snprintf(v->id, sizeof(v->id), "vnpu-100");
	v->kind = NPU_DEVICE_VNPU;
	v->chip = s->devices[0].chip;
	v->healthy = true;
	s->count = 3;
	s->healthy = 2;
	return s;
}

static struct telemetry_snapshot *readings(void)
{
	struct telemetry_snapshot *t = calloc(1, sizeof(*t) + 2 * sizeof(t->readings[0]));
	atomic_init(&t->refs, 1);
	t->count = 2;
	snprintf(t->readings[0].id, sizeof(t->readings[0].id), "npu-0");
	t->readings[0] = (struct telemetry_reading){ .id = "npu-0", .has_temperature = true, .temperature_celsius = 45,
						     .has_power = true, .power_watts = 92.5, .has_timestamp = true,
						     .timestamp_seconds = 1700000000.5 };
	/* npu-1: every call failed, nothing to show but the old timestamp. */
	t->readings[1] = (struct telemetry_reading){ .id = "npu-1", .phy_id = 1, .has_timestamp = true,
						     .timestamp_seconds = 1600000000 };
	return t;
}

static char *render(struct metrics *m)
{
	char *text;
	size_t len;
	assert_int_equal(metrics_render(m, &text, &len), 0);
	assert_int_equal(strlen(text), len);
	assert_true(len > 0 && text[len - 1] == '\n');
	return text;
}

/* HELP and TYPE once per family, before its samples; each series once. */
static void check_format(const char *text)
{
	char *copy = strdup(text);
	char *seen[512];
	size_t n = 0;
	for (char *save, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char key[512];
		if (strncmp(l, "# HELP ", 7) == 0 || strncmp(l, "# TYPE ", 7) == 0) {
			snprintf(key, sizeof(key), "%s", l);
			*strchr(key + 7, ' ') = '\0';
		} else {
			snprintf(key, sizeof(key), "%s", l);
			*strrchr(key, ' ') = '\0';
		}
		for (size_t i = 0; i < n; i++)
			if (strcmp(seen[i], key) == 0)
				fail_msg("twice: %s", key);
		assert_true(n < 512);
		seen[n++] = strdup(key);
	}
	for (size_t i = 0; i < n; i++)
		free(seen[i]);
	free(copy);
}

static void test_chip_series(void **state)
{
	(void)state;
	struct metrics *m;
	assert_int_equal(metrics_new("1.2.3", &m), 0);
	struct npu_snapshot *s = node();
	struct telemetry_snapshot *t = readings();
	metrics_publish_chips(m, s);
	metrics_publish_telemetry(m, t);
	npu_snapshot_unref(s);
	telemetry_snapshot_unref(t);

	char *text = render(m);
	check_format(text);
	assert_non_null(strstr(text, "ascend_npu_healthy{id=\"npu-0\",phy=\"0\",chip=\"910B3\"} 1\n"));
	assert_non_null(strstr(text, "ascend_npu_healthy{id=\"npu-1\",phy=\"1\",chip=\"910B3\"} 0\n"));
	assert_non_null(strstr(text, "ascend_npu_health_code{id=\"npu-1\",phy=\"1\",chip=\"910B3\"} 3\n"));
	assert_non_null(strstr(text, "ascend_npu_temperature_celsius{id=\"npu-0\",phy=\"0\",chip=\"910B3\"} 45\n"));
	assert_non_null(strstr(text, "ascend_npu_power_watts{id=\"npu-0\",phy=\"0\",chip=\"910B3\"} 92.5\n"));
	/* A failed reading is left out, never 0. */
	assert_null(strstr(text, "ascend_npu_temperature_celsius{id=\"npu-1\""));
	assert_null(strstr(text, "ascend_npu_hbm_total_bytes"));
	assert_non_null(strstr(text, "ascend_npu_telemetry_timestamp_seconds{id=\"npu-1\",phy=\"1\",chip=\"910B3\"} "
				     "1600000000\n"));
	/* The vNPU is its chip's business. */
	assert_null(strstr(text, "vnpu-100"));
	assert_non_null(strstr(text, "ascend_device_plugin_build_info{version=\"1.2.3\"} 1\n"));
	free(text);
	metrics_free(m);
}

/* The network identity: the link where it is known, the info series where
 * the chip has an address or a super pod place. */
static void test_network(void **state)
{
	(void)state;
	struct metrics *m;
	assert_int_equal(metrics_new("1.2.3", &m), 0);
	struct npu_snapshot *s = node();
	s->devices[0].net = (struct npu_net){ .has_ip = true, .ip = { 192, 168, 1, 10 }, .prefix_len = 24,
					      .link = NPU_LINK_UP, .has_super_pod = true, .super_pod_id = 2, .sdid = 9 };
	s->devices[1].net = (struct npu_net){ .link = NPU_LINK_DOWN };
	metrics_publish_chips(m, s);
	npu_snapshot_unref(s);
	char *text = render(m);
	check_format(text);
	assert_non_null(strstr(text, "ascend_npu_roce_link_up{id=\"npu-0\",phy=\"0\",chip=\"910B3\"} 1\n"));
	assert_non_null(strstr(text, "ascend_npu_roce_link_up{id=\"npu-1\",phy=\"1\",chip=\"910B3\"} 0\n"));
	assert_non_null(strstr(text, "ascend_npu_network_info{id=\"npu-0\",phy=\"0\",ip=\"192.168.1.10/24\","
				     "link=\"up\",super_pod_id=\"2\",sdid=\"9\"} 1\n"));
	assert_null(strstr(text, "ascend_npu_network_info{id=\"npu-1\""));
	free(text);
	metrics_free(m);
}

static void test_holders(void **state)
{
	(void)state;
	struct metrics *m;
	assert_int_equal(metrics_new("1", &m), 0);
	struct npu_snapshot *s = node();
	metrics_publish_chips(m, s);
	npu_snapshot_unref(s);
	struct pod_map *p = calloc(1, sizeof(*p) + 2 * sizeof(p->holders[0]));
	atomic_init(&p->refs, 1);
	p->count = 2;
	p->holders[0] = (struct pod_holder){ .chip_id = "npu-0", .namespace_ = "ml", .pod = "train-0",
					     .container = "main" };
	p->holders[1] = (struct pod_holder){ .chip_id = "npu-0", .namespace_ = "ml", .pod = "infer-\"x\"",
					     .container = "c\\1" };
	metrics_publish_pods(m, p);
	pod_map_unref(p);

	char *text = render(m);
	check_format(text);
	assert_non_null(strstr(text, "ascend_npu_healthy{id=\"npu-0\",phy=\"0\",chip=\"910B3\",namespace=\"ml\","
				     "pod=\"train-0\",container=\"main\"} 1\n"));
	assert_non_null(strstr(text, "ascend_npu_healthy{id=\"npu-0\",phy=\"0\",chip=\"910B3\",namespace=\"ml\","
				     "pod=\"infer-\\\"x\\\"\",container=\"c\\\\1\"} 1\n"));
	/* Held: no series without pod labels for it; the free chip keeps its own. */
	assert_null(strstr(text, "ascend_npu_healthy{id=\"npu-0\",phy=\"0\",chip=\"910B3\"} "));
	assert_non_null(strstr(text, "ascend_npu_healthy{id=\"npu-1\",phy=\"1\",chip=\"910B3\"} 0\n"));
	free(text);

	metrics_publish_pods(m, NULL);
	text = render(m);
	assert_non_null(strstr(text, "ascend_npu_healthy{id=\"npu-0\",phy=\"0\",chip=\"910B3\"} 1\n"));
	free(text);
	metrics_free(m);
}

static void test_resource_counters(void **state)
{
	(void)state;
	struct metrics *m;
	assert_int_equal(metrics_new("1", &m), 0);
	struct metrics_resource *a, *b, *again;
	assert_int_equal(metrics_add_resource(m, "ascend.com/npu", 4, &a), 0);
	assert_int_equal(metrics_add_resource(m, "ascend.com/npu-310p", 0, &b), 0);
	assert_int_equal(metrics_add_resource(m, "ascend.com/npu", 4, &again), 0);
	assert_ptr_equal(a, again);
	assert_ptr_equal(metrics_find_resource(m, "ascend.com/npu-310p"), b);

	struct npu_snapshot *s = node();
	metrics_publish_devices(a, s);
	/* npu-0 fails, npu-1 recovers: two transitions. */
	struct npu_snapshot *s2 = node();
	s2->devices[0].healthy = false;
	s2->devices[1].healthy = true;
	metrics_publish_devices(a, s2);
	npu_snapshot_unref(s);
	npu_snapshot_unref(s2);

	metrics_count_registration(a);
	metrics_count_registration(a);
	metrics_count_kubelet_restart(m);
	metrics_streams_changed(a, 1);
	metrics_streams_changed(a, 1);
	metrics_streams_changed(a, -1);
	metrics_observe_allocate(a, 0, 0.0002);
	metrics_observe_allocate(a, 0, 0.003);
	metrics_observe_allocate(a, 3, 2.0);
	metrics_observe_allocate(a, 99, 0.0001); /* an impossible code counts as Unknown */
	metrics_dcmi_errors(m)->count[TELEMETRY_CALL_POWER] = 5;

	char *text = render(m);
	check_format(text);
	assert_non_null(strstr(text, "ascend_device_plugin_registrations_total{resource=\"ascend.com/npu\"} 2\n"));
	assert_non_null(strstr(text, "ascend_device_plugin_registrations_total{resource=\"ascend.com/npu-310p\"} 0\n"));
	assert_non_null(strstr(text, "ascend_device_plugin_kubelet_restarts_total 1\n"));
	assert_non_null(strstr(text, "ascend_device_plugin_list_and_watch_streams{resource=\"ascend.com/npu\"} 1\n"));
	assert_non_null(strstr(text, "ascend_device_plugin_health_transitions_total{resource=\"ascend.com/npu\"} 2\n"));
	/* 3 devices (a vNPU among them), 1 unhealthy now, 4 replicas each. */
	assert_non_null(strstr(text, "ascend_device_plugin_devices{resource=\"ascend.com/npu\",health=\"Healthy\"} 8\n"));
	assert_non_null(strstr(text, "ascend_device_plugin_devices{resource=\"ascend.com/npu\",health=\"Unhealthy\"} 4\n"));
	assert_non_null(strstr(text, "ascend_device_plugin_devices{resource=\"ascend.com/npu-310p\",health=\"Healthy\"} 0\n"));
	assert_non_null(strstr(text, "{resource=\"ascend.com/npu\",code=\"OK\"} 2\n"));
	assert_non_null(strstr(text, "{resource=\"ascend.com/npu\",code=\"InvalidArgument\"} 1\n"));
	assert_non_null(strstr(text, "{resource=\"ascend.com/npu\",code=\"Unknown\"} 1\n"));
	assert_non_null(strstr(text, "ascend_device_plugin_dcmi_errors_total{function=\"dcmi_get_device_power_info\"} 5\n"));
	/* Cumulative buckets, +Inf equal to the count. */
	const char *h = "ascend_device_plugin_allocate_duration_seconds";
	char want[256];
	snprintf(want, sizeof(want), "%s_bucket{resource=\"ascend.com/npu\",le=\"0.0005\"} 2\n", h);
	assert_non_null(strstr(text, want));
	snprintf(want, sizeof(want), "%s_bucket{resource=\"ascend.com/npu\",le=\"0.005\"} 3\n", h);
	assert_non_null(strstr(text, want));
	snprintf(want, sizeof(want), "%s_bucket{resource=\"ascend.com/npu\",le=\"1\"} 3\n", h);
	assert_non_null(strstr(text, want));
	snprintf(want, sizeof(want), "%s_bucket{resource=\"ascend.com/npu\",le=\"+Inf\"} 4\n", h);
	assert_non_null(strstr(text, want));
	snprintf(want, sizeof(want), "%s_count{resource=\"ascend.com/npu\"} 4\n", h);
	assert_non_null(strstr(text, want));
	snprintf(want, sizeof(want), "%s_sum{resource=\"ascend.com/npu\"} ", h);
	const char *sum = strstr(text, want);
	assert_non_null(sum);
	double v = strtod(sum + strlen(want), NULL);
	assert_true(v > 2.00329 && v < 2.00331);
	free(text);
	metrics_free(m);
}

/* Faults by code: each code its own series, up to the bound; the rest
 * under "other"; nothing before the first. */
static void test_fault_counters(void **state)
{
	(void)state;
	struct metrics *m;
	assert_int_equal(metrics_new("1", &m), 0);
	char *text = render(m);
	assert_null(strstr(text, "fault_onsets"));
	assert_null(strstr(text, "fault_escalations"));
	free(text);

	metrics_count_fault(m, 0x80E01801, false);
	metrics_count_fault(m, 0x80E01801, false);
	metrics_count_fault(m, 0x80E01801, true);
	for (uint32_t c = 1; c <= METRICS_MAX_FAULT_CODES + 3; c++)
		metrics_count_fault(m, 0x81000000 + c, false);
	text = render(m);
	check_format(text);
	assert_non_null(strstr(text, "ascend_device_plugin_fault_onsets_total{code=\"80E01801\"} 2\n"));
	assert_non_null(strstr(text, "ascend_device_plugin_fault_escalations_total{code=\"80E01801\"} 1\n"));
	assert_non_null(strstr(text, "ascend_device_plugin_fault_onsets_total{code=\"81000001\"} 1\n"));
	/* 80E01801 took one of the 64 places: 63 more codes have their own, 4 do not. */
	assert_non_null(strstr(text, "ascend_device_plugin_fault_onsets_total{code=\"8100003F\"} 1\n"));
	assert_null(strstr(text, "{code=\"81000040\"}"));
	assert_non_null(strstr(text, "ascend_device_plugin_fault_onsets_total{code=\"other\"} 4\n"));
	assert_null(strstr(text, "fault_escalations_total{code=\"other\"}"));
	free(text);
	metrics_free(m);
}

/* Resets per chip ever reset, chip labels only; the separated gauge from
 * the policy's level of each judged chip. */
static void test_resets_and_separation(void **state)
{
	(void)state;
	struct metrics *m;
	assert_int_equal(metrics_new("1", &m), 0);
	struct npu_snapshot *s = node();
	s->devices[1].policy_judged = true;
	s->devices[1].policy_level = 9; /* ManuallySeparateNPU */
	metrics_publish_chips(m, s);
	npu_snapshot_unref(s);
	char *text = render(m);
	assert_null(strstr(text, "ascend_npu_resets_total"));
	assert_non_null(strstr(text, "ascend_npu_separated{id=\"npu-1\",phy=\"1\",chip=\"910B3\"} 1\n"));
	/* npu-0 was never judged: no value rather than a guess. */
	assert_null(strstr(text, "ascend_npu_separated{id=\"npu-0\""));
	free(text);

	metrics_count_reset(m, 1, METRICS_RESET_ATTEMPTED);
	metrics_count_reset(m, 1, METRICS_RESET_ATTEMPTED);
	metrics_count_reset(m, 1, METRICS_RESET_FAILED);
	metrics_count_reset(m, 7, METRICS_RESET_ATTEMPTED); /* a chip no longer listed */
	text = render(m);
	check_format(text);
	assert_non_null(strstr(text, "# TYPE ascend_npu_resets_total counter\n"));
	assert_non_null(
		strstr(text, "ascend_npu_resets_total{id=\"npu-1\",phy=\"1\",chip=\"910B3\",result=\"attempted\"} 2\n"));
	assert_non_null(
		strstr(text, "ascend_npu_resets_total{id=\"npu-1\",phy=\"1\",chip=\"910B3\",result=\"succeeded\"} 0\n"));
	assert_non_null(
		strstr(text, "ascend_npu_resets_total{id=\"npu-1\",phy=\"1\",chip=\"910B3\",result=\"failed\"} 1\n"));
	assert_null(strstr(text, "ascend_npu_resets_total{id=\"npu-0\""));
	assert_null(strstr(text, "phy=\"7\""));
	free(text);
	metrics_free(m);
}

static void test_escape(void **state)
{
	(void)state;
	char buf[16];
	assert_int_equal(metrics_escape_label("a\"b\\c\nd", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "a\\\"b\\\\c\\nd");
	assert_int_equal(metrics_escape_label("0123456789abcdef", buf, sizeof(buf)), -ENOBUFS);
	assert_int_equal(metrics_escape_label("\"\"\"\"\"\"\"\"", buf, sizeof(buf)), -ENOBUFS);
}

static void test_resource_bound(void **state)
{
	(void)state;
	struct metrics *m;
	assert_int_equal(metrics_new("1", &m), 0);
	struct metrics_resource *r;
	char name[64];
	for (int i = 0; i < METRICS_MAX_RESOURCES; i++) {
		snprintf(name, sizeof(name), "ascend.com/r%d", i);
		assert_int_equal(metrics_add_resource(m, name, 1, &r), 0);
	}
	assert_int_equal(metrics_add_resource(m, "ascend.com/more", 1, &r), -ENOSPC);
	metrics_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chip_series),
		cmocka_unit_test(test_network),   cmocka_unit_test(test_holders),
		cmocka_unit_test(test_resource_counters), cmocka_unit_test(test_escape),
		cmocka_unit_test(test_resource_bound),  cmocka_unit_test(test_fault_counters), cmocka_unit_test(test_resets_and_separation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
