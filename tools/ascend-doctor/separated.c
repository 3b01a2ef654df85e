/* SPDX-License-Identifier: Apache-2.0 */
/* The separated chips; see separated.h. */
#include "separated.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/parse.h"
#include "fault/policy.h"
#include "fault/separation.h"
#include "node.h"

/* "code 80E01801 (HBM multi-bit ECC error), rule frequency, since ...". */
static void describe(const struct fault_separation_record *rec, char *buf, size_t size)
{
	char since[32], code[80] = "no code";
	fault_separation_time_format(rec->since_s, since, sizeof(since));
	if (rec->code) {
		const char *meaning, *level;
		node_fault_code_describe(rec->code, &meaning, &level);
		(void)str_printf(code, sizeof(code), "code %08" PRIX32 "%s%s%s", rec->code, meaning ? " (" : "",
				 meaning ? meaning : "", meaning ? ")" : "");
	}
	(void)str_printf(buf, size, "%s since %s, %s, rule %s%s%s",
			 fault_level_name(FAULT_LEVEL_MANUALLY_SEPARATE_NPU), since, code, fault_rule_name(rec->rule),
			 rec->pci_address[0] ? ", PCI " : "", rec->pci_address);
}

static int read_record(const struct doctor_options *o, struct fault_separations *set, char *path, size_t path_size,
		       char *why, size_t why_size)
{
	if (fault_separations_path(o->state_dir, path, path_size) < 0) {
		(void)str_copy(why, why_size, "path too long");
		return -ENAMETOOLONG;
	}
	return fault_separations_read(path, set, why, why_size);
}

int separated_check(const struct doctor_options *o, struct report *report, const struct npu_chip *chips, size_t n,
		    bool *separated)
{
	char path[4200], why[512];
	struct fault_separations *set = malloc(sizeof(*set));
	if (!set)
		return -ENOMEM;
	int r = read_record(o, set, path, sizeof(path), why, sizeof(why));
	if (r < 0) {
		r = report_add(report, VERDICT_FAIL, "separated",
			       "correct the file, or remove it to release every chip it names; the plugin does not start "
			       "while it cannot read it",
			       "%s: %s", path, why);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		separated[i] = fault_separations_find(set, chips[i].phy_id, NULL) >= 0;
	if (set->count == 0) {
		r = report_add(report, VERDICT_OK, "separated", NULL, "no chip is separated (%s)", path);
		goto out;
	}
	r = 0;
	for (size_t i = 0; r == 0 && i < set->count; i++) {
		const struct fault_separation_record *rec = &set->records[i];
		char name[32], found[512], fix[256];
		snprintf(name, sizeof(name), "separated npu-%" PRIu32, rec->phy);
		describe(rec, found, sizeof(found));
		snprintf(fix, sizeof(fix),
			 "have the chip checked (npu-smi info -t health), then release it: ascend-doctor release npu-%" PRIu32,
			 rec->phy);
		r = report_add(report, VERDICT_WARN, name, fix, "%s; Unhealthy until released", found);
	}
out:
	free(set);
	return r;
}

int separated_release(const struct doctor_options *o, const char *chip, struct report *report)
{
	uint32_t phy;
	if (strncmp(chip, "npu-", 4) != 0 || parse_u32(chip + 4, 10, 1u << 20, &phy) < 0)
		return -EINVAL;
	char path[4200], why[512], found[512];
	int fd = -1;
	struct fault_separations *set = malloc(sizeof(*set));
	if (!set)
		return -ENOMEM;
	int r = fault_separations_lock(o->state_dir, true, &fd);
	if (r == -ENOENT) {
		r = report_add(report, VERDICT_FAIL, "release", "nothing to release; is --state-dir the plugin's?",
			       "%s: no such directory: the plugin never separated a chip here", o->state_dir);
		goto out;
	}
	if (r < 0) {
		r = report_add(report, VERDICT_FAIL, "release", "run it as root, on the node or in the plugin's pod",
			       "cannot lock %s: %s", o->state_dir, strerror(-r));
		goto out;
	}
	r = read_record(o, set, path, sizeof(path), why, sizeof(why));
	if (r < 0) {
		r = report_add(report, VERDICT_FAIL, "release",
			       "correct the file, or remove it to release every chip it names", "%s: %s", path, why);
		goto out;
	}
	int at = fault_separations_find_phy(set, phy);
	if (at < 0) {
		r = report_add(report, VERDICT_FAIL, "release", "ascend-doctor node lists the separated chips",
			       "npu-%" PRIu32 " is not separated (%s names %zu chips)", phy, path, set->count);
		goto out;
	}
	describe(&set->records[at], found, sizeof(found));
	fault_separations_remove(set, (size_t)at);
	r = fault_separations_write(path, set);
	if (r < 0) {
		r = report_add(report, VERDICT_FAIL, "release", "run it as root, on the node or in the plugin's pod",
			       "cannot write %s: %s", path, strerror(-r));
		goto out;
	}
	r = report_add(report, VERDICT_OK, "release", NULL,
		       "npu-%" PRIu32 " released (was %s); the running plugin advertises it Healthy again unless DCMI "
		       "still reports a fault",
		       phy, found);
out:
	if (fd >= 0)
		close(fd);
	free(set);
	return r;
}
