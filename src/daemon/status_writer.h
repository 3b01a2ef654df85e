/* SPDX-License-Identifier: Apache-2.0 */
/* Writes what the DRA driver tells the API server of the claims it prepared
 * (dra/claim_status.h) from a thread of its own, so that a prepare never
 * waits for it: a bounded queue of server-side applies, each sent to the
 * claim's status subresource under the driver's name as field manager,
 * again with backoff (1 s doubling, STATUS_WRITER_TRIES sends in all) when
 * the server fails or does not answer. A claim gone (404) or made anew (the
 * apply's uid differs, 409) is dropped quietly; a refusal (401, 403) is the
 * RBAC's to fix. Each cause of failure is logged once, and the first success
 * after it. A claim queued again replaces its older apply; an apply this
 * writer stored already (the same claim and body: a claim prepared again
 * after an unprepare, which leaves the status) is not sent again, of the
 * last STATUS_WRITER_SENT_KEPT stored. Part of the top level: it logs. */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/k8s_names.h"
#include "kube/module.h"

/* Applies waiting at once; one more drops the oldest (logged, counted). */
#define STATUS_WRITER_MAX 128
#define STATUS_WRITER_TRIES 5
/* Each send, connection included. */
#define STATUS_WRITER_TIMEOUT_MS 10000
/* Applies remembered as stored, by claim and a hash of the body. */
#define STATUS_WRITER_SENT_KEPT 256

struct status_apply;

struct status_writer {
	const struct kube_module_api *api;
	struct kube_client *client;
	char driver[K8S_DNS_SUBDOMAIN_MAX + 1]; /* the field manager */
	pthread_t thread;
	bool running;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	bool stopping;
	struct status_apply *queue[STATUS_WRITER_MAX]; /* oldest first */
	size_t count;
	uint64_t written, dropped, failed, skipped;
	struct {
		uint64_t what, body; /* FNV-1a hashes of "ns/name" and the body */
	} sent[STATUS_WRITER_SENT_KEPT];
	size_t n_sent, next_sent; /* a ring, oldest overwritten */
	char last_cause[256]; /* what was logged last; empty after a success */
};

/* Starts the thread. Returns 0 or a negative errno. */
int status_writer_start(struct status_writer *writer, const struct kube_module_api *api, struct kube_client *client,
			const char *driver);

/* Queues the apply body for claim ns/name; never blocks on the server.
 * Any thread. */
void status_writer_put(struct status_writer *writer, const char *ns, const char *name, const char *body);

/* Stops the thread (requests in flight end with the client's abort, which
 * the caller sends first) and drops what waits. Accepts a writer never
 * started. */
void status_writer_stop(struct status_writer *writer);
