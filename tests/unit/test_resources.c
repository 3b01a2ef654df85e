/* SPDX-License-Identifier: Apache-2.0 */
/* Which devices each resource lists (plugin/resources.h): the default
 * resource takes the families no other names, a per-family resource only
 * its families, a vNPU resource its template's vNPUs, and no resource a chip
 * that carries vNPUs; vNPU resource names and sockets. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/resources.h"

static void chip(struct npu_device *d, uint32_t phy, enum npu_family family, unsigned vnpus)
{
	*d = (struct npu_device){ .kind = NPU_DEVICE_CHIP, .healthy = true, .vnpu_count = vnpus };
	d->chip.phy_id = phy;
	d->chip.family = family;
	snprintf(d->id, sizeof(d->id), "npu-%u", phy);
}

static void vnpu(struct npu_device *d, uint32_t id, uint32_t phy, const char *template_name)
{
	*d = (struct npu_device){ .kind = NPU_DEVICE_VNPU, .healthy = true };
	d->chip.phy_id = phy;
	d->vnpu.id = id;
	d->vnpu.phy_id = phy;
	snprintf(d->vnpu.template_name, sizeof(d->vnpu.template_name), "%s", template_name);
	snprintf(d->id, sizeof(d->id), "vnpu-%u", id);
}

static void add(struct resource_set *set, const char *name, enum resource_kind kind, uint32_t families,
		const char *template_name)
{
	struct resource_def *d = &set->defs[set->count++];
	*d = (struct resource_def){ .kind = kind, .is_default = set->count == 1, .families = families };
	snprintf(d->vnpu_template, sizeof(d->vnpu_template), "%s", template_name ? template_name : "");
	assert_int_equal(resource_def_name(d, name, "/dp", ""), 0);
}

/* The IDs def lists, comma separated. */
static const char *view_ids(const struct resource_set *set, const struct resource_def *def,
			    const struct npu_snapshot *snap)
{
	static char ids[256];
	struct npu_snapshot *view;
	assert_int_equal(resource_view(set, def, snap, &view), 0);
	ids[0] = '\0';
	for (size_t i = 0; i < view->count; i++) {
		size_t n = strlen(ids);
		snprintf(ids + n, sizeof(ids) - n, "%s%s", i ? "," : "", view->devices[i].id);
	}
	npu_snapshot_unref(view);
	return ids;
}

static void test_views(void **state)
{
	(void)state;
	struct npu_snapshot *snap = npu_snapshot_new(8);
	chip(&snap->devices[0], 0, NPU_FAMILY_910B, 0);
	chip(&snap->devices[1], 1, NPU_FAMILY_910B, 0);
	chip(&snap->devices[2], 2, NPU_FAMILY_310P, 2);
	chip(&snap->devices[3], 3, NPU_FAMILY_310P, 0);
	chip(&snap->devices[4], 4, NPU_FAMILY_310, 0);
	vnpu(&snap->devices[5], 132, 2, "vir04_3c");
	vnpu(&snap->devices[6], 133, 2, "vir02");
	vnpu(&snap->devices[7], 148, 3, ""); /* known by its node only */

	static struct resource_set set;
	set.count = 0;
	add(&set, "ascend.com/npu", RESOURCE_CHIPS, 0, NULL);
	add(&set, "ascend.com/npu-310p", RESOURCE_CHIPS, 1u << NPU_FAMILY_310P, NULL);
	add(&set, "ascend.com/npu-vir04-3c", RESOURCE_VNPUS, 0, "vir04_3c");
	assert_string_equal(view_ids(&set, &set.defs[0], snap), "npu-0,npu-1,npu-4");
	/* npu-2 carries vNPUs: through them only. */
	assert_string_equal(view_ids(&set, &set.defs[1], snap), "npu-3");
	assert_string_equal(view_ids(&set, &set.defs[2], snap), "vnpu-132");
	/* Anything listed: vir02 has no resource yet, vnpu-148 never one. */
	assert_string_equal(view_ids(&set, NULL, snap), "npu-0,npu-1,npu-3,npu-4,vnpu-132");

	struct npu_snapshot *view;
	assert_int_equal(resource_view(&set, &set.defs[0], snap, &view), 0);
	assert_int_equal(view->healthy, 3);
	npu_snapshot_unref(view);

	assert_int_equal(resource_set_find(&set, "ascend.com/npu-310p"), 1);
	assert_int_equal(resource_set_find(&set, "ascend.com/npu-310"), -ENOENT);
	npu_snapshot_unref(snap);
}

static void test_names(void **state)
{
	(void)state;
	char name[RESOURCE_NAME_MAX], why[256];
	assert_int_equal(resource_vnpu_name("ascend.com/npu", "vir04_3c", name, sizeof(name), why, sizeof(why)), 0);
	assert_string_equal(name, "ascend.com/npu-vir04-3c");
	assert_int_equal(
		resource_vnpu_name("huawei.com/Ascend310P", "vir10_3c_16g_nm", name, sizeof(name), why, sizeof(why)), 0);
	assert_string_equal(name, "huawei.com/Ascend310P-vir10-3c-16g-nm");

	assert_int_equal(resource_vnpu_name("ascend.com/npu", "", name, sizeof(name), why, sizeof(why)), -EINVAL);
	assert_int_equal(resource_vnpu_name("ascend.com/npu", "vir/04", name, sizeof(name), why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "template 'vir/04' is not lowercase letters, digits and '_'");
	/* The part after '/' stays within 63 characters. */
	char base[80];
	snprintf(base, sizeof(base), "ascend.com/%.60s", "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn");
	assert_int_equal(resource_vnpu_name(base, "vir04", name, sizeof(name), why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "is not a valid resource name"));

	struct resource_def def = { 0 };
	assert_int_equal(resource_def_name(&def, "ascend.com/npu-vir04-3c", "/var/lib/kubelet/device-plugins", ""), 0);
	assert_string_equal(def.endpoint, "ascend-npu-vir04-3c.sock");
	assert_string_equal(def.socket_path, "/var/lib/kubelet/device-plugins/ascend-npu-vir04-3c.sock");
	char dir[120];
	memset(dir, 'd', sizeof(dir));
	dir[0] = '/';
	dir[sizeof(dir) - 1] = '\0';
	assert_int_equal(resource_def_name(&def, "ascend.com/npu", dir, ""), -ENAMETOOLONG);

	char endpoint[RESOURCE_NAME_MAX + 8];
	assert_int_equal(resource_endpoint("huawei.com/Ascend910.shared", "", endpoint, sizeof(endpoint)), 0);
	assert_string_equal(endpoint, "huawei-Ascend910.shared.sock");
	assert_int_equal(resource_endpoint("npu", "", endpoint, sizeof(endpoint)), -EINVAL);
	assert_int_equal(resource_endpoint("ascend.com/npu", "", endpoint, 15), -ENAMETOOLONG);
	assert_string_equal(endpoint, "huawei-Ascend910.shared.sock"); /* untouched */
	/* A plugin process named among others of its node (a surge roll). */
	assert_int_equal(resource_endpoint("ascend.com/npu", "1a2b3c4d", endpoint, sizeof(endpoint)), 0);
	assert_string_equal(endpoint, "ascend-npu@1a2b3c4d.sock");
	assert_int_equal(resource_def_name(&def, "ascend.com/npu-vir04-3c", "/dp", "0f"), 0);
	assert_string_equal(def.socket_path, "/dp/ascend-npu-vir04-3c@0f.sock");

	struct resource_def a = def, b = def;
	assert_true(resource_def_same(&a, &b));
	b.sharing.replicas = 2;
	assert_false(resource_def_same(&a, &b));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_views),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
