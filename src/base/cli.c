/* SPDX-License-Identifier: Apache-2.0 */
#include "base/cli.h"

#include <stdio.h>

/* The message is cut here: it quotes arguments, which have no bound. */
#define CLI_MESSAGE_MAX 4096

void cli_usage_verror(const char *program, const char *fmt, va_list ap)
{
	char message[CLI_MESSAGE_MAX];
	int n = vsnprintf(message, sizeof(message), fmt, ap);
	if (n < 0)
		message[0] = '\0';
	fprintf(stderr, "%s: ", program);
	for (const char *p = message; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '\n')
			fputs("\\n", stderr);
		else if (c < 0x20 || c == 0x7f)
			fprintf(stderr, "\\x%02x", c);
		else
			fputc(c, stderr);
	}
	if (n >= (int)sizeof(message))
		fputs("...", stderr);
	fprintf(stderr, "\nTry '%s --help' for more information.\n", program);
}

void cli_usage_error(const char *program, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cli_usage_verror(program, fmt, ap);
	va_end(ap);
}
