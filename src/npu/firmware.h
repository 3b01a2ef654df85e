/* SPDX-License-Identifier: Apache-2.0 */
/* The version of the node's NPU firmware package, read from its
 * version.info, which the package installs beside the driver
 * (/usr/local/Ascend/{driver,firmware}): what the DRA front end publishes
 * as each chip's firmwareVersion. */
#pragma once

#include <stddef.h>

/* A version longer than this is no version. */
#define NPU_FIRMWARE_VERSION_MAX 64

/* Reads <dirname(driver_path)>/firmware/version.info and copies its
 * Version= value to out[size]. Returns 0, or a negative errno with why
 * naming the file and the problem (-ENOENT: not installed or not mounted,
 * -EINVAL: no Version= or a damaged file, -ENAMETOOLONG: a path or value
 * too long). */
int npu_firmware_version(const char *driver_path, char *out, size_t size, char *why, size_t why_size);
