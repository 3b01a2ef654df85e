/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/carver.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/parse.h"
#include "base/wait.h"
#include "npu/dcmi.h"

enum carve_op { CARVE_CREATE, CARVE_DESTROY };

/* One create or destroy: the caller's until it gives up waiting, then the
 * loop's to free when the call ends. */
struct carve_req {
	struct carve_req *next;
	enum carve_op op;
	uint32_t phy, vnpu_id;
	char template_name[NPU_VNPU_TEMPLATE_MAX];
	int64_t deadline_ms, started_ms;
	bool done, abandoned;
	int result;
	char why[256];
};

struct carver {
	struct carver_options o;
	struct loop_async *wake, *returned;
	struct loop_timer *retry, *overdue;
	pthread_mutex_t lock;
	pthread_cond_t finished;
	struct carve_req *head, *tail; /* queued, under lock */
	bool stopping;                 /* under lock */
	struct carve_req *running;     /* the loop's */
	/* A create was given up: DCMI may have made its vNPU since, which the
	 * inventory lists only once it looked again. */
	bool unsure;
};

static const char *call_name(enum carve_op op)
{
	return op == CARVE_CREATE ? "dcmi_create_vdevice" : "dcmi_set_destroy_vdevice";
}

/* Hands req's outcome to its caller, or frees it when the caller left. */
static void finish(struct carver *c, struct carve_req *req, int result, const char *why)
{
	pthread_mutex_lock(&c->lock);
	req->result = result;
	snprintf(req->why, sizeof(req->why), "%s", why);
	req->done = true;
	bool orphan = req->abandoned;
	pthread_cond_broadcast(&c->finished);
	pthread_mutex_unlock(&c->lock);
	if (orphan)
		free(req);
}

static struct carve_req *pop(struct carver *c)
{
	pthread_mutex_lock(&c->lock);
	struct carve_req *req = c->head;
	if (req) {
		c->head = req->next;
		if (!c->head)
			c->tail = NULL;
	}
	pthread_mutex_unlock(&c->lock);
	return req;
}

static void push_front(struct carver *c, struct carve_req *req)
{
	pthread_mutex_lock(&c->lock);
	req->next = c->head;
	c->head = req;
	if (!c->tail)
		c->tail = req;
	pthread_mutex_unlock(&c->lock);
}

/* The template of vNPU id as the inventory lists it, into buf ("" for none
 * known); false when it lists no such vNPU. */
static bool listed(struct carver *c, uint32_t id, char *buf, size_t size)
{
	char name[NPU_DEVICE_ID_MAX];
	snprintf(name, sizeof(name), "vnpu-%" PRIu32, id);
	struct npu_snapshot *snap = inventory_snapshot(c->o.inventory);
	const struct npu_device *v = snap ? npu_snapshot_find(snap, name) : NULL;
	if (v)
		snprintf(buf, size, "%s", v->vnpu.template_name);
	npu_snapshot_unref(snap);
	return v != NULL;
}

/* After DCMI refused a create: whether the inventory, looked at again,
 * lists the vNPU as asked for (an earlier create of it that was given up
 * finished in between). */
static bool made_meanwhile(struct carver *c, const struct carve_req *req)
{
	char template_name[NPU_VNPU_TEMPLATE_MAX];
	c->o.refresh(c->o.ctx);
	return listed(c, req->vnpu_id, template_name, sizeof(template_name)) &&
	       (!template_name[0] || strcmp(template_name, req->template_name) == 0);
}

/* The worker thread, under the vendor guard's lock: only wake the loop. */
static void on_done(void *ctx)
{
	loop_async_send(((struct carver *)ctx)->returned);
}

static void on_wake(void *ctx);

/* The call under way returned (or is given up): its outcome to its caller. */
static void complete(struct carver *c, bool give_up)
{
	struct carve_req *req = c->running;
	struct dcmi_lib *lib = inventory_dcmi(c->o.inventory);
	struct dcmi_carve_outcome out;
	char why[256];
	if (!req || !lib)
		return;
	int r = dcmi_vnpu_take(lib, give_up, &out);
	if (r == -EINPROGRESS)
		return;
	c->running = NULL;
	loop_timer_disarm(c->overdue);
	long long took = (long long)(now_ms() - req->started_ms);
	char chip[24], vnpu[24];
	snprintf(chip, sizeof(chip), "npu-%" PRIu32, req->phy);
	snprintf(vnpu, sizeof(vnpu), "vnpu-%" PRIu32, req->vnpu_id);
	const struct log_fields about = { .device = chip,
					  .more = { LOG_STR("vnpu", vnpu), LOG_STR("template", req->template_name),
						    LOG_NUM("took_ms", took) } };
	if (r == -ETIMEDOUT) {
		snprintf(why, sizeof(why), "%s for vNPU %" PRIu32 " on chip npu-%" PRIu32 " did not return in time",
			 call_name(req->op), req->vnpu_id, req->phy);
		c->unsure |= req->op == CARVE_CREATE;
	} else if (r < 0) {
		snprintf(why, sizeof(why), "cannot take the outcome of %s: %s", call_name(req->op), strerror(-r));
	} else if (out.result < 0 && req->op == CARVE_DESTROY && !listed(c, req->vnpu_id, why, sizeof(why))) {
		/* DCMI refuses an id it does not know: nothing to destroy. */
		r = -ENOENT;
		snprintf(why, sizeof(why), "vNPU %" PRIu32 " does not exist", req->vnpu_id);
	} else if (out.result < 0 && req->op == CARVE_CREATE && made_meanwhile(c, req)) {
		/* A create given up earlier finished in DCMI just before this
		 * one: its vNPU is the one asked for. */
		r = 0;
	} else if (out.result < 0) {
		r = out.result;
		snprintf(why, sizeof(why), "%s for vNPU %" PRIu32 " (%s) on chip npu-%" PRIu32 " failed with DCMI code %d",
			 call_name(req->op), req->vnpu_id, req->op == CARVE_CREATE ? req->template_name : "destroy",
			 req->phy, out.error.code);
	} else {
		why[0] = '\0';
	}
	if (r == 0)
		log_event(LOG_LEVEL_INFO, req->op == CARVE_CREATE ? LOG_EVENT_VNPU_CREATED : LOG_EVENT_VNPU_DESTROYED,
			  &about, "%s vNPU %" PRIu32 " (%s) on %s for a claim in %lldms",
			  req->op == CARVE_CREATE ? "created" : "destroyed", req->vnpu_id, req->template_name, chip, took);
	else if (r != -ENOENT)
		log_event(LOG_LEVEL_WARN, LOG_EVENT_VNPU_FAILED, &about, "%s", why);
	finish(c, req, r, why);
	c->o.refresh(c->o.ctx);
	on_wake(c);
}

static void on_returned(void *ctx)
{
	complete(ctx, false);
}

static void on_overdue(void *ctx)
{
	complete(ctx, true);
}

static void on_retry(void *ctx)
{
	on_wake(ctx);
}

/* The chip phy as the inventory has it, into *ret; false when it has none. */
static bool chip_of(struct carver *c, uint32_t phy, struct npu_chip *ret)
{
	char name[NPU_DEVICE_ID_MAX];
	snprintf(name, sizeof(name), "npu-%" PRIu32, phy);
	struct npu_snapshot *snap = inventory_snapshot(c->o.inventory);
	const struct npu_device *d = snap ? npu_snapshot_find(snap, name) : NULL;
	if (d)
		*ret = d->chip;
	npu_snapshot_unref(snap);
	return d != NULL;
}

/* The loop: starts the next request, unless a call is under way. */
static void on_wake(void *ctx)
{
	struct carver *c = ctx;
	struct carve_req *req;
	while (!c->running && (req = pop(c))) {
		struct dcmi_lib *lib = inventory_dcmi(c->o.inventory);
		struct npu_chip chip;
		char why[160];
		if (!lib || !dcmi_can_carve(lib)) {
			finish(c, req, -EOPNOTSUPP,
			       !lib ? "DCMI is not in use here, so no vNPU can be created"
				    : "this driver's DCMI lacks dcmi_create_vdevice or dcmi_set_destroy_vdevice");
			continue;
		}
		if (!chip_of(c, req->phy, &chip)) {
			snprintf(why, sizeof(why), "chip npu-%" PRIu32 " is not in the inventory", req->phy);
			finish(c, req, -ENODEV, why);
			continue;
		}
		/* A destroy's lines name the template DCMI has for the vNPU. */
		char template_name[NPU_VNPU_TEMPLATE_MAX];
		if (req->op == CARVE_DESTROY && listed(c, req->vnpu_id, template_name, sizeof(template_name)))
			memcpy(req->template_name, template_name, sizeof(template_name));
		/* A create given up earlier that DCMI finished after all: there
		 * is nothing to make, and asking DCMI again would wait as long. */
		if (req->op == CARVE_CREATE && c->unsure && made_meanwhile(c, req)) {
			finish(c, req, 0, "");
			continue;
		}
		int r = req->op == CARVE_CREATE
				? dcmi_vnpu_create_start(lib, &chip, req->template_name, req->vnpu_id, on_done, c)
				: dcmi_vnpu_destroy_start(lib, &chip, req->vnpu_id, on_done, c);
		if (r == -EBUSY) {
			/* Another background call (a reset) has the library. */
			push_front(c, req);
			loop_timer_arm(c->retry, CARVER_RETRY_MS, 0);
			return;
		}
		if (r < 0) {
			snprintf(why, sizeof(why), "cannot start %s: %s", call_name(req->op), strerror(-r));
			finish(c, req, r, why);
			continue;
		}
		req->started_ms = now_ms();
		c->running = req;
		c->unsure = false;
		char chip_id[24], vnpu[24];
		snprintf(chip_id, sizeof(chip_id), "npu-%" PRIu32, req->phy);
		snprintf(vnpu, sizeof(vnpu), "vnpu-%" PRIu32, req->vnpu_id);
		const struct log_fields about = { .device = chip_id,
						  .more = { LOG_STR("op", req->op == CARVE_CREATE ? "create" : "destroy"),
							    LOG_STR("vnpu", vnpu), LOG_STR("template", req->template_name) } };
		log_event(LOG_LEVEL_DEBUG, LOG_EVENT_VNPU_CALL, &about, "%s for vNPU %" PRIu32 " on %s started",
			  call_name(req->op), req->vnpu_id, chip_id);
		int64_t left = req->deadline_ms - req->started_ms;
		loop_timer_arm(c->overdue, left > 0 ? left : 1, 0);
	}
}

/* Any thread: queues a copy of what and waits for its outcome until its
 * deadline. */
static int submit(struct carver *c, const struct carve_req *what, char *why, size_t why_size)
{
	struct carve_req *req = malloc(sizeof(*req));
	if (!req)
		return -ENOMEM;
	*req = *what;
	pthread_mutex_lock(&c->lock);
	if (c->stopping) {
		pthread_mutex_unlock(&c->lock);
		free(req);
		snprintf(why, why_size, "the driver is stopping");
		return -ECANCELED;
	}
	if (c->tail)
		c->tail->next = req;
	else
		c->head = req;
	c->tail = req;
	pthread_mutex_unlock(&c->lock);
	loop_async_send(c->wake);

	pthread_mutex_lock(&c->lock);
	while (!req->done) {
		int64_t left = req->deadline_ms - now_ms();
		struct timespec until = deadline_after_ms(left > 0 ? left : 0);
		if (left <= 0 || pthread_cond_timedwait(&c->finished, &c->lock, &until) == ETIMEDOUT)
			if (!req->done)
				break;
	}
	int r;
	if (req->done) {
		r = req->result;
		snprintf(why, why_size, "%s", req->why);
		pthread_mutex_unlock(&c->lock);
		free(req);
		return r;
	}
	/* The loop frees it when its call ends, which may be as soon as the
	 * lock is let go: nothing of it is read after that. */
	snprintf(why, why_size, "%s for vNPU %" PRIu32 " on chip npu-%" PRIu32 " did not return by the deadline",
		 call_name(req->op), req->vnpu_id, req->phy);
	req->abandoned = true;
	pthread_mutex_unlock(&c->lock);
	return -ETIMEDOUT;
}

static int carve_create(void *ctx, uint32_t phy, const char *template_name, uint32_t vnpu_id, int64_t deadline_ms,
			char *why, size_t why_size)
{
	struct carve_req req = { .op = CARVE_CREATE, .phy = phy, .vnpu_id = vnpu_id, .deadline_ms = deadline_ms };
	if (str_copy(req.template_name, sizeof(req.template_name), template_name) < 0) {
		snprintf(why, why_size, "template name %.32s is too long", template_name);
		return -EINVAL;
	}
	return submit(ctx, &req, why, why_size);
}

static int carve_destroy(void *ctx, uint32_t phy, uint32_t vnpu_id, int64_t deadline_ms, char *why, size_t why_size)
{
	const struct carve_req req = { .op = CARVE_DESTROY, .phy = phy, .vnpu_id = vnpu_id, .deadline_ms = deadline_ms };
	return submit(ctx, &req, why, why_size);
}

struct dra_carver carver_for_driver(struct carver *c)
{
	return (struct dra_carver){ .create = carve_create, .destroy = carve_destroy, .ctx = c };
}

int carver_new(const struct carver_options *o, struct carver **ret_carver)
{
	struct carver *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->o = *o;
	pthread_mutex_init(&c->lock, NULL);
	cond_init_monotonic(&c->finished);
	int r;
	if ((r = loop_async_new(o->loop, on_wake, c, &c->wake)) < 0 ||
	    (r = loop_async_new(o->loop, on_returned, c, &c->returned)) < 0 ||
	    (r = loop_timer_new(o->loop, on_retry, c, &c->retry)) < 0 ||
	    (r = loop_timer_new(o->loop, on_overdue, c, &c->overdue)) < 0) {
		carver_free(c);
		return r;
	}
	*ret_carver = c;
	return 0;
}

void carver_stop(struct carver *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->stopping = true;
	pthread_mutex_unlock(&c->lock);
	struct carve_req *req;
	while ((req = pop(c)))
		finish(c, req, -ECANCELED, "the driver is stopping");
	if (c->running) {
		struct dcmi_lib *lib = inventory_dcmi(c->o.inventory);
		struct dcmi_carve_outcome ignored;
		if (lib)
			(void)dcmi_vnpu_take(lib, true, &ignored);
		finish(c, c->running, -ECANCELED, "the driver is stopping");
		c->running = NULL;
		loop_timer_disarm(c->overdue);
	}
}

void carver_free(struct carver *c)
{
	if (!c)
		return;
	carver_stop(c);
	loop_async_free(c->wake);
	loop_async_free(c->returned);
	loop_timer_free(c->retry);
	loop_timer_free(c->overdue);
	pthread_cond_destroy(&c->finished);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
