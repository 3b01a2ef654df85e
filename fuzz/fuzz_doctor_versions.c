/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes ascend-doctor's version-file readers: the input is a version file
 * (version.info, ascend_toolkit_install.info, ascend_install.info); every
 * value found goes through the version order and the list readers, whose
 * answers must be consistent. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npu/verfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = { "Version", "Innerversion", "compatible_version", "compatible_version_fw",
					    "compatible_version_drv", "UserName", "version" };
	char values[7][512];
	const char *text = (const char *)data;
	for (size_t i = 0; i < 7; i++) {
		int r = verfile_get(text, size, keys[i], values[i], sizeof(values[i]));
		if (r == 0 && strlen(values[i]) >= sizeof(values[i]))
			abort();
		if (r != 0 && r != -ENOENT && r != -ENAMETOOLONG && r != -EINVAL)
			abort();
		if (r != 0)
			values[i][0] = '\0';
	}
	const char *version = values[0], *inner = values[1];
	/* The order is a total preorder: reflexive and antisymmetric. */
	for (size_t i = 0; i < 7; i++) {
		if (version_compare(values[i], values[i]) != 0)
			abort();
		int ab = version_compare(version, values[i]), ba = version_compare(values[i], version);
		if ((ab > 0) != (ba < 0) || (ab == 0) != (ba == 0))
			abort();
	}
	bool in = false;
	for (size_t i = 2; i < 5; i++) {
		int r = verrange_contains(values[i], version, &in);
		if (r != 0 && r != -EINVAL)
			abort();
		r = verlist_has_prefix_of(values[i], inner, &in);
		if (r != 0 && r != -EINVAL)
			abort();
	}
	char release[64];
	if (innerversion_release(inner, release, sizeof(release)) == 0 && strncmp(release, inner, strlen(release)) != 0)
		abort();
	return 0;
}
