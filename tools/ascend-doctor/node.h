/* SPDX-License-Identifier: Apache-2.0 */
/* `ascend-doctor node`: the checks an on-call engineer makes on an NPU node
 * (or in the plugin's pod) when a pod fails with "Device not found" or
 * "Permission denied": driver and firmware, device files and their owner
 * and mode against the driver's run user, DCMI and each chip's health and
 * error codes, the kubelet's directory and socket, and what the plugin
 * advertises on its socket compared with what DCMI says. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "options.h"
#include "report.h"

struct dcmi_lib;

/* Opens DCMI the plugin's way: --dcmi-lib, else LD_LIBRARY_PATH, the
 * driver's directories under the host root, /usr/local/dcmi and the
 * ldconfig cache, with the same ownership check. What dcmi_lib_open returns. */
int node_dcmi_open(const struct doctor_options *o, struct dcmi_lib **ret_lib, char *why, size_t why_size);

/* The meaning of a DCMI error code of a chip (the common codes of
 * docs/ascend-doctor.md; NULL for others) and the level the plugin's
 * built-in fault policy table (Huawei's faultCode.json, fault/policy.h)
 * gives it (NULL for a code it does not list). */
void node_fault_code_describe(uint32_t code, const char **ret_meaning, const char **ret_level);

/* "ascend.com/npu" -> "ascend-npu.sock", as the plugin names its socket.
 * -EINVAL without a '/', -ENAMETOOLONG when it does not fit. */
int node_endpoint_name(const char *resource, char *out, size_t size);

/* The whole subcommand. 0 or -ENOMEM. */
int node_run(const struct doctor_options *o, struct report *report);
