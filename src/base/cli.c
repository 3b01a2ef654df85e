/* SPDX-License-Identifier: Apache-2.0 */
#include "base/cli.h"

#include <stdbool.h>
#include <stdio.h>

#include "base/log.h"

/* The message is cut here: it quotes arguments, which have no bound. */
#define CLI_MESSAGE_MAX 4096

/* "PROGRAM: MESSAGE" and a newline on stderr, the message escaped as the
 * log escapes its lines. */
static void print_line(const char *program, const char *fmt, va_list ap)
{
	char message[CLI_MESSAGE_MAX], line[CLI_MESSAGE_MAX];
	int n = vsnprintf(message, sizeof(message), fmt, ap);
	bool cut = n >= (int)sizeof(message);
	if (n < 0)
		message[0] = '\0';
	size_t len = log_text_escape(line, 0, sizeof(line) - 1, message, &cut);
	line[len] = '\0';
	fprintf(stderr, "%s: %s%s\n", program, line, cut ? "..." : "");
}

void cli_usage_verror(const char *program, const char *fmt, va_list ap)
{
	print_line(program, fmt, ap);
	fprintf(stderr, "Try '%s --help' for more information.\n", program);
}

void cli_usage_error(const char *program, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cli_usage_verror(program, fmt, ap);
	va_end(ap);
}

void cli_error(const char *program, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	print_line(program, fmt, ap);
	va_end(ap);
}
