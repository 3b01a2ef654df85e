/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes the flag parser: the input is split at NUL bytes into argv. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "daemon/serving.h"
#include "fuzz/fuzz_text.h"

#define MAX_ARGS 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct config config;
	static struct serving serving;
	char *copy = fuzz_text(data, size, 16384);
	if (!copy)
		return 0;

	char *argv[MAX_ARGS + 1] = { (char *)(uintptr_t)"ascend-device-plugin" };
	int argc = 1;
	for (char *p = copy; p < copy + size && argc < MAX_ARGS; p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;

	char why[512] = "";
	bool in_file;
	if (config_parse(argc, argv, argc > 2 ? argv[2] : NULL, &config, NULL, why, sizeof(why)) == 0 &&
	    serving_build(&config, &serving, &in_file, why, sizeof(why)) == 0) {
		/* Whatever was accepted yields socket paths that fit a sockaddr_un. */
		const struct resource_def *def = serving_default(&serving);
		if (strlen(def->socket_path) >= SOCKET_PATH_MAX || def->endpoint[0] == '\0')
			abort();
	} else if (why[0] == '\0') {
		abort(); /* a refusal always says why */
	}
	free(copy);
	return 0;
}
