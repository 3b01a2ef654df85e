/* SPDX-License-Identifier: Apache-2.0 */
/* How the programs here (the plugin, ascend-doctor, kubelet-sim) report a
 * command line they cannot use, the GNU way: one line naming the flag,
 * value or argument and what is wrong with it, then a pointer to --help,
 * both on stderr. The usage itself is printed only for --help, on stdout:
 * printed after an error, it pushed the error out of sight. The caller then
 * exits with its usage status (2; 3 for ascend-doctor, whose 2 is a FAIL
 * verdict). */
#pragma once

#include <stdarg.h>

/* Prints "PROGRAM: MESSAGE" and "Try 'PROGRAM --help' for more
 * information." to stderr. A control character in the message (a newline
 * in a quoted value, say) is written escaped as the log escapes it
 * (log_text_escape), so the error stays one line. */
void cli_usage_error(const char *program, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cli_usage_verror(const char *program, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* Prints "PROGRAM: MESSAGE" to stderr, escaped alike: one line for an
 * error that is no usage error (a file that says something wrong, a
 * module that will not load), before the program's log starts. */
void cli_error(const char *program, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
