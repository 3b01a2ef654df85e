/* SPDX-License-Identifier: Apache-2.0 */
/* The API-server side of ascend-ranktable: reads the pod it runs in,
 * publishes its chips on it (device-plugin mode), finds the group's size
 * when the owner tells it, and waits, up to a deadline, until every member
 * of the group is known: a pod for each index, scheduled, with its chips
 * (its annotation, or its claims' device data). It lists the group's pods
 * (paged, at most RT_LIST_MAX(size) of them), and between lists waits on a
 * watch of what it still misses (pods, or in DRA mode the claims once every
 * pod is there), which returns at its first event; a watch ends after the
 * watch window at most and the list is made again, so that an event missed
 * costs that much time, never the table. Members are taken as they are at
 * the last list, by index: a pod deleted and replaced while waiting is read
 * anew. Nothing here logs: progress goes to the caller's callback. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "group.h"
#include "kube/client.h"
#include "member.h"

/* Pods matching a group's selector that are read: the members, as many
 * replacements being made, and a few old pods of a Job's retries. */
#define RT_LIST_MAX(size) (2u * (size) + 16u)
/* The pods of a list page. */
#define RT_LIST_PAGE 50
/* A reason why a member is not known, for the messages. */
#define RT_REASON_MAX 192

enum rt_mode {
	RT_MODE_AUTO,
	RT_MODE_DRA,
	RT_MODE_DEVICE_PLUGIN,
};

/* One member as gathered. */
struct rt_found {
	bool known;
	struct rt_pod pod;
	struct rt_chips chips;
	char reason[RT_REASON_MAX]; /* why not known: "pod 1 (x-1): not scheduled" */
};

struct rt_wait {
	const char *namespace_;
	const char *driver;  /* the NPU driver's name in claims */
	enum rt_mode mode;   /* RT_MODE_DRA or RT_MODE_DEVICE_PLUGIN */
	int64_t deadline_ms; /* now_ms() clock */
	int watch_s;         /* the watch window */
	/* Called when the set of members not known changes, with a line. */
	void (*progress)(void *ctx, const char *line);
	void *ctx;
};

/* GETs the pod as a json-c object (the caller puts it). Returns 0 or a
 * negative errno with why. */
int rt_read_pod(struct kube_client *c, const char *ns, const char *name, json_object **ret_pod, char *why,
		size_t why_size);

/* Publishes network (ASCEND_NPU_NETWORK's text) as the annotation
 * RT_NETWORK_ANNOTATION of the pod ns/name whose uid is uid (a pod of that
 * name with another uid is not written). Returns 0 or a negative errno. */
int rt_publish(struct kube_client *c, const char *ns, const char *name, const char *uid, const char *network,
	       char *why, size_t why_size);

/* The group's size as its owner says (Job spec.completions, StatefulSet
 * spec.replicas). Returns 0, -EACCES when not allowed to read it, or
 * another negative errno, with why. */
int rt_owner_size(struct kube_client *c, const char *ns, const struct rt_group *g, uint32_t *ret_size, char *why,
		  size_t why_size);

/* Waits until every index 0..size-1 of the group has a known member, into
 * found[size]. Returns 0; -ETIMEDOUT at the deadline, with why naming the
 * missing members; or another negative errno (a member whose data is wrong:
 * refused at once, never waited out) with why. */
int rt_wait_members(struct kube_client *c, const struct rt_group *g, uint32_t size, const struct rt_wait *w,
		    struct rt_found *found, char *why, size_t why_size);
