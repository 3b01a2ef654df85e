/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/separations.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/file.h"
#include "base/log.h"
#include "base/parse.h"
#include "base/strbuf.h"
#include "loop/loop.h"

/* The chip of phy in snap, or NULL. */
static const struct npu_device *chip_in(const struct npu_snapshot *snap, uint32_t phy)
{
	for (size_t i = 0; snap && i < snap->count; i++)
		if (snap->devices[i].kind == NPU_DEVICE_CHIP && snap->devices[i].chip.phy_id == phy)
			return &snap->devices[i];
	return NULL;
}

/* Says a problem once, until it changes or goes away: event, with the
 * record's path and reason as its fields. */
static void say_once(struct separations *s, enum log_event event, const char *reason, const char *problem)
{
	if (strcmp(problem, s->logged) == 0)
		return;
	(void)str_copy(s->logged, sizeof(s->logged), problem); /* cut: only compared */
	log_event(LOG_LEVEL_ERROR, event,
		  &(struct log_fields){ .more = { LOG_STR("path", s->path), LOG_STR("reason", reason) } }, "%s", problem);
}

static void describe(const struct fault_separation_record *rec, char *buf, size_t size)
{
	char since[32], code[16] = "none";
	fault_separation_time_format(rec->since_s, since, sizeof(since));
	if (rec->code)
		(void)str_printf(code, sizeof(code), "%08X", rec->code);
	(void)str_printf(buf, size, "npu-%u (code %s, %s, since %s)", rec->phy, code, fault_rule_name(rec->rule),
			 since);
}

int separations_init(struct separations *s, const char *dir, struct fault_stage *stage, char *why,
		     size_t why_size)
{
	*s = (struct separations){ .stage = stage };
	char problem[512];
	int r = str_copy(s->dir, sizeof(s->dir), dir);
	if (r == 0)
		r = fault_separations_path(dir, s->path, sizeof(s->path));
	if (r < 0) {
		snprintf(why, why_size, "--state-dir %s: path is too long", dir);
		return r;
	}
	r = fault_separations_read(s->path, &s->known, problem, sizeof(problem));
	if (r < 0) {
		snprintf(why, why_size,
			 "the record of separated chips %s cannot be read: %s; without it the plugin cannot tell which "
			 "chips to keep out: correct the file (ascend-doctor node shows what it holds), or remove it to "
			 "release every chip it names",
			 s->path, problem);
		return r;
	}
	if (s->known.count == 0)
		return 0;
	char list[1024];
	struct strbuf sb;
	strbuf_init(&sb, list, sizeof(list), ",...");
	for (size_t i = 0; i < s->known.count; i++) {
		char one[160];
		describe(&s->known.records[i], one, sizeof(one));
		if (strbuf_printf(&sb, "%s%s", i ? ", " : "", one) < 0)
			break;
	}
	log_event(LOG_LEVEL_INFO, LOG_EVENT_SEPARATIONS_LOADED,
		  &(struct log_fields){ .more = { LOG_STR("path", s->path), LOG_NUM("count", s->known.count),
						  LOG_STR("chips", list) } },
		  "%s: %zu separated chips stay out until released (ascend-doctor release npu-<phy>): %s", s->path,
		  s->known.count, list);
	return 0;
}

void separations_restore(void *ctx, const struct npu_device *chip, struct fault_state *state, int64_t now_ms)
{
	struct separations *s = ctx;
	int i = fault_separations_find(&s->known, chip->chip.phy_id, chip->pci_address);
	if (i >= 0)
		(void)fault_policy_separate(state, s->known.records[i].code, now_ms); /* a fresh state: not separated */
}

/* Takes what the file says now (disk) over what it said before (known):
 * a record gone releases its chip, a record new separates it. Chips not
 * judged yet take the record when they are (separations_restore). */
static bool adopt(struct separations *s, const struct fault_separations *disk)
{
	bool changed = false;
	int64_t now = now_ms();
	for (size_t i = 0; i < s->stage->n_chips; i++) {
		struct fault_chip *c = &s->stage->chips[i];
		const struct npu_device *d = chip_in(s->stage->judged, c->phy);
		const char *pci = d ? d->pci_address : NULL;
		if (!c->state.started)
			continue;
		int was = fault_separations_find(&s->known, c->phy, pci), is = fault_separations_find(disk, c->phy, pci);
		if (was >= 0 && is < 0 && c->state.separation.active) {
			log_event(LOG_LEVEL_INFO, LOG_EVENT_SEPARATION_REMOVED,
				  &(struct log_fields){ .more = { LOG_NUM("phy", c->phy), LOG_STR("path", s->path) } },
				  "npu-%u: its record was removed from %s; releasing it", c->phy, s->path);
			(void)fault_policy_release(&c->state, now);
			changed = true;
		} else if (was < 0 && is >= 0 && !c->state.separation.active) {
			log_event(LOG_LEVEL_INFO, LOG_EVENT_SEPARATION_ADDED,
				  &(struct log_fields){ .more = { LOG_NUM("phy", c->phy), LOG_STR("path", s->path) } },
				  "npu-%u: a record added to %s separates it", c->phy, s->path);
			(void)fault_policy_separate(&c->state, disk->records[is].code, now);
			changed = true;
		}
	}
	s->known = *disk;
	if (changed)
		loop_timer_arm(s->stage->hold_timer, 1, 0); /* judge anew */
	return changed;
}

/* Brings set in step with the chips judged in snap: a separated chip
 * without a record gets one, a chip no longer separated loses its record.
 * Only counts what it would change unless apply. */
static size_t reconcile(struct separations *s, struct fault_separations *set, const struct npu_snapshot *snap,
			bool apply)
{
	size_t changes = 0;
	for (size_t i = 0; i < s->stage->n_chips; i++) {
		const struct fault_chip *c = &s->stage->chips[i];
		const struct npu_device *d = chip_in(snap, c->phy);
		if (!d || !d->policy_judged || !c->state.started)
			continue; /* absent or not judged: its record stays as it is */
		int at = fault_separations_find(set, c->phy, d->pci_address);
		const struct fault_separation *sep = &c->state.separation;
		if (sep->active && at < 0) {
			changes++;
			struct fault_separation_record rec;
			memset(&rec, 0, sizeof(rec)); /* padding too: records are compared whole */
			rec.phy = c->phy;
			rec.code = sep->code;
			rec.rule = sep->rule;
			rec.since_s = (int64_t)time(NULL);
			(void)str_copy(rec.pci_address, sizeof(rec.pci_address), d->pci_address); /* same size */
			if (apply && fault_separations_put(set, &rec) < 0)
				changes--; /* never: one record per chip, FAULT_SEPARATION_MAX chips */
		} else if (!sep->active && at >= 0) {
			changes++;
			if (apply)
				fault_separations_remove(set, (size_t)at);
		}
	}
	return changes;
}

static void cannot_record(struct separations *s, int r)
{
	char problem[sizeof(s->path) + 600];
	snprintf(problem, sizeof(problem),
		 "cannot record separated chips in %s: %s; retrying at every refresh (until then a restart would hand "
		 "them out again)",
		 s->path, strerror(-r));
	say_once(s, LOG_EVENT_SEPARATIONS_UNWRITABLE, strerror(-r), problem);
}

void separations_sync(struct separations *s, const struct npu_snapshot *snap)
{
	if (reconcile(s, &s->known, snap, false) == 0)
		return;
	char why[512];
	int fd = -1;
	struct fault_separations *disk = malloc(sizeof(*disk));
	int r = disk ? mkdir_p(s->dir, 0755) : -ENOMEM;
	if (r == 0)
		r = fault_separations_lock(s->dir, false, &fd);
	if (r < 0) {
		/* -EWOULDBLOCK: ascend-doctor is writing for a moment; its change
		 * comes first, and this one is tried again shortly. */
		if (r == -EWOULDBLOCK) {
			loop_timer_arm(s->stage->hold_timer, 50, 0);
		} else {
			cannot_record(s, r);
		}
		goto out;
	}
	if (fault_separations_read(s->path, disk, why, sizeof(why)) < 0) {
		/* The plugin knows every separation it made: it writes them anew
		 * and keeps the unreadable file for whoever damaged it. */
		char aside[sizeof(s->path) + 16];
		snprintf(aside, sizeof(aside), "%s.corrupt", s->path);
		if (rename(s->path, aside) == 0)
			log_event(LOG_LEVEL_WARN, LOG_EVENT_SEPARATIONS_UNREADABLE,
				  &(struct log_fields){ .more = { LOG_STR("path", s->path), LOG_STR("reason", why),
								  LOG_STR("kept_as", aside) } },
				  "%s cannot be read: %s; kept as %s, the plugin writes its own record", s->path, why, aside);
		*disk = s->known;
	} else {
		adopt(s, disk);
	}
	reconcile(s, disk, snap, true);
	r = fault_separations_write(s->path, disk);
	if (r < 0) {
		cannot_record(s, r);
		goto out;
	}
	s->known = *disk;
	s->logged[0] = '\0';
out:
	if (fd >= 0)
		close(fd);
	free(disk);
}

bool separations_reread(struct separations *s)
{
	char why[512], problem[sizeof(s->path) + 600];
	struct fault_separations *disk = malloc(sizeof(*disk));
	if (!disk)
		return false;
	bool changed = false;
	if (fault_separations_read(s->path, disk, why, sizeof(why)) < 0) {
		snprintf(problem, sizeof(problem), "%s cannot be read: %s; the chips stay as they are until it can",
			 s->path, why);
		say_once(s, LOG_EVENT_SEPARATIONS_UNREADABLE, why, problem);
	} else if (disk->count != s->known.count ||
		   memcmp(disk->records, s->known.records, disk->count * sizeof(disk->records[0])) != 0) {
		changed = adopt(s, disk);
	}
	free(disk);
	return changed;
}
