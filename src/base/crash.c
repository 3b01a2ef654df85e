/* SPDX-License-Identifier: Apache-2.0 */
#include "base/crash.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "base/macro.h"

static const int fatal_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
static struct sigaction previous[ELEMENTSOF(fatal_signals)];
static const char *line_prefix = "";
/* Per thread: a thread that runs only vendor code is guarded for its whole
 * life, the loop only around the calls it makes itself. */
static _Thread_local const char *guard_what;

static void put(const char *s)
{
	size_t len = strlen(s);
	while (len > 0) {
		ssize_t n = write(STDERR_FILENO, s, len);
		if (n <= 0)
			return;
		s += n;
		len -= (size_t)n;
	}
}

/* Only async-signal-safe calls: strlen, write, _exit, sigaction, raise. */
static void on_fatal(int sig)
{
	const char *what = guard_what;
	if (what) {
		put(line_prefix);
		put(": fatal: ");
		put("SIG");
		put(sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
		put(" while ");
		put(what);
		put("\n");
		_exit(1);
	}
	for (size_t i = 0; i < ELEMENTSOF(fatal_signals); i++)
		if (fatal_signals[i] == sig)
			sigaction(sig, &previous[i], NULL);
	raise(sig);
}

int crash_guard_install(const char *prefix)
{
	/* sa_flags is an int, the flags unsigned: SA_RESETHAND is the sign bit. */
	struct sigaction sa = { .sa_handler = on_fatal, .sa_flags = (int)(SA_RESETHAND | SA_NODEFER) };
	sigemptyset(&sa.sa_mask);
	line_prefix = prefix;
	for (size_t i = 0; i < ELEMENTSOF(fatal_signals); i++)
		if (sigaction(fatal_signals[i], &sa, &previous[i]) < 0)
			return -errno;
	return 0;
}

void crash_guard_enter(const char *what)
{
	guard_what = what;
}

void crash_guard_leave(void)
{
	guard_what = NULL;
}
