/* SPDX-License-Identifier: Apache-2.0 */
/* The DRA driver's prepare and unprepare (dra/driver.c) with a claim reader
 * that answers fixture JSON: a claim's chips get one CDI device
 * (<driver>/claim=<uid>) with their nodes and ASCEND_VISIBLE_DEVICES, and a
 * checkpoint entry; preparing again answers the same without reading the
 * claim, also after a restart (and writes a lost spec again); a chip of
 * another pool, an unknown, Unhealthy or already prepared chip, a recreated
 * claim and an unallocated one each fail that claim with the device and the
 * reason; unprepare removes spec and entry and accepts an unknown claim; a
 * corrupt checkpoint is set aside; a restart writes the specs of recorded
 * claims again, after checking each record as a new claim (a record with
 * a uid that is none, or holding a chip held by a record before it, is
 * set aside); a prepare waiting on the API server holds up no other. A vNPU's spec mounts /dev/vdavinci<id>
 * as Allocate does, its carved chip is refused; a time-sliced chip is
 * prepared for as many claims as its replicas. */
#include <errno.h>
#include <setjmp.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/file.h"
#include "base/parse.h"
#include "dra/driver.h"
#include "support/carve.h"
#include "support/tmpdir.h"

struct fixture {
	char dir[64], cdi_dir[96], plugin_dir[96], dev_dir[96];
	const char *claim_json; /* what the reader answers */
	atomic_int reads;
	struct dra_read_limits limits; /* of the last read */
	/* The read of the claim named "slow" answers slow_json once gate is
	 * posted, having posted entered. */
	bool gated;
	sem_t entered, gate;
	const char *slow_json;
	struct npu_snapshot *snap;
	struct dra_driver *driver;
	char *status; /* the last status apply the driver handed out */
	int statuses;
	struct status_dirs *status_dirs; /* the live status files' (NULL: none) */
};

static void status_out(void *ctx, const char *ns, const char *name, const char *body)
{
	struct fixture *f = ctx;
	assert_string_equal(ns, "ns");
	assert_string_equal(name, "c");
	free(f->status);
	f->status = strdup(body);
	f->statuses++;
}

static int read_claim(void *ctx, const char *ns, const char *name, const struct dra_read_limits *limits,
		      char **ret_json, size_t *ret_len, char *why, size_t why_size)
{
	struct fixture *f = ctx;
	f->reads++;
	/* Only claims "c" are read from one thread at a time. */
	if (strcmp(name, "c") == 0)
		f->limits = limits ? *limits : (struct dra_read_limits){ 0 };
	if (f->gated && strcmp(name, "slow") == 0) {
		sem_post(&f->entered);
		sem_wait(&f->gate);
		*ret_json = strdup(f->slow_json);
		*ret_len = strlen(f->slow_json);
		return *ret_json ? 0 : -ENOMEM;
	}
	if (!f->claim_json) {
		snprintf(why, why_size, "resourceclaims \"%s\" not found in %s", name, ns);
		return -ENOENT;
	}
	*ret_json = strdup(f->claim_json);
	*ret_len = strlen(f->claim_json);
	return *ret_json ? 0 : -ENOMEM;
}

static void start_driver(struct fixture *f, char *set_aside, size_t size)
{
	const struct dra_driver_options o = {
		.driver_name = "npu.ascend.com",
		.node_name = "node-1",
		.plugin_dir = f->plugin_dir,
		.cdi_dir = f->cdi_dir,
		.paths = { .dev_dir = f->dev_dir, .host_root = "/", .driver_path = "/nonexistent" },
		.reader = { .get = read_claim, .prepared = status_out, .ctx = f },
		.status = f->status_dirs,
	};
	char why[256];
	assert_int_equal(dra_driver_new(&o, &f->driver, set_aside, size, why, sizeof(why)), 0);
	dra_driver_publish(f->driver, f->snap, NULL, NULL);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	assert_int_equal(tmpdir_make(f->dir, sizeof(f->dir), "dra-driver"), 0);
	snprintf(f->cdi_dir, sizeof(f->cdi_dir), "%s/cdi", f->dir);
	snprintf(f->plugin_dir, sizeof(f->plugin_dir), "%s/plugin", f->dir);
	snprintf(f->dev_dir, sizeof(f->dev_dir), "%s/dev", f->dir);
	assert_int_equal(mkdir_ensure(f->cdi_dir, 0755), 0);
	assert_int_equal(mkdir_ensure(f->plugin_dir, 0755), 0);
	assert_int_equal(mkdir_ensure(f->dev_dir, 0755), 0);
	/* Four 910B3 chips, npu-2 Unhealthy. */
	f->snap = npu_snapshot_new(4);
	assert_non_null(f->snap);
	for (uint32_t i = 0; i < 4; i++) {
		struct npu_device *d = &f->snap->devices[i];
		snprintf(d->id, sizeof(d->id), "npu-%u", i);
		d->kind = NPU_DEVICE_CHIP;
		d->chip.phy_id = i;
		d->chip.family = NPU_FAMILY_910B;
		d->healthy = i != 2;
		d->fault = i == 2 ? NPU_FAULT_HEALTH_LEVEL : NPU_FAULT_NONE;
		d->dcmi_health = i == 2 ? 3 : 0;
	}
	f->snap->healthy = 3;
	start_driver(f, NULL, 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	dra_driver_free(f->driver);
	status_dirs_free(f->status_dirs);
	npu_snapshot_unref(f->snap);
	free(f->status);
	int r = tmpdir_remove(f->dir);
	free(f);
	return r == 0 ? 0 : -1;
}

#define CLAIM(uid, results)                                                                                  \
	"{\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\",\"uid\":\"" uid "\"},"                           \
	"\"status\":{\"allocation\":{\"devices\":{\"results\":[" results "]}}}}"
#define RESULT(pool, device) "{\"request\":\"npu\",\"driver\":\"npu.ascend.com\",\"pool\":\"" pool "\",\"device\":\"" device "\"}"
#define OTHER_DRIVER "{\"request\":\"gpu\",\"driver\":\"gpu.example.com\",\"pool\":\"node-1\",\"device\":\"gpu-0\"}"

static char *spec_of(const struct fixture *f, const char *uid)
{
	char path[256], why[128], *text;
	size_t len;
	snprintf(path, sizeof(path), "%s/npu.ascend.com-claim_%s.json", f->cdi_dir, uid);
	return file_read_bounded(path, 1 << 20, &text, &len, why, sizeof(why)) == 0 ? text : NULL;
}

static void test_prepare(void **state)
{
	struct fixture *f = *state;
	struct dra_prepared *p;
	char why[512] = "";
	f->claim_json = CLAIM("uid-1", RESULT("node-1", "npu-0") "," OTHER_DRIVER "," RESULT("node-1", "npu-3"));
	/* Not recorded: only a prepare that may read it prepares it, with the
	 * limits it was given. */
	assert_int_equal(dra_driver_prepare_recorded(f->driver, "ns", "uid-1", "c", &p, why, sizeof(why)), -ENODATA);
	assert_int_equal(f->reads, 0);
	const struct dra_read_limits limits = { .deadline_ms = 12345, .abort_fd = 42 };
	int r = dra_driver_prepare(f->driver, "ns", "uid-1", "c", &limits, &p, why, sizeof(why));
	if (r < 0)
		fail_msg("prepare: %s", why);
	assert_int_equal(f->reads, 1);
	assert_int_equal(f->limits.deadline_ms, 12345);
	assert_int_equal(f->limits.abort_fd, 42);
	assert_int_equal(p->n_devices, 2); /* the other driver's result is not ours */
	assert_string_equal(p->devices[0].device, "npu-0");
	assert_string_equal(p->devices[1].device, "npu-3");
	assert_string_equal(p->devices[1].pool, "node-1");
	assert_string_equal(p->devices[1].request, "npu");
	free(p);

	char id[DRA_CDI_ID_MAX];
	assert_int_equal(dra_driver_cdi_id(f->driver, "uid-1", id, sizeof(id)), 0);
	assert_string_equal(id, "npu.ascend.com/claim=uid-1");
	char *spec = spec_of(f, "uid-1");
	assert_non_null(spec);
	assert_non_null(strstr(spec, "\"kind\": \"npu.ascend.com/claim\""));
	assert_non_null(strstr(spec, "\"name\": \"uid-1\""));
	assert_non_null(strstr(spec, "\"path\": \"/dev/davinci0\""));
	assert_non_null(strstr(spec, "\"path\": \"/dev/davinci3\""));
	assert_null(strstr(spec, "davinci1\""));
	assert_non_null(strstr(spec, "\"ASCEND_VISIBLE_DEVICES=0,3\""));
	/* Each result has a CDI device of its own, its node alone: the
	 * kubelet shows each device's health under its first id. */
	char result_id[DRA_CDI_RESULT_ID_MAX];
	assert_int_equal(dra_driver_cdi_result_id(f->driver, "uid-1", 1, "npu-3", result_id, sizeof(result_id)), 0);
	assert_string_equal(result_id, "npu.ascend.com/claim=uid-1-1-npu-3");
	const char *part = strstr(spec, "\"name\": \"uid-1-1-npu-3\"");
	assert_non_null(part);
	assert_non_null(strstr(spec, "\"name\": \"uid-1-0-npu-0\""));
	assert_non_null(strstr(part, "\"path\": \"/dev/davinci3\""));
	assert_null(strstr(part, "\"path\": \"/dev/davinci0\""));
	free(spec);

	/* Again: the same answer from the record, the claim not read. */
	f->claim_json = NULL;
	assert_int_equal(dra_driver_prepare(f->driver, "ns", "uid-1", "c", NULL, &p, why, sizeof(why)), 0);
	assert_int_equal(f->reads, 1);
	assert_int_equal(p->n_devices, 2);
	free(p);
	assert_int_equal(dra_driver_prepare_recorded(f->driver, "ns", "uid-1", "c", &p, why, sizeof(why)), 0);
	assert_int_equal(f->reads, 1);
	assert_int_equal(p->n_devices, 2);
	free(p);

	/* A restart: the record is read back; a lost spec is written again. */
	dra_driver_free(f->driver);
	char path[256], set_aside[256];
	snprintf(path, sizeof(path), "%s/npu.ascend.com-claim_uid-1.json", f->cdi_dir);
	assert_int_equal(unlink(path), 0);
	start_driver(f, set_aside, sizeof(set_aside));
	assert_string_equal(set_aside, "");
	assert_int_equal(dra_driver_prepared_count(f->driver), 1);
	assert_int_equal(dra_driver_prepare(f->driver, "ns", "uid-1", "c", NULL, &p, why, sizeof(why)), 0);
	assert_int_equal(f->reads, 1);
	assert_string_equal(p->devices[0].device, "npu-0");
	free(p);
	spec = spec_of(f, "uid-1");
	assert_non_null(spec);
	free(spec);

	/* Unprepare: spec and record gone; again, and for a stranger: fine. */
	assert_int_equal(dra_driver_unprepare(f->driver, "uid-1", why, sizeof(why)), 0);
	assert_null(spec_of(f, "uid-1"));
	assert_int_equal(dra_driver_prepared_count(f->driver), 0);
	assert_int_equal(dra_driver_unprepare(f->driver, "uid-1", why, sizeof(why)), 0);
	assert_int_equal(dra_driver_unprepare(f->driver, "never-seen", why, sizeof(why)), 0);
	dra_driver_free(f->driver);
	start_driver(f, NULL, 0);
	assert_int_equal(dra_driver_prepared_count(f->driver), 0);
}

static void expect_failure(struct fixture *f, const char *uid, const char *json, const char *reason)
{
	struct dra_prepared *p = NULL;
	char why[512] = "";
	f->claim_json = json;
	assert_true(dra_driver_prepare(f->driver, "ns", uid, "c", NULL, &p, why, sizeof(why)) < 0);
	assert_null(p);
	if (!strstr(why, reason))
		fail_msg("'%s' does not say '%s'", why, reason);
	assert_null(spec_of(f, uid));
}

/* A claim whose chips have a network identity: once prepared anew, the
 * apply of its status is handed out (only the chips with an identity, the
 * claim's uid as precondition); answered from its record, nothing is; a
 * claim of chips without any identity hands out nothing. */
static void test_status(void **state)
{
	struct fixture *f = *state;
	f->snap->devices[1].net = (struct npu_net){ .has_ip = true, .ip = { 10, 0, 0, 11 }, .prefix_len = 16,
						    .link = NPU_LINK_UP };
	dra_driver_publish(f->driver, f->snap, NULL, NULL);
	f->claim_json = CLAIM("uid-s", RESULT("node-1", "npu-1") "," RESULT("node-1", "npu-3"));
	struct dra_prepared *p = NULL;
	char why[256] = "";
	assert_int_equal(dra_driver_prepare(f->driver, "ns", "uid-s", "c", NULL, &p, why, sizeof(why)), 0);
	free(p);
	assert_int_equal(f->statuses, 1);
	assert_string_equal(f->status,
			    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"c\","
			    "\"namespace\":\"ns\",\"uid\":\"uid-s\"},\"status\":{\"devices\":[{\"driver\":\"npu.ascend.com\","
			    "\"pool\":\"node-1\",\"device\":\"npu-1\",\"data\":{\"device_id\":1,\"family\":\"910B\","
			    "\"device_ip\":\"10.0.0.11\",\"prefix_len\":16,\"link\":\"up\"},\"networkData\":{\"ips\":"
			    "[\"10.0.0.11/16\"]}}]}}");
	assert_int_equal(dra_driver_prepare(f->driver, "ns", "uid-s", "c", NULL, &p, why, sizeof(why)), 0);
	free(p);
	assert_int_equal(f->statuses, 1);
	assert_int_equal(dra_driver_unprepare(f->driver, "uid-s", why, sizeof(why)), 0);

	f->claim_json = CLAIM("uid-t", RESULT("node-1", "npu-3"));
	assert_int_equal(dra_driver_prepare(f->driver, "ns", "uid-t", "c", NULL, &p, why, sizeof(why)), 0);
	free(p);
	assert_int_equal(f->statuses, 1);
}

static void test_refused(void **state)
{
	struct fixture *f = *state;
	expect_failure(f, "u2", CLAIM("u2", RESULT("node-2", "npu-0")),
		       "device npu-0 is in pool node-2, not this node's (node-1)");
	expect_failure(f, "u2", CLAIM("u2", RESULT("node-1", "npu-9")), "device npu-9 is not on this node");
	expect_failure(f, "u2", CLAIM("u2", RESULT("node-1", "npu-1") "," RESULT("node-1", "npu-2")),
		       "device npu-2 is Unhealthy: DCMI health 3");
	expect_failure(f, "u2", CLAIM("u-old", RESULT("node-1", "npu-0")), "has uid u-old, not u2");
	expect_failure(f, "u2", "{\"metadata\":{\"uid\":\"u2\"}}", "ResourceClaim ns/c is not allocated");
	expect_failure(f, "u2", CLAIM("u2", OTHER_DRIVER), "has no device of driver npu.ascend.com");
	expect_failure(f, "u2", "{", "ResourceClaim ns/c: not JSON");
	expect_failure(f, "u2", NULL, "cannot read ResourceClaim ns/c: resourceclaims \"c\" not found in ns");
	expect_failure(f, "../x", CLAIM("../x", RESULT("node-1", "npu-0")), "is not a uid");
	expect_failure(f, "-x", CLAIM("-x", RESULT("node-1", "npu-0")), "is not a uid");
	assert_int_equal(dra_driver_prepared_count(f->driver), 0);

	/* A chip prepared for one claim is not prepared for another. */
	struct dra_prepared *p;
	char why[512];
	f->claim_json = CLAIM("u3", RESULT("node-1", "npu-1"));
	assert_int_equal(dra_driver_prepare(f->driver, "ns", "u3", "c", NULL, &p, why, sizeof(why)), 0);
	free(p);
	expect_failure(f, "u4", CLAIM("u4", RESULT("node-1", "npu-1")), "device npu-1 is prepared for claim ns/c (uid u3)");
	/* A prepared claim whose chip turned Unhealthy is still answered: its pod runs on it. */
	f->snap->devices[1].healthy = false;
	assert_int_equal(dra_driver_prepare(f->driver, "ns", "u3", "c", NULL, &p, why, sizeof(why)), 0);
	free(p);
}

/* The checkpoint file's text, malloc'd. */
static char *checkpoint_text(const struct fixture *f)
{
	char path[512], *text = NULL;
	size_t len = 0;
	snprintf(path, sizeof(path), "%s/checkpoint.json", f->plugin_dir);
	FILE *in = fopen(path, "re");
	assert_non_null(in);
	assert_true(getdelim(&text, &len, '\0', in) > 0);
	fclose(in);
	return text;
}

#define ADMIN_RESULT(pool, device)                                                                             \
	"{\"request\":\"npu\",\"driver\":\"npu.ascend.com\",\"pool\":\"" pool "\",\"device\":\"" device          \
	"\",\"adminAccess\":true}"

/* Administrative access (a monitoring pod): prepared on a chip a workload
 * holds, an Unhealthy one too, and never in a workload's way. */
static void test_admin_access(void **state)
{
	struct fixture *f = *state;
	struct dra_prepared *p;
	char why[512] = "";
	f->claim_json = CLAIM("w1", RESULT("node-1", "npu-1"));
	assert_int_equal(dra_driver_prepare(f->driver, "ns", "w1", "c", NULL, &p, why, sizeof(why)), 0);
	free(p);
	f->claim_json = CLAIM("m1", ADMIN_RESULT("node-1", "npu-1") "," ADMIN_RESULT("node-1", "npu-2"));
	if (dra_driver_prepare(f->driver, "ns", "m1", "c", NULL, &p, why, sizeof(why)) < 0)
		fail_msg("admin prepare: %s", why);
	assert_true(p->devices[0].admin_access);
	free(p);
	char *spec = spec_of(f, "m1");
	assert_non_null(strstr(spec, "/dev/davinci1\""));
	assert_non_null(strstr(spec, "/dev/davinci2\""));
	free(spec);
	/* The workload's chip is still its alone; npu-0 under an admin claim
	 * stays free for a workload. */
	expect_failure(f, "w2", CLAIM("w2", RESULT("node-1", "npu-1")), "device npu-1 is prepared for claim ns/c (uid w1)");
	f->claim_json = CLAIM("m2", ADMIN_RESULT("node-1", "npu-0"));
	assert_int_equal(dra_driver_prepare(f->driver, "ns", "m2", "c", NULL, &p, why, sizeof(why)), 0);
	free(p);
	f->claim_json = CLAIM("w3", RESULT("node-1", "npu-0"));
	if (dra_driver_prepare(f->driver, "ns", "w3", "c", NULL, &p, why, sizeof(why)) < 0)
		fail_msg("a workload beside an admin claim: %s", why);
	free(p);
	/* Survives a restart of the driver, as recorded. */
	char *text = checkpoint_text(f);
	assert_non_null(strstr(text, "\"adminAccess\":true"));
	free(text);
}

/* Chip 0 carved into vNPUs 100 and 101 (template vir05_1c_8g). */
static struct npu_snapshot *with_vnpus(const struct fixture *f)
{
	struct npu_snapshot *s = carve_snapshot(f->snap, 1, 2, "vir05_1c_8g");
	assert_non_null(s);
	return s;
}

static void test_vnpu(void **state)
{
	struct fixture *f = *state;
	struct npu_snapshot *s = with_vnpus(f);
	dra_driver_publish(f->driver, s, NULL, NULL);
	struct dra_prepared *p;
	char why[512] = "";
	f->claim_json = CLAIM("v1", RESULT("node-1", "vnpu-101"));
	if (dra_driver_prepare(f->driver, "ns", "v1", "c", NULL, &p, why, sizeof(why)) < 0)
		fail_msg("prepare: %s", why);
	assert_string_equal(p->devices[0].device, "vnpu-101");
	free(p);
	/* What Allocate gives a vNPU: its own node under the chip's name
	 * inside, its id visible, and the runtime told it is virtual. */
	char *spec = spec_of(f, "v1");
	assert_non_null(spec);
	assert_non_null(strstr(spec, "\"path\": \"/dev/davinci101\""));
	assert_non_null(strstr(spec, "\"hostPath\": \"/dev/vdavinci101\""));
	assert_null(strstr(spec, "/dev/davinci0\""));
	assert_non_null(strstr(spec, "\"ASCEND_VISIBLE_DEVICES=101\""));
	assert_non_null(strstr(spec, "\"ASCEND_RUNTIME_OPTIONS=VIRTUAL\""));
	free(spec);
	/* A chip carved into vNPUs is not handed out whole; a vNPU once. */
	expect_failure(f, "v2", CLAIM("v2", RESULT("node-1", "npu-0")), "device npu-0 is carved into 2 vNPUs");
	expect_failure(f, "v2", CLAIM("v2", RESULT("node-1", "vnpu-101")), "device vnpu-101 is prepared for claim ns/c (uid v1)");
	/* A vNPU is as healthy as its chip. */
	s->devices[4].healthy = false;
	s->devices[4].fault = NPU_FAULT_HEALTH_LEVEL;
	s->devices[4].dcmi_health = 3;
	expect_failure(f, "v2", CLAIM("v2", RESULT("node-1", "vnpu-100")), "device vnpu-100 is Unhealthy: DCMI health 3");
	npu_snapshot_unref(s);
}

static void test_time_sliced(void **state)
{
	struct fixture *f = *state;
	/* npu-0 and npu-2 shared by 2, the others by none. */
	const unsigned shares[4] = { 2, 1, 2, 0 };
	dra_driver_publish(f->driver, f->snap, NULL, shares);
	struct dra_prepared *p;
	char why[512] = "";
	static const char *const uids[] = { "t1", "t2" };
	static const char *const claims[] = { CLAIM("t1", RESULT("node-1", "npu-0")),
					      CLAIM("t2", RESULT("node-1", "npu-0") "," RESULT("node-1", "npu-0")) };
	for (size_t i = 0; i < 2; i++) {
		f->claim_json = claims[i];
		if (dra_driver_prepare(f->driver, "ns", uids[i], "c", NULL, &p, why, sizeof(why)) < 0)
			fail_msg("prepare %s: %s", uids[i], why);
		free(p);
	}
	/* Two requests of one claim on the shared chip: its node and number
	 * once in the claim's CDI device; each result's own device has it. */
	char *spec = spec_of(f, "t2");
	assert_non_null(spec);
	assert_non_null(strstr(spec, "\"ASCEND_VISIBLE_DEVICES=0\""));
	char *first_part = strstr(spec, "\"name\": \"t2-0-npu-0\"");
	assert_non_null(first_part);
	assert_non_null(strstr(first_part, "\"name\": \"t2-1-npu-0\""));
	*first_part = '\0';
	assert_int_equal(strstr(strstr(spec, "/dev/davinci0\"") + 1, "\"path\": \"/dev/davinci0\""), NULL);
	free(spec);
	/* No more claims than replicas; no sharing where there is none; an
	 * Unhealthy chip refused however shared. */
	expect_failure(f, "t3", CLAIM("t3", RESULT("node-1", "npu-0")),
		       "device npu-0 is prepared for 2 claims already, as many as its time-slicing replicas");
	f->claim_json = CLAIM("t4", RESULT("node-1", "npu-1"));
	assert_int_equal(dra_driver_prepare(f->driver, "ns", "t4", "c", NULL, &p, why, sizeof(why)), 0);
	free(p);
	expect_failure(f, "t5", CLAIM("t5", RESULT("node-1", "npu-1")), "device npu-1 is prepared for claim ns/c (uid t4)");
	expect_failure(f, "t5", CLAIM("t5", RESULT("node-1", "npu-2")), "device npu-2 is Unhealthy");
	expect_failure(f, "t5", CLAIM("t5", RESULT("node-2", "npu-0")), "device npu-0 is in pool node-2");
	/* A sharer gone: room for the next. */
	assert_int_equal(dra_driver_unprepare(f->driver, "t1", why, sizeof(why)), 0);
	f->claim_json = CLAIM("t3", RESULT("node-1", "npu-0"));
	assert_int_equal(dra_driver_prepare(f->driver, "ns", "t3", "c", NULL, &p, why, sizeof(why)), 0);
	free(p);
	/* Time-slicing turned off: the chip is no one's to share any more. */
	dra_driver_publish(f->driver, f->snap, NULL, NULL);
	assert_int_equal(dra_driver_unprepare(f->driver, "t2", why, sizeof(why)), 0);
	expect_failure(f, "t6", CLAIM("t6", RESULT("node-1", "npu-0")), "device npu-0 is prepared for claim ns/c (uid t3)");
}

static void test_sweep(void **state)
{
	struct fixture *f = *state;
	struct dra_prepared *p;
	char why[512], path[256];
	f->claim_json = CLAIM("kept", RESULT("node-1", "npu-0"));
	assert_int_equal(dra_driver_prepare(f->driver, "ns", "kept", "c", NULL, &p, why, sizeof(why)), 0);
	free(p);
	/* A spec of a claim the checkpoint does not hold, and files that are not ours. */
	snprintf(path, sizeof(path), "%s/npu.ascend.com-claim_orphan.json", f->cdi_dir);
	assert_int_equal(file_write_atomic(path, "{}", 2, 0644, 0), 0);
	snprintf(path, sizeof(path), "%s/ascend.com-npu.json", f->cdi_dir);
	assert_int_equal(file_write_atomic(path, "{}", 2, 0644, 0), 0);
	snprintf(path, sizeof(path), "%s/other.example.com-claim_orphan.json", f->cdi_dir);
	assert_int_equal(file_write_atomic(path, "{}", 2, 0644, 0), 0);
	assert_int_equal(dra_driver_sweep(f->driver), 1);
	assert_null(spec_of(f, "orphan"));
	char *spec = spec_of(f, "kept");
	assert_non_null(spec);
	free(spec);
	assert_true(path_exists(path));
	assert_int_equal(dra_driver_sweep(f->driver), 0);
}

static void test_restore(void **state)
{
	struct fixture *f = *state;
	struct dra_prepared *p;
	char why[512] = "", path[256];
	static const char *const uids[] = { "r1", "r2" };
	static const char *const claims[] = { CLAIM("r1", RESULT("node-1", "npu-0")),
					      CLAIM("r2", RESULT("node-1", "npu-3")) };
	for (size_t i = 0; i < 2; i++) {
		f->claim_json = claims[i];
		assert_int_equal(dra_driver_prepare(f->driver, "ns", uids[i], "c", NULL, &p, why, sizeof(why)), 0);
		free(p);
	}
	/* While the driver is down, one spec is lost and the other garbled. */
	dra_driver_free(f->driver);
	snprintf(path, sizeof(path), "%s/npu.ascend.com-claim_r1.json", f->cdi_dir);
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/npu.ascend.com-claim_r2.json", f->cdi_dir);
	assert_int_equal(file_write_atomic(path, "{", 1, 0644, 0), 0);
	start_driver(f, NULL, 0);
	f->claim_json = NULL;
	size_t failed = 99;
	assert_int_equal(dra_driver_restore(f->driver, &failed, why, sizeof(why)), 2);
	assert_int_equal(failed, 0);
	assert_int_equal(f->reads, 2); /* from the record, not the API server */
	char *spec = spec_of(f, "r1");
	assert_non_null(spec);
	assert_non_null(strstr(spec, "\"ASCEND_VISIBLE_DEVICES=0\""));
	free(spec);
	spec = spec_of(f, "r2");
	assert_non_null(spec);
	assert_non_null(strstr(spec, "\"ASCEND_VISIBLE_DEVICES=3\""));
	free(spec);

	/* A chip gone from the inventory: that claim is named, the other written. */
	struct npu_snapshot *three = npu_snapshot_new(3);
	assert_non_null(three);
	memcpy(three->devices, f->snap->devices, 3 * sizeof(three->devices[0]));
	dra_driver_publish(f->driver, three, NULL, NULL);
	assert_int_equal(dra_driver_restore(f->driver, &failed, why, sizeof(why)), 1);
	assert_int_equal(failed, 1);
	if (!strstr(why, "claim ns/c (uid r2): device npu-3 is not on this node"))
		fail_msg("'%s' does not name the claim and the device", why);
	npu_snapshot_unref(three);
}

/* A checkpoint record of one device of this node. */
#define RECORD(uid, name, device)                                                                            \
	"{\"uid\":\"" uid "\",\"namespace\":\"ns\",\"name\":\"" name "\",\"devices\":[{\"request\":\"npu\","  \
	"\"pool\":\"node-1\",\"device\":\"" device "\"}]}"

/* A checkpoint the driver did not write: a uid that would put a spec out of
 * the CDI directory, and as many records as it may hold all holding one
 * chip that is not shared. The first holder keeps it; the others are set
 * aside with their specs, and nothing is written outside the directory. */
static void test_restore_checks_records(void **state)
{
	struct fixture *f = *state;
	dra_driver_free(f->driver);
	char path[256], set_aside[512], why[512] = "";
	/* With this directory, "x/../../escape" reaches the fixture's root. */
	snprintf(path, sizeof(path), "%s/npu.ascend.com-claim_x", f->cdi_dir);
	assert_int_equal(mkdir_ensure(path, 0755), 0);
	/* A spec left of a claim that holds the chip held by the first. */
	snprintf(path, sizeof(path), "%s/npu.ascend.com-claim_c1.json", f->cdi_dir);
	assert_int_equal(file_write_atomic(path, "{}", 2, 0644, 0), 0);
	size_t size = 64 + DRA_CHECKPOINT_MAX_CLAIMS * 128, len = 0;
	char *json = malloc(size);
	assert_non_null(json);
	len += (size_t)snprintf(json + len, size - len, "{\"version\":1,\"claims\":[" RECORD("x/../../escape", "evil", "npu-1"));
	for (unsigned i = 0; i + 1 < DRA_CHECKPOINT_MAX_CLAIMS; i++)
		len += (size_t)snprintf(json + len, size - len, "," RECORD("c%u", "c", "npu-0"), i);
	len += (size_t)snprintf(json + len, size - len, "]}\n");
	assert_true(len < size);
	snprintf(path, sizeof(path), "%s/" DRA_CHECKPOINT_FILE, f->plugin_dir);
	assert_int_equal(file_write_atomic(path, json, len, 0600, 0), 0);
	free(json);
	start_driver(f, set_aside, sizeof(set_aside));
	assert_string_equal(set_aside, "");

	size_t failed = 0;
	assert_int_equal(dra_driver_restore(f->driver, &failed, why, sizeof(why)), 1);
	assert_int_equal(failed, DRA_CHECKPOINT_MAX_CLAIMS - 1);
	assert_string_equal(why, "claim ns/evil (uid x/../../escape): claim uid 'x/../../escape' is not a uid; "
				 "its record is set aside");
	snprintf(path, sizeof(path), "%s/escape.json", f->dir);
	assert_false(path_exists(path));
	assert_int_equal(dra_driver_prepared_count(f->driver), 1);
	char *spec = spec_of(f, "c0");
	assert_non_null(spec);
	free(spec);
	assert_null(spec_of(f, "c1"));
	assert_null(spec_of(f, "c2"));

	/* The chip is the first holder's; a new claim for it is refused. */
	expect_failure(f, "n1", CLAIM("n1", RESULT("node-1", "npu-0")), "device npu-0 is prepared for claim ns/c (uid c0)");
	/* The next save leaves the set-aside records out of the file. */
	assert_int_equal(dra_driver_unprepare(f->driver, "never-prepared", why, sizeof(why)), 0);
	dra_driver_free(f->driver);
	start_driver(f, NULL, 0);
	assert_int_equal(dra_driver_prepared_count(f->driver), 1);
}

struct slow_prepare {
	struct fixture *f;
	int r;
	char why[512];
};

static void *prepare_slow(void *arg)
{
	struct slow_prepare *sp = arg;
	struct dra_prepared *p = NULL;
	sp->r = dra_driver_prepare(sp->f->driver, "ns", "s1", "slow", NULL, &p, sp->why, sizeof(sp->why));
	free(p);
	return NULL;
}

/* A prepare waiting on the API server holds up no other claim's. */
static void test_read_outside_lock(void **state)
{
	struct fixture *f = *state;
	f->gated = true;
	f->slow_json = CLAIM("s1", RESULT("node-1", "npu-0"));
	assert_int_equal(sem_init(&f->entered, 0, 0), 0);
	assert_int_equal(sem_init(&f->gate, 0, 0), 0);
	struct slow_prepare sp = { .f = f };
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, prepare_slow, &sp), 0);
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 10;
	assert_int_equal(sem_timedwait(&f->entered, &deadline), 0);

	/* Meanwhile: another claim, and an unprepare. */
	struct dra_prepared *p = NULL;
	char why[512] = "";
	f->claim_json = CLAIM("q1", RESULT("node-1", "npu-1"));
	assert_int_equal(dra_driver_prepare(f->driver, "ns", "q1", "quick", NULL, &p, why, sizeof(why)), 0);
	assert_string_equal(p->devices[0].device, "npu-1");
	free(p);
	assert_int_equal(dra_driver_unprepare(f->driver, "q1", why, sizeof(why)), 0);

	sem_post(&f->gate);
	assert_int_equal(pthread_join(t, NULL), 0);
	if (sp.r < 0)
		fail_msg("the slow prepare: %s", sp.why);
	assert_int_equal(dra_driver_prepared_count(f->driver), 1);
	sem_destroy(&f->entered);
	sem_destroy(&f->gate);
}

static void test_corrupt_checkpoint(void **state)
{
	struct fixture *f = *state;
	dra_driver_free(f->driver);
	char path[256], bad[272], set_aside[512];
	snprintf(path, sizeof(path), "%s/" DRA_CHECKPOINT_FILE, f->plugin_dir);
	assert_int_equal(file_write_atomic(path, "{\"version\":1,\"cla", 17, 0600, 0), 0);
	start_driver(f, set_aside, sizeof(set_aside));
	assert_non_null(strstr(set_aside, "moved to .bad, starting with no prepared claims"));
	snprintf(bad, sizeof(bad), "%s.bad", path);
	assert_true(path_exists(bad));
	assert_false(path_exists(path));
	assert_int_equal(dra_driver_prepared_count(f->driver), 0);
}

/* The devices of a claim whose results name chip 3 before chip 0 are
 * listed in the container ascending, as Allocate lists them: CANN numbers
 * them in that order, so ASCEND_VISIBLE_DEVICES, the status file's
 * logical_id and the metadata's containerLogicalID all say chip 0 is 0. */
static void test_logical_order(void **state)
{
	struct fixture *f = *state;
	char base[160], why[256] = "", path[512], *text = NULL;
	size_t len;
	snprintf(base, sizeof(base), "%s/npu-status", f->dir);
	dra_driver_free(f->driver);
	assert_int_equal(status_dirs_new(base, &f->status_dirs, why, sizeof(why)), 0);
	start_driver(f, NULL, 0);
	f->claim_json = CLAIM("uid-o", RESULT("node-1", "npu-3") "," RESULT("node-1", "npu-0"));
	struct dra_prepared *p = NULL;
	assert_int_equal(dra_driver_prepare(f->driver, "ns", "uid-o", "c", NULL, &p, why, sizeof(why)), 0);
	free(p);
	char *spec = spec_of(f, "uid-o");
	assert_non_null(spec);
	assert_non_null(strstr(spec, "\"ASCEND_VISIBLE_DEVICES=0,3\""));
	assert_non_null(strstr(spec, "\"ASCEND_RT_VISIBLE_DEVICES=0,1\""));
	free(spec);

	snprintf(path, sizeof(path), "%s/claim-uid-o/" STATUS_FILE_NAME, base);
	assert_int_equal(file_read_bounded(path, 1 << 16, &text, &len, why, sizeof(why)), 0);
	assert_non_null(strstr(text, "{\"device\":\"npu-0\",\"logical_id\":0,"));
	assert_non_null(strstr(text, "{\"device\":\"npu-3\",\"logical_id\":1,"));
	free(text);

	snprintf(path, sizeof(path), "%s/claim-uid-o/metadata-npu.json", base);
	assert_int_equal(file_read_bounded(path, 1 << 16, &text, &len, why, sizeof(why)), 0);
	const char *npu0 = strstr(text, "\"name\":\"npu-0\""), *npu3 = strstr(text, "\"name\":\"npu-3\"");
	assert_non_null(npu0);
	assert_non_null(npu3);
	assert_non_null(strstr(npu0, "\"physicalID\":{\"int\":0},"));
	assert_non_null(strstr(npu0, "\"containerLogicalID\":{\"int\":0}"));
	assert_non_null(strstr(npu3, "\"containerLogicalID\":{\"int\":1}"));
	/* The claim's results keep their order in the file. */
	assert_true(npu3 < npu0);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_prepare, setup, teardown),
		cmocka_unit_test_setup_teardown(test_status, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_admin_access, setup, teardown),
		cmocka_unit_test_setup_teardown(test_vnpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_time_sliced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sweep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restore, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restore_checks_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_outside_lock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_checkpoint, setup, teardown),
		cmocka_unit_test_setup_teardown(test_logical_order, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
