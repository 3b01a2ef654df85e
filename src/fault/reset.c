/* SPDX-License-Identifier: Apache-2.0 */
#include "fault/reset.h"

#include <errno.h>
#include <string.h>

void fault_reset_config_init(struct fault_reset_config *config)
{
	*config = (struct fault_reset_config){
		.enabled = false,
		.max_resets = FAULT_RESET_DEFAULT_MAX,
		.window_ms = FAULT_RESET_DEFAULT_WINDOW_MS,
		.timeout_ms = FAULT_RESET_DEFAULT_TIMEOUT_MS,
	};
}

bool fault_reset_config_same(const struct fault_reset_config *a, const struct fault_reset_config *b)
{
	return a->enabled == b->enabled && a->max_resets == b->max_resets && a->window_ms == b->window_ms &&
	       a->timeout_ms == b->timeout_ms;
}

bool fault_reset_level_asks(enum fault_level level)
{
	return level == FAULT_LEVEL_RESTART_NPU || level == FAULT_LEVEL_FREE_RESTART_NPU;
}

const char *fault_reset_action_name(enum fault_reset_action action)
{
	static const char *const names[] = {
		[FAULT_RESET_IDLE] = "idle",
		[FAULT_RESET_WAIT_HOLDERS] = "wait for holders",
		[FAULT_RESET_WAIT_LIST] = "wait for a list",
		[FAULT_RESET_NO_LIST] = "no list",
		[FAULT_RESET_WAIT_PROCESSES] = "wait for processes",
		[FAULT_RESET_NO_GROUP] = "no group",
		[FAULT_RESET_NOW] = "reset",
		[FAULT_RESET_SEPARATE] = "separate",
		[FAULT_RESET_IN_PROGRESS] = "in progress",
		[FAULT_RESET_SUCCEEDED] = "succeeded",
		[FAULT_RESET_BACK_FAULTY] = "back faulty",
		[FAULT_RESET_FAILED] = "failed",
		[FAULT_RESET_TIMED_OUT] = "timed out",
	};
	return (size_t)action < sizeof(names) / sizeof(names[0]) ? names[action] : "?";
}

void fault_reset_state_init(struct fault_reset_state *state)
{
	memset(state, 0, sizeof(*state));
	state->asks_since_ms = -1;
}

uint32_t fault_reset_attempts(const struct fault_reset_config *config, const struct fault_reset_state *state,
			      int64_t now_ms)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < state->n_attempts; i++)
		if (state->attempts[i] > now_ms - config->window_ms)
			n++;
	return n;
}

/* The reset is over with action: the chip is the policy's again. */
static void finish(struct fault_reset_state *state, enum fault_reset_action action, int64_t now,
		   struct fault_reset_step *out)
{
	*out = (struct fault_reset_step){
		.action = action, .news = true, .attempt = state->attempt, .code = state->code, .level = state->level,
		.elapsed_ms = now - state->called_ms,
	};
	state->phase = FAULT_RESET_PHASE_IDLE;
	state->waiting = FAULT_RESET_IDLE;
}

/* A reset under way: is the chip back, and how? */
static void follow(struct fault_reset_state *state, const struct fault_reset_input *in, int64_t now,
		   struct fault_reset_step *out)
{
	/* An answer counts once the chip was seen away, or after the settle
	 * time: before, it may be the chip that has not gone down yet. */
	bool back = state->seen_away || now - state->called_ms >= FAULT_RESET_SETTLE_MS;
	if (state->phase == FAULT_RESET_PHASE_WAITING && in->answered && back) {
		finish(state, in->asks ? FAULT_RESET_BACK_FAULTY : FAULT_RESET_SUCCEEDED, now, out);
		return;
	}
	if (state->phase == FAULT_RESET_PHASE_WAITING && !in->answered)
		state->seen_away = true;
	if (now >= state->deadline_ms) {
		finish(state, FAULT_RESET_TIMED_OUT, now, out);
		return;
	}
	*out = (struct fault_reset_step){
		.action = FAULT_RESET_IN_PROGRESS, .attempt = state->attempt, .code = state->code,
		.level = state->level, .elapsed_ms = now - state->called_ms, .due_ms = state->deadline_ms,
	};
}

/* A wait: news only when it differs from the last one reported. */
static void wait_for(struct fault_reset_state *state, enum fault_reset_action action,
		     const struct fault_reset_input *in, struct fault_reset_step *out)
{
	*out = (struct fault_reset_step){
		.action = action, .news = state->waiting != action, .code = in->code, .level = in->level,
	};
	state->waiting = action;
}

int fault_reset_step(const struct fault_reset_config *config, struct fault_reset_state *state,
		     const struct fault_reset_input *in, int64_t now_ms, struct fault_reset_step *ret_step)
{
	if (!config || !state || !in || !ret_step)
		return -EINVAL;
	struct fault_reset_step out = { .action = FAULT_RESET_IDLE };
	if (fault_reset_busy(state)) {
		follow(state, in, now_ms, &out);
		*ret_step = out;
		return 0;
	}
	if (!in->answered) {
		/* Nothing to judge: the chip keeps what it asked. */
		*ret_step = out;
		return 0;
	}
	if (!config->enabled || in->separated || !in->asks) {
		state->asks_since_ms = -1;
		state->waiting = FAULT_RESET_IDLE;
		*ret_step = out;
		return 0;
	}
	if (state->asks_since_ms < 0)
		state->asks_since_ms = now_ms;
	uint32_t spent = fault_reset_attempts(config, state, now_ms);
	if (spent >= config->max_resets) {
		out = (struct fault_reset_step){
			.action = FAULT_RESET_SEPARATE, .news = true, .attempt = spent, .code = in->code, .level = in->level,
		};
		state->waiting = FAULT_RESET_IDLE;
		state->asks_since_ms = -1;
		*ret_step = out;
		return 0;
	}
	switch (in->holders) {
	case FAULT_RESET_HELD:
		wait_for(state, FAULT_RESET_WAIT_HOLDERS, in, &out);
		break;
	case FAULT_RESET_LISTING:
		/* Not news: a list is a second away at most. */
		out = (struct fault_reset_step){ .action = FAULT_RESET_WAIT_LIST, .code = in->code, .level = in->level };
		break;
	case FAULT_RESET_UNAVAILABLE:
		wait_for(state, FAULT_RESET_NO_LIST, in, &out);
		break;
	case FAULT_RESET_PROCESSES:
		wait_for(state, FAULT_RESET_WAIT_PROCESSES, in, &out);
		break;
	case FAULT_RESET_GROUP_UNKNOWN:
		wait_for(state, FAULT_RESET_NO_GROUP, in, &out);
		break;
	case FAULT_RESET_FREE:
		state->attempts[state->next_attempt] = now_ms;
		state->next_attempt = (state->next_attempt + 1) % FAULT_RESET_MAX_ATTEMPTS;
		if (state->n_attempts < FAULT_RESET_MAX_ATTEMPTS)
			state->n_attempts++;
		state->phase = FAULT_RESET_PHASE_CALLING;
		state->called_ms = now_ms;
		state->deadline_ms = now_ms + config->timeout_ms;
		state->seen_away = false;
		state->code = in->code;
		state->level = in->level;
		state->attempt = spent + 1;
		state->waiting = FAULT_RESET_IDLE;
		state->asks_since_ms = -1;
		out = (struct fault_reset_step){
			.action = FAULT_RESET_NOW, .news = true, .attempt = spent + 1, .code = in->code,
			.level = in->level, .due_ms = state->deadline_ms,
		};
		break;
	}
	*ret_step = out;
	return 0;
}

int fault_reset_called(struct fault_reset_state *state, bool ok, int64_t now_ms, struct fault_reset_step *ret_step)
{
	if (!state || !ret_step || state->phase != FAULT_RESET_PHASE_CALLING)
		return -EINVAL;
	if (!ok) {
		finish(state, FAULT_RESET_FAILED, now_ms, ret_step);
		return 0;
	}
	state->phase = FAULT_RESET_PHASE_WAITING;
	*ret_step = (struct fault_reset_step){
		.action = FAULT_RESET_IN_PROGRESS, .attempt = state->attempt, .code = state->code,
		.level = state->level, .elapsed_ms = now_ms - state->called_ms, .due_ms = state->deadline_ms,
	};
	return 0;
}
