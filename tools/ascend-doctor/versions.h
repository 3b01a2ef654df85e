/* SPDX-License-Identifier: Apache-2.0 */
/* `ascend-doctor versions`: driver, firmware and CANN versions from their
 * version files, checked against each other's compatibility lists; the
 * chip from DCMI against the model's --soc-version. Facts that cannot be
 * found are WARN "unknown", never guessed. The driver and firmware checks
 * are `node`'s too. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "options.h"
#include "report.h"

struct driver_facts {
	bool found;
	char path[512];
	char version[64];
	char innerversion[96];
	char compatible[1024];   /* CANN releases, may be empty */
	char compatible_fw[512]; /* firmware ranges, may be empty */
};

/* <host_root><path> into out[size]. */
int doctor_host_path(const struct doctor_options *o, const char *path, char *out, size_t size);

/* Reads a version file (at most VERFILE_MAX_BYTES) into a malloc'd,
 * terminated buffer. -errno with why. */
int doctor_read_small(const char *path, char **ret_text, size_t *ret_len, char *why, size_t why_size);

/* The `driver` check: <driver>/version.info. missing is the verdict when it
 * is not there (FAIL on a node, WARN where only versions are asked for). */
int versions_check_driver(const struct doctor_options *o, struct report *report, enum verdict missing,
			  struct driver_facts *ret_facts);

/* The `firmware` check: <driver>/../firmware/version.info against the
 * driver's compatible_version_fw, and the driver against the firmware's
 * compatible_version_drv. */
int versions_check_firmware(const struct doctor_options *o, struct report *report, const struct driver_facts *driver);

/* The whole subcommand. 0 or -ENOMEM. */
int versions_run(const struct doctor_options *o, struct report *report);
