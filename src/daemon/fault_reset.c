/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/fault_reset.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/parse.h"
#include "base/strbuf.h"

/* The worker thread, under the vendor guard's lock: only wake the loop. */
static void on_returned(void *ctx)
{
	loop_async_send(((struct fault_resets *)ctx)->returned);
}

static struct reset_chip *chip_of(struct fault_resets *r, uint32_t phy, bool make)
{
	for (size_t i = 0; i < r->n_chips; i++)
		if (r->chips[i].phy == phy)
			return &r->chips[i];
	if (!make || r->n_chips == NPU_MAX_CHIPS)
		return NULL;
	struct reset_chip *grown = realloc(r->chips, (r->n_chips + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	r->chips = grown;
	struct reset_chip *c = &r->chips[r->n_chips++];
	*c = (struct reset_chip){ .phy = phy };
	fault_reset_state_init(&c->state);
	return c;
}

/* The loop: takes the reset's outcome for the chip's next judgement. */
static void on_returned_async(void *ctx)
{
	struct fault_resets *r = ctx;
	struct dcmi_lib *lib = inventory_dcmi(r->inventory);
	struct reset_chip *c = r->calling >= 0 ? chip_of(r, (uint32_t)r->calling, false) : NULL;
	struct dcmi_reset_outcome outcome;
	if (!lib || !c || dcmi_chip_reset_take(lib, false, &outcome) < 0)
		return;
	r->calling = -1;
	c->returned = true;
	c->outcome = outcome;
	r->refresh(r->ctx);
}

static void on_poll(void *ctx)
{
	struct fault_resets *r = ctx;
	r->poll_at_ms = 0;
	r->refresh(r->ctx);
}

/* Looks again within delay_ms, or sooner when a look is due sooner. */
static void poll_in(struct fault_resets *r, int64_t now, int64_t delay_ms)
{
	if (r->poll_at_ms > now && r->poll_at_ms <= now + delay_ms)
		return;
	r->poll_at_ms = now + delay_ms;
	loop_timer_arm(r->poll, delay_ms, 0);
}

int fault_resets_init(struct fault_resets *r, const struct fault_resets_options *o)
{
	*r = (struct fault_resets){ .config = o->config,
				    .inventory = o->inventory,
				    .metrics = o->metrics,
				    .holders = o->holders,
				    .claims = o->claims,
				    .calling = -1,
				    .refresh = o->refresh,
				    .ctx = o->ctx };
	int rc = loop_timer_new(o->loop, on_poll, r, &r->poll);
	if (rc == 0)
		rc = loop_async_new(o->loop, on_returned_async, r, &r->returned);
	return rc;
}

void fault_resets_fini(struct fault_resets *r)
{
	loop_timer_free(r->poll);
	loop_async_free(r->returned);
	free(r->chips);
	*r = (struct fault_resets){ .calling = -1 };
}

/* Whether DCMI can reset chips; says once why not while resets are on. */
static struct dcmi_lib *reset_library(struct fault_resets *r)
{
	struct dcmi_lib *lib = inventory_dcmi(r->inventory);
	const char *why = !lib ? "DCMI is not in use (the device-file backend cannot reset a chip)"
		     : !dcmi_can_reset(lib) ? "this driver's DCMI lacks dcmi_set_device_pre_reset or dcmi_set_device_reset"
					    : "";
	if (strcmp(why, r->logged_cannot) != 0 && why[0])
		log_warn("chip resets are enabled, but %s; chips whose faults ask for a reset stay Unhealthy", why);
	(void)str_copy(r->logged_cannot, sizeof(r->logged_cannot), why); /* fits: the reasons are short */
	return why[0] ? NULL : lib;
}

/* Whether the chip reports code now: an escalation keeps a level for a code
 * gone, which no reset can cure. Code 0 is DCMI health without a code. */
static bool reports(const struct npu_device *chip, uint32_t code)
{
	if (code == 0)
		return chip->n_fault_codes == 0 && chip->dcmi_health >= 2;
	for (size_t i = 0; i < chip->n_fault_codes; i++)
		if (chip->fault_codes[i] == code)
			return true;
	return false;
}

/* "RestartNPU, code 80E18005" for log lines. */
static void about(char *buf, size_t size, enum fault_level level, uint32_t code)
{
	if (code)
		(void)str_printf(buf, size, "%s, code %08X", fault_level_name(level), code);
	else
		(void)str_printf(buf, size, "%s, DCMI health without a code", fault_level_name(level));
}

/* The JSON fields of a line about a reset step; code[16] holds the code. */
static struct log_fields step_fields(const struct npu_device *chip, const struct fault_reset_step *s, char *code)
{
	code[0] = '\0';
	if (s->code)
		(void)str_printf(code, 16, "%08X", s->code);
	return (struct log_fields){ .device = chip->id,
				    .more = { LOG_STR("fault_level", fault_level_name(s->level)), LOG_STR("code", code),
					      LOG_NUM("attempt", s->attempt) } };
}

static void separate(struct fault_state *state, const struct fault_reset_step *s, int64_t now, bool *ret_separated)
{
	if (state && fault_policy_separate(state, s->code, now) == 0)
		*ret_separated = true;
}

static void group_text(const struct reset_group *g, char *buf, size_t size);

/* Starts the DCMI reset the guard decided; a reset that cannot start is a
 * failed one. */
static void start(struct fault_resets *r, struct dcmi_lib *lib, struct reset_chip *c, const struct npu_device *chip,
		  const struct fault_reset_step *s)
{
	const struct fault_reset_config *cfg = r->config;
	char what[96];
	about(what, sizeof(what), s->level, s->code);
	char code[16];
	struct log_fields f = step_fields(chip, s, code);
	char members[160];
	group_text(&c->group, members, sizeof(members));
	f.more[3] = (struct log_field)LOG_NUM("max_resets", cfg->max_resets);
	/* The window is in reset.policy-changed; the group is this reset's. */
	f.more[4] = (struct log_field)LOG_NUM("timeout_s", cfg->timeout_ms / 1000);
	f.more[5] = (struct log_field)LOG_STR("group", members);
	metrics_count_reset_decision(r->metrics, c->phy, METRICS_DECISION_RESET);
	metrics_count_reset(r->metrics, c->phy, METRICS_RESET_ATTEMPTED);
	log_event(LOG_LEVEL_WARN, LOG_EVENT_RESET_STARTED, &f,
		       "%s: resetting the chip (%s) and with it its reset group (%s: %s): no container holds and no "
		       "process uses any of them; reset %u of at most %u within %llds; they stay Unhealthy until it "
		       "is back, and it is separated if it is not back within %llds",
		       chip->id, what, c->group.kind, members, s->attempt, cfg->max_resets,
		       (long long)(cfg->window_ms / 1000), (long long)(cfg->timeout_ms / 1000));
	int rc = dcmi_chip_reset_start(lib, &chip->chip, on_returned, r);
	if (rc == 0) {
		r->calling = (long)c->phy;
		return;
	}
	c->returned = true;
	c->outcome = (struct dcmi_reset_outcome){ .result = rc };
}

/* The DCMI reset returned (or could not start): on to waiting, or failed. */
static void take_return(struct fault_resets *r, struct reset_chip *c, const struct npu_device *chip,
			struct fault_state *state, int64_t now, bool *ret_separated)
{
	struct fault_reset_step s;
	c->returned = false;
	if (fault_reset_called(&c->state, c->outcome.result == 0, now, &s) < 0)
		return;
	if (s.action != FAULT_RESET_FAILED) {
		char returned_code[16];
		const struct log_fields returned = step_fields(chip, &s, returned_code);
		log_event(LOG_LEVEL_DEBUG, LOG_EVENT_RESET_RETURNED, &returned,
			  "%s: reset %u: DCMI's reset calls returned after %lldms; waiting for the chip", chip->id,
			  s.attempt, (long long)s.elapsed_ms);
		return;
	}
	char what[96], cause[128];
	about(what, sizeof(what), s.level, s.code);
	if (c->outcome.result == -EIO)
		(void)str_printf(cause, sizeof(cause), "%s returned %d", c->outcome.error.call, c->outcome.error.code);
	else
		(void)str_printf(cause, sizeof(cause), "it could not be started: %s", strerror(-c->outcome.result));
	char code[16];
	struct log_fields f = step_fields(chip, &s, code);
	if (c->outcome.result == -EIO) {
		f.more[3] = (struct log_field)LOG_STR("call", c->outcome.error.call);
		f.more[4] = (struct log_field)LOG_NUM("dcmi_error", c->outcome.error.code);
	}
	metrics_count_reset(r->metrics, c->phy, METRICS_RESET_FAILED);
	log_event(LOG_LEVEL_ERROR, LOG_EVENT_RESET_FAILED, &f,
		  "%s: reset %u (%s) failed: %s; separated (ManuallySeparateNPU) until released", chip->id, s.attempt,
		  what, cause);
	separate(state, &s, now, ret_separated);
}

/* Whether phy is in the group of a reset under way of another chip: its
 * chips stay out until that reset is over. The resetting chip's id in
 * *ret_by. */
static bool in_busy_group(const struct fault_resets *r, uint32_t phy, uint32_t *ret_by)
{
	for (size_t i = 0; i < r->n_chips; i++) {
		const struct reset_chip *o = &r->chips[i];
		if (o->phy != phy && fault_reset_busy(&o->state) && reset_group_has(&o->group, phy)) {
			*ret_by = o->phy;
			return true;
		}
	}
	return false;
}

/* A chip of the group as the snapshot has it, or NULL. */
static const struct npu_device *member_of(const struct npu_snapshot *snap, uint32_t phy)
{
	for (size_t i = 0; snap && i < snap->count; i++)
		if (snap->devices[i].kind == NPU_DEVICE_CHIP && snap->devices[i].chip.phy_id == phy)
			return &snap->devices[i];
	return NULL;
}

/* Whether DCMI lists a process on a chip of the group (or cannot say):
 * named in buf. Without the call, says once that pod resources alone
 * decide. */
static bool group_busy(struct fault_resets *r, struct dcmi_lib *lib, const struct npu_snapshot *snap,
		       const struct reset_group *g, char *buf, size_t size)
{
	if (!dcmi_can_list_processes(lib)) {
		if (!r->logged_no_processes)
			log_warn("this driver's DCMI lacks dcmi_get_device_resource_info: before a reset, only pod "
				 "resources say whether the chips of its group are in use");
		r->logged_no_processes = true;
		return false;
	}
	for (size_t i = 0; i < g->n; i++) {
		const struct npu_device *m = member_of(snap, g->phys[i]);
		size_t n = 0;
		int pid = 0;
		int rc = m ? dcmi_chip_processes(lib, &m->chip, &n, &pid) : -ENOENT;
		if (rc == 0 && n == 0)
			continue;
		if (rc == 0)
			(void)str_printf(buf, size, "npu-%u runs %zu process%s (pid %d%s)", g->phys[i], n, n == 1 ? "" : "es",
					 pid, n > 1 ? ", ..." : "");
		else if (rc == -EIO)
			(void)str_printf(buf, size, "npu-%u: cannot list its processes: %s returned %d", g->phys[i],
					 dcmi_last_error(lib).call, dcmi_last_error(lib).code);
		else
			(void)str_printf(buf, size, "npu-%u: cannot list its processes: %s", g->phys[i], strerror(-rc));
		return true;
	}
	return false;
}

/* Who holds the chip's reset group, for the guard: the chips of the group
 * (into *ret_group), then, all of them free by pod resources (and by the
 * DRA driver's prepared claims), the processes DCMI lists on them. Names
 * the holders, or why not, in holders. */
static enum fault_reset_holders who_holds(struct fault_resets *r, struct dcmi_lib *lib, const struct npu_snapshot *snap,
					   const struct npu_device *chip, const struct reset_chip *c, int64_t now,
					   char *holders, size_t size, struct reset_group *ret_group)
{
	uint32_t by;
	/* One reset at a time: the library runs one call, and a group under
	 * reset is reset already. */
	if ((r->calling >= 0 && (uint32_t)r->calling != c->phy) || in_busy_group(r, c->phy, &by))
		return FAULT_RESET_LISTING;
	int brother = -1;
	if (reset_group_needs_brother(chip) && dcmi_chip_brother_card(lib, &chip->chip, &brother) < 0)
		brother = -1;
	int rc = reset_group_of(snap, chip, brother, ret_group);
	if (rc < 0) {
		(void)str_printf(holders, size, "%s",
				 rc == -ENODATA ? "DCMI does not name the card paired with its card "
						  "(dcmi_get_netdev_brother_device)"
						: "the node's layout is not one the reset table knows");
		return FAULT_RESET_GROUP_UNKNOWN;
	}
	int64_t since = c->state.asks_since_ms >= 0 ? c->state.asks_since_ms : now;
	enum fault_reset_holders verdict = FAULT_RESET_FREE;
	for (size_t i = 0; i < ret_group->n && verdict == FAULT_RESET_FREE; i++) {
		char id[NPU_DEVICE_ID_MAX];
		(void)str_printf(id, sizeof(id), "npu-%u", ret_group->phys[i]);
		if (r->claims && r->claims(r->ctx, ret_group->phys[i], holders, size) > 0)
			return FAULT_RESET_HELD;
		rc = holders_since(r->holders, id, since, holders, size);
		verdict = rc == 0 ? FAULT_RESET_FREE : rc == 1 ? FAULT_RESET_HELD : rc == -EAGAIN ? FAULT_RESET_LISTING
												 : FAULT_RESET_UNAVAILABLE;
	}
	if (verdict == FAULT_RESET_FREE && group_busy(r, lib, snap, ret_group, holders, size))
		verdict = FAULT_RESET_PROCESSES;
	return verdict;
}

/* "npu-0..npu-7" or "npu-0,npu-2" for log lines. */
static void group_text(const struct reset_group *g, char *buf, size_t size)
{
	bool run = g->n > 2;
	for (size_t i = 1; i < g->n; i++)
		run &= g->phys[i] == g->phys[i - 1] + 1;
	if (run) {
		(void)str_printf(buf, size, "npu-%u..npu-%u", g->phys[0], g->phys[g->n - 1]);
		return;
	}
	struct strbuf sb;
	strbuf_init(&sb, buf, size, ",...");
	for (size_t i = 0; i < g->n; i++)
		if (strbuf_printf(&sb, "%snpu-%u", i ? "," : "", g->phys[i]) < 0)
			break;
}

static void report(struct fault_resets *r, struct reset_chip *c, const struct npu_device *chip,
		   const struct fault_reset_step *s, const char *holders, const struct reset_group *group)
{
	const struct fault_reset_config *cfg = r->config;
	char code[16], members[160] = "";
	if (group->n)
		group_text(group, members, sizeof(members));
	struct log_fields f = step_fields(chip, s, code);
	if (s->action == FAULT_RESET_SUCCEEDED || s->action == FAULT_RESET_BACK_FAULTY)
		f.more[3] = (struct log_field)LOG_NUM("elapsed_ms", s->elapsed_ms);
	if (s->action == FAULT_RESET_WAIT_HOLDERS || s->action == FAULT_RESET_WAIT_PROCESSES ||
	    s->action == FAULT_RESET_NO_GROUP)
		f.more[3] = (struct log_field)LOG_STR("holders", holders);
	if (s->action == FAULT_RESET_WAIT_HOLDERS || s->action == FAULT_RESET_WAIT_PROCESSES) {
		f.more[4] = (struct log_field)LOG_STR("group", members);
		f.more[5] = (struct log_field)LOG_STR("group_kind", group->kind);
	}
	char what[96];
	about(what, sizeof(what), s->level, s->code);
	/* Counted before the line is said: whoever reads the line may scrape. */
	if (s->action == FAULT_RESET_SUCCEEDED)
		metrics_count_reset(r->metrics, c->phy, METRICS_RESET_SUCCEEDED);
	else if (s->action == FAULT_RESET_BACK_FAULTY || s->action == FAULT_RESET_TIMED_OUT)
		metrics_count_reset(r->metrics, c->phy, METRICS_RESET_FAILED);
	else if (s->action == FAULT_RESET_WAIT_HOLDERS)
		metrics_count_reset_decision(r->metrics, c->phy, METRICS_DECISION_HELD_BY_POD);
	else if (s->action == FAULT_RESET_WAIT_PROCESSES)
		metrics_count_reset_decision(r->metrics, c->phy, METRICS_DECISION_BUSY_PROCESS);
	else if (s->action == FAULT_RESET_NO_LIST)
		metrics_count_reset_decision(r->metrics, c->phy, METRICS_DECISION_HOLDERS_UNKNOWN);
	else if (s->action == FAULT_RESET_NO_GROUP)
		metrics_count_reset_decision(r->metrics, c->phy, METRICS_DECISION_GROUP_UNKNOWN);
	switch (s->action) {
	case FAULT_RESET_WAIT_HOLDERS:
		log_event(LOG_LEVEL_WARN, LOG_EVENT_RESET_HELD, &f,
			  "%s: %s asks for a reset, but %s hold a chip of its reset group (%s: %s); it is reset once "
			  "they are gone",
			  chip->id, what, holders, group->kind, members);
		break;
	case FAULT_RESET_WAIT_PROCESSES:
		log_event(LOG_LEVEL_WARN, LOG_EVENT_RESET_BUSY, &f,
			  "%s: %s asks for a reset, but DCMI says %s, in its reset group (%s: %s); it is reset once no "
			  "process runs there",
			  chip->id, what, holders, group->kind, members);
		break;
	case FAULT_RESET_NO_GROUP:
		log_event(LOG_LEVEL_WARN, LOG_EVENT_RESET_GROUP_UNKNOWN, &f,
			  "%s: %s asks for a reset, but which chips a reset takes down is unknown: %s; it is not reset",
			  chip->id, what, holders);
		break;
	case FAULT_RESET_NO_LIST:
		log_event(LOG_LEVEL_WARN, LOG_EVENT_RESET_HOLDERS_UNKNOWN, &f,
			  "%s: %s asks for a reset, but who holds the chip is unknown (pod resources: %s); it is not "
			  "reset",
			  chip->id, what, holders);
		break;
	case FAULT_RESET_SEPARATE:
		log_event(LOG_LEVEL_WARN, LOG_EVENT_RESET_EXHAUSTED, &f,
			  "%s: still %s after %u resets within %llds; separated (ManuallySeparateNPU) until released",
			  chip->id, what, s->attempt, (long long)(cfg->window_ms / 1000));
		break;
	case FAULT_RESET_SUCCEEDED:
		log_event(LOG_LEVEL_INFO, LOG_EVENT_RESET_DONE, &f,
			  "%s: reset %u done: back after %lldms without its fault (%s); Healthy again once the "
			  "recovery hold has passed",
			  chip->id, s->attempt, (long long)s->elapsed_ms, what);
		break;
	case FAULT_RESET_BACK_FAULTY:
		log_event(LOG_LEVEL_WARN, LOG_EVENT_RESET_BACK_FAULTY, &f,
			  "%s: reset %u failed: back after %lldms, still %s; reset again while resets remain, else "
			  "separated",
			  chip->id, s->attempt, (long long)s->elapsed_ms, what);
		break;
	case FAULT_RESET_TIMED_OUT:
		log_event(LOG_LEVEL_ERROR, LOG_EVENT_RESET_TIMED_OUT, &f,
			  "%s: reset %u (%s) timed out: not back within %llds; separated (ManuallySeparateNPU) until "
			  "released",
			  chip->id, s->attempt, what, (long long)(cfg->timeout_ms / 1000));
		break;
	case FAULT_RESET_IDLE:
	case FAULT_RESET_WAIT_LIST:
	case FAULT_RESET_NOW:
	case FAULT_RESET_IN_PROGRESS:
	case FAULT_RESET_FAILED:
		break;
	}
}

bool fault_resets_group_hold(const struct fault_resets *r, uint32_t phy, uint32_t *ret_by)
{
	return r && in_busy_group(r, phy, ret_by);
}

bool fault_resets_chip(struct fault_resets *r, const struct npu_snapshot *snapshot, const struct npu_device *chip,
		       const struct fault_step *step, struct fault_state *state, int64_t now, bool *ret_separated)
{
	*ret_separated = false;
	if (!r || !r->config || chip->kind != NPU_DEVICE_CHIP)
		return false;
	struct reset_chip *c = chip_of(r, chip->chip.phy_id, false);
	bool busy = c && fault_reset_busy(&c->state);
	if (!busy && (!r->config->enabled || !step || !fault_reset_level_asks(step->level))) {
		/* Nothing to do, cheaply; the guard forgets the chip's wait. */
		if (c && step)
			(void)fault_reset_step(r->config, &c->state, &(struct fault_reset_input){ .answered = true }, now,
					       &(struct fault_reset_step){ 0 });
		return false;
	}
	struct dcmi_lib *lib = reset_library(r);
	if (!lib || !(c = c ? c : chip_of(r, chip->chip.phy_id, true)))
		return busy;
	if (c->returned)
		take_return(r, c, chip, state, now, ret_separated);

	struct fault_reset_input in = {
		.answered = step != NULL,
		.asks = step && fault_reset_level_asks(step->level) && !step->holding && reports(chip, step->code),
		.separated = (step && step->separated) || *ret_separated,
		.level = step ? step->level : FAULT_LEVEL_NONE,
		.code = step ? step->code : 0,
		.holders = FAULT_RESET_LISTING,
	};
	char holders[512] = "";
	struct reset_group group = { .kind = "chip" };
	if (in.answered && in.asks && !in.separated && !fault_reset_busy(&c->state))
		in.holders = who_holds(r, lib, snapshot, chip, c, now, holders, sizeof(holders), &group);
	struct fault_reset_step s;
	if (fault_reset_step(r->config, &c->state, &in, now, &s) < 0)
		return fault_reset_busy(&c->state);
	if (s.news)
		report(r, c, chip, &s, holders, &group);
	switch (s.action) {
	case FAULT_RESET_NOW:
		/* The group stays out with the chip until its reset is over. */
		c->group = group;
		start(r, lib, c, chip, &s);
		if (c->returned)
			take_return(r, c, chip, state, now, ret_separated);
		break;
	case FAULT_RESET_TIMED_OUT:
		/* A call still running is given up: the library stays stuck in it. */
		if (r->calling == (long)c->phy) {
			struct dcmi_reset_outcome ignored;
			(void)dcmi_chip_reset_take(lib, true, &ignored);
			r->calling = -1;
		}
		separate(state, &s, now, ret_separated);
		break;
	case FAULT_RESET_SEPARATE:
		separate(state, &s, now, ret_separated);
		break;
	default:
		break;
	}
	/* Look again soon while something is pending: the chip's return, its
	 * deadline, a list of holders, the next decision after a failed one;
	 * later while a container holds the chip. */
	if (fault_reset_busy(&c->state) || s.action == FAULT_RESET_WAIT_LIST || s.action == FAULT_RESET_BACK_FAULTY)
		poll_in(r, now, RESET_POLL_MS);
	else if (s.action == FAULT_RESET_WAIT_HOLDERS || s.action == FAULT_RESET_WAIT_PROCESSES ||
		 s.action == FAULT_RESET_NO_GROUP)
		/* Processes end, and DCMI may name the brother card later,
		 * without any event: look again. */
		poll_in(r, now, RESET_HOLDERS_POLL_MS);
	return fault_reset_busy(&c->state);
}
