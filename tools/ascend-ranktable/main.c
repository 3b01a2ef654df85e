/* SPDX-License-Identifier: Apache-2.0 */
/* ascend-ranktable: the init container that gives every pod of a
 * multi-node group the same HCCL rank table, with nothing but the pod's
 * service account (docs/ranktable.md). The table of contents: read the
 * command line; reach the API server; read this pod and find its group,
 * the group's size and the front end (DRA, or the device plugin, whose
 * chips this pod then publishes on itself); wait for every member; build
 * the table; write it and print it. Exit 0 with the table written, 1 with
 * one line saying why not (never a wrong table), 2 for a usage error. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/parse.h"
#include "gather.h"
#include "group.h"
#include "hccl/ranktable.h"
#include "kube/client.h"
#include "kube/config.h"
#include "member.h"
#include "node/visible.h"
#include "options.h"
#include "output.h"

#define PROGRAM "ascend-ranktable"
#define WHY_MAX 2048

static void progress(void *ctx, const char *line)
{
	(void)ctx;
	cli_error(PROGRAM, "%s", line);
}

static int connect_api(const struct rt_options *o, struct kube_client **ret, char *why, size_t why_size)
{
	struct kube_config kc;
	char cause[768];
	int r = o->kubeconfig ? kube_config_from_kubeconfig(o->kubeconfig, NULL, &kc, cause, sizeof(cause))
			      : kube_config_in_cluster(NULL, &kc, cause, sizeof(cause));
	if (r < 0)
		return why_fail(why, why_size, r, "%s%s", o->kubeconfig ? "" : "no in-cluster configuration: ", cause);
	if ((r = kube_client_new(&kc, 0, ret, cause, sizeof(cause))) < 0) {
		kube_config_free(&kc);
		return why_fail(why, why_size, r, "%s", cause);
	}
	return 0;
}

/* Device-plugin mode: this pod's chips, as Allocate told the container,
 * published on the pod for the others. */
static int publish_own(struct kube_client *c, const char *ns, const struct rt_pod *self, char *why,
		       size_t why_size)
{
	const char *network = getenv(VISIBLE_NETWORK_ENV);
	struct rt_chips chips;
	char cause[256];
	if (!network || !network[0])
		return why_invalid(why, why_size,
				   "no %s in this container: it must request the same ascend.com/npu as the main "
				   "container (and the chips must have a network identity)",
				   VISIBLE_NETWORK_ENV);
	int r = rt_network_parse(network, strlen(network), &chips, cause, sizeof(cause));
	if (r < 0)
		return why_fail(why, why_size, r, "%s: %s", VISIBLE_NETWORK_ENV, cause);
	return rt_publish(c, ns, self->name, self->uid, network, why, why_size);
}

/* The table's members from what was gathered. */
static int build(const struct rt_found *found, uint32_t size, char **ret_json, size_t *ret_ranks, char *why,
		 size_t why_size)
{
	struct hccl_member *members = calloc(size, sizeof(*members));
	if (!members)
		return why_fail(why, why_size, -ENOMEM, "out of memory");
	size_t ranks = 0;
	for (uint32_t i = 0; i < size; i++) {
		const struct rt_found *f = &found[i];
		members[i] = (struct hccl_member){
			.pod_index = f->pod.index,
			.server_id = f->pod.node,
			.host_ip = f->pod.host_ip[0] ? f->pod.host_ip : NULL,
			.family = f->chips.family,
			.chips = f->chips.chips,
			.n_chips = f->chips.n,
		};
		ranks += f->chips.n;
	}
	int r = hccl_ranktable_build(members, size, ret_json, why, why_size);
	free(members);
	if (r == 0)
		*ret_ranks = ranks;
	return r;
}

int main(int argc, char **argv)
{
	struct rt_options o;
	char why[WHY_MAX], what[RT_SELECTOR_MAX + 64];
	int r = rt_options_parse(argc, argv, &o, why, sizeof(why));
	if (r < 0) {
		cli_usage_error(PROGRAM, "%s", why);
		return 2;
	}
	if (o.help) {
		rt_options_usage(stdout);
		return 0;
	}
	if (o.version) {
		printf("%s %s\n", PROGRAM, ASCEND_VERSION);
		return 0;
	}
	struct kube_client *c = NULL;
	json_object *self_json = NULL;
	struct rt_found *found = NULL;
	static struct rt_pod self;
	struct rt_group group;
	char *json = NULL;
	size_t ranks = 0;
	int status = 1;
	int64_t deadline = now_ms() + o.timeout_ms;
	if ((r = connect_api(&o, &c, why, sizeof(why))) < 0)
		goto out;
	const char *ns = o.namespace_ ? o.namespace_ : kube_client_config(c)->namespace_;
	if (!ns) {
		r = why_invalid(why, sizeof(why), "no namespace: give --namespace or POD_NAMESPACE");
		goto out;
	}

	/* This pod, its group and place, the group's size and the front end. */
	if ((r = rt_read_pod(c, ns, o.pod_name, &self_json, why, sizeof(why))) < 0 ||
	    (r = rt_pod_read(self_json, &self, why, sizeof(why))) < 0 ||
	    (r = rt_group_of(self_json, o.label_key, &group, why, sizeof(why))) < 0)
		goto out;
	rt_group_describe(&group, what, sizeof(what));
	uint32_t size = o.size ? o.size : group.size;
	if (!size && (r = rt_owner_size(c, ns, &group, &size, why, sizeof(why))) < 0) {
		char cause[WHY_MAX];
		snprintf(cause, sizeof(cause), "%s", why);
		why_fail(why, sizeof(why), r, "the size of %s is unknown: give --size or ASCEND_HCCL_GROUP_SIZE (%s)",
			 what, cause);
		goto out;
	}
	enum rt_mode mode = o.mode != RT_MODE_AUTO ? o.mode : self.uses_dra ? RT_MODE_DRA : RT_MODE_DEVICE_PLUGIN;
	cli_error(PROGRAM, "pod %s/%s: %s of %u pods, %s mode", ns, self.name, what, size,
		  mode == RT_MODE_DRA ? "DRA" : "device-plugin");
	if (mode == RT_MODE_DEVICE_PLUGIN && (r = publish_own(c, ns, &self, why, sizeof(why))) < 0)
		goto out;

	/* Every member, then the table. */
	if (!(found = calloc(size, sizeof(*found)))) {
		r = why_fail(why, sizeof(why), -ENOMEM, "out of memory");
		goto out;
	}
	const struct rt_wait wait = { .namespace_ = ns, .driver = o.driver, .mode = mode, .deadline_ms = deadline,
				      .watch_s = o.watch_s, .progress = progress };
	if ((r = rt_wait_members(c, &group, size, &wait, found, why, sizeof(why))) < 0 ||
	    (r = build(found, size, &json, &ranks, why, sizeof(why))) < 0 ||
	    (r = rt_output_write(o.output, o.env_file, json, ranks, why, sizeof(why))) < 0)
		goto out;
	fputs(json, stdout);
	cli_error(PROGRAM, "wrote %s (%zu ranks of %u pods) and %s", o.output, ranks, size, o.env_file);
	status = 0;
out:
	if (status != 0)
		cli_error(PROGRAM, "%s", why);
	free(json);
	free(found);
	json_object_put(self_json);
	kube_client_free(c);
	return status;
}
