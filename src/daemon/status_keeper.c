/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/status_keeper.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include "base/log.h"
#include "base/parse.h"

void status_keeper_init(struct status_keeper *k, const char *state_dir, struct holders *holders)
{
	*k = (struct status_keeper){ .holders = holders };
	char base[PATH_MAX], why[PATH_MAX + 128];
	int r = path_join(base, sizeof(base), state_dir, STATUS_KEEPER_SUBDIR);
	if (r == 0)
		r = status_dirs_new(base, &k->dirs, why, sizeof(why));
	else
		(void)str_printf(why, sizeof(why), "the path %s/%s is too long", state_dir, STATUS_KEEPER_SUBDIR);
	if (r < 0)
		log_warn("containers get no live NPU status file: %s", why);
}

/* A set no container holds (pod resources said so) may go. */
static bool unused(void *ctx, const char *name, char (*ids)[NPU_DEVICE_ID_MAX], size_t n)
{
	struct status_keeper *k = ctx;
	char who[64];
	if (strncmp(name, "set-", 4) != 0)
		return false; /* a claim's: the DRA driver's to remove */
	for (size_t i = 0; i < n; i++)
		if (holders_of(k->holders, ids[i], who, sizeof(who)) == 0)
			return false;
	return true;
}

void status_keeper_refresh(struct status_keeper *k, const struct npu_snapshot *snap)
{
	if (!k->dirs)
		return;
	size_t rewritten = 0, removed = 0;
	int r = status_dirs_refresh(k->dirs, snap, &rewritten);
	if (r < 0 && r != k->last_error)
		log_warn("cannot bring every live NPU status file up to date: %s; trying at every refresh",
			 strerror(-r));
	else if (r == 0 && k->last_error)
		log_info("the live NPU status files are up to date again");
	k->last_error = r;
	if (rewritten)
		log_debug("%zu live NPU status files rewritten", rewritten);
	int64_t now = now_ms();
	if (!k->holders || (k->pruned_at_ms && now - k->pruned_at_ms < STATUS_KEEPER_PRUNE_EVERY_MS))
		return;
	k->pruned_at_ms = now;
	holders_want(k->holders); /* for the next look */
	if (status_dirs_prune(k->dirs, STATUS_KEEPER_IDLE_MS, unused, k, &removed) == 0 && removed)
		log_debug("%zu live NPU status directories no container holds removed", removed);
}

void status_keeper_fini(struct status_keeper *k)
{
	status_dirs_free(k->dirs);
	*k = (struct status_keeper){ 0 };
}
