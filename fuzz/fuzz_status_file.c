/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes the reader of the live status file (node/status_files.c), which
 * the daemon runs on files in a directory that containers see: whatever a
 * file says, the devices it yields are device ids within the bound, and a
 * document rendered for them reads back as the same list. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "node/status_files.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char ids[STATUS_FILE_MAX_DEVICES][NPU_DEVICE_ID_MAX], again[STATUS_FILE_MAX_DEVICES][NPU_DEVICE_ID_MAX];
	char why[256];
	size_t n = 0, m = 0;
	if (status_file_devices((const char *)data, size, ids, STATUS_FILE_MAX_DEVICES, &n, why, sizeof(why)) < 0)
		return 0;
	if (n == 0 || n > STATUS_FILE_MAX_DEVICES)
		abort();
	/* Devices the node no longer has: each rendered by its id alone. */
	static struct npu_device devs[STATUS_FILE_MAX_DEVICES];
	const struct npu_device *list[STATUS_FILE_MAX_DEVICES];
	for (size_t i = 0; i < n; i++) {
		if (strncmp(ids[i], "npu-", 4) != 0 && strncmp(ids[i], "vnpu-", 5) != 0)
			abort();
		memset(&devs[i], 0, sizeof(devs[i]));
		memcpy(devs[i].id, ids[i], sizeof(devs[i].id));
		list[i] = &devs[i];
	}
	char *json = NULL;
	if (status_file_render(list, n, &json) < 0)
		abort();
	if (status_file_devices(json, strlen(json), again, STATUS_FILE_MAX_DEVICES, &m, why, sizeof(why)) < 0 || m != n)
		abort();
	for (size_t i = 0; i < n; i++)
		if (strcmp(ids[i], again[i]) != 0)
			abort();
	free(json);
	return 0;
}
