/* SPDX-License-Identifier: Apache-2.0 */
/* The DCMI simulator: the C ABI of Huawei's libdcmi.so (npu/dcmi_abi.h),
 * answered from a state file instead of hardware, so the plugin's real
 * dlopen-based DCMI code runs in tests and demos. The file named by
 * ASCEND_FAKE_DCMI_STATE (or, without it, fake-dcmi.state next to the library
 * itself) is parsed by state.c; a watcher thread follows it with inotify and
 * turns health changes into fault events. The format and the behaviour are
 * documented in docs/fake-dcmi.md.
 *
 * Concurrency: every API call and every reload runs under one mutex. Each
 * call first takes in pending inotify notifications, so it sees any change
 * completed before it started. Event handlers are resolved when a change is
 * seen, queued, and called by the watcher thread with the mutex released, so
 * a handler may call back into DCMI. Only dcmi_* symbols are exported (the
 * build uses -fvisibility=hidden). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/file.h"
#include "base/parse.h"
#include "state.h"
#include "vdev.h"

#pragma GCC visibility push(default)
#include "npu/dcmi_abi.h"
#pragma GCC visibility pop

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Filter flags of struct dcmi_event_filter, as the vendor header defines them. */
#define DCMI_EVENT_FILTER_FLAG_EVENT_ID (1ULL << 0)
#define DCMI_EVENT_FILTER_FLAG_SERVERITY (1ULL << 1)
#define DCMI_EVENT_FILTER_FLAG_NODE_TYPE (1ULL << 2)

/* One subscription per (card, device) plus one for all devices: enough for
 * every chip a state file can hold. */
#define MAX_DEVICE_SUBSCRIPTIONS FAKE_STATE_MAX_CHIPS
/* A reload changes at most 256 chips; the queue absorbs a few reloads while a
 * slow handler runs, and drops (with a warning) beyond that. */
#define EVENT_QUEUE_SIZE 1024
/* How long the library destructor waits for a handler to return. */
#define STOP_TIMEOUT_S 2
/* The state file looked for next to the library without ASCEND_FAKE_DCMI_STATE. */
#define DEFAULT_STATE_NAME "fake-dcmi.state"

struct subscription {
	bool used;
	uint32_t card;
	uint32_t device;
	struct dcmi_event_filter filter;
	dcmi_fault_event_callback handler;
};

/* Handlers are resolved when the change is seen: a subscription made after a
 * change does not receive it, one dropped by `subscribe off` still receives
 * what happened before. At most the all-devices handler and the device's own. */
struct pending_event {
	struct dcmi_event event;
	dcmi_fault_event_callback handlers[2];
	unsigned handler_count;
};

/* A chip dcmi_set_device_reset reset: away until back_ms (for ever with
 * FAKE_RESET_NEVER), then as its reset= says, until the state file changes
 * the chip's health, errors or reset keys (the test takes over again) or it
 * is reset again. */
struct reset_record {
	bool used;
	bool back;     /* its return was announced */
	uint32_t phy;
	int64_t back_ms; /* CLOCK_MONOTONIC */
	enum fake_reset_outcome outcome;
	struct fake_chip line; /* the chip as the state file had it at the reset */
	struct fake_chip view; /* what it answers once back clean */
};

/* "Chip init/reset finished", the event a chip raises when it is back. */
#define RESET_FINISHED_EVENT_ID 0x8C2FA009u

static struct {
	pthread_mutex_t lock;
	bool initialised;
	bool stopping;
	bool log_events;
	char path[PATH_MAX]; /* absolute path of the state file */
	const char *base;    /* its last component, inside path */
	char dev_dir[PATH_MAX]; /* where vNPU nodes are made (ASCEND_FAKE_DCMI_DEV_DIR); empty: nowhere */
	char reset_log[PATH_MAX]; /* where each reset's chips are written (ASCEND_FAKE_DCMI_RESET_LOG); empty: nowhere */
	struct fake_state *state;
	int inotify_fd;
	int wake_fd;
	pthread_t thread;
	pid_t owner; /* the process that started the thread (not a forked child) */
	struct subscription all_devices;
	struct subscription devices[MAX_DEVICE_SUBSCRIPTIONS];
	struct pending_event queue[EVENT_QUEUE_SIZE];
	size_t queue_head;
	size_t queue_count;
	int serial;
	struct reset_record resets[FAKE_STATE_MAX_CHIPS];
} sim = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.inotify_fd = -1,
	.wake_fd = -1,
};

static const char *health_text(uint32_t health, char *buf, size_t size)
{
	if (health == FAKE_HEALTH_ABSENT)
		return "absent";
	snprintf(buf, size, "%u", health);
	return buf;
}

static void wake_watcher(void)
{
	uint64_t one = 1;
	/* A full counter (impossible in practice) still leaves the fd readable. */
	if (write(sim.wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		fprintf(stderr, "fake-dcmi: cannot wake the watcher thread: %s\n", strerror(errno));
}

/* ---- fault events ---- */

static bool filter_matches(const struct dcmi_event_filter *filter, const struct dcmi_dms_fault_event *event)
{
	if ((filter->filter_flag & DCMI_EVENT_FILTER_FLAG_EVENT_ID) && event->event_id != filter->event_id)
		return false;
	/* "Only events of the given severity and above" in the vendor reference. */
	if ((filter->filter_flag & DCMI_EVENT_FILTER_FLAG_SERVERITY) && event->severity < filter->severity)
		return false;
	if ((filter->filter_flag & DCMI_EVENT_FILTER_FLAG_NODE_TYPE) && event->node_type != filter->node_type)
		return false;
	return true;
}

static void add_handler(struct pending_event *pending, const struct subscription *sub)
{
	if (!sub->used || !filter_matches(&sub->filter, &pending->event.event_t.dms_event))
		return;
	for (unsigned i = 0; i < pending->handler_count; i++)
		if (pending->handlers[i] == sub->handler)
			return; /* the same function subscribed twice hears each event once */
	pending->handlers[pending->handler_count++] = sub->handler;
}

/* Numbers the event and gives it the time it is raised. */
static void stamp_locked(struct dcmi_dms_fault_event *dms)
{
	sim.serial = sim.serial == INT_MAX ? 1 : sim.serial + 1;
	dms->event_serial_num = sim.serial;
	dms->notify_serial_num = sim.serial;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	dms->alarm_raised_time = (unsigned long long)ts.tv_sec * 1000ULL + (unsigned long long)ts.tv_nsec / 1000000ULL;
}

/* The handlers an event of chip goes to, as subscribed now. */
static void resolve_handlers_locked(struct pending_event *pending, const struct fake_chip *chip)
{
	add_handler(pending, &sim.all_devices);
	for (size_t i = 0; i < ARRAY_SIZE(sim.devices); i++) {
		const struct subscription *sub = &sim.devices[i];
		if (sub->used && sub->card == chip->card && sub->device == chip->device)
			add_handler(pending, sub);
	}
}

/* Queues the event for the watcher thread, unless nobody listens. */
static void enqueue_locked(const struct pending_event *pending, uint32_t phy)
{
	if (pending->handler_count == 0)
		return;
	if (sim.queue_count == EVENT_QUEUE_SIZE) {
		fprintf(stderr, "fake-dcmi: event queue full, dropping the event for phy %u\n", phy);
		return;
	}
	sim.queue[(sim.queue_head + sim.queue_count) % EVENT_QUEUE_SIZE] = *pending;
	sim.queue_count++;
	wake_watcher();
}

/* Builds the event for a chip that crossed between healthy and unhealthy and
 * queues it for the watcher thread. The faulty side of the change (the new
 * chip on the way down, the old one on the way back) provides severity and
 * event id, so a recovery carries the id of the fault it ends. */
static void queue_transition_locked(const struct fake_chip *old, const struct fake_chip *now)
{
	bool occur = !fake_health_is_healthy(now->health);
	const struct fake_chip *faulty = occur ? now : old;
	struct pending_event pending;
	memset(&pending, 0, sizeof(pending));

	struct dcmi_event *event = &pending.event;
	struct dcmi_dms_fault_event *dms = &event->event_t.dms_event;
	event->type = DCMI_EVENT_TYPE_DMS_FAULT;
	dms->event_id = faulty->error_count > 0 ? faulty->errors[0] : 0;
	dms->deviceid = (unsigned short)now->logic;
	dms->severity = (unsigned char)(faulty->health == FAKE_HEALTH_ABSENT ? 3 : faulty->health);
	dms->assertion = occur ? DCMI_ASSERTION_OCCUR : DCMI_ASSERTION_RECOVERY;
	stamp_locked(dms);

	char from_buf[16], to_buf[16];
	const char *from = health_text(old->health, from_buf, sizeof(from_buf));
	const char *to = health_text(now->health, to_buf, sizeof(to_buf));
	snprintf(dms->event_name, sizeof(dms->event_name), "fake-dcmi chip phy %u: health %s -> %s, %s",
		 now->phy, from, to, occur ? "fault" : "recovered");
	snprintf(dms->additional_info, sizeof(dms->additional_info), "phy=%u", now->phy);

	resolve_handlers_locked(&pending, now);
	if (sim.log_events)
		fprintf(stderr,
			"fake-dcmi: %s event for phy %u (logic %u): health %s -> %s, severity %u, "
			"event id 0x%08X, %u handler(s)\n",
			occur ? "fault" : "recovery", now->phy, now->logic, from, to, dms->severity, dms->event_id,
			pending.handler_count);
	enqueue_locked(&pending, now->phy);
}

/* The one-off event of a chip back from a reset: event id 8C2FA009, as
 * the driver reports a chip whose initialisation or reset finished. */
static void queue_reset_finished_locked(const struct fake_chip *chip)
{
	struct pending_event pending;
	memset(&pending, 0, sizeof(pending));
	struct dcmi_dms_fault_event *dms = &pending.event.event_t.dms_event;
	pending.event.type = DCMI_EVENT_TYPE_DMS_FAULT;
	dms->event_id = RESET_FINISHED_EVENT_ID;
	dms->deviceid = (unsigned short)chip->logic;
	dms->assertion = DCMI_ASSERTION_ONE_OFF;
	stamp_locked(dms);
	snprintf(dms->event_name, sizeof(dms->event_name), "fake-dcmi chip phy %u: reset finished", chip->phy);
	snprintf(dms->additional_info, sizeof(dms->additional_info), "phy=%u", chip->phy);
	resolve_handlers_locked(&pending, chip);
	if (sim.log_events)
		fprintf(stderr, "fake-dcmi: reset finished event for phy %u (logic %u), %u handler(s)\n", chip->phy,
			chip->logic, pending.handler_count);
	enqueue_locked(&pending, chip->phy);
}

static size_t drop_subscriptions_locked(void)
{
	size_t dropped = sim.all_devices.used ? 1 : 0;
	for (size_t i = 0; i < ARRAY_SIZE(sim.devices); i++)
		dropped += sim.devices[i].used ? 1 : 0;
	memset(&sim.all_devices, 0, sizeof(sim.all_devices));
	memset(sim.devices, 0, sizeof(sim.devices));
	return dropped;
}

/* ---- resets ---- */

static int64_t monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct reset_record *reset_of_locked(uint32_t phy)
{
	for (size_t i = 0; i < ARRAY_SIZE(sim.resets); i++)
		if (sim.resets[i].used && sim.resets[i].phy == phy)
			return &sim.resets[i];
	return NULL;
}

/* Whether the state file still says of the chip what it said at its reset:
 * the keys a test changes to take the chip over again. */
static bool same_line(const struct fake_chip *a, const struct fake_chip *b)
{
	return a->health == b->health && a->health_rc == b->health_rc && a->error_count == b->error_count &&
	       memcmp(a->errors, b->errors, a->error_count * sizeof(a->errors[0])) == 0 && a->reset == b->reset &&
	       a->reset_ms == b->reset_ms;
}

/* A record ends when its chip's line changed or went. */
static void end_resets_locked(const struct fake_state *next)
{
	for (size_t i = 0; i < ARRAY_SIZE(sim.resets); i++) {
		struct reset_record *rec = &sim.resets[i];
		if (!rec->used)
			continue;
		const struct fake_chip *now = fake_state_find_phy(next, rec->phy);
		if (!now || !same_line(now, &rec->line)) {
			rec->used = false;
			if (sim.log_events)
				fprintf(stderr, "fake-dcmi: phy %u: the state file takes over from its reset\n", rec->phy);
		}
	}
}

/* Announces the chips whose time away is over; returns the time of the
 * next return due (0: none). */
static int64_t take_returns_locked(void)
{
	int64_t now = monotonic_ms(), next = 0;
	for (size_t i = 0; i < ARRAY_SIZE(sim.resets); i++) {
		struct reset_record *rec = &sim.resets[i];
		if (!rec->used || rec->back || rec->outcome == FAKE_RESET_NEVER)
			continue;
		if (now < rec->back_ms) {
			if (!next || rec->back_ms < next)
				next = rec->back_ms;
			continue;
		}
		rec->back = true;
		queue_reset_finished_locked(&rec->line);
	}
	return next;
}

/* One chip of a reset goes away: line as the state file has it, away for
 * away_ms. */
static void reset_chip_locked(const struct fake_chip *line, uint32_t away_ms)
{
	struct reset_record *rec = reset_of_locked(line->phy);
	for (size_t i = 0; i < ARRAY_SIZE(sim.resets) && !rec; i++)
		if (!sim.resets[i].used)
			rec = &sim.resets[i];
	/* One record per chip of the state: a slot is always free. */
	*rec = (struct reset_record){
		.used = true, .phy = line->phy, .back_ms = monotonic_ms() + away_ms, .outcome = line->reset,
		.line = *line, .view = *line,
	};
	rec->view.health = 0;
	rec->view.error_count = 0;
	if (sim.log_events)
		fprintf(stderr, "fake-dcmi: phy %u reset: away for %u ms, then %s\n", line->phy, away_ms,
			line->reset == FAKE_RESET_CLEAN ? "back clean"
			: line->reset == FAKE_RESET_FAULTY ? "back with its fault" : "never back");
}

/* Appends "reset phy=P chips=A,B,..." to the reset log, for a test to
 * see which chips a reset took down. */
static void log_reset_locked(uint32_t phy, const uint32_t *chips, size_t n)
{
	if (!sim.reset_log[0])
		return;
	FILE *f = fopen(sim.reset_log, "ae");
	if (!f) {
		fprintf(stderr, "fake-dcmi: %s: %s\n", sim.reset_log, strerror(errno));
		return;
	}
	fprintf(f, "reset phy=%u chips=", phy);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%u", i ? "," : "", chips[i]);
	fputc('\n', f);
	if (fclose(f) != 0)
		fprintf(stderr, "fake-dcmi: %s: %s\n", sim.reset_log, strerror(errno));
}

/* dcmi_set_device_reset of the chip the state file has as line: it and
 * every chip of its reset_group go away for its reset_ms, each coming back
 * as its own reset= says. */
static void start_reset_locked(const struct fake_chip *line)
{
	uint32_t chips[FAKE_STATE_MAX_CHIPS];
	size_t n = 0;
	for (size_t i = 0; i < sim.state->chip_count; i++) {
		const struct fake_chip *c = &sim.state->chips[i];
		bool member = c->phy == line->phy ||
			      (line->has_reset_group && c->has_reset_group && c->reset_group == line->reset_group);
		if (!member)
			continue;
		reset_chip_locked(c, line->reset_ms);
		chips[n++] = c->phy;
	}
	log_reset_locked(line->phy, chips, n);
	/* The watcher sleeps until the next return it knows of: these are new. */
	wake_watcher();
}

/* Makes next the current state and queues the events its changes imply. */
static void apply_state_locked(struct fake_state *next)
{
	struct fake_state *prev = sim.state;
	sim.state = next;
	end_resets_locked(next);

	if (!next->subscribe) {
		/* Like a DCMI daemon restart: the subscriptions are gone and stay
		 * gone until the client subscribes again. */
		size_t dropped = drop_subscriptions_locked();
		if (dropped > 0 && sim.log_events)
			fprintf(stderr, "fake-dcmi: subscribe off: dropped %zu subscription(s)\n", dropped);
	} else if (prev) {
		for (size_t i = 0; i < next->chip_count; i++) {
			const struct fake_chip *now = &next->chips[i];
			const struct fake_chip *old = fake_state_find_phy(prev, now->phy);
			if (old && fake_health_is_healthy(old->health) != fake_health_is_healthy(now->health))
				queue_transition_locked(old, now);
		}
	}
	free(prev);
}

/* ---- the state file ---- */

static void print_diag(void *userdata, unsigned line, const char *message)
{
	const char *path = userdata;
	if (line == 0)
		fprintf(stderr, "fake-dcmi: %s: %s\n", path, message);
	else
		fprintf(stderr, "fake-dcmi: %s:%u: %s\n", path, line, message);
}

/* Reads up to FAKE_STATE_MAX_FILE + 1 bytes (one more than allowed, so the
 * parser can tell an oversized file). On success *ret_buf is the caller's to free. */
static int read_state_file(const char *path, char **ret_buf, size_t *ret_len)
{
	/* O_NONBLOCK: a FIFO put there by mistake must not hang the simulator. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	int r = 0;
	char *buf = NULL;
	size_t len = 0;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = -EINVAL;
		goto out;
	}
	buf = malloc(FAKE_STATE_MAX_FILE + 1);
	if (!buf) {
		r = -ENOMEM;
		goto out;
	}
	while (len < FAKE_STATE_MAX_FILE + 1) {
		ssize_t n = read(fd, buf + len, FAKE_STATE_MAX_FILE + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*ret_buf = buf;
	*ret_len = len;
	buf = NULL;
out:
	free(buf);
	close(fd);
	return r;
}

/* Re-reads the state file and applies it. A missing or unreadable file means
 * a node without chips; only running out of memory keeps the old state. */
static void reload_locked(void)
{
	struct fake_state *next = malloc(sizeof(*next));
	if (!next) {
		fprintf(stderr, "fake-dcmi: out of memory reading %s, keeping the previous state\n", sim.path);
		return;
	}
	char *buf = NULL;
	size_t len = 0;
	int r = read_state_file(sim.path, &buf, &len);
	if (r == 0) {
		fake_state_parse(next, buf, len, print_diag, sim.path);
	} else {
		fake_state_init(next);
		if (r == -EINVAL)
			fprintf(stderr, "fake-dcmi: %s: not a regular file, simulating no chips\n", sim.path);
		else if (r != -ENOENT)
			fprintf(stderr, "fake-dcmi: %s: %s, simulating no chips\n", sim.path, strerror(-r));
	}
	free(buf);
	if (sim.log_events)
		fprintf(stderr, "fake-dcmi: read %s: %zu chip(s), driver %s, subscribe %s\n", sim.path,
			next->chip_count, next->driver, next->subscribe ? "on" : "off");
	apply_state_locked(next);
}

/* ---- the watcher thread ---- */

/* Reads every pending inotify event; true when one concerns the state file. */
static bool drain_inotify(void)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool relevant = false;

	for (;;) {
		ssize_t n = read(sim.inotify_fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return relevant; /* EAGAIN: drained */
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)(void *)p;
			if (ev->mask & IN_Q_OVERFLOW)
				relevant = true; /* events were lost: re-read to be safe */
			else if (ev->mask & IN_IGNORED)
				fprintf(stderr, "fake-dcmi: the directory of %s went away, changes are no longer seen\n",
					sim.path);
			else if (ev->len > 0 && strcmp(ev->name, sim.base) == 0)
				relevant = true;
			p += sizeof(struct inotify_event) + ev->len;
		}
	}
}

/* Takes in the pending notifications and re-reads the file if they concern
 * it. Both the watcher and every DCMI call do this, under the mutex: the
 * kernel queues the notification of a rename() or unlink() before the call
 * returns and that of an in-place write when the writer closes the file, so
 * a DCMI call always sees a change that was complete before it started,
 * and never a half-written file. Several changes read at once are seen as
 * one: only the latest content counts. */
static void take_changes_locked(void)
{
	if (drain_inotify())
		reload_locked();
}

/* Calls queued handlers one event at a time, with the mutex released. */
static void deliver_pending(void)
{
	for (;;) {
		struct pending_event pending;
		pthread_mutex_lock(&sim.lock);
		if (sim.stopping || sim.queue_count == 0) {
			pthread_mutex_unlock(&sim.lock);
			return;
		}
		pending = sim.queue[sim.queue_head];
		sim.queue_head = (sim.queue_head + 1) % EVENT_QUEUE_SIZE;
		sim.queue_count--;
		pthread_mutex_unlock(&sim.lock);

		for (unsigned i = 0; i < pending.handler_count; i++) {
			/* Each handler gets its own copy: it may scribble on it. */
			struct dcmi_event event = pending.event;
			pending.handlers[i](&event);
		}
	}
}

static void *watcher_main(void *arg)
{
	(void)arg;
	for (;;) {
		struct pollfd fds[2] = {
			{ .fd = sim.wake_fd, .events = POLLIN },
			{ .fd = sim.inotify_fd, .events = POLLIN },
		};
		/* Wakes when the next reset chip is due back. */
		pthread_mutex_lock(&sim.lock);
		int64_t due = sim.stopping ? 0 : take_returns_locked();
		pthread_mutex_unlock(&sim.lock);
		deliver_pending();
		int64_t wait = due ? due - monotonic_ms() : -1;
		int timeout = wait < 0 ? (due ? 0 : -1) : wait > INT_MAX ? INT_MAX : (int)wait;
		if (poll(fds, ARRAY_SIZE(fds), timeout) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "fake-dcmi: watcher thread stops: poll: %s\n", strerror(errno));
			return NULL;
		}
		if (fds[0].revents & POLLIN) {
			uint64_t count;
			if (read(sim.wake_fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
				fprintf(stderr, "fake-dcmi: reading the wake fd: %s\n", strerror(errno));
		}
		if (fds[1].revents & POLLIN) {
			pthread_mutex_lock(&sim.lock);
			if (!sim.stopping)
				take_changes_locked();
			pthread_mutex_unlock(&sim.lock);
		}
		deliver_pending();

		pthread_mutex_lock(&sim.lock);
		bool stop = sim.stopping;
		pthread_mutex_unlock(&sim.lock);
		if (stop)
			return NULL;
	}
}

/* ---- lifecycle ---- */

static void release_locked(void)
{
	if (sim.inotify_fd >= 0)
		close(sim.inotify_fd);
	if (sim.wake_fd >= 0)
		close(sim.wake_fd);
	sim.inotify_fd = sim.wake_fd = -1;
	free(sim.state);
	sim.state = NULL;
	sim.queue_head = sim.queue_count = 0;
	memset(sim.resets, 0, sizeof(sim.resets));
	drop_subscriptions_locked();
}

/* Splits the state file's path into an absolute directory and a name.
 * The directory must exist (it is what inotify watches); the file need not.
 * origin says where the path came from, for the messages. */
static int resolve_state_path(const char *origin, const char *path, char *ret_dir, size_t dir_size)
{
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	char dir[PATH_MAX];
	char resolved[PATH_MAX];

	if (name[0] == '\0' || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		fprintf(stderr, "fake-dcmi: %s=%s does not name a file\n", origin, path);
		return -EINVAL;
	}
	if (!slash)
		memcpy(dir, ".", sizeof("."));
	else if (slash == path)
		memcpy(dir, "/", sizeof("/"));
	else if (str_printf(dir, sizeof(dir), "%.*s", (int)(slash - path), path) < 0)
		return -ENAMETOOLONG;

	if (!realpath(dir, resolved)) {
		int r = -errno;
		fprintf(stderr, "fake-dcmi: directory of %s %s: %s\n", origin, dir, strerror(errno));
		return r;
	}
	if (str_copy(ret_dir, dir_size, resolved) < 0 || path_join(sim.path, sizeof(sim.path), resolved, name) < 0) {
		fprintf(stderr, "fake-dcmi: %s path too long\n", origin);
		return -ENAMETOOLONG;
	}
	sim.base = strrchr(sim.path, '/') + 1;
	return 0;
}

/* The state file when ASCEND_FAKE_DCMI_STATE is unset: DEFAULT_STATE_NAME in
 * the directory this library was loaded from. It serves a plugin in a
 * container whose environment the test must not change (the shipped
 * DaemonSet), where the driver directory is all the simulator shares with
 * the host. Unlike a named file it must exist: a library that finds no
 * state anywhere says so instead of simulating a node without chips. */
static int default_state_path(char *ret, size_t size)
{
	Dl_info info;
	/* Any address inside the library names it; a static one cannot be
	 * interposed by another copy of the library. */
	if (dladdr((const void *)&sim, &info) == 0 || !info.dli_fname || !strchr(info.dli_fname, '/')) {
		fprintf(stderr, "fake-dcmi: ASCEND_FAKE_DCMI_STATE is not set and the library's own path is "
				"unknown; set it to the state file\n");
		return -ENOENT;
	}
	const char *slash = strrchr(info.dli_fname, '/');
	if (str_printf(ret, size, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname, DEFAULT_STATE_NAME) < 0) {
		fprintf(stderr, "fake-dcmi: ASCEND_FAKE_DCMI_STATE is not set and the path of %s is too long\n",
			info.dli_fname);
		return -ENAMETOOLONG;
	}
	struct stat st;
	if (stat(ret, &st) < 0) {
		int r = -errno;
		fprintf(stderr,
			"fake-dcmi: ASCEND_FAKE_DCMI_STATE is not set and %s (next to the library) cannot be "
			"used: %s; set the variable or put the state file there\n",
			ret, strerror(errno));
		return r;
	}
	return 0;
}

static int start_locked(void)
{
	const char *env = getenv("ASCEND_FAKE_DCMI_STATE");
	const char *origin = "ASCEND_FAKE_DCMI_STATE";
	char fallback[PATH_MAX];
	if (!env || env[0] == '\0') {
		if (default_state_path(fallback, sizeof(fallback)) < 0)
			return DCMI_ERR_INNER;
		env = fallback;
		origin = "the default state file";
	}
	const char *log = getenv("ASCEND_FAKE_DCMI_LOG");
	sim.log_events = log && strcmp(log, "1") == 0;
	const char *dev_dir = getenv("ASCEND_FAKE_DCMI_DEV_DIR");
	if (str_copy(sim.dev_dir, sizeof(sim.dev_dir), dev_dir ? dev_dir : "") < 0) {
		fprintf(stderr, "fake-dcmi: ASCEND_FAKE_DCMI_DEV_DIR is too long\n");
		return DCMI_ERR_INNER;
	}

	const char *reset_log = getenv("ASCEND_FAKE_DCMI_RESET_LOG");
	if (str_copy(sim.reset_log, sizeof(sim.reset_log), reset_log ? reset_log : "") < 0) {
		fprintf(stderr, "fake-dcmi: ASCEND_FAKE_DCMI_RESET_LOG is too long\n");
		return DCMI_ERR_INNER;
	}

	char dir[PATH_MAX];
	if (resolve_state_path(origin, env, dir, sizeof(dir)) < 0)
		return DCMI_ERR_INNER;

	sim.inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	sim.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (sim.inotify_fd < 0 || sim.wake_fd < 0) {
		fprintf(stderr, "fake-dcmi: inotify/eventfd: %s\n", strerror(errno));
		goto fail;
	}
	/* The directory, not the file: renames replace the file's inode. */
	if (inotify_add_watch(sim.inotify_fd, dir,
			      IN_ONLYDIR | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE) <
	    0) {
		fprintf(stderr, "fake-dcmi: watching %s: %s\n", dir, strerror(errno));
		goto fail;
	}

	reload_locked();
	if (!sim.state)
		goto fail;

	/* The thread blocks every signal, so signals meant for the process (and
	 * a signalfd in the host program) never land on it. */
	sigset_t all, saved;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &saved);
	int r = pthread_create(&sim.thread, NULL, watcher_main, NULL);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	if (r != 0) {
		fprintf(stderr, "fake-dcmi: starting the watcher thread: %s\n", strerror(r));
		goto fail;
	}
	sim.owner = getpid();
	sim.stopping = false;
	sim.initialised = true;
	return DCMI_OK;

fail:
	release_locked();
	return DCMI_ERR_INNER;
}

/* Stops the watcher when the library is unloaded or the process exits, so
 * sanitizers and valgrind see every resource released. If a handler does not
 * return within STOP_TIMEOUT_S the thread and its resources are left alone
 * rather than hanging the exit. */
static void fake_dcmi_stop(void) __attribute__((destructor));

static void fake_dcmi_stop(void)
{
	pthread_mutex_lock(&sim.lock);
	/* A forked child has the memory but not the thread: nothing to stop. */
	if (!sim.initialised || sim.owner != getpid()) {
		pthread_mutex_unlock(&sim.lock);
		return;
	}
	sim.initialised = false;
	sim.stopping = true;
	wake_watcher();
	pthread_mutex_unlock(&sim.lock);

	/* exit() called from a handler runs this on the watcher thread itself. */
	if (pthread_equal(pthread_self(), sim.thread))
		return;
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += STOP_TIMEOUT_S;
	if (pthread_timedjoin_np(sim.thread, NULL, &deadline) != 0) {
		fprintf(stderr, "fake-dcmi: an event handler did not return, leaving the watcher thread\n");
		return;
	}
	pthread_mutex_lock(&sim.lock);
	release_locked();
	pthread_mutex_unlock(&sim.lock);
}

/* ---- the API ---- */

/* Every call but dcmi_init starts here: -8005 before dcmi_init, else the
 * mutex is held (release with api_leave) and the state is current. */
static int api_enter(void)
{
	pthread_mutex_lock(&sim.lock);
	if (!sim.initialised) {
		pthread_mutex_unlock(&sim.lock);
		return DCMI_ERR_INNER;
	}
	take_changes_locked();
	return DCMI_OK;
}

static void api_leave(void)
{
	pthread_mutex_unlock(&sim.lock);
}

/* The chip at (card, device). Absent chips keep their identity, so identity
 * calls pass allow_absent; everything else reports them missing. */
static int lookup_locked(int card_id, int device_id, bool allow_absent, const struct fake_chip **ret_chip)
{
	if (card_id < 0 || device_id < 0)
		return DCMI_ERR_DEVICE_NOT_EXIST;
	const struct fake_chip *chip = fake_state_find_device(sim.state, (uint32_t)card_id, (uint32_t)device_id);
	if (!chip || (!allow_absent && chip->health == FAKE_HEALTH_ABSENT))
		return DCMI_ERR_DEVICE_NOT_EXIST;
	*ret_chip = chip;
	return DCMI_OK;
}

/* lookup_locked for a call that the state may make fail (fail=). */
static int lookup_call_locked(enum fake_call call, int card_id, int device_id, bool allow_absent,
			      const struct fake_chip **ret_chip)
{
	const struct fake_chip *chip;
	int r = lookup_locked(card_id, device_id, allow_absent, &chip);
	if (r != DCMI_OK)
		return r;
	if (chip->hang_ms[call] != 0) {
		/* Stuck in this call: the rest of the library (the watcher, the
		 * event handlers) goes on. The state may change meanwhile. */
		struct timespec left = { .tv_sec = chip->hang_ms[call] / 1000,
					 .tv_nsec = (long)(chip->hang_ms[call] % 1000) * 1000000 };
		pthread_mutex_unlock(&sim.lock);
		while (nanosleep(&left, &left) < 0 && errno == EINTR) {
		}
		pthread_mutex_lock(&sim.lock);
		take_changes_locked();
		r = lookup_locked(card_id, device_id, allow_absent, &chip);
		if (r != DCMI_OK)
			return r;
	}
	/* A chip in reset keeps its place on the card (its identity calls
	 * work) but does not answer: DCMI's "not ready", what it says of a
	 * card that dropped. Back clean, it answers without its fault. */
	struct reset_record *rec = reset_of_locked(chip->phy);
	if (rec) {
		(void)take_returns_locked();
		if (!rec->back)
			return DCMI_ERR_NOT_READY;
		if (rec->outcome == FAKE_RESET_CLEAN)
			chip = &rec->view;
	}
	if (chip->fail_rc[call] != 0)
		return chip->fail_rc[call];
	*ret_chip = chip;
	return DCMI_OK;
}

int dcmi_init(void)
{
	/* A vendor library that kills its host process, for the plugin's
	 * start-up failure tests. */
	const char *crash = getenv("ASCEND_FAKE_DCMI_CRASH");
	if (crash && strcmp(crash, "abort") == 0)
		abort();
	if (crash && strcmp(crash, "segv") == 0)
		raise(SIGSEGV);
	/* A driver whose initialisation blocks (a chip being reset). */
	const char *hang = getenv("ASCEND_FAKE_DCMI_INIT_HANG");
	uint32_t hang_s;
	if (hang && parse_u32(hang, 10, 3600, &hang_s) == 0) {
		struct timespec left = { .tv_sec = hang_s };
		while (nanosleep(&left, &left) < 0 && errno == EINTR) {
		}
	}
	pthread_mutex_lock(&sim.lock);
	int r = sim.initialised ? DCMI_OK : start_locked();
	pthread_mutex_unlock(&sim.lock);
	return r;
}

int dcmi_get_card_list(int *card_num, int *card_list, int list_len)
{
	int r = api_enter();
	if (r != DCMI_OK)
		return r;
	uint32_t cards[FAKE_STATE_MAX_CARDS];
	size_t n = fake_state_card_list(sim.state, cards, ARRAY_SIZE(cards));
	/* A buffer too small for every card is the caller's bug: say so rather than truncate. */
	if (!card_num || list_len < 0 || (!card_list && list_len > 0) || n > (size_t)list_len) {
		r = DCMI_ERR_INVALID_PARAMETER;
	} else {
		for (size_t i = 0; i < n; i++)
			card_list[i] = (int)cards[i];
		*card_num = (int)n;
	}
	api_leave();
	return r;
}

int dcmi_get_device_num_in_card(int card_id, int *device_num)
{
	int r = api_enter();
	if (r != DCMI_OK)
		return r;
	uint32_t n = card_id < 0 ? 0 : fake_state_devices_in_card(sim.state, (uint32_t)card_id);
	if (!device_num)
		r = DCMI_ERR_INVALID_PARAMETER;
	else if (n == 0)
		r = DCMI_ERR_DEVICE_NOT_EXIST;
	else
		*device_num = (int)n;
	api_leave();
	return r;
}

int dcmi_get_device_logic_id(int *device_logic_id, int card_id, int device_id)
{
	int r = api_enter();
	if (r != DCMI_OK)
		return r;
	const struct fake_chip *chip;
	if (!device_logic_id)
		r = DCMI_ERR_INVALID_PARAMETER;
	else if ((r = lookup_locked(card_id, device_id, true, &chip)) == DCMI_OK)
		*device_logic_id = (int)chip->logic;
	api_leave();
	return r;
}

int dcmi_get_device_phyid_from_logicid(unsigned int logicid, unsigned int *phyid)
{
	int r = api_enter();
	if (r != DCMI_OK)
		return r;
	const struct fake_chip *chip = fake_state_find_logic(sim.state, logicid);
	if (!phyid)
		r = DCMI_ERR_INVALID_PARAMETER;
	else if (!chip)
		r = DCMI_ERR_DEVICE_NOT_EXIST;
	else
		*phyid = chip->phy;
	api_leave();
	return r;
}

int dcmi_get_device_chip_info(int card_id, int device_id, struct dcmi_chip_info *chip_info)
{
	int r = api_enter();
	if (r != DCMI_OK)
		return r;
	const struct fake_chip *chip;
	if (!chip_info) {
		r = DCMI_ERR_INVALID_PARAMETER;
	} else if ((r = lookup_locked(card_id, device_id, true, &chip)) == DCMI_OK) {
		memset(chip_info, 0, sizeof(*chip_info));
		memcpy(chip_info->chip_type, "Ascend", sizeof("Ascend"));
		/* name is shorter than chip_name by construction (FAKE_STATE_NAME_SIZE). */
		memcpy(chip_info->chip_name, chip->name, strlen(chip->name) + 1);
		memcpy(chip_info->chip_ver, "V1", sizeof("V1"));
		chip_info->aicore_cnt = chip->aicore;
	}
	api_leave();
	return r;
}

int dcmi_get_device_health(int card_id, int device_id, unsigned int *health)
{
	int r = api_enter();
	if (r != DCMI_OK)
		return r;
	const struct fake_chip *chip;
	if (!health)
		r = DCMI_ERR_INVALID_PARAMETER;
	else if ((r = lookup_call_locked(FAKE_CALL_HEALTH, card_id, device_id, true, &chip)) == DCMI_OK &&
		 chip->health_rc != 0)
		r = chip->health_rc; /* a card that dropped answers e.g. -8012 */
	else if (r == DCMI_OK)
		*health = chip->health; /* FAKE_HEALTH_ABSENT is DCMI's 0xFFFFFFFF */
	api_leave();
	return r;
}

int dcmi_get_device_board_info(int card_id, int device_id, struct dcmi_board_info *board_info)
{
	int r = api_enter();
	if (r != DCMI_OK)
		return r;
	const struct fake_chip *chip;
	if (!board_info) {
		r = DCMI_ERR_INVALID_PARAMETER;
	} else if ((r = lookup_locked(card_id, device_id, false, &chip)) == DCMI_OK) {
		if (!chip->has_board) {
			r = DCMI_ERR_NOT_SUPPORTED;
		} else {
			memset(board_info, 0, sizeof(*board_info));
			board_info->board_id = chip->board;
			board_info->slot_id = chip->card;
		}
	}
	api_leave();
	return r;
}

int dcmi_get_dcmi_version(char *buf, int len)
{
	int r = api_enter();
	if (r != DCMI_OK)
		return r;
	if (!buf || len <= 0 || str_copy(buf, (size_t)len, sim.state->driver) < 0)
		r = DCMI_ERR_INVALID_PARAMETER;
	api_leave();
	return r;
}

int dcmi_get_device_errorcode_v2(int card_id, int device_id, int *error_count, unsigned int *error_code_list,
				 unsigned int list_len)
{
	int r = api_enter();
	if (r != DCMI_OK)
		return r;
	const struct fake_chip *chip;
	if (!error_count || (!error_code_list && list_len > 0)) {
		r = DCMI_ERR_INVALID_PARAMETER;
	} else if ((r = lookup_call_locked(FAKE_CALL_ERRORCODE, card_id, device_id, false, &chip)) == DCMI_OK) {
		if (chip->error_count > list_len) {
			r = DCMI_ERR_INVALID_PARAMETER;
		} else {
			if (chip->error_count > 0)
				memcpy(error_code_list, chip->errors, chip->error_count * sizeof(chip->errors[0]));
			*error_count = (int)chip->error_count;
		}
	}
	api_leave();
	return r;
}

int dcmi_subscribe_fault_event(int card_id, int device_id, struct dcmi_event_filter filter,
			       dcmi_fault_event_callback handler)
{
	int r = api_enter();
	if (r != DCMI_OK)
		return r;
	bool all = card_id == -1 && device_id == -1;
	const struct fake_chip *chip = NULL;
	struct subscription *slot = NULL;

	if (!handler || (!all && (card_id < 0 || device_id < 0))) {
		r = DCMI_ERR_INVALID_PARAMETER;
		goto out;
	}
	if (!all && (r = lookup_locked(card_id, device_id, true, &chip)) != DCMI_OK)
		goto out;
	if (!sim.state->subscribe) {
		r = DCMI_ERR_NOT_SUPPORTED;
		goto out;
	}
	if (all) {
		slot = &sim.all_devices;
	} else {
		/* A new subscription for the same device replaces the old one. */
		for (size_t i = 0; i < ARRAY_SIZE(sim.devices) && !slot; i++)
			if (sim.devices[i].used && sim.devices[i].card == chip->card &&
			    sim.devices[i].device == chip->device)
				slot = &sim.devices[i];
		for (size_t i = 0; i < ARRAY_SIZE(sim.devices) && !slot; i++)
			if (!sim.devices[i].used)
				slot = &sim.devices[i];
		if (!slot) {
			r = DCMI_ERR_MEMORY;
			goto out;
		}
	}
	*slot = (struct subscription){
		.used = true,
		.card = chip ? chip->card : 0,
		.device = chip ? chip->device : 0,
		.filter = filter,
		.handler = handler,
	};
	if (sim.log_events)
		fprintf(stderr, "fake-dcmi: fault events subscribed for card %d device %d\n", card_id, device_id);
out:
	api_leave();
	return r;
}

int dcmi_get_device_hbm_info(int card_id, int device_id, struct dcmi_hbm_info *hbm_info)
{
	int r = api_enter();
	if (r != DCMI_OK)
		return r;
	const struct fake_chip *chip;
	if (!hbm_info) {
		r = DCMI_ERR_INVALID_PARAMETER;
	} else if ((r = lookup_call_locked(FAKE_CALL_HBM, card_id, device_id, false, &chip)) == DCMI_OK) {
		memset(hbm_info, 0, sizeof(*hbm_info));
		hbm_info->memory_size = chip->hbm_mb;
		hbm_info->memory_usage = chip->hbm_used_mb;
	}
	api_leave();
	return r;
}

/* Huawei's PCI vendor id, as the PCI ID database lists it. */
#define HUAWEI_PCI_VENDOR_ID 0x19e5u

/* The vNPU queries of main command 52: the chip's vNPU ids (sub 1) and one
 * vNPU's template name (sub 0), laid out as the leading fields of DCMI's
 * structures (see npu/dcmi_abi.h). Other commands are not supported. */
/* CHIP_INF/SPOD_INFO: the chip's place in its super pod, where the state
 * gives one. */
static int super_pod_info_locked(int card_id, int device_id, void *buf, unsigned int *size)
{
	const struct fake_chip *chip;
	struct dcmi_spod_info info = { 0 };
	if (!buf || !size || *size < sizeof(info))
		return DCMI_ERR_INVALID_PARAMETER;
	int r = lookup_call_locked(FAKE_CALL_INFO, card_id, device_id, false, &chip);
	if (r != DCMI_OK)
		return r;
	if (!chip->has_spod)
		return DCMI_ERR_NOT_SUPPORTED;
	info.sdid = chip->sdid;
	info.super_pod_id = chip->super_pod_id;
	info.server_index = chip->server_index;
	memcpy(buf, &info, sizeof(info));
	*size = sizeof(info);
	return DCMI_OK;
}

int dcmi_get_device_info(int card_id, int device_id, enum dcmi_main_cmd main_cmd, unsigned int sub_cmd, void *buf,
			 unsigned int *size)
{
	int r = api_enter();
	if (r != DCMI_OK)
		return r;
	const struct fake_chip *chip;
	const size_t ids_bytes = sizeof(unsigned int) * (1 + DCMI_VDEV_MAX_PER_CHIP);
	const size_t name_bytes = sizeof(unsigned int) + DCMI_VDEV_NAME_LEN;
	if (main_cmd == DCMI_MAIN_CMD_CHIP_INF && sub_cmd == DCMI_CHIP_INF_SUB_CMD_SPOD_INFO) {
		r = super_pod_info_locked(card_id, device_id, buf, size);
	} else if (main_cmd != DCMI_MAIN_CMD_VDEV_MNG ||
		   (sub_cmd != DCMI_VMNG_SUB_CMD_GET_TOTAL_RESOURCE && sub_cmd != DCMI_VMNG_SUB_CMD_GET_VDEV_RESOURCE)) {
		r = DCMI_ERR_NOT_SUPPORTED;
	} else if (!buf || !size ||
		   *size < (sub_cmd == DCMI_VMNG_SUB_CMD_GET_TOTAL_RESOURCE ? ids_bytes : name_bytes)) {
		r = DCMI_ERR_INVALID_PARAMETER;
	} else if ((r = lookup_call_locked(FAKE_CALL_INFO, card_id, device_id, false, &chip)) == DCMI_OK) {
		const struct fake_state *st = sim.state;
		if (sub_cmd == DCMI_VMNG_SUB_CMD_GET_TOTAL_RESOURCE) {
			unsigned int ids[1 + DCMI_VDEV_MAX_PER_CHIP] = { 0 };
			for (size_t i = 0; i < st->vnpu_count && ids[0] < DCMI_VDEV_MAX_PER_CHIP; i++)
				if (st->vnpus[i].phy == chip->phy)
					ids[1 + ids[0]++] = st->vnpus[i].id;
			memset(buf, 0, *size);
			memcpy(buf, ids, sizeof(ids));
		} else {
			unsigned int id;
			memcpy(&id, buf, sizeof(id));
			r = DCMI_ERR_DEVICE_NOT_EXIST;
			for (size_t i = 0; i < st->vnpu_count; i++) {
				if (st->vnpus[i].id != id || st->vnpus[i].phy != chip->phy)
					continue;
				char name[DCMI_VDEV_NAME_LEN] = { 0 };
				memcpy(name, st->vnpus[i].template_name, strnlen(st->vnpus[i].template_name, sizeof(name)));
				memcpy((char *)buf + sizeof(id), name, sizeof(name));
				r = DCMI_OK;
				break;
			}
		}
	}
	api_leave();
	return r;
}

int dcmi_get_device_pcie_info_v2(int card_id, int device_id, struct dcmi_pcie_info_all *pcie_info)
{
	int r = api_enter();
	if (r != DCMI_OK)
		return r;
	const struct fake_chip *chip;
	if (!pcie_info) {
		r = DCMI_ERR_INVALID_PARAMETER;
	} else if ((r = lookup_locked(card_id, device_id, false, &chip)) == DCMI_OK) {
		if (!chip->has_pci) {
			r = DCMI_ERR_NOT_SUPPORTED;
		} else {
			memset(pcie_info, 0, sizeof(*pcie_info));
			pcie_info->venderid = HUAWEI_PCI_VENDOR_ID;
			pcie_info->domain = (int)chip->pci.domain;
			pcie_info->bdf_busid = chip->pci.bus;
			pcie_info->bdf_deviceid = chip->pci.device;
			pcie_info->bdf_funcid = chip->pci.function;
		}
	}
	api_leave();
	return r;
}

int dcmi_get_device_temperature(int card_id, int device_id, int *temperature)
{
	int r = api_enter();
	if (r != DCMI_OK)
		return r;
	const struct fake_chip *chip;
	if (!temperature)
		r = DCMI_ERR_INVALID_PARAMETER;
	else if ((r = lookup_call_locked(FAKE_CALL_TEMPERATURE, card_id, device_id, false, &chip)) == DCMI_OK)
		r = chip->has_temp ? (*temperature = chip->temp, DCMI_OK) : DCMI_ERR_NOT_SUPPORTED;
	api_leave();
	return r;
}

int dcmi_get_device_power_info(int card_id, int device_id, int *power)
{
	int r = api_enter();
	if (r != DCMI_OK)
		return r;
	const struct fake_chip *chip;
	if (!power)
		r = DCMI_ERR_INVALID_PARAMETER;
	else if ((r = lookup_call_locked(FAKE_CALL_POWER, card_id, device_id, false, &chip)) == DCMI_OK)
		r = chip->has_power ? (*power = (int)chip->power_tenths, DCMI_OK) : DCMI_ERR_NOT_SUPPORTED;
	api_leave();
	return r;
}

int dcmi_get_device_utilization_rate(int card_id, int device_id, int input_type, unsigned int *utilization_rate)
{
	int r = api_enter();
	if (r != DCMI_OK)
		return r;
	const struct fake_chip *chip;
	if (!utilization_rate)
		r = DCMI_ERR_INVALID_PARAMETER;
	else if ((r = lookup_call_locked(FAKE_CALL_UTILIZATION, card_id, device_id, false, &chip)) != DCMI_OK)
		;
	else if (input_type != DCMI_UTILIZATION_AICORE || !chip->has_util)
		r = DCMI_ERR_NOT_SUPPORTED; /* only the AI Core's share is simulated */
	else
		*utilization_rate = chip->util;
	api_leave();
	return r;
}

int dcmi_set_device_pre_reset(int card_id, int device_id)
{
	int r = api_enter();
	if (r != DCMI_OK)
		return r;
	const struct fake_chip *chip;
	r = lookup_call_locked(FAKE_CALL_PRE_RESET, card_id, device_id, false, &chip);
	api_leave();
	return r;
}

int dcmi_set_device_reset(int card_id, int device_id, enum dcmi_reset_channel channel)
{
	int r = api_enter();
	if (r != DCMI_OK)
		return r;
	const struct fake_chip *chip;
	if (channel != OUTBAND_CHANNEL && channel != INBAND_CHANNEL)
		r = DCMI_ERR_INVALID_PARAMETER;
	else if ((r = lookup_call_locked(FAKE_CALL_RESET, card_id, device_id, false, &chip)) == DCMI_OK)
		start_reset_locked(fake_state_find_phy(sim.state, chip->phy));
	api_leave();
	return r;
}

int dcmi_get_device_resource_info(int card_id, int device_id, struct dcmi_proc_mem_info *proc_info, int *proc_num)
{
	int r = api_enter();
	if (r != DCMI_OK)
		return r;
	const struct fake_chip *chip;
	if (!proc_info || !proc_num) {
		r = DCMI_ERR_INVALID_PARAMETER;
	} else if ((r = lookup_call_locked(FAKE_CALL_RESOURCE_INFO, card_id, device_id, false, &chip)) == DCMI_OK) {
		/* Like the driver: the caller's buffer holds DCMI_MAX_PROCS. */
		for (uint32_t i = 0; i < chip->proc_count; i++)
			proc_info[i] = (struct dcmi_proc_mem_info){ .proc_id = chip->proc_pid[i],
								    .proc_mem_usage = chip->proc_mem_mb[i] << 20 };
		*proc_num = (int)chip->proc_count;
	}
	api_leave();
	return r;
}

int dcmi_get_netdev_brother_device(int card_id, int device_id, int *brother_card_id)
{
	int r = api_enter();
	if (r != DCMI_OK)
		return r;
	const struct fake_chip *chip;
	if (!brother_card_id)
		r = DCMI_ERR_INVALID_PARAMETER;
	else if ((r = lookup_locked(card_id, device_id, false, &chip)) == DCMI_OK) {
		if (!chip->has_brother)
			r = DCMI_ERR_NOT_SUPPORTED;
		else
			*brother_card_id = (int)chip->brother;
	}
	api_leave();
	return r;
}

int dcmi_get_device_ip(int card_id, int device_id, enum dcmi_port_type input_type, int port_id,
		       struct dcmi_ip_addr *ip, struct dcmi_ip_addr *mask)
{
	int r = api_enter();
	if (r != DCMI_OK)
		return r;
	const struct fake_chip *chip;
	if (!ip || !mask || port_id != 0 || (input_type != DCMI_ROCE_PORT && input_type != DCMI_VNIC_PORT)) {
		r = DCMI_ERR_INVALID_PARAMETER;
	} else if ((r = lookup_call_locked(FAKE_CALL_IP, card_id, device_id, false, &chip)) != DCMI_OK) {
		;
	} else if (!chip->has_ip || input_type != DCMI_ROCE_PORT) {
		r = DCMI_ERR_NOT_SUPPORTED; /* only the RoCE port is simulated */
	} else {
		memset(ip, 0, sizeof(*ip));
		memset(mask, 0, sizeof(*mask));
		size_t len = chip->ipv6 ? 16 : 4;
		memcpy(ip->u_addr.ip6, chip->ip, len);
		ip->ip_type = mask->ip_type = chip->ipv6 ? DCMI_IPADDR_TYPE_V6 : DCMI_IPADDR_TYPE_V4;
		for (unsigned bit = 0; bit < chip->prefix_len; bit++)
			mask->u_addr.ip6[bit / 8] |= (unsigned char)(0x80u >> (bit % 8));
	}
	api_leave();
	return r;
}

int dcmi_get_device_network_health(int card_id, int device_id, unsigned int *result)
{
	int r = api_enter();
	if (r != DCMI_OK)
		return r;
	const struct fake_chip *chip;
	if (!result)
		r = DCMI_ERR_INVALID_PARAMETER;
	else if ((r = lookup_call_locked(FAKE_CALL_NETWORK_HEALTH, card_id, device_id, false, &chip)) == DCMI_OK)
		r = chip->has_link ? (*result = chip->link, DCMI_OK) : DCMI_ERR_NOT_SUPPORTED;
	api_leave();
	return r;
}

/* ---- vNPUs carved at run time ---- */

/* The state file's text, read and parsed under an exclusive lock of its
 * directory: simulators of other processes write the file too, and each
 * edits the text it read last. */
struct state_text {
	int dir_fd; /* holds the lock */
	char *buf;
	size_t len;
	mode_t mode;
	struct fake_state *parsed; /* buf, parsed: its vNPUs' lines are buf's */
};

static void state_text_close(struct state_text *t)
{
	if (t->dir_fd >= 0)
		close(t->dir_fd); /* releases the lock */
	free(t->buf);
	free(t->parsed);
	*t = (struct state_text){ .dir_fd = -1 };
}

static int state_text_open_locked(struct state_text *t)
{
	*t = (struct state_text){ .dir_fd = -1, .mode = 0644 };
	char dir[PATH_MAX];
	struct stat st;
	int r = str_printf(dir, sizeof(dir), "%.*s", (int)(sim.base - sim.path), sim.path);
	if (r == 0 && ((t->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 || flock(t->dir_fd, LOCK_EX) < 0))
		r = -errno;
	/* What another process wrote before it let go of the lock is seen. */
	take_changes_locked();
	if (r == 0)
		r = read_state_file(sim.path, &t->buf, &t->len);
	if (r == 0 && stat(sim.path, &st) == 0)
		t->mode = st.st_mode & 07777;
	if (r == 0 && !(t->parsed = malloc(sizeof(*t->parsed))))
		r = -ENOMEM;
	if (r == 0 && fake_state_parse(t->parsed, t->buf, t->len, NULL, NULL) < 0)
		r = -EFBIG;
	if (r < 0) {
		fprintf(stderr, "fake-dcmi: cannot edit %s: %s\n", sim.path, strerror(-r));
		state_text_close(t);
		return DCMI_ERR_INNER;
	}
	return DCMI_OK;
}

/* Writes the text with [from, to) replaced by insert, atomically, and
 * takes the new state in. */
static int state_text_replace_locked(struct state_text *t, size_t from, size_t to, const char *insert)
{
	size_t n = strlen(insert);
	char *next = malloc(t->len - (to - from) + n + 1);
	if (!next)
		return DCMI_ERR_MEMORY;
	memcpy(next, t->buf, from);
	memcpy(next + from, insert, n);
	memcpy(next + from + n, t->buf + to, t->len - to);
	int r = file_write_atomic(sim.path, next, t->len - (to - from) + n, t->mode, 0);
	free(next);
	if (r < 0) {
		fprintf(stderr, "fake-dcmi: cannot write %s: %s\n", sim.path, strerror(-r));
		return DCMI_ERR_INNER;
	}
	take_changes_locked();
	return DCMI_OK;
}

/* The device node of vNPU id, <dev dir>/vdavinci<id>; 0 without a dev dir. */
static int node_path(uint32_t id, char *buf, size_t size)
{
	if (!sim.dev_dir[0])
		return 0;
	return str_printf(buf, size, "%s/vdavinci%u", sim.dev_dir, id) < 0 ? -ENAMETOOLONG : 1;
}

/* Makes path like the chip's own <dev dir>/davinci<phy>: a character device
 * of the same number, owner and mode where that is one (a simulated node
 * whose containers get the vNPU, which needs CAP_MKNOD), else an empty
 * file. Returns 0 or a negative errno. */
static int make_node(uint32_t phy, const char *path)
{
	char chip_node[PATH_MAX];
	struct stat st;
	if (str_printf(chip_node, sizeof(chip_node), "%s/davinci%u", sim.dev_dir, phy) == 0 &&
	    stat(chip_node, &st) == 0 && S_ISCHR(st.st_mode)) {
		if (mknod(path, S_IFCHR | (st.st_mode & 07777), st.st_rdev) < 0 ||
		    chown(path, st.st_uid, st.st_gid) < 0)
			return -errno;
		return 0;
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0666);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

int dcmi_create_vdevice(int card_id, int device_id, struct dcmi_create_vdev_res_stru *vdev,
			struct dcmi_create_vdev_out *out)
{
	int r = api_enter();
	if (r != DCMI_OK)
		return r;
	const struct fake_chip *chip;
	struct state_text t = { .dir_fd = -1 };
	struct fake_vnpu v;
	char name[DCMI_VDEV_TEMPLATE_NAME_LEN], node[PATH_MAX], line[128];
	int has_node = 0;
	if ((r = lookup_call_locked(FAKE_CALL_CREATE_VDEVICE, card_id, device_id, false, &chip)) != DCMI_OK)
		goto out;
	if (!vdev || !out || !memchr(vdev->template_name, '\0', sizeof(vdev->template_name))) {
		r = DCMI_ERR_INVALID_PARAMETER;
		goto out;
	}
	memcpy(name, vdev->template_name, sizeof(name));
	uint32_t phy = chip->phy;
	if ((r = state_text_open_locked(&t)) != DCMI_OK)
		goto out;
	/* The chip as the file has it now, which another process may have
	 * changed since the call began. */
	if (!(chip = fake_state_find_phy(t.parsed, phy))) {
		r = DCMI_ERR_DEVICE_NOT_EXIST;
		goto out;
	}
	if ((r = fake_vdev_plan(t.parsed, chip, name, vdev->vdev_id, &v)) != DCMI_OK)
		goto out;
	has_node = node_path(v.id, node, sizeof(node));
	int made = has_node > 0 ? make_node(phy, node) : 0;
	if (has_node < 0 || made < 0) {
		fprintf(stderr, "fake-dcmi: cannot make the node of vNPU %u in %s: %s\n", v.id, sim.dev_dir,
			strerror(has_node < 0 ? -has_node : -made));
		has_node = 0;
		r = DCMI_ERR_INNER;
		goto out;
	}
	bool needs_newline = t.len > 0 && t.buf[t.len - 1] != '\n';
	snprintf(line, sizeof(line), "%svnpu id=%u phy=%u template=%s\n", needs_newline ? "\n" : "", v.id, v.phy,
		 v.template_name);
	if ((r = state_text_replace_locked(&t, t.len, t.len, line)) != DCMI_OK)
		goto out;
	memset(out, 0, sizeof(*out));
	out->vdev_id = v.id;
	has_node = 0;
	if (sim.log_events)
		fprintf(stderr, "fake-dcmi: phy %u: vNPU %u (%s) created\n", v.phy, v.id, v.template_name);
out:
	if (has_node > 0)
		unlink(node);
	state_text_close(&t);
	api_leave();
	return r;
}

int dcmi_set_destroy_vdevice(int card_id, int device_id, unsigned int vdevid)
{
	int r = api_enter();
	if (r != DCMI_OK)
		return r;
	const struct fake_chip *chip;
	const struct fake_vnpu *v;
	struct state_text t = { .dir_fd = -1 };
	size_t start, end;
	char node[PATH_MAX];
	if ((r = lookup_call_locked(FAKE_CALL_DESTROY_VDEVICE, card_id, device_id, false, &chip)) != DCMI_OK)
		goto out;
	uint32_t phy = chip->phy;
	if ((r = state_text_open_locked(&t)) != DCMI_OK)
		goto out;
	if (!(v = fake_vdev_find(t.parsed, phy, vdevid)) || fake_state_line_span(t.buf, t.len, v->line, &start, &end) < 0) {
		r = DCMI_ERR_INVALID_PARAMETER;
		goto out;
	}
	if ((r = state_text_replace_locked(&t, start, end, "")) != DCMI_OK)
		goto out;
	if (node_path(vdevid, node, sizeof(node)) > 0 && unlink(node) < 0 && errno != ENOENT)
		fprintf(stderr, "fake-dcmi: cannot remove %s: %s\n", node, strerror(errno));
	if (sim.log_events)
		fprintf(stderr, "fake-dcmi: phy %u: vNPU %u destroyed\n", phy, vdevid);
out:
	state_text_close(&t);
	api_leave();
	return r;
}

int dcmi_get_device_share_enable(int card_id, int device_id, int *enable_flag)
{
	int r = api_enter();
	if (r != DCMI_OK)
		return r;
	const struct fake_chip *chip;
	if (!enable_flag)
		r = DCMI_ERR_INVALID_PARAMETER;
	else if ((r = lookup_call_locked(FAKE_CALL_GET_SHARE, card_id, device_id, false, &chip)) == DCMI_OK)
		*enable_flag = chip->share_off ? DCMI_DEVICE_SHARE_OFF : DCMI_DEVICE_SHARE_ON;
	api_leave();
	return r;
}

/* Keeps the mode in the state file, as the driver keeps it across the
 * plugin's restarts: on drops the chip's share line (on is the default),
 * off writes one in its place or at the end. */
int dcmi_set_device_share_enable(int card_id, int device_id, int enable_flag)
{
	int r = api_enter();
	if (r != DCMI_OK)
		return r;
	const struct fake_chip *chip;
	struct state_text t = { .dir_fd = -1 };
	size_t start, end;
	char line[64];
	if (enable_flag != DCMI_DEVICE_SHARE_OFF && enable_flag != DCMI_DEVICE_SHARE_ON) {
		r = DCMI_ERR_INVALID_PARAMETER;
		goto out;
	}
	if ((r = lookup_call_locked(FAKE_CALL_SET_SHARE, card_id, device_id, false, &chip)) != DCMI_OK)
		goto out;
	uint32_t phy = chip->phy;
	if ((r = state_text_open_locked(&t)) != DCMI_OK)
		goto out;
	if (!(chip = fake_state_find_phy(t.parsed, phy))) {
		r = DCMI_ERR_DEVICE_NOT_EXIST;
		goto out;
	}
	bool in_place = chip->share_line && fake_state_line_span(t.buf, t.len, chip->share_line, &start, &end) == 0;
	bool needs_newline = !in_place && t.len > 0 && t.buf[t.len - 1] != '\n';
	snprintf(line, sizeof(line), "%sshare phy=%u mode=off\n", needs_newline ? "\n" : "", phy);
	if (in_place)
		r = state_text_replace_locked(&t, start, end, enable_flag == DCMI_DEVICE_SHARE_ON ? "" : line);
	else if (enable_flag == DCMI_DEVICE_SHARE_OFF)
		r = state_text_replace_locked(&t, t.len, t.len, line);
	if (r == DCMI_OK && sim.log_events)
		fprintf(stderr, "fake-dcmi: phy %u: device-share %s\n", phy,
			enable_flag == DCMI_DEVICE_SHARE_ON ? "on" : "off");
out:
	state_text_close(&t);
	api_leave();
	return r;
}
