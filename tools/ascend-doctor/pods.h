/* SPDX-License-Identifier: Apache-2.0 */
/* ascend-doctor pods: which container holds which chip, as the kubelet
 * itself records it (its pod resources API, v1 List), so an operator can
 * tell who holds a faulty chip and a test can check that no chip is held
 * twice across kubelet and plugin restarts. */
#pragma once

#include "options.h"
#include "report.h"

/* One OK check per chip held ("npu-3: default/holder/main"), in chip order;
 * a FAIL with the cause and fix when the kubelet cannot be asked. Returns 0
 * or -ENOMEM. */
int pods_run(const struct doctor_options *options, struct report *report);
