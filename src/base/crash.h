/* SPDX-License-Identifier: Apache-2.0 */
/* Last words when vendor code kills the process. While the calling thread
 * holds a guard, a fatal signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT)
 * writes one line naming what was being done and exits with status 1, so an
 * operator reads "DCMI crashed in ..." instead of a bare core dump. Anywhere
 * else the signal keeps whatever action it had before crash_guard_install. */
#pragma once

/* Installs the handlers once; prefix starts the line (the program's name).
 * Returns 0 or a negative errno. */
int crash_guard_install(const char *prefix);

/* Guards the calling thread until crash_guard_leave (a thread that runs
 * only vendor code never leaves); what must be a string that outlives the
 * guard ("loading or querying DCMI", say). Not nested. */
void crash_guard_enter(const char *what);
void crash_guard_leave(void);
