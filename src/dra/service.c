/* SPDX-License-Identifier: Apache-2.0 */
#include "dra/service.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/macro.h"
#include "base/parse.h"
#include "dra.pb-c.h"
#include "dra_api.h"

typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim Claim;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest PrepareRequest;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse PrepareResponse;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse__ClaimsEntry PrepareEntry;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourceResponse PrepareClaim;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Device Device;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesRequest UnprepareRequest;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse UnprepareResponse;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse__ClaimsEntry UnprepareEntry;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourceResponse UnprepareClaim;

#define WHY_MAX 768

/* One claim's answer and what its message points to. */
struct prepared_claim {
	PrepareEntry entry;
	PrepareClaim claim;
	struct dra_prepared *prepared;
	Device devices[DRA_CLAIM_RESULTS_MAX];
	Device *device_ptrs[DRA_CLAIM_RESULTS_MAX];
	char *request_names[DRA_CLAIM_RESULTS_MAX]; /* one per device */
	char cdi_id[DRA_CDI_ID_MAX];
	/* Each device's ids: its own CDI device first (the kubelet shows its
	 * health under it), then the claim's. */
	char result_ids[DRA_CLAIM_RESULTS_MAX][DRA_CDI_RESULT_ID_MAX];
	char *cdi_ids[DRA_CLAIM_RESULTS_MAX][2];
	char why[WHY_MAX];
	bool unread; /* not recorded: a reader reads it */
};

/* A claim reader: a thread, and what gives up the read it makes. */
struct reader {
	struct dra_service *service;
	pthread_t thread;
	int kick_fd; /* an eventfd, written when the call of the read under way is cancelled */
	struct prepare_call *call; /* whose claim it reads now; NULL: none (under the service's lock) */
};

struct dra_service {
	struct dra_driver *driver;
	struct dra_health *health;

	pthread_mutex_t lock;
	pthread_cond_t work; /* a claim was queued, or stopping */
	/* The calls with claims no reader has taken yet, in turn. */
	struct prepare_call *queue_head, *queue_tail;
	struct reader readers[DRA_SERVICE_READERS];
	unsigned n_readers, idle;
	size_t in_flight; /* claims of the calls queued or being read, until freed */
	bool stopping;
};

/* A prepare whose claims are being read. */
struct prepare_call {
	struct dra_service *service;
	struct gs_call *call;
	PrepareRequest *request;
	struct prepared_claim *claims;
	PrepareEntry **entries;
	int64_t deadline_ms;
	atomic_uint refs; /* the work's (until the answer) and call_closed's */
	bool counted;     /* its claims count in the service's in_flight */

	/* Under the service's lock. */
	struct prepare_call *next; /* in the queue */
	bool queued;
	size_t next_claim; /* where to look for the next claim to hand a reader */
	size_t unanswered; /* claims read or waiting to be */
	bool cancelled;
};

static const char *text(const char *s)
{
	return s ? s : "";
}

/* Whether every string of every claim fits the driver's record (struct
 * dra_prepared); if not, reply says which does not. The kubelet matches the
 * answers to its claims by uid, so a claim cannot be answered under a
 * shortened uid: the whole request is refused, its strings never echoed. */
static bool claims_fit(Claim *const *claims, size_t n, struct gs_reply *reply)
{
	if (n > DRA_SERVICE_MAX_CLAIMS) {
		gs_reply_error(reply, GRPC_STATUS_INVALID_ARGUMENT, "%zu claims in one request, at most %d", n,
			       DRA_SERVICE_MAX_CLAIMS);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		const struct {
			const char *what, *value;
			size_t max;
		} fields[] = {
			{ "uid", claims[i]->uid, DRA_UID_MAX - 1 },
			{ "namespace", claims[i]->namespace_, K8S_NAME_MAX },
			{ "name", claims[i]->name, K8S_DNS_SUBDOMAIN_MAX },
		};
		for (size_t f = 0; f < ELEMENTSOF(fields); f++)
			if (fields[f].value && strnlen(fields[f].value, fields[f].max + 1) > fields[f].max) {
				gs_reply_error(reply, GRPC_STATUS_INVALID_ARGUMENT, "claims[%zu].%s is longer than %zu bytes",
					       i, fields[f].what, fields[f].max);
				return false;
			}
	}
	return true;
}

static void claim_init(struct prepared_claim *out, const Claim *c)
{
	k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__claims_entry__init(&out->entry);
	k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resource_response__init(&out->claim);
	out->entry.key = (char *)(uintptr_t)text(c->uid);
	out->entry.value = &out->claim;
}

/* The claim's answer from the driver's outcome r (out->prepared on 0). */
static void claim_settle(struct dra_driver *d, const Claim *c, struct prepared_claim *out, int r)
{
	if (r == 0 && dra_driver_cdi_id(d, text(c->uid), out->cdi_id, sizeof(out->cdi_id)) < 0)
		r = -ENAMETOOLONG; /* the uid passed the driver's bound: cannot happen */
	if (r < 0) {
		if (!out->why[0])
			snprintf(out->why, sizeof(out->why), "%s", strerror(-r));
		out->claim.error = out->why;
		return;
	}
	/* Every device of the claim is in the claim's CDI device, with the
	 * environment; each also has one of its own, its node alone. */
	const struct dra_prepared *p = out->prepared;
	for (size_t i = 0; i < p->n_devices; i++)
		if (dra_driver_cdi_result_id(d, text(c->uid), i, p->devices[i].device, out->result_ids[i],
					     sizeof(out->result_ids[i])) < 0) {
			snprintf(out->why, sizeof(out->why), "the CDI id of device %s is too long", p->devices[i].device);
			out->claim.error = out->why;
			return;
		}
	for (size_t i = 0; i < p->n_devices; i++) {
		Device *dev = &out->devices[i];
		k8s__io__kubelet__pkg__apis__dra__v1__device__init(dev);
		out->request_names[i] = (char *)(uintptr_t)p->devices[i].request;
		dev->n_request_names = 1;
		dev->request_names = &out->request_names[i];
		dev->pool_name = (char *)(uintptr_t)p->devices[i].pool;
		dev->device_name = (char *)(uintptr_t)p->devices[i].device;
		out->cdi_ids[i][0] = out->result_ids[i];
		out->cdi_ids[i][1] = out->cdi_id;
		dev->n_cdi_device_ids = 2;
		dev->cdi_device_ids = out->cdi_ids[i];
		out->device_ptrs[i] = dev;
	}
	out->claim.n_devices = p->n_devices;
	out->claim.devices = out->device_ptrs;
}

/* A claim no reader will read: the call was cancelled or its time is up. */
static void claim_give_up(struct prepare_call *c, size_t i, bool cancelled)
{
	struct prepared_claim *out = &c->claims[i];
	const Claim *claim = c->request->claims[i];
	snprintf(out->why, sizeof(out->why), "ResourceClaim %s/%s not read: %s", text(claim->namespace_),
		 text(claim->name),
		 cancelled ? "the kubelet cancelled the call" : "the call's deadline passed before a reader was free");
	claim_settle(c->service->driver, claim, out, cancelled ? -ECANCELED : -ETIMEDOUT);
}

static void call_put(struct prepare_call *c)
{
	if (atomic_fetch_sub(&c->refs, 1) > 1)
		return;
	if (c->counted) {
		pthread_mutex_lock(&c->service->lock);
		c->service->in_flight -= c->request->n_claims;
		pthread_mutex_unlock(&c->service->lock);
	}
	for (size_t i = 0; i < c->request->n_claims; i++)
		free(c->claims[i].prepared);
	free(c->claims);
	free(c->entries);
	k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__free_unpacked(c->request, NULL);
	free(c);
}

/* Every claim has its answer: the call's. Drops the work's reference. */
static void call_answer(struct prepare_call *c)
{
	struct gs_reply reply = { .status = GRPC_STATUS_OK };
	PrepareResponse resp;
	k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__init(&resp);
	resp.n_claims = c->request->n_claims;
	resp.claims = c->entries;
	gs_reply_message(&reply, &resp.base);
	gs_call_reply(c->call, &reply);
	call_put(c);
}

/* Puts c at the back of the queue; called with the lock. */
static void enqueue_locked(struct dra_service *s, struct prepare_call *c)
{
	c->queued = true;
	if (s->queue_head)
		s->queue_tail->next = c;
	else
		s->queue_head = c;
	s->queue_tail = c;
}

/* The call of the next claim for a reader, and the claim's index: the
 * first call queued, whose turn then passes to the next (NULL: none is
 * queued). A call is queued only while it has a claim left to hand out.
 * Called with the lock. */
static struct prepare_call *take_claim_locked(struct dra_service *s, size_t *ret_index)
{
	struct prepare_call *c = s->queue_head;
	if (!c)
		return NULL;
	while (!c->claims[c->next_claim].unread)
		c->next_claim++;
	*ret_index = c->next_claim++;
	s->queue_head = c->next;
	c->next = NULL;
	c->queued = false;
	while (c->next_claim < c->request->n_claims && !c->claims[c->next_claim].unread)
		c->next_claim++;
	/* More to read: to the back of the queue. */
	if (c->next_claim < c->request->n_claims)
		enqueue_locked(s, c);
	return c;
}

static void drain(int fd)
{
	uint64_t v;
	while (read(fd, &v, sizeof(v)) > 0) {
	}
}

/* One claim of c, read within the call's deadline; given up at once
 * once the call is cancelled. */
static void read_one(struct reader *rd, struct prepare_call *c, size_t i, bool cancelled)
{
	struct prepared_claim *out = &c->claims[i];
	const Claim *claim = c->request->claims[i];
	if (cancelled || now_ms() >= c->deadline_ms) {
		claim_give_up(c, i, cancelled);
		return;
	}
	const struct dra_read_limits limits = { .deadline_ms = c->deadline_ms, .abort_fd = rd->kick_fd };
	int r = dra_driver_prepare(c->service->driver, text(claim->namespace_), text(claim->uid), text(claim->name),
				   &limits, &out->prepared, out->why, sizeof(out->why));
	claim_settle(c->service->driver, claim, out, r);
}

static void *reader_thread(void *arg)
{
	struct reader *rd = arg;
	struct dra_service *s = rd->service;
	pthread_mutex_lock(&s->lock);
	for (;;) {
		size_t i;
		struct prepare_call *c;
		while (!(c = take_claim_locked(s, &i)) && !s->stopping) {
			s->idle++;
			pthread_cond_wait(&s->work, &s->lock);
			s->idle--;
		}
		if (!c)
			break;
		/* Cancelling the call from here on kicks this reader. */
		rd->call = c;
		bool cancelled = c->cancelled;
		pthread_mutex_unlock(&s->lock);
		read_one(rd, c, i, cancelled);
		pthread_mutex_lock(&s->lock);
		rd->call = NULL;
		bool last = --c->unanswered == 0;
		pthread_mutex_unlock(&s->lock);
		/* Nobody kicks it now: a kick for this call is spent. */
		drain(rd->kick_fd);
		if (last)
			call_answer(c);
		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* Readers for n claims more, as far as the bound allows; called with the
 * lock. Returns how many readers there are. */
static unsigned add_readers_locked(struct dra_service *s, size_t n)
{
	while (s->idle < n && s->n_readers < DRA_SERVICE_READERS) {
		struct reader *rd = &s->readers[s->n_readers];
		*rd = (struct reader){ .service = s, .kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK) };
		if (rd->kick_fd < 0)
			break;
		if (pthread_create(&rd->thread, NULL, reader_thread, rd) != 0) {
			close(rd->kick_fd);
			break;
		}
		s->n_readers++;
		n--;
	}
	return s->n_readers;
}

/* Hands the unread claims of c to the readers. Returns 0, or -EBUSY when
 * DRA_SERVICE_CLAIMS_IN_FLIGHT would be passed, -EAGAIN when there is no
 * reader and none could be started, with why. */
static int call_queue(struct dra_service *s, struct prepare_call *c, char *why, size_t why_size)
{
	int r = 0;
	pthread_mutex_lock(&s->lock);
	if (s->in_flight + c->request->n_claims > DRA_SERVICE_CLAIMS_IN_FLIGHT) {
		snprintf(why, why_size, "not read: %zu claims wait for the API server already, at most %d",
			 s->in_flight, DRA_SERVICE_CLAIMS_IN_FLIGHT);
		r = -EBUSY;
	} else if (add_readers_locked(s, c->unanswered) == 0) {
		snprintf(why, why_size, "not read: cannot start a thread to read it");
		r = -EAGAIN;
	} else {
		s->in_flight += c->request->n_claims;
		c->counted = true;
		enqueue_locked(s, c);
		pthread_cond_broadcast(&s->work);
	}
	pthread_mutex_unlock(&s->lock);
	return r;
}

static void *prepare(void *ctx, struct gs_call *call, const uint8_t *req, size_t len)
{
	struct dra_service *s = ctx;
	struct gs_reply reply = { .status = GRPC_STATUS_OK };
	PrepareRequest *r = k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__unpack(NULL, len, req);
	struct prepare_call *c = NULL;
	if (!r) {
		gs_reply_error(&reply, GRPC_STATUS_INVALID_ARGUMENT, "malformed NodePrepareResourcesRequest");
		goto refuse;
	}
	if (!claims_fit(r->claims, r->n_claims, &reply))
		goto refuse;
	c = calloc(1, sizeof(*c));
	if (!c || !(c->claims = calloc(r->n_claims ? r->n_claims : 1, sizeof(*c->claims))) ||
	    !(c->entries = calloc(r->n_claims ? r->n_claims : 1, sizeof(*c->entries)))) {
		gs_reply_error(&reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
		goto refuse;
	}
	/* One deadline for the call, whatever the number of its claims. */
	int64_t timeout_ms = gs_call_timeout_ms(call);
	c->deadline_ms = now_ms() + (timeout_ms < DRA_SERVICE_PREPARE_TIMEOUT_MS ? timeout_ms
									 : DRA_SERVICE_PREPARE_TIMEOUT_MS);
	c->service = s;
	c->call = call;
	c->request = r;
	atomic_init(&c->refs, 2);
	for (size_t i = 0; i < r->n_claims; i++) {
		struct prepared_claim *out = &c->claims[i];
		const Claim *claim = r->claims[i];
		claim_init(out, claim);
		c->entries[i] = &out->entry;
		int e = dra_driver_prepare_recorded(s->driver, text(claim->namespace_), text(claim->uid),
						    text(claim->name), &out->prepared, out->why, sizeof(out->why));
		if (e == -ENODATA) {
			out->unread = true;
			c->unanswered++;
		} else {
			claim_settle(s->driver, claim, out, e);
		}
	}
	/* Once queued, the call is the readers' to answer: it is answered here
	 * only when it was not queued. */
	char why[128];
	bool reads = c->unanswered > 0;
	int e = reads ? call_queue(s, c, why, sizeof(why)) : 0;
	if (!reads || e < 0) {
		for (size_t i = 0; e < 0 && i < r->n_claims; i++)
			if (c->claims[i].unread) {
				snprintf(c->claims[i].why, sizeof(c->claims[i].why), "ResourceClaim %.253s/%.253s %s",
					 text(r->claims[i]->namespace_), text(r->claims[i]->name), why);
				claim_settle(s->driver, r->claims[i], &c->claims[i], e);
			}
		call_answer(c);
	}
	return c;
refuse:
	if (c) {
		free(c->claims);
		free(c->entries);
		free(c);
	}
	if (r)
		k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__free_unpacked(r, NULL);
	gs_call_reply(call, &reply);
	return NULL;
}

/* The call is over for the kubelet. Cancelled: the reads under way are
 * kicked, the claims no reader took fail now. */
static void prepare_closed(void *ctx, void *data, bool cancelled)
{
	struct dra_service *s = ctx;
	struct prepare_call *c = data;
	if (!c)
		return;
	bool last = false;
	if (cancelled) {
		pthread_mutex_lock(&s->lock);
		c->cancelled = true;
		for (unsigned i = 0; i < s->n_readers; i++) {
			uint64_t one = 1;
			if (s->readers[i].call == c && write(s->readers[i].kick_fd, &one, sizeof(one)) != sizeof(one))
				abort(); /* an eventfd write of 1 cannot fail short of overflow */
		}
		if (c->queued) {
			struct prepare_call **p = &s->queue_head, *prev = NULL;
			while (*p != c) {
				prev = *p;
				p = &(*p)->next;
			}
			*p = c->next;
			if (s->queue_tail == c)
				s->queue_tail = prev;
			c->queued = false;
			for (size_t i = c->next_claim; i < c->request->n_claims; i++)
				if (c->claims[i].unread) {
					claim_give_up(c, i, true);
					c->unanswered--;
				}
			c->next_claim = c->request->n_claims;
			last = c->unanswered == 0;
		}
		pthread_mutex_unlock(&s->lock);
	}
	if (last)
		call_answer(c);
	call_put(c);
}

struct unprepared_claim {
	UnprepareEntry entry;
	UnprepareClaim claim;
	char why[WHY_MAX];
};

static void unprepare(void *ctx, const uint8_t *req, size_t len, struct gs_reply *reply)
{
	UnprepareRequest *r =
		k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__unpack(NULL, len, req);
	if (!r) {
		gs_reply_error(reply, GRPC_STATUS_INVALID_ARGUMENT, "malformed NodeUnprepareResourcesRequest");
		return;
	}
	if (!claims_fit(r->claims, r->n_claims, reply))
		goto out;
	struct unprepared_claim *claims = calloc(r->n_claims ? r->n_claims : 1, sizeof(*claims));
	UnprepareEntry **entries = calloc(r->n_claims ? r->n_claims : 1, sizeof(*entries));
	if (claims && entries) {
		for (size_t i = 0; i < r->n_claims; i++) {
			struct unprepared_claim *u = &claims[i];
			k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__claims_entry__init(
				&u->entry);
			k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resource_response__init(&u->claim);
			u->entry.key = (char *)(uintptr_t)text(r->claims[i]->uid);
			u->entry.value = &u->claim;
			int e = dra_driver_unprepare(((struct dra_service *)ctx)->driver, text(r->claims[i]->uid), u->why,
						     sizeof(u->why));
			if (e < 0) {
				if (!u->why[0])
					snprintf(u->why, sizeof(u->why), "%s", strerror(-e));
				u->claim.error = u->why;
			}
			entries[i] = &u->entry;
		}
		UnprepareResponse resp;
		k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__init(&resp);
		resp.n_claims = r->n_claims;
		resp.claims = entries;
		gs_reply_message(reply, &resp.base);
	} else {
		gs_reply_error(reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
	}
	free(claims);
	free(entries);
out:
	k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__free_unpacked(r, NULL);
}

static grpc_status_code health_open(void *ctx, struct gs_stream *stream, const uint8_t *req, size_t len,
				    struct gs_reply *reply)
{
	return dra_health_open(((struct dra_service *)ctx)->health, stream, req, len, reply);
}

static void health_closed(void *ctx, struct gs_stream *stream)
{
	dra_health_closed(((struct dra_service *)ctx)->health, stream);
}

static const struct gs_method methods[] = {
	{ .path = DRA_METHOD_V1_PREPARE, .deferred = prepare, .call_closed = prepare_closed },
	{ .path = DRA_METHOD_V1_UNPREPARE, .unary = unprepare },
	{ .path = DRA_METHOD_V1BETA1_PREPARE, .deferred = prepare, .call_closed = prepare_closed },
	{ .path = DRA_METHOD_V1BETA1_UNPREPARE, .unary = unprepare },
	{ .path = DRA_METHOD_HEALTH_V1_WATCH, .stream_open = health_open, .stream_closed = health_closed },
	{ .path = DRA_METHOD_HEALTH_V1ALPHA1_WATCH, .stream_open = health_open, .stream_closed = health_closed },
};

const struct gs_method *dra_service_methods(size_t *ret_count)
{
	*ret_count = ELEMENTSOF(methods);
	return methods;
}

int dra_service_new(struct dra_driver *driver, struct dra_health *health, struct dra_service **ret_service)
{
	struct dra_service *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->driver = driver;
	s->health = health;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->work, NULL);
	*ret_service = s;
	return 0;
}

void dra_service_free(struct dra_service *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	pthread_cond_broadcast(&s->work);
	pthread_mutex_unlock(&s->lock);
	for (unsigned i = 0; i < s->n_readers; i++) {
		pthread_join(s->readers[i].thread, NULL);
		close(s->readers[i].kick_fd);
	}
	pthread_cond_destroy(&s->work);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
