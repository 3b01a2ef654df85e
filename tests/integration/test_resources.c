/* SPDX-License-Identifier: Apache-2.0 */
/* Several resources from one plugin process, through the real daemon,
 * kubelet-sim and the DCMI simulator: per-family names on a mixed
 * 910B/310P node (each registered, each re-registered after a kubelet
 * restart, health reaching only the stream that lists the chip), vNPUs
 * (one resource per template, the chip they come from withheld, their
 * Allocate answer, health, appearing at run time, known only by their node)
 * and SIGHUP re-reading the --config file (valid and invalid), which a
 * change of the file also does, also in a directory removed and made again
 * and through a ConfigMap's ..data swap. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness/harness.h"

static void write_config(struct node *node, const char *text)
{
	char path[160], tmp[170];
	snprintf(path, sizeof(path), "%s/config.yaml", node->root);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "we");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(rename(tmp, path), 0);
}

/* Starts kubelet-sim and the plugin with the node's config.yaml, or with
 * config_path (may be NULL). */
static struct proc *start_with(struct node *node, const char *config_path, const char *const extra[])
{
	char flag[256];
	if (config_path)
		snprintf(flag, sizeof(flag), "--config=%s", config_path);
	else
		snprintf(flag, sizeof(flag), "--config=%s/config.yaml", node->root);
	const char *flags[8] = { flag };
	for (size_t i = 0; extra && extra[i] && i < 6; i++)
		flags[i + 1] = extra[i];
	struct proc *k = node_start_kubelet(node);
	node_start_plugin(node, flags);
	return k;
}

static struct proc *start(struct node *node, const char *const extra[])
{
	return start_with(node, NULL, extra);
}

/* Reads kubelet-sim's lines until each of want (up to 8) has been in one,
 * in any order: the resources register and publish concurrently. */
static void expect_all(struct proc *k, const char *const want[])
{
	bool seen[8] = { false };
	size_t n = 0, left;
	while (want[n] && n < 8)
		n++;
	for (left = n; left > 0;) {
		const char *line = proc_expect(k, "", WAIT_MS);
		if (!line)
			fail_msg("%zu expected lines never came, the first: '%s'", left, want[0]);
		for (size_t i = 0; i < n; i++) {
			if (!seen[i] && strstr(line, want[i])) {
				seen[i] = true;
				left--;
			}
		}
	}
}

/* 4 910B3 chips (phy 0-3) and a 310P card of 2 chips (phy 4, 5). */
static const char mixed_state[] = "driver 24.1.rc1\n"
				  "chip phy=0 card=0 device=0 logic=0 name=910B3 health=0\n"
				  "chip phy=1 card=1 device=0 logic=1 name=910B3 health=0\n"
				  "chip phy=2 card=2 device=0 logic=2 name=910B3 health=0\n"
				  "chip phy=3 card=3 device=0 logic=3 name=910B3 health=0\n"
				  "chip phy=4 card=4 device=0 logic=4 name=310P3 health=0\n"
				  "chip phy=5 card=4 device=1 logic=5 name=310P3 health=%u\n";

/* The config that gives the 310P chips of mixed_state a name of their own. */
#define CONFIG_310P "version: v1\nresources:\n- family: 310P\n  name: ascend.com/npu-310p\n"

/* The node of mixed_state, all Healthy, with no resources configured:
 * kubelet-sim and the plugin (with extra flags) started, and all 6 chips
 * under ascend.com/npu. */
static struct proc *start_mixed(struct node *node, const char *const extra[])
{
	node_init(node, &(struct node_options){ .chips = 6 });
	node_write_state(node, mixed_state, 0);
	write_config(node, "version: v1\n");
	struct proc *k = start(node, extra);
	assert_non_null(proc_expect(k, "devices resource=ascend.com/npu capacity=6 allocatable=6 unhealthy=-", WAIT_MS));
	return k;
}

static void test_per_family_names(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = 6 });
	node_write_state(node, mixed_state, 0);
	write_config(node, "version: v1\n"
			   "sharing:\n"
			   "  timeSlicing:\n"
			   "    resources:\n"
			   "    - name: ascend.com/npu-310p\n"
			   "      replicas: 2\n"
			   "resources:\n"
			   "- family: 310P\n"
			   "  name: ascend.com/npu-310p\n");
	struct proc *k = start(node, NULL);
	expect_all(k, (const char *const[]){ "register resource=ascend.com/npu ",
					     "devices resource=ascend.com/npu capacity=4 allocatable=4 unhealthy=-",
					     "register resource=ascend.com/npu-310p endpoint=ascend-npu-310p.sock",
					     "devices resource=ascend.com/npu-310p capacity=4 allocatable=4 unhealthy=-", NULL });

	/* The 310P resource's devices are its chips' replicas, and only them. */
	proc_send(k, "use ascend.com/npu-310p");
	assert_non_null(proc_expect(k, "use resource=ascend.com/npu-310p", WAIT_MS));
	proc_send(k, "list");
	assert_non_null(proc_expect(k, "device id=npu-4::0 health=Healthy", WAIT_MS));
	assert_non_null(proc_expect(k, "device id=npu-5::1 health=Healthy", WAIT_MS));
	const char *line = proc_expect(k, "list end", WAIT_MS);
	assert_non_null(line);
	proc_send(k, "allocate 1");
	assert_non_null(proc_expect(k, "allocate ok ids=npu-4::0", WAIT_MS));
	assert_non_null(proc_expect(k, "allocate env name=ASCEND_VISIBLE_DEVICES value=4", WAIT_MS));

	/* A 310P chip fails: only its resource hears of it. */
	node_write_state(node, mixed_state, 2);
	assert_non_null(proc_expect(
		k, "devices resource=ascend.com/npu-310p capacity=4 allocatable=2 unhealthy=npu-5::0,npu-5::1", WAIT_MS));
	assert_false(proc_sees_within(k, "devices resource=ascend.com/npu ", 300));

	/* A kubelet restart: both register again. */
	proc_send(k, "restart");
	assert_non_null(proc_expect(k, "kubelet restarted", WAIT_MS));
	expect_all(k, (const char *const[]){ "register resource=ascend.com/npu ", "register resource=ascend.com/npu-310p ",
					     NULL });
	expect_event(node->plugin, "plugin.reregistered", "resource", "ascend.com/npu-310p");
	node_fini(node);
}

/* Chips 0-3; vNPUs 100 and 101 (vir04_3c) on chip 0, 116 (vir02) on chip 1. */
static const char vnpu_state[] = "driver 24.1.rc1\n"
				 "chip phy=0 card=0 device=0 logic=0 name=310P3 health=%u\n"
				 "chip phy=1 card=1 device=0 logic=1 name=310P3 health=0\n"
				 "chip phy=2 card=2 device=0 logic=2 name=310P3 health=0\n"
				 "chip phy=3 card=3 device=0 logic=3 name=310P3 health=0\n"
				 "vnpu id=100 phy=0 template=vir04_3c\n"
				 "vnpu id=101 phy=0 template=vir04_3c\n"
				 "vnpu id=116 phy=1 template=vir02\n"
				 "%s";

static void expect_list(struct proc *k, const char *resource, const char *const want[])
{
	char command[128];
	snprintf(command, sizeof(command), "use %s", resource);
	proc_send(k, command);
	assert_non_null(proc_expect(k, "use resource=", WAIT_MS));
	proc_send(k, "list");
	/* Other resources' news may come in between. */
	const char *line;
	for (size_t i = 0; want[i]; i++) {
		while ((line = proc_expect(k, "", WAIT_MS)) && strncmp(line, "device ", 7) != 0 &&
		       strcmp(line, "list end") != 0)
			;
		assert_non_null(line);
		if (strncmp(line, want[i], strlen(want[i])) != 0)
			fail_msg("%s: list line %zu is '%s', expected '%s'", resource, i, line, want[i]);
	}
	while ((line = proc_expect(k, "", WAIT_MS)) && strncmp(line, "device ", 7) != 0 && strcmp(line, "list end") != 0)
		;
	assert_non_null(line);
	assert_string_equal(line, "list end");
}

static void test_vnpus(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = 4 });
	node_touch(node, "dev/vdavinci100");
	node_touch(node, "dev/vdavinci101");
	node_touch(node, "dev/vdavinci116");
	node_write_state(node, vnpu_state, 0, "");
	write_config(node, "version: v1\n");
	struct proc *k = start(node, (const char *const[]){ "--device-list-strategy=native,ascend-runtime", NULL });
	expect_all(k, (const char *const[]){ "devices resource=ascend.com/npu capacity=2 allocatable=2 unhealthy=-",
					     "devices resource=ascend.com/npu-vir04-3c capacity=2 allocatable=2 unhealthy=-",
					     "devices resource=ascend.com/npu-vir02 capacity=1 allocatable=1 unhealthy=-", NULL });
	expect_event(node->plugin, "vnpu.template-found", "template", "vir04_3c", "resource", "ascend.com/npu-vir04-3c");
	/* The chips that carry vNPUs are not handed out whole. */
	expect_list(k, "ascend.com/npu", (const char *const[]){ "device id=npu-2 ", "device id=npu-3 ", NULL });
	expect_list(k, "ascend.com/npu-vir04-3c",
		    (const char *const[]){ "device id=vnpu-100 health=Healthy", "device id=vnpu-101 health=Healthy", NULL });

	/* Allocate: the vNPU's node at /dev/davinci<id>, its id visible, VIRTUAL for the runtime. */
	proc_send(k, "allocate-ids vnpu-101");
	assert_non_null(proc_expect(k, "allocate ok ids=vnpu-101", WAIT_MS));
	const char *line = proc_expect(k, "allocate device", WAIT_MS);
	assert_non_null(line);
	assert_string_equal(line, "allocate device host=/dev/vdavinci101 container=/dev/davinci101 permissions=rw");
	assert_non_null(proc_expect(k, "allocate env name=ASCEND_RUNTIME_OPTIONS value=VIRTUAL", WAIT_MS));
	assert_non_null(proc_expect(k, "allocate env name=ASCEND_VISIBLE_DEVICES value=101", WAIT_MS));
	assert_non_null(proc_expect(k, "allocate end", WAIT_MS));

	/* A vNPU is as healthy as its chip. */
	node_write_state(node, vnpu_state, 3, "");
	assert_non_null(proc_expect(
		k, "devices resource=ascend.com/npu-vir04-3c capacity=2 allocatable=0 unhealthy=vnpu-100,vnpu-101", WAIT_MS));
	node_write_state(node, vnpu_state, 0, "");
	assert_non_null(
		proc_expect(k, "devices resource=ascend.com/npu-vir04-3c capacity=2 allocatable=2 unhealthy=-", WAIT_MS));
	/* ... and Unhealthy without its node. */
	node_remove(node, "dev/vdavinci116");
	assert_non_null(proc_expect(k, "devices resource=ascend.com/npu-vir02 capacity=1 allocatable=0 unhealthy=vnpu-116",
				    WAIT_MS));

	/* A vNPU made at run time: its chip leaves the whole-chip resource. */
	node_write_state(node, vnpu_state, 0, "vnpu id=132 phy=2 template=vir02\n");
	node_touch(node, "dev/vdavinci116");
	node_touch(node, "dev/vdavinci132");
	/* The streams are separate: their news may come in either order. */
	expect_all(k, (const char *const[]){ "devices resource=ascend.com/npu-vir02 capacity=2 allocatable=2 unhealthy=-",
					     "devices resource=ascend.com/npu capacity=1 allocatable=1 unhealthy=-", NULL });
	expect_list(k, "ascend.com/npu", (const char *const[]){ "device id=npu-3 ", NULL });

	/* A vNPU node DCMI does not know: its chip is withheld, it is not advertised. */
	node_touch(node, "dev/vdavinci148");
	assert_non_null(proc_expect(k, "devices resource=ascend.com/npu capacity=0 allocatable=0 unhealthy=-", WAIT_MS));
	expect_event(node->plugin, "vnpu.unadvertised", "count", "1", "first",
		     "vnpu-148: its template is unknown: only its device file was found");
	node_fini(node);
}

static void test_sighup_reload(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = 6 });
	node_write_state(node, mixed_state, 0);
	write_config(node, "version: v1\n");
	/* The plugin watches the directory of the path it is given: through a
	 * link from another directory only SIGHUP makes it read the file. */
	char dir[160], link[200];
	snprintf(dir, sizeof(dir), "%s/conf", node->root);
	snprintf(link, sizeof(link), "%s/config.yaml", dir);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(symlink("../config.yaml", link), 0);
	struct proc *k = start_with(node, link, NULL);
	assert_non_null(proc_expect(k, "devices resource=ascend.com/npu capacity=6 allocatable=6 unhealthy=-", WAIT_MS));

	/* A valid file: the 310P chips get their own name. */
	write_config(node, "version: v1\n"
			   "flags:\n"
			   "  healthInterval: 2s\n"
			   "resources:\n"
			   "- family: 310P\n"
			   "  name: ascend.com/npu-310p\n");
	proc_kill(node->plugin, SIGHUP);
	expect_event(node->plugin, "config.applied", "trigger", "SIGHUP");
	expect_all(k, (const char *const[]){ "devices resource=ascend.com/npu capacity=4 allocatable=4 unhealthy=-",
					     "devices resource=ascend.com/npu-310p capacity=2 allocatable=2 unhealthy=-", NULL });
	char sock[200];
	snprintf(sock, sizeof(sock), "%s/ascend-npu-310p.sock", node->socket_dir);
	assert_int_equal(access(sock, F_OK), 0);

	/* An invalid one: everything stays as it is. */
	write_config(node, "version: v1\nresources:\n- family: 310X\n  name: ascend.com/npu-310p\n");
	proc_kill(node->plugin, SIGHUP);
	const char *err = expect_event(node->plugin, "config.rejected", "trigger", "SIGHUP");
	char reason[512];
	assert_non_null(strstr(event_field(err, "reason", reason, sizeof(reason)), "line 3"));
	assert_int_equal(access(sock, F_OK), 0);
	assert_int_equal(count_events(node->plugin, "plugin.reregistered"), 0);

	/* The name removed again: its socket goes, the kubelet sees its devices go. */
	write_config(node, "version: v1\n");
	proc_kill(node->plugin, SIGHUP);
	expect_event(node->plugin, "resource.gone", "resource", "ascend.com/npu-310p");
	expect_all(k, (const char *const[]){ "devices resource=ascend.com/npu-310p capacity=2 allocatable=0 unhealthy=",
					     "devices resource=ascend.com/npu capacity=6 allocatable=6 unhealthy=-", NULL });
	assert_int_equal(access(sock, F_OK), -1);
	node_fini(node);
}

/* A changed --config file is read again without a signal, as a mounted
 * ConfigMap is updated in place; only what changed is acted on. */
static void test_config_file_change(void **state)
{
	struct node *node = *state;
	struct proc *k = start_mixed(node, NULL);

	write_config(node, CONFIG_310P);
	expect_event(node->plugin, "config.changed");
	expect_all(k, (const char *const[]){ "register resource=ascend.com/npu-310p ",
					     "devices resource=ascend.com/npu capacity=4 allocatable=4 unhealthy=-",
					     "devices resource=ascend.com/npu-310p capacity=2 allocatable=2 unhealthy=-", NULL });
	/* The resource that stayed was not registered again. */
	assert_false(proc_sees_within(k, "register resource=ascend.com/npu ", 300));

	/* A broken edit changes nothing. */
	write_config(node, "version: v1\nresources: [\n");
	expect_event(node->plugin, "config.rejected", "trigger", "reload");
	assert_false(proc_sees_within(k, "devices resource=", 300));
	node_fini(node);
}

/* A resource added by a reload whose socket cannot be bound yet (a file
 * that is not a socket sits at its path) keeps trying by itself, every
 * second, and is served as soon as the path is free: with an hour between
 * health polls, only its session's retry can do it. */
static void test_added_resource_bind_retried(void **state)
{
	struct node *node = *state;
	struct proc *k = start_mixed(node, (const char *const[]){ "--health-interval", "1h", NULL });

	char blocker[200];
	snprintf(blocker, sizeof(blocker), "%s/ascend-npu-310p.sock", node->socket_dir);
	FILE *f = fopen(blocker, "we");
	assert_non_null(f);
	assert_int_equal(fclose(f), 0);
	write_config(node, CONFIG_310P);
	expect_event(node->plugin, "plugin.serve-failed", "resource", "ascend.com/npu-310p", "error", strerror(EEXIST),
		     "retry_ms", "1000");
	assert_non_null(proc_expect(k, "devices resource=ascend.com/npu capacity=4 allocatable=4 unhealthy=-", WAIT_MS));

	assert_int_equal(unlink(blocker), 0);
	expect_event(node->plugin, "plugin.serving", "resource", "ascend.com/npu-310p");
	expect_all(k, (const char *const[]){ "register resource=ascend.com/npu-310p ",
					     "devices resource=ascend.com/npu-310p capacity=2 allocatable=2 unhealthy=-", NULL });
	node_fini(node);
}

/* A resource added by a reload while the kubelet's directory is gone joins
 * the others in waiting for it (the node session owns that fact), instead
 * of failing to bind every second; once the directory and a kubelet are
 * back, both resources register. */
static void test_resource_added_while_dir_gone(void **state)
{
	struct node *node = *state;
	struct proc *k = start_mixed(node, NULL);

	proc_send(k, "quit");
	assert_int_equal(proc_wait(k, WAIT_MS), 0);
	proc_free(k);
	node->kubelet = NULL;
	char gone[200];
	snprintf(gone, sizeof(gone), "%s.gone", node->socket_dir);
	assert_int_equal(rename(node->socket_dir, gone), 0);
	assert_int_equal(tmpdir_remove(gone), 0);
	expect_event(node->plugin, "kubelet.dir-removed");

	write_config(node, CONFIG_310P);
	expect_event(node->plugin, "config.applied", "resources", "ascend.com/npu, ascend.com/npu-310p");
	/* The kubelet makes the directory again: by then the new resource, had
	 * it tried to bind, would have said so (at once, and every second
	 * after). The default resource may have tried once: the kubelet's
	 * stream can end before the directory's removal is seen. */
	k = node_start_kubelet(node);
	expect_event(node->plugin, "kubelet.dir-back");
	assert_int_equal(count_events(node->plugin, "plugin.serve-failed", "resource", "ascend.com/npu-310p"), 0);
	expect_all(k, (const char *const[]){ "register resource=ascend.com/npu ", "register resource=ascend.com/npu-310p ",
					     "devices resource=ascend.com/npu capacity=4 allocatable=4 unhealthy=-",
					     "devices resource=ascend.com/npu-310p capacity=2 allocatable=2 unhealthy=-", NULL });
	node_fini(node);
}

/* Runs the shell command cmd; the plugin sees the config file change and
 * reads it again. */
static void expect_reread_after(struct node *node, const char *cmd)
{
	assert_int_equal(system(cmd), 0);
	expect_event(node->plugin, "config.changed");
}

/* The config directory removed and made again, the file renamed into it
 * (issue: what was written while the directory was unwatched was never
 * read): the file is read once the directory is watched again, at the next
 * refresh. Then the kubelet's way of updating a mounted ConfigMap: the file
 * is a link through "..data", which a rename swaps to a new directory. */
static void test_config_dir_recreated_and_configmap_swap(void **state)
{
	struct node *node = *state;
	char dir[160], path[200], tmp[200], cmd[1200];
	node_init(node, &(struct node_options){ .chips = 6 });
	node_write_state(node, mixed_state, 0);
	snprintf(dir, sizeof(dir), "%s/cfgdir", node->root);
	snprintf(path, sizeof(path), "%s/config.yaml", dir);
	snprintf(tmp, sizeof(tmp), "%s/c.tmp", dir);
	assert_int_equal(mkdir(dir, 0755), 0);
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	assert_true(fputs("version: v1\n", f) >= 0);
	assert_int_equal(fclose(f), 0);
	struct proc *k = start_with(node, path, (const char *const[]){ "--health-interval=1s", NULL });
	assert_non_null(proc_expect(k, "devices resource=ascend.com/npu capacity=6 allocatable=6 unhealthy=-", WAIT_MS));

	snprintf(cmd, sizeof(cmd),
		 "rm -rf '%s' && mkdir '%s' && printf 'version: v1\\nresources:\\n- family: 310P\\n  name: "
		 "ascend.com/npu-310p\\n' >'%s' && mv '%s' '%s'",
		 dir, dir, tmp, tmp, path);
	expect_reread_after(node, cmd);
	expect_all(k, (const char *const[]){ "register resource=ascend.com/npu-310p ",
					     "devices resource=ascend.com/npu capacity=4 allocatable=4 unhealthy=-", NULL });

	/* The ConfigMap layout: config.yaml -> ..data/config.yaml, ..data ->
	 * ..v1; the update makes ..v2 and renames a new ..data link over the
	 * old one. */
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && mkdir ..v1 && cp config.yaml ..v1/ && ln -s ..v1 ..data && "
		 "ln -s ..data/config.yaml link.tmp && mv -T link.tmp config.yaml",
		 dir);
	expect_reread_after(node, cmd);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && mkdir ..v2 && printf 'version: v1\\n' >..v2/config.yaml && ln -s ..v2 ..data_tmp && "
		 "mv -T ..data_tmp ..data",
		 dir);
	expect_reread_after(node, cmd);
	assert_non_null(proc_expect(k, "devices resource=ascend.com/npu capacity=6 allocatable=6 unhealthy=-", WAIT_MS));
	node_fini(node);
}

/* As many resources as one process serves: 6 family names and 17 vNPU
 * templates besides the plugin's own; an 18th template is one too many. */
static void test_many_resources(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = 3 });
	char vnpus[2048] = "driver 24.1.rc1\nchip phy=0 card=0 name=310P3\nchip phy=1 card=1 name=310P3\n"
			   "chip phy=2 card=2 name=310P3\n";
	char line[96], rel[32];
	for (unsigned i = 0; i < 18; i++) {
		unsigned id = 100 + i; /* 100-115 on chip 0, 116-117 on chip 1 */
		snprintf(line, sizeof(line), "vnpu id=%u phy=%u template=t%u\n", id, id < 116 ? 0 : 1, i);
		strncat(vnpus, line, sizeof(vnpus) - strlen(vnpus) - 1);
		snprintf(rel, sizeof(rel), "dev/vdavinci%u", id);
		node_touch(node, rel);
	}
	node_write_state(node, "%s", vnpus);
	write_config(node, "version: v1\nresources:\n"
			   "- {family: 910, name: a.com/f910}\n- {family: 910B, name: a.com/f910b}\n"
			   "- {family: A3, name: a.com/fa3}\n- {family: 310, name: a.com/f310}\n"
			   "- {family: 310P, name: a.com/f310p}\n- {family: 310B, name: a.com/f310b}\n");
	struct proc *k = start(node, NULL);
	expect_event(node->plugin, "vnpu.resource-refused", "resource", "ascend.com/npu-t17");
	/* Each of the 24 registers, then sends its devices. */
	unsigned registered = 0, lists = 0;
	while (registered < 24 || lists < 24) {
		const char *got = proc_expect(k, "", WAIT_MS);
		if (!got)
			fail_msg("%u registrations and %u device lists of 24", registered, lists);
		registered += strncmp(got, "register ", 9) == 0;
		lists += strncmp(got, "devices ", 8) == 0;
	}
	/* The last template's vNPU is left out; the others are served. */
	expect_list(k, "ascend.com/npu-t16", (const char *const[]){ "device id=vnpu-116 health=Healthy", NULL });
	expect_list(k, "a.com/f310p", (const char *const[]){ "device id=npu-2 ", NULL });
	assert_int_equal(count_events(node->plugin, "start.failed"), 0);
	node_fini(node);
}

/* Events lost to an inotify queue overflow: the plugin looks at everything
 * again and carries on. A config file written in two parts is read once,
 * when its writer closes it. */
static void test_overflow_and_partial_config(void **state)
{
	struct node *node = *state;
	struct proc *k = start_mixed(node, NULL);

	/* The plugin stopped, far more events than the queue holds. */
	proc_kill(node->plugin, SIGSTOP);
	char path[200];
	for (unsigned i = 0; i < 20000; i++) {
		snprintf(path, sizeof(path), "%s/junk%u", node->dev_dir, i % 64);
		int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
		assert_true(fd >= 0);
		close(fd);
		unlink(path);
	}
	node_remove(node, "dev/davinci2");
	proc_kill(node->plugin, SIGCONT);
	expect_event(node->plugin, "config.inotify-overflow");
	assert_non_null(proc_expect(k, "devices resource=ascend.com/npu capacity=6 allocatable=5 unhealthy=npu-2", WAIT_MS));
	expect_event(node->plugin, "config.applied", "trigger", "reload");

	/* A new file written in two steps: nothing until it is closed. (The
	 * overflow had the file read again too.) */
	unsigned reads = count_events(node->plugin, "config.changed");
	snprintf(path, sizeof(path), "%s/config.yaml", node->root);
	assert_int_equal(unlink(path), 0);
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	assert_true(fputs("version: v1\n", f) >= 0);
	assert_int_equal(fflush(f), 0);
	assert_false(proc_sees_within(k, "devices resource=", 500));
	assert_int_equal(count_events(node->plugin, "config.changed"), reads);
	assert_true(fputs("resources:\n- family: 310P\n  name: ascend.com/npu-310p\n", f) >= 0);
	assert_int_equal(fclose(f), 0);
	expect_event(node->plugin, "config.applied", "trigger", "reload");
	assert_non_null(proc_expect(k, "register resource=ascend.com/npu-310p ", WAIT_MS));
	assert_int_equal(count_events(node->plugin, "resource.gone"), 0);
	node_fini(node);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_per_family_names, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_vnpus, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_sighup_reload, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_config_file_change, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_resource_added_while_dir_gone, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_added_resource_bind_retried, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_config_dir_recreated_and_configmap_swap, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_many_resources, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_overflow_and_partial_config, node_setup, node_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
