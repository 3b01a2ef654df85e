/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/status_writer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/k8s_names.h"
#include "base/log.h"
#include "base/parse.h"

#define BACKOFF_FIRST_MS 1000

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 14695981039346656037ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* Under the lock: whether the writer stored this very apply. */
static bool stored(const struct status_writer *w, uint64_t what, uint64_t body)
{
	for (size_t i = 0; i < w->n_sent; i++)
		if (w->sent[i].what == what && w->sent[i].body == body)
			return true;
	return false;
}

/* Under the lock: remembers a stored apply, replacing the claim's older one. */
static void remember(struct status_writer *w, uint64_t what, uint64_t body)
{
	for (size_t i = 0; i < w->n_sent; i++)
		if (w->sent[i].what == what) {
			w->sent[i].body = body;
			return;
		}
	w->sent[w->next_sent].what = what;
	w->sent[w->next_sent].body = body;
	w->next_sent = (w->next_sent + 1) % STATUS_WRITER_SENT_KEPT;
	if (w->n_sent < STATUS_WRITER_SENT_KEPT)
		w->n_sent++;
}

struct status_apply {
	char path[2 * K8S_DNS_SUBDOMAIN_MAX + 160];
	char what[2 * K8S_DNS_SUBDOMAIN_MAX + 2]; /* "ns/name" */
	char *body;
	uint64_t what_hash, body_hash;
	unsigned tries;
	int64_t due_ms;
};

static void apply_free(struct status_apply *a)
{
	if (a) {
		free(a->body);
		free(a);
	}
}

/* Under the lock: takes the entry at i out of the queue. */
static struct status_apply *take(struct status_writer *w, size_t i)
{
	struct status_apply *a = w->queue[i];
	memmove(w->queue + i, w->queue + i + 1, (w->count - i - 1) * sizeof(w->queue[0]));
	w->count--;
	return a;
}

void status_writer_put(struct status_writer *w, const char *ns, const char *name, const char *body)
{
	if (!w->running)
		return;
	struct status_apply *a = calloc(1, sizeof(*a));
	if (!a || !(a->body = strdup(body)) ||
	    str_printf(a->path, sizeof(a->path),
		       "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s/status?fieldManager=%s&force=true", ns,
		       name, w->driver) < 0 ||
	    str_printf(a->what, sizeof(a->what), "%s/%s", ns, name) < 0) {
		apply_free(a);
		log_error("cannot queue the status of claim %s/%s: out of memory", ns, name);
		return;
	}
	a->due_ms = now_ms();
	a->what_hash = fnv1a(a->what);
	a->body_hash = fnv1a(a->body);
	struct status_apply *dropped = NULL;
	pthread_mutex_lock(&w->lock);
	if (stored(w, a->what_hash, a->body_hash)) {
		w->skipped++;
		pthread_mutex_unlock(&w->lock);
		apply_free(a);
		return;
	}
	for (size_t i = 0; i < w->count; i++)
		if (strcmp(w->queue[i]->what, a->what) == 0) {
			apply_free(take(w, i));
			break;
		}
	if (w->count == STATUS_WRITER_MAX) {
		dropped = take(w, 0);
		w->dropped++;
	}
	w->queue[w->count++] = a;
	pthread_cond_signal(&w->changed);
	pthread_mutex_unlock(&w->lock);
	if (dropped)
		log_warn("claim status queue full (%d): the status of claim %s is not written", STATUS_WRITER_MAX,
			 dropped->what);
	apply_free(dropped);
}

/* Sends a; 0 when it is done with (written, or gone), -EAGAIN to retry,
 * another negative errno to drop it; cause says why. */
static int send_apply(struct status_writer *w, const struct status_apply *a, char *cause, size_t cause_size)
{
	struct kube_response res = { 0 };
	const struct kube_request_limits limits = { .deadline_ms = now_ms() + STATUS_WRITER_TIMEOUT_MS,
						    .abort_fd = -1 };
	int r = w->api->client_request(w->client, "APPLY", a->path, a->body, strlen(a->body), &limits, &res);
	if (r < 0) {
		snprintf(cause, cause_size, "%s", res.cause);
		return r == -ECANCELED ? r : -EAGAIN;
	}
	char message[160];
	w->api->status_message(res.body, res.len, message, sizeof(message));
	if (res.status == 200 || res.status == 201)
		r = 0;
	else if (res.status == 404 || res.status == 409)
		r = 0; /* the claim went, or was made anew under its name */
	else if (res.status == 401 || res.status == 403)
		r = -EACCES;
	else if (res.status == 422 || res.status == 400)
		r = -EINVAL;
	else
		r = -EAGAIN;
	if (r < 0 || res.status != 200)
		snprintf(cause, cause_size, "HTTP %ld%s%s", res.status, message[0] ? ": " : "", message);
	w->api->response_free(&res);
	return r;
}

/* Under the lock: the index of the entry due first. */
static size_t first_due(const struct status_writer *w)
{
	size_t best = 0;
	for (size_t i = 1; i < w->count; i++)
		if (w->queue[i]->due_ms < w->queue[best]->due_ms)
			best = i;
	return best;
}

static void report(struct status_writer *w, const struct status_apply *a, int r, const char *cause)
{
	log_debug("status of claim %s: %s", a->what, r == 0 && !cause[0] ? "written" : cause);
	if (r == 0) {
		w->written++;
		if (w->last_cause[0])
			log_info("writing claims' status works again (claim %s)", a->what);
		w->last_cause[0] = '\0';
		return;
	}
	if (r == -EAGAIN && a->tries < STATUS_WRITER_TRIES)
		return;
	w->failed++;
	if (strcmp(cause, w->last_cause) == 0)
		return;
	snprintf(w->last_cause, sizeof(w->last_cause), "%s", cause);
	if (r == -EACCES)
		log_error("cannot write the status of claim %s: %s; the driver's ClusterRole needs patch on "
			  "resourceclaims/status and associated-node:patch on resourceclaims/driver",
			  a->what, cause);
	else
		log_error("cannot write the status of claim %s: %s; giving up on it", a->what, cause);
}

static void *run(void *arg)
{
	struct status_writer *w = arg;
	pthread_mutex_lock(&w->lock);
	while (!w->stopping) {
		if (w->count == 0) {
			pthread_cond_wait(&w->changed, &w->lock);
			continue;
		}
		size_t i = first_due(w);
		int64_t wait_ms = w->queue[i]->due_ms - now_ms();
		if (wait_ms > 0) {
			struct timespec until;
			clock_gettime(CLOCK_MONOTONIC, &until);
			until.tv_sec += wait_ms / 1000;
			until.tv_nsec += (wait_ms % 1000) * 1000000;
			if (until.tv_nsec >= 1000000000) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&w->changed, &w->lock, &until);
			continue;
		}
		struct status_apply *a = take(w, i);
		pthread_mutex_unlock(&w->lock);
		char cause[256] = "";
		a->tries++;
		int r = send_apply(w, a, cause, sizeof(cause));
		pthread_mutex_lock(&w->lock);
		if (r == -ECANCELED || w->stopping) {
			apply_free(a);
			break;
		}
		report(w, a, r, cause);
		if (r == 0)
			remember(w, a->what_hash, a->body_hash);
		bool again = r == -EAGAIN && a->tries < STATUS_WRITER_TRIES && w->count < STATUS_WRITER_MAX;
		bool newer = false;
		for (size_t k = 0; k < w->count && !newer; k++)
			newer = strcmp(w->queue[k]->what, a->what) == 0;
		if (again && !newer) {
			a->due_ms = now_ms() + ((int64_t)BACKOFF_FIRST_MS << (a->tries - 1));
			w->queue[w->count++] = a;
		} else {
			apply_free(a);
		}
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int status_writer_start(struct status_writer *w, const struct kube_module_api *api, struct kube_client *client,
			const char *driver)
{
	*w = (struct status_writer){ .api = api, .client = client };
	if (str_copy(w->driver, sizeof(w->driver), driver) < 0)
		return -EINVAL;
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->changed, &attr);
	pthread_condattr_destroy(&attr);
	int r = -pthread_create(&w->thread, NULL, run, w);
	if (r < 0) {
		pthread_cond_destroy(&w->changed);
		pthread_mutex_destroy(&w->lock);
		return r;
	}
	w->running = true;
	return 0;
}

void status_writer_stop(struct status_writer *w)
{
	if (!w->running)
		return;
	pthread_mutex_lock(&w->lock);
	w->stopping = true;
	pthread_cond_signal(&w->changed);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	for (size_t i = 0; i < w->count; i++)
		apply_free(w->queue[i]);
	w->count = 0;
	w->running = false;
	pthread_cond_destroy(&w->changed);
	pthread_mutex_destroy(&w->lock);
}
