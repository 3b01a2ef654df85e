/* SPDX-License-Identifier: Apache-2.0 */
/* The deadline for every wait on an event in the tests, shared by the
 * integration harness and the unit tests that wait on another thread.
 * Generous: sanitizer builds on a loaded 2-core machine are slow, and a
 * deadline only bounds a test that is failing anyway. */
#pragma once

#define WAIT_MS 10000

/* How long a process may take to exit after SIGTERM before it is killed:
 * the kubelet's default grace period. On a loaded machine closing an inotify
 * fd alone has been seen to take over 10 s in the kernel (the plugin's main
 * thread in close() of its inotify fd, waiting for fsnotify's cleanup). */
#define EXIT_WAIT_MS 30000
