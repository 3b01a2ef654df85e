/* SPDX-License-Identifier: Apache-2.0 */
/* The chips the plugin separated (fault level ManuallySeparateNPU), as its
 * record in --state-dir lists them (fault/separation.h): `ascend-doctor
 * node` lists them with why and the command that releases each, and
 * `ascend-doctor release npu-<phy>` releases one by removing its record,
 * which the running plugin sees at once (it watches the directory) and a
 * plugin started later never reads. Needs no API access: run it on the
 * node, or in the plugin's pod with kubectl exec. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npu/chip.h"
#include "options.h"
#include "report.h"

/* One check per separated chip (WARN, with the release command as the
 * fix), or one OK line when none is; a record that cannot be read is a
 * FAIL. Sets separated[i] for each of chips[0..n) the record names, so
 * that what the plugin advertises is compared with it. 0 or -ENOMEM. */
int separated_check(const struct doctor_options *o, struct report *report, const struct npu_chip *chips, size_t n,
		    bool *separated);

/* Releases chip ("npu-<phy>"): removes its record under the writers' lock.
 * One check: OK when it was released, FAIL when nothing names it or the
 * record cannot be read or written. -EINVAL (nothing reported) when chip
 * is not npu-<phy>; otherwise 0 or -ENOMEM. */
int separated_release(const struct doctor_options *o, const char *chip, struct report *report);
