/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes the kubeconfig reader (kube/config.c): the input is the file's
 * text. Files it names are looked up under a directory that does not exist,
 * unless the input names an absolute path. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kube_config c = { 0 };
	char why[512] = "";
	if (kube_config_parse_kubeconfig((const char *)data, size, "/nonexistent-fuzz", NULL, &c, why, sizeof(why)) < 0) {
		if (why[0] == '\0')
			abort(); /* a refusal always says why */
		if (c.server)
			abort(); /* nothing written on failure */
		return 0;
	}
	/* Accepted: an https:// server without a trailing '/', a key with its certificate. */
	if (!c.server || strncmp(c.server, "https://", 8) != 0 || c.server[strlen(c.server) - 1] == '/')
		abort();
	if (!c.cert.data != !c.key.data)
		abort();
	kube_config_free(&c);
	return 0;
}
