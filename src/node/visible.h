/* SPDX-License-Identifier: Apache-2.0 */
/* What a container is told of the NPUs it gets, the same whoever hands them
 * out (Allocate's answer, the DRA driver's CDI spec): ASCEND_VISIBLE_DEVICES
 * lists their numbers (phy ids, vNPU ids: npu_device_number) comma
 * separated, which CANN and the Ascend Docker Runtime read; with a vNPU
 * among them, ASCEND_RUNTIME_OPTIONS=VIRTUAL makes that runtime, where it
 * runs, look for /dev/vdavinci<id> rather than /dev/davinci<id>. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "npu/inventory.h"

#define VISIBLE_DEVICES_ENV "ASCEND_VISIBLE_DEVICES"
#define VISIBLE_OPTIONS_ENV "ASCEND_RUNTIME_OPTIONS"
#define VISIBLE_OPTIONS_VIRTUAL "VIRTUAL"
/* Room for one number and its comma. */
#define VISIBLE_NUMBER_MAX 11

/* The value of ASCEND_VISIBLE_DEVICES for devs, in their order, into
 * buf[size] (n * VISIBLE_NUMBER_MAX + 1 always fits). Returns 0 or -ENOSPC. */
int visible_devices(const struct npu_device *const *devs, size_t n, char *buf, size_t size);

/* Whether devs hold a vNPU: ASCEND_RUNTIME_OPTIONS=VIRTUAL is then due. */
bool visible_virtual(const struct npu_device *const *devs, size_t n);
