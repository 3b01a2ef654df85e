/* SPDX-License-Identifier: Apache-2.0 */
/* kubelet-sim: a stand-in for the kubelet's device manager, for integration
 * tests, the demo and the benchmark. It serves Registration on
 * DIR/kubelet.sock, dials back and follows the plugins that register, and
 * takes commands on stdin, printing one event per line on stdout (see
 * docs/kubelet-sim.md). This file is the table of contents: options, start,
 * the loop over stdin and signals, stop. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/log.h"
#include "base/macro.h"
#include "base/parse.h"
#include "commands.h"
#include "output.h"
#include "podresources.h"
#include "registration.h"
#include "sim.h"

struct options {
	const char *dir;
	bool timestamps;
	enum log_level log_level;
	const char *pod_resources_socket;
	const char *dra_registry;
	uint32_t let_go_ms;
};

static void usage(FILE *f)
{
	fputs("Usage: kubelet-sim --dir DIR [--pod-resources-socket PATH] [--dra-registry DIR]\n"
	      "                   [--let-go-ms MS] [--timestamps] [--log-level LEVEL] [--help]\n"
	      "\n"
	      "Simulates the kubelet's device manager for device plugin tests: serves\n"
	      "Registration on DIR/kubelet.sock, follows registered plugins, and reads\n"
	      "commands on stdin (allocate N, allocate-ids, allocate-none, allocate-many,\n"
	      "release, options, list, use, restart, end-stream, quit), printing one event\n"
	      "per line on stdout. It runs no pods: the real kubelet is the reference.\n"
	      "See docs/kubelet-sim.md.\n"
	      "\n"
	      "  --dir DIR          the device-plugins directory (created if missing)\n"
	      "  --pod-resources-socket PATH\n"
	      "                     serve the pod resources API (v1 List) there\n"
	      "  --dra-registry DIR register the DRA drivers whose sockets appear in DIR (the\n"
	      "                     kubelet's plugins_registry); commands dra-prepare and\n"
	      "                     dra-unprepare NAMESPACE NAME UID call the last one\n"
	      "  --let-go-ms MS     hold a plugin's socket path for MS after its stream ended\n"
	      "                     (the kubelet lets go of it a while later); a Register\n"
	      "                     naming a held path is refused, as the kubelet does\n"
	      "  --timestamps       prefix every stdout line with ts=<CLOCK_MONOTONIC us>\n"
	      "  --log-level LEVEL  stderr logging: error, warn, info (default), debug\n"
	      "  --help             show this text\n",
	      f);
}

/* One line naming what is wrong and the hint to --help (base/cli.h). */
static int bad_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad_usage(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cli_usage_verror("kubelet-sim", fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool is_option(const char *arg, size_t name_len, const char *name)
{
	return strlen(name) == name_len && strncmp(arg, name, name_len) == 0;
}

/* Sets one option that takes a value. */
static int set_value(struct options *o, const char *name, const char *value)
{
	if (strcmp(name, "--log-level") == 0) {
		if (log_level_parse(value, &o->log_level) < 0)
			return bad_usage("bad --log-level '%s' (error, warn, info or debug)", value);
		return 0;
	}
	if (strcmp(name, "--let-go-ms") == 0) {
		if (parse_u32(value, 10, 600000, &o->let_go_ms) < 0)
			return bad_usage("bad --let-go-ms '%s' (milliseconds, at most 600000)", value);
		return 0;
	}
	/* --dir, --pod-resources-socket */
	if (value[0] == '\0')
		return bad_usage("option %s needs a non-empty value", name);
	if (strcmp(name, "--dir") == 0) {
		char socket_path[SOCKET_PATH_MAX], why[4096];
		/* The kubelet's socket goes in DIR: a DIR too long for it is a bad value. */
		if (path_join(socket_path, sizeof(socket_path), value, "kubelet.sock") < 0) {
			socket_path_too_long(why, sizeof(why), value, "kubelet.sock");
			return bad_usage("--dir: %s", why);
		}
		o->dir = value;
		return 0;
	}
	if (value[0] != '/')
		return bad_usage("option %s needs an absolute path, not '%s'", name, value);
	if (strcmp(name, "--dra-registry") == 0)
		o->dra_registry = value;
	else
		o->pod_resources_socket = value;
	return 0;
}

/* Returns 0, 1 for --help, or -EINVAL after printing why and the hint to --help. */
static int parse_options(int argc, char **argv, struct options *ret_options)
{
	static const char *const valued[] = { "--dir", "--log-level", "--pod-resources-socket", "--dra-registry",
					      "--let-go-ms" };
	struct options o = { .log_level = LOG_LEVEL_INFO };
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (strncmp(arg, "--", 2) != 0)
			return bad_usage("unexpected argument '%s'", arg);
		const char *eq = strchr(arg, '=');
		size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
		const char *value = eq ? eq + 1 : NULL;

		if (is_option(arg, name_len, "--help")) {
			if (value)
				return bad_usage("option '%s' takes no value", arg);
			usage(stdout);
			return 1;
		}
		if (is_option(arg, name_len, "--timestamps")) {
			if (value)
				return bad_usage("option '%s' takes no value", arg);
			o.timestamps = true;
			continue;
		}
		const char *name = NULL;
		for (size_t j = 0; j < ELEMENTSOF(valued); j++)
			if (is_option(arg, name_len, valued[j]))
				name = valued[j];
		if (!name)
			return bad_usage("unknown option '%s'", arg);
		if (!value) {
			if (i + 1 >= argc)
				return bad_usage("option '%s' needs a value", arg);
			value = argv[++i];
		}
		int r = set_value(&o, name, value);
		if (r < 0)
			return r;
	}
	if (!o.dir)
		return bad_usage("--dir is required");
	*ret_options = o;
	return 0;
}

/* Reads what stdin has, runs every complete line. Returns 0, or 1 at quit
 * or end of input. Lines longer than COMMAND_LINE_MAX are refused whole. */
static int read_commands(struct sim *sim, char *buf, size_t *len, bool *skipping)
{
	ssize_t n = read(STDIN_FILENO, buf + *len, COMMAND_LINE_MAX - *len);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : 1;
	bool eof = n == 0;
	*len += (size_t)n;

	bool quit = false;
	size_t start = 0;
	for (size_t i = 0; i < *len && !quit; i++) {
		if (buf[i] != '\n')
			continue;
		buf[i] = '\0';
		if (*skipping)
			*skipping = false;
		else
			commands_run(sim, buf + start, &quit);
		start = i + 1;
	}
	memmove(buf, buf + start, *len - start);
	*len -= start;

	if (*len == COMMAND_LINE_MAX) {
		if (!*skipping)
			out_error("command line longer than %d bytes", COMMAND_LINE_MAX - 1);
		*skipping = true;
		*len = 0;
	}
	if (eof && !quit && *len > 0 && !*skipping) {
		/* A last line without a newline still counts. */
		buf[*len] = '\0';
		commands_run(sim, buf, &quit);
	}
	return quit || eof ? 1 : 0;
}

/* Waits for commands and signals until quit, end of input, SIGTERM or SIGINT. */
static void run_loop(struct sim *sim, int signal_fd)
{
	static char buf[COMMAND_LINE_MAX + 1];
	size_t len = 0;
	bool skipping = false;
	struct pollfd fds[3] = {
		{ .fd = STDIN_FILENO, .events = POLLIN },
		{ .fd = signal_fd, .events = POLLIN },
		{ .fd = sim->dra.inotify_fd, .events = POLLIN }, /* -1 is skipped */
	};
	for (;;) {
		/* Only a DRA socket that does not accept yet is tried again
		 * after a while; otherwise the loop reacts to input and signals. */
		int n = poll(fds, 3, dra_sim_timeout(&sim->dra));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_error("poll: %s", strerror(errno));
			return;
		}
		if (n == 0) {
			dra_sim_retry(&sim->dra);
			continue;
		}
		if (fds[1].revents & POLLIN) {
			struct signalfd_siginfo info;
			if (read(signal_fd, &info, sizeof(info)) == (ssize_t)sizeof(info))
				log_info("got signal %u, exiting", info.ssi_signo);
			return;
		}
		if (fds[2].revents & POLLIN)
			dra_sim_on_events(&sim->dra);
		if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (read_commands(sim, buf, &len, &skipping) != 0)
				return;
		}
	}
}

int main(int argc, char **argv)
{
	struct options opts = { 0 };
	int r = parse_options(argc, argv, &opts);
	if (r != 0)
		return r > 0 ? 0 : 2;
	log_set_level(opts.log_level);

	struct sim sim;
	/* Cannot fail: parse_options saw DIR/kubelet.sock fit. */
	r = sim_init(&sim, opts.dir);
	if (r < 0)
		return 1;
	sim.let_go_ms = opts.let_go_ms;
	out_init(opts.timestamps);

	/* Blocked before any thread starts, so every thread inherits the mask
	 * and the signals only arrive through the signalfd. */
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	/* Logging never blocks the loop, as in the plugin; direct if it fails. */
	log_start(STDERR_FILENO, LOG_QUEUE_BYTES_DEFAULT);
	int signal_fd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (signal_fd < 0) {
		r = -errno;
		log_error("signalfd: %s", strerror(-r));
		goto out;
	}
	/* A reader that goes away must not kill us mid-teardown. */
	struct sigaction ignore = { .sa_handler = SIG_IGN };
	sigaction(SIGPIPE, &ignore, NULL);

	r = kubelet_start(&sim);
	if (r < 0)
		goto out;
	if (opts.pod_resources_socket) {
		r = podresources_start(&sim, opts.pod_resources_socket);
		if (r < 0) {
			log_error("cannot serve the pod resources API on %s: %s", opts.pod_resources_socket, strerror(-r));
			goto out;
		}
	}

	struct out_line line;
	out_start(&line, "ready");
	out_kv(&line, "dir", sim.dir);
	out_emit(&line);
	/* After `ready`, so that a driver already there is registered in a
	 * line a test waits for, not one it skips on its way to `ready`. */
	if (opts.dra_registry && (r = dra_sim_start(&sim.dra, opts.dra_registry)) < 0)
		goto out;

	run_loop(&sim, signal_fd);
	r = 0;

out:
	dra_sim_stop(&sim.dra);
	podresources_stop(&sim);
	kubelet_stop(&sim, "kubelet-sim exiting");
	/* gRPC unlinks kubelet.sock when it stops listening; make sure of it. */
	if (r == 0)
		unlink(sim.kubelet_socket);
	sim_fini(&sim);
	out_fini();
	if (signal_fd >= 0)
		close(signal_fd);
	log_stop(LOG_STOP_TIMEOUT_MS);
	return r < 0 ? 1 : 0;
}
