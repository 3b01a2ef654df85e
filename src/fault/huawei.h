/* SPDX-License-Identifier: Apache-2.0 */
/* Huawei's fault policy files, as the MindCluster device plugin publishes
 * them (build/faultCode.json and build/faultCustomization.json, which
 * operators tune in the ConfigMap mindx-dl-fault-config), read into the
 * fault policy's configuration (fault/policy.h), so that a fleet moving
 * from MindCluster keeps its policy. The files are read whole and bounded
 * (FAULT_HUAWEI_MAX_BYTES, nesting), every key is checked, and a refusal
 * says where: "line 3: FaultFrequency[0].Times: must be an integer from 1
 * to 32", prefixed with the file's path by fault_huawei_load.
 *
 * faultCode.json: an object of lists of codes, one list per level:
 * NotHandleFaultCodes, SubHealthFaultCodes, RestartRequestCodes,
 * RestartBusinessCodes, FreeRestartNPUCodes, RestartNPUCodes,
 * PreSeparateNPUCodes, SeparateNPUCodes, and RecoverRestartBusinessCodes of
 * older releases, taken as RestartBusiness (the kubelet sees both alike). A
 * code is a string of hex digits ("80E01801", current releases) or a JSON
 * integer (2162169857, older releases). As in Huawei's plugin, the file
 * replaces the code table, built-in one included (a code it does not list
 * has the default level), and a code in several lists has the most severe
 * of their levels. The network lists (NotHandleFaultNetworkCodes,
 * PreSeparateNPUNetworkCodes, SeparateNPUNetworkCodes,
 * SubHealthFaultNetworkCodes) are refused: Huawei's plugin reports those
 * faults of a chip's RoCE link apart from the chip's health, which is all
 * this plugin judges, so taking them as chip levels would change what they
 * mean.
 *
 * faultCustomization.json: FaultFrequency[] (EventId, TimeWindow, Times,
 * FaultHandling, ReleaseTimeWindow) and FaultDuration[] (EventId,
 * FaultTimeout, RecoverTimeout, FaultHandling) become frequency and
 * duration windows, appended to the configuration's; times are seconds and
 * the ranges are Huawei's (TimeWindow 60..864000, Times 1..100 but here at
 * most FAULT_POLICY_MAX_COUNT, ReleaseTimeWindow 0 for none or 60..2^32,
 * FaultTimeout 0..600, RecoverTimeout 0..86400). GraceTolerance
 * (WaitProcessReadCMTime, called WaitFlushingCMTime in older releases,
 * WaitDeviceResetTime, WaitFaultSelfHealingTime) is checked and ignored:
 * it times Huawei's ConfigMap reports and hot resets, which this plugin
 * does not make. A rule with an empty EventId applies to no code, as in
 * Huawei's plugin (its published file carries one).
 *
 * Where Huawei's plugin skips a rule it finds wrong and says so only in its
 * log (a FaultHandling the kind does not take, such as ManuallySeparateNPU
 * in FaultDuration; a frequency rule of another level without a
 * ReleaseTimeWindow; a code in two rules of one kind), this reader refuses
 * the file: a policy that quietly differs from its file is worse than one
 * that says what to fix. */
#pragma once

#include <stddef.h>

#include "fault/policy.h"

#define FAULT_HUAWEI_MAX_BYTES (1024 * 1024)
#define FAULT_HUAWEI_MAX_DEPTH 16
#define FAULT_HUAWEI_CODES_FILE "faultCode.json"
#define FAULT_HUAWEI_CUSTOMIZATION_FILE "faultCustomization.json"

/* Reads len bytes of faultCode.json into config's code table (see above).
 * Returns 0, -EINVAL (malformed JSON, a key, type or value) or -E2BIG (more
 * than FAULT_POLICY_MAX_CODES codes, or the text too large), with "line N:
 * key.path: problem" in why; config is changed only on success. */
int fault_huawei_codes_parse(const char *text, size_t len, struct fault_policy_config *config, char *why,
			     size_t why_size);

/* Reads len bytes of faultCustomization.json into config's windows (see
 * above). Errors as fault_huawei_codes_parse. */
int fault_huawei_customization_parse(const char *text, size_t len, struct fault_policy_config *config, char *why,
				     size_t why_size);

/* Reads Huawei's files at path into config: a directory (a mounted
 * ConfigMap) holding faultCode.json, faultCustomization.json or both (its
 * other files are not read), or one file of those two names. Returns 0, or
 * a negative errno with why naming the file ("PATH/faultCode.json: line 3:
 * ..."); -ENOENT when a directory holds neither; config is changed only on
 * success. */
int fault_huawei_load(const char *path, struct fault_policy_config *config, char *why, size_t why_size);
