/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes kubelet-sim's pod manifest reader (tools/kubelet-sim/podspec.c) and
 * the $(VAR) expansion over what it accepted. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/kubelet-sim/podspec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_container(const struct podspec *spec, const struct podspec_container *c)
{
	if (!c->name || !c->image || c->image[0] == '\0')
		abort();
	if (c->n_env > PODSPEC_MAX_ITEMS || c->n_mounts > PODSPEC_MAX_ITEMS || c->n_limits > PODSPEC_MAX_ITEMS)
		abort();
	for (size_t i = 0; i < c->n_mounts; i++) {
		bool found = false;
		for (size_t j = 0; j < spec->n_volumes; j++)
			found |= strcmp(spec->volumes[j].name, c->mounts[i].name) == 0;
		if (!found)
			abort(); /* a mount names a volume of the pod */
	}
	char *names[PODSPEC_MAX_ITEMS], *values[PODSPEC_MAX_ITEMS];
	size_t n = 0;
	for (size_t i = 0; i < c->n_env; i++) {
		const struct podspec_env *e = &c->env[i];
		if (!e->name || !e->value == !e->field_ref)
			abort(); /* exactly one of value and fieldRef */
		if (!e->value)
			continue;
		char *expanded;
		if (podspec_expand(e->value, names, values, n, &expanded) == 0) {
			/* Expansion of a value without '$' is the identity. */
			if (!strchr(e->value, '$') && strcmp(expanded, e->value) != 0)
				abort();
			free(expanded);
		}
		names[n] = e->name;
		values[n] = e->value;
		n++;
	}
	for (size_t i = 0; i < c->n_args; i++) {
		char *expanded;
		if (podspec_expand(c->args[i], names, values, n, &expanded) == 0)
			free(expanded);
	}
	if (c->liveness.set && (c->liveness.n_exec == 0 || c->liveness.period_s == 0))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct podspec *spec = NULL;
	char err[512] = "";
	if (podspec_parse((const char *)data, size, &spec, err, sizeof(err)) < 0) {
		if (err[0] == '\0' || spec)
			abort(); /* a refusal always says why, and returns nothing */
		return 0;
	}
	if (!spec->kind || !spec->name || !spec->namespace || !spec->restart_policy || spec->n_containers == 0 ||
	    spec->n_containers > PODSPEC_MAX_CONTAINERS || spec->n_volumes > PODSPEC_MAX_VOLUMES ||
	    spec->n_ignored > PODSPEC_MAX_IGNORED)
		abort();
	for (size_t i = 0; i < spec->n_init_containers; i++)
		check_container(spec, &spec->init_containers[i]);
	for (size_t i = 0; i < spec->n_containers; i++)
		check_container(spec, &spec->containers[i]);
	for (size_t i = 0; i < spec->n_ignored; i++)
		if (!spec->ignored[i] || spec->ignored[i][0] == '\0')
			abort();
	podspec_free(spec);
	return 0;
}
