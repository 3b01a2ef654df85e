/* SPDX-License-Identifier: Apache-2.0 */
#include "npu/chip_select.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/parse.h"
#include "npu/inventory.h"

/* The family called name, any case; NPU_FAMILY_UNKNOWN when none is. */
static enum npu_family family_named(const char *name)
{
	for (int f = NPU_FAMILY_910; f <= NPU_FAMILY_310B; f++)
		if (strcasecmp(name, npu_family_name((enum npu_family)f)) == 0)
			return (enum npu_family)f;
	return NPU_FAMILY_UNKNOWN;
}

/* One entry of the list: a family, an id or a range. */
static int parse_entry(const char *entry, struct npu_chip_select *s, char *why, size_t why_size)
{
	enum npu_family family = family_named(entry);
	if (family != NPU_FAMILY_UNKNOWN) {
		s->families |= 1u << family;
		return 0;
	}
	if (s->n_ranges == NPU_CHIP_SELECT_MAX_ENTRIES) {
		snprintf(why, why_size, "more than %d entries", NPU_CHIP_SELECT_MAX_ENTRIES);
		return -E2BIG;
	}
	char first[16], last[16];
	const char *dash = strchr(entry, '-');
	size_t len = dash ? (size_t)(dash - entry) : strlen(entry);
	uint32_t a, b;
	if (len == 0 || len >= sizeof(first) || (dash && strlen(dash + 1) >= sizeof(last)))
		goto bad;
	memcpy(first, entry, len);
	first[len] = '\0';
	snprintf(last, sizeof(last), "%s", dash ? dash + 1 : first);
	if (parse_u32(first, 10, UINT32_MAX, &a) < 0 || parse_u32(last, 10, UINT32_MAX, &b) < 0)
		goto bad;
	if (b < a) {
		snprintf(why, why_size, "'%s' runs backwards", entry);
		return -EINVAL;
	}
	s->ranges[s->n_ranges].first = a;
	s->ranges[s->n_ranges].last = b;
	s->n_ranges++;
	return 0;
bad:
	snprintf(why, why_size, "'%s' is not a physical id, a range of them (0-3), a chip family (910B) or all",
		 entry);
	return -EINVAL;
}

int npu_chip_select_parse(const char *text, struct npu_chip_select *ret_select, char *why, size_t why_size)
{
	struct npu_chip_select s = { 0 };
	char entry[64];
	const char *p = text;
	size_t entries = 0;
	if (strcmp(text, "all") == 0) {
		*ret_select = (struct npu_chip_select){ .all = true };
		return 0;
	}
	for (;;) {
		size_t len = strcspn(p, ",");
		if (len == 0 || len >= sizeof(entry)) {
			snprintf(why, why_size, len ? "an entry is too long" : "an entry is empty");
			return -EINVAL;
		}
		memcpy(entry, p, len);
		entry[len] = '\0';
		if (strcmp(entry, "all") == 0) {
			snprintf(why, why_size, "'all' stands alone");
			return -EINVAL;
		}
		if (++entries > NPU_CHIP_SELECT_MAX_ENTRIES) {
			snprintf(why, why_size, "more than %d entries", NPU_CHIP_SELECT_MAX_ENTRIES);
			return -E2BIG;
		}
		int r = parse_entry(entry, &s, why, why_size);
		if (r < 0)
			return r;
		if (p[len] == '\0')
			break;
		p += len + 1;
	}
	*ret_select = s;
	return 0;
}

bool npu_chip_select_has(const struct npu_chip_select *select, const struct npu_chip *chip)
{
	if (select->all || (chip->family != NPU_FAMILY_UNKNOWN && (select->families & (1u << chip->family))))
		return true;
	for (size_t i = 0; i < select->n_ranges; i++)
		if (chip->phy_id >= select->ranges[i].first && chip->phy_id <= select->ranges[i].last)
			return true;
	return false;
}

int npu_snapshot_split(const struct npu_snapshot *snapshot, const struct npu_chip_select *select,
		       struct npu_snapshot **ret_in, struct npu_snapshot **ret_out)
{
	size_t n_in = 0;
	for (size_t i = 0; i < snapshot->count; i++)
		n_in += npu_chip_select_has(select, &snapshot->devices[i].chip);
	struct npu_snapshot *in = npu_snapshot_new(n_in);
	struct npu_snapshot *out = npu_snapshot_new(snapshot->count - n_in);
	if (!in || !out) {
		npu_snapshot_unref(in);
		npu_snapshot_unref(out);
		return -ENOMEM;
	}
	in->count = out->count = 0;
	for (size_t i = 0; i < snapshot->count; i++) {
		const struct npu_device *d = &snapshot->devices[i];
		struct npu_snapshot *to = npu_chip_select_has(select, &d->chip) ? in : out;
		to->devices[to->count++] = *d;
		to->healthy += d->healthy;
	}
	*ret_in = in;
	*ret_out = out;
	return 0;
}
