/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/fault_stage.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/parse.h"

/* The metrics' help lists the levels by number (telemetry/metrics.c). */
_Static_assert(FAULT_LEVEL_MANUALLY_SEPARATE_NPU == 9 && FAULT_LEVEL_RESTART_BUSINESS == 4,
	       "ascend_npu_fault_level numbers the levels by severity");

static struct fault_state *state_find(struct fault_stage *st, uint32_t phy)
{
	for (size_t i = 0; i < st->n_chips; i++)
		if (st->chips[i].phy == phy)
			return &st->chips[i].state;
	return NULL;
}

/* The chip's state, made when it is first judged; NULL when no more fit. */
static struct fault_state *state_of(struct fault_stage *st, uint32_t phy)
{
	struct fault_state *found = state_find(st, phy);
	if (found)
		return found;
	if (st->n_chips == NPU_MAX_CHIPS)
		return NULL;
	struct fault_chip *grown = realloc(st->chips, (st->n_chips + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	st->chips = grown;
	struct fault_chip *c = &st->chips[st->n_chips++];
	c->phy = phy;
	fault_state_init(&c->state);
	return &c->state;
}

/* "RestartBusiness (code table, code 80E01801)". */
static void describe(char *buf, size_t size, enum fault_level level, uint32_t code, enum fault_rule rule)
{
	if (code)
		(void)str_printf(buf, size, "%s (%s, code %08X)", fault_level_name(level), fault_rule_name(rule), code);
	else
		(void)str_printf(buf, size, "%s (%s)", fault_level_name(level), fault_rule_name(rule));
}

static void log_decisions(struct holders *who, const struct npu_device *chip, const struct fault_step *step)
{
	const struct log_fields about = { .device = chip->id };
	/* Who an operator must act on, as pod resources last said. */
	char holders[512] = "", on[540] = "";
	if (holders_of(who, chip->id, holders, sizeof(holders)) == 0)
		(void)str_printf(on, sizeof(on), " (held by %s)", holders);
	for (size_t i = 0; i < step->n_decisions; i++) {
		const struct fault_decision *dec = &step->decisions[i];
		char note[NPU_POLICY_NOTE_MAX];
		describe(note, sizeof(note), dec->level, dec->code, dec->rule);
		const char *hint = dec->hint ? dec->hint : "";
		char code[16] = "";
		if (dec->code)
			(void)str_printf(code, sizeof(code), "%08X", dec->code);
		const struct log_fields f = { .device = chip->id,
					      .more = { LOG_STR("fault_level", fault_level_name(dec->level)),
							LOG_STR("rule", fault_rule_name(dec->rule)), LOG_STR("code", code),
							LOG_STR("held_by", holders) } };
		switch (dec->kind) {
		case FAULT_DECISION_LEVEL:
			if (fault_level_unhealthy(dec->level))
				log_event(LOG_LEVEL_WARN, LOG_EVENT_FAULT_LEVEL, &f, "%s: fault level %s: %s%s", chip->id,
					  note, hint, on);
			else
				log_event(LOG_LEVEL_INFO, LOG_EVENT_FAULT_LEVEL, &f, "%s: fault level %s: %s", chip->id,
					  note, hint);
			break;
		case FAULT_DECISION_ESCALATED:
			log_event(LOG_LEVEL_WARN, LOG_EVENT_FAULT_ESCALATED, &f, "%s: escalated to %s: %s%s", chip->id,
				  note, hint, on);
			break;
		case FAULT_DECISION_SEPARATED:
			log_event(LOG_LEVEL_WARN, LOG_EVENT_FAULT_SEPARATED, &f, "%s: separated, %s: %s%s", chip->id, note,
				  hint, on);
			break;
		case FAULT_DECISION_ESCALATION_ENDED:
			log_event(LOG_LEVEL_INFO, LOG_EVENT_FAULT_ESCALATION_ENDED, &f,
				  "%s: escalation ended, fault level %s: %s", chip->id, note, hint);
			break;
		case FAULT_DECISION_RELEASED:
			log_event(LOG_LEVEL_INFO, LOG_EVENT_FAULT_RELEASED, &f, "%s: released, fault level %s: %s",
				  chip->id, note, hint);
			break;
		}
	}
	if (step->decisions_dropped)
		log_msg_fields(LOG_LEVEL_WARN, &about, "%s: %zu more fault decisions in one refresh", chip->id,
			       step->decisions_dropped);
}

/* Only a chip whose health DCMI answered has codes to judge. */
static bool judgeable(const struct npu_device *d)
{
	return d->kind == NPU_DEVICE_CHIP && (d->fault == NPU_FAULT_NONE || d->fault == NPU_FAULT_HEALTH_LEVEL);
}

static void apply_verdict(struct npu_device *d, const struct fault_step *step, const char *chip_id)
{
	d->policy_judged = true;
	d->policy_level = (unsigned)step->level;
	d->policy_code = step->code;
	d->policy_level_name = step->level != FAULT_LEVEL_NONE ? fault_level_name(step->level) : NULL;
	if (step->healthy) {
		if (d->fault == NPU_FAULT_HEALTH_LEVEL)
			d->fault = NPU_FAULT_NONE;
		d->healthy = d->fault == NPU_FAULT_NONE;
		return;
	}
	char note[NPU_POLICY_NOTE_MAX];
	describe(note, sizeof(note), step->level, step->code, step->rule);
	if (d->kind == NPU_DEVICE_VNPU)
		(void)str_printf(d->policy_note, sizeof(d->policy_note), "its chip %s: %s", chip_id, note);
	else
		(void)str_printf(d->policy_note, sizeof(d->policy_note), "%s%s%s", note,
				 step->holding ? " (held until the chip stays clean)" : "",
				 step->pods_may_finish ? " (running pods may finish)" : "");
	/* DCMI's own verdict, when it has one, stays what the log says first. */
	if (d->fault == NPU_FAULT_NONE)
		d->fault = NPU_FAULT_POLICY;
	d->healthy = false;
}

/* A reset separated the chip: judged again at once, so that the separation
 * is decided, logged and published in this refresh, after what the first
 * judgement decided. */
static void judge_again(const struct fault_policy_config *policy, struct fault_state *state,
			const struct fault_input *input, int64_t now_ms, struct fault_step *step)
{
	struct fault_step again;
	if (fault_policy_step(policy, state, input, now_ms, &again) < 0)
		return;
	struct fault_step first = *step;
	*step = again;
	memcpy(step->onsets, first.onsets, sizeof(first.onsets));
	step->n_onsets = first.n_onsets;
	step->n_decisions = 0;
	step->decisions_dropped = first.decisions_dropped + again.decisions_dropped;
	const struct fault_step *from[2] = { &first, &again };
	for (size_t f = 0; f < 2; f++)
		for (size_t k = 0; k < from[f]->n_decisions; k++) {
			if (step->n_decisions < FAULT_STEP_MAX_DECISIONS)
				step->decisions[step->n_decisions++] = from[f]->decisions[k];
			else
				step->decisions_dropped++;
		}
	step->changed |= first.changed;
}

/* Chip i is out whatever the policy says, its vNPUs too, each with its note. */
static void hold_out(struct npu_snapshot *out, size_t i, const char *chip_note, const char *vnpu_note)
{
	const struct npu_device *chip = &out->devices[i];
	for (size_t j = i; j < out->count; j++) {
		struct npu_device *d = &out->devices[j];
		if (d->chip.phy_id != chip->chip.phy_id || (j != i && d->kind != NPU_DEVICE_VNPU))
			continue;
		if (d->fault == NPU_FAULT_NONE)
			d->fault = NPU_FAULT_POLICY;
		d->healthy = false;
		(void)str_copy(d->policy_note, sizeof(d->policy_note), j == i ? chip_note : vnpu_note);
	}
}

/* A chip under reset. */
static void hold_for_reset(struct npu_snapshot *out, size_t i)
{
	char vnpu_note[NPU_POLICY_NOTE_MAX];
	(void)str_printf(vnpu_note, sizeof(vnpu_note), "its chip %s is being reset", out->devices[i].id);
	hold_out(out, i, "the chip is being reset", vnpu_note);
}

/* The other chips of a group under reset are out as well, their vNPUs
 * too: the hardware takes them down with the chip. */
static void hold_groups(struct fault_stage *st, struct npu_snapshot *out)
{
	for (size_t i = 0; st->resets && i < out->count; i++) {
		const struct npu_device *chip = &out->devices[i];
		uint32_t by;
		char note[NPU_POLICY_NOTE_MAX];
		if (chip->kind != NPU_DEVICE_CHIP || !fault_resets_group_hold(st->resets, chip->chip.phy_id, &by))
			continue;
		(void)str_printf(note, sizeof(note), "the reset of npu-%u takes down its reset group", by);
		hold_out(out, i, note, note);
	}
}

/* A chip gone from DCMI's list while a reset waits for it (a chip that
 * does not come back may leave the bus) must still time out. */
static void follow_unlisted(struct fault_stage *st, const struct npu_snapshot *out, int64_t now_ms)
{
	for (size_t i = 0; st->resets && i < st->n_chips; i++) {
		uint32_t phy = st->chips[i].phy;
		bool listed = false;
		for (size_t j = 0; j < out->count && !listed; j++)
			listed = out->devices[j].kind == NPU_DEVICE_CHIP && out->devices[j].chip.phy_id == phy;
		if (listed)
			continue;
		struct npu_device gone = { .kind = NPU_DEVICE_CHIP, .chip = { .phy_id = phy, .card_id = -1, .device_id = -1 } };
		bool separated;
		(void)str_printf(gone.id, sizeof(gone.id), "npu-%u", phy);
		(void)fault_resets_chip(st->resets, out, &gone, NULL, &st->chips[i].state, now_ms, &separated);
	}
}

/* The chip's codes for its own level into codes (those no network list
 * names), and the most severe network level among the others with its
 * code. */
static void split_network(const struct fault_policy_config *policy, const struct npu_device *chip, uint32_t *codes,
			  size_t *ret_n, enum fault_level *ret_level, uint32_t *ret_code)
{
	size_t n = 0;
	for (size_t k = 0; k < chip->n_fault_codes && k < NPU_FAULT_CODES_KEPT; k++) {
		enum fault_level level = fault_policy_network_level(policy, chip->fault_codes[k]);
		if (level == FAULT_LEVEL_NONE) {
			codes[n++] = chip->fault_codes[k];
		} else if (level > *ret_level) {
			*ret_level = level;
			*ret_code = chip->fault_codes[k];
		} else if (!*ret_code) {
			*ret_code = chip->fault_codes[k];
		}
	}
	*ret_n = n;
}

/* A network fault at PreSeparateNPU or above: the chip's RoCE link counts as
 * down (multi-node jobs are kept off it; it still serves single-node pods).
 * Said when that starts and when it ends. */
static void judge_network(struct npu_device *chip, struct fault_state *state, enum fault_level level, uint32_t code)
{
	bool down = fault_level_network_down(level);
	if (down)
		chip->net.link = NPU_LINK_DOWN;
	if (down == state->network_down)
		return;
	state->network_down = down;
	char hex[16];
	(void)str_printf(hex, sizeof(hex), "%08" PRIX32, code);
	if (down)
		log_event(LOG_LEVEL_WARN, LOG_EVENT_FAULT_NETWORK,
			  &(struct log_fields){ .device = chip->id,
						.more = { LOG_STR("code", hex), LOG_STR("level", fault_level_name(level)) } },
			  "%s: network fault %s (%s): its RoCE link counts as down; multi-node jobs are kept off it",
			  chip->id, hex, fault_level_name(level));
	else
		log_event(LOG_LEVEL_INFO, LOG_EVENT_FAULT_NETWORK,
			  &(struct log_fields){ .device = chip->id, .more = { LOG_STR("code", ""), LOG_STR("level", "none") } },
			  "%s: no network fault any more: its RoCE link is as DCMI reports it", chip->id);
}

int fault_stage_apply(struct fault_stage *st, const struct fault_policy_config *policy,
		      const struct npu_snapshot *in, int64_t now_ms, struct npu_snapshot **ret_out,
		      int64_t *ret_due_ms)
{
	int64_t due = 0;
	struct npu_snapshot *out = npu_snapshot_new(in->count);
	if (!out)
		return -ENOMEM;
	memcpy(out->devices, in->devices, in->count * sizeof(in->devices[0]));
	/* Chips come first, by phy id; their vNPUs after. */
	for (size_t i = 0; i < out->count; i++) {
		struct npu_device *chip = &out->devices[i];
		struct fault_state *state;
		struct fault_step step;
		bool separated;
		if (!judgeable(chip) || !(state = state_of(st, chip->chip.phy_id))) {
			/* A chip away: a reset under way may be waiting for it. */
			if (chip->kind == NPU_DEVICE_CHIP)
				(void)fault_resets_chip(st->resets, in, chip, NULL, state_find(st, chip->chip.phy_id),
							now_ms, &separated);
			continue;
		}
		if (!state->started && st->restore)
			st->restore(st->restore_ctx, chip, state, now_ms);
		uint32_t codes[NPU_FAULT_CODES_KEPT];
		size_t n_codes = 0;
		enum fault_level network = FAULT_LEVEL_NONE;
		uint32_t network_code = 0;
		split_network(policy, chip, codes, &n_codes, &network, &network_code);
		/* A chip whose every code is a network fault is not a sick chip:
		 * its health is a warning at most for its own level. */
		unsigned health = n_codes == 0 && network_code ? (chip->dcmi_health > 1 ? 1 : chip->dcmi_health)
							       : chip->dcmi_health;
		const struct fault_input input = { .codes = codes, .n_codes = n_codes, .dcmi_health = health };
		judge_network(chip, state, network, network_code);
		if (fault_policy_step(policy, state, &input, now_ms, &step) < 0)
			continue;
		bool resetting = fault_resets_chip(st->resets, in, chip, &step, state, now_ms, &separated);
		if (separated)
			judge_again(policy, state, &input, now_ms, &step);
		if (step.n_decisions)
			log_decisions(st->holders, chip, &step);
		for (size_t k = 0; k < step.n_onsets; k++)
			metrics_count_fault(st->metrics, step.onsets[k], false);
		for (size_t k = 0; k < step.n_decisions; k++) {
			const struct fault_decision *dec = &step.decisions[k];
			bool window = dec->rule == FAULT_RULE_FREQUENCY || dec->rule == FAULT_RULE_DURATION;
			if (window && (dec->kind == FAULT_DECISION_ESCALATED || dec->kind == FAULT_DECISION_SEPARATED))
				metrics_count_fault(st->metrics, dec->code, true);
		}
		if (step.holding && state->lower_since_ms >= 0) {
			int64_t at = state->lower_since_ms + policy->recovery_hold_ms;
			if (!due || at < due)
				due = at;
		}
		for (size_t j = i; j < out->count; j++) {
			struct npu_device *d = &out->devices[j];
			if (d->chip.phy_id == chip->chip.phy_id && (j == i || d->kind == NPU_DEVICE_VNPU))
				apply_verdict(d, &step, chip->id);
		}
		if (resetting)
			hold_for_reset(out, i);
	}
	follow_unlisted(st, out, now_ms);
	hold_groups(st, out);
	for (size_t i = 0; i < out->count; i++)
		out->healthy += out->devices[i].healthy;
	*ret_out = out;
	*ret_due_ms = due;
	return 0;
}

int fault_stage_init(struct fault_stage *st, const struct fault_stage_options *o)
{
	*st = (struct fault_stage){ .metrics = o->metrics,
				    .holders = o->holders,
				    .restore = o->restore,
				    .restore_ctx = o->restore_ctx,
				    .resets = o->resets };
	return loop_timer_new(o->loop, o->due, o->ctx, &st->hold_timer);
}

/* Gives each device of snap the time its health, level and code became
 * what they are: kept from the last judgement while they stay, now when
 * they change or the device is new. Without memory the times are left
 * unknown (0) and the last table stays. */
static void stamp_since(struct fault_stage *st, struct npu_snapshot *snap)
{
	struct fault_since *next = snap->count ? calloc(snap->count, sizeof(*next)) : NULL;
	if (snap->count && !next)
		return;
	int64_t now = wall_ms();
	for (size_t i = 0; i < snap->count; i++) {
		struct npu_device *d = &snap->devices[i];
		struct fault_since *n = &next[i];
		(void)str_copy(n->id, sizeof(n->id), d->id);
		n->healthy = d->healthy;
		n->level = d->policy_level;
		n->code = d->policy_code;
		n->since_ms = now;
		for (size_t j = 0; j < st->n_since; j++) {
			const struct fault_since *o = &st->since[j];
			if (strcmp(o->id, n->id) == 0 && o->healthy == n->healthy && o->level == n->level &&
			    o->code == n->code) {
				n->since_ms = o->since_ms;
				break;
			}
		}
		d->since_ms = n->since_ms;
	}
	free(st->since);
	st->since = next;
	st->n_since = snap->count;
}

struct npu_snapshot *fault_stage_judge(struct fault_stage *st, const struct fault_policy_config *policy,
				       struct npu_snapshot *raw, bool *changed)
{
	struct npu_snapshot *snap;
	int64_t now = now_ms(), due = 0;
	if (fault_stage_apply(st, policy, raw, now, &snap, &due) < 0) {
		log_error("cannot apply the fault policy: out of memory; publishing the chips as DCMI reports them");
		snap = npu_snapshot_ref(raw);
	}
	if (due)
		loop_timer_arm(st->hold_timer, due > now ? due - now : 1, 0);
	if (snap != raw)
		stamp_since(st, snap);
	*changed |= !st->judged || !npu_snapshot_same(st->judged, snap);
	npu_snapshot_unref(st->judged);
	st->judged = npu_snapshot_ref(snap);
	return snap;
}

void fault_stage_fini(struct fault_stage *st)
{
	loop_timer_free(st->hold_timer);
	npu_snapshot_unref(st->judged);
	free(st->chips);
	free(st->since);
	*st = (struct fault_stage){ 0 };
}
