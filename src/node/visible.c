/* SPDX-License-Identifier: Apache-2.0 */
#include "node/visible.h"

#include <errno.h>

#include "base/strbuf.h"

int visible_devices(const struct npu_device *const *devs, size_t n, char *buf, size_t size)
{
	struct strbuf sb;
	strbuf_init(&sb, buf, size, NULL);
	for (size_t i = 0; i < n; i++)
		if (strbuf_printf(&sb, "%s%u", i ? "," : "", npu_device_number(devs[i])) < 0)
			return -ENOSPC;
	return size ? 0 : -ENOSPC;
}

bool visible_virtual(const struct npu_device *const *devs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (devs[i]->kind == NPU_DEVICE_VNPU)
			return true;
	return false;
}
