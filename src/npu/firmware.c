/* SPDX-License-Identifier: Apache-2.0 */
#include "npu/firmware.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/parse.h"
#include "npu/verfile.h"

int npu_firmware_version(const char *driver_path, char *out, size_t size, char *why, size_t why_size)
{
	char path[4096], problem[128], version[NPU_FIRMWARE_VERSION_MAX + 1];
	char *text = NULL;
	size_t len = 0;
	/* The parent of the driver's directory, trailing slashes aside. */
	size_t n = strlen(driver_path);
	while (n > 1 && driver_path[n - 1] == '/')
		n--;
	while (n > 0 && driver_path[n - 1] != '/')
		n--;
	while (n > 1 && driver_path[n - 1] == '/')
		n--;
	if (str_printf(path, sizeof(path), "%.*s/firmware/version.info", (int)(n > 1 ? n : 0), driver_path) < 0) {
		snprintf(why, why_size, "the firmware's version.info: path too long");
		return -ENAMETOOLONG;
	}
	int r = file_read_bounded(path, VERFILE_MAX_BYTES, &text, &len, problem, sizeof(problem));
	if (r < 0) {
		snprintf(why, why_size, "%s: %s", path, problem);
		return r;
	}
	r = verfile_get(text, len, "Version", version, sizeof(version));
	free(text);
	if (r == 0 && version[0] == '\0')
		r = -EINVAL;
	if (r < 0) {
		snprintf(why, why_size, "%s: %s", path,
			 r == -ENOENT || r == -EINVAL ? "no Version= line" : "the Version= value is too long");
		return r == -ENOENT ? -EINVAL : r;
	}
	if (str_copy(out, size, version) < 0) {
		snprintf(why, why_size, "%s: the Version= value is too long", path);
		return -ENAMETOOLONG;
	}
	return 0;
}
