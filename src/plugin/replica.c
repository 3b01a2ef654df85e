/* SPDX-License-Identifier: Apache-2.0 */
#include "plugin/replica.h"

#include <errno.h>
#include <string.h>

#include "base/strbuf.h"

bool replica_sharing(const struct replica_options *options)
{
	return options && options->replicas > 1;
}

bool replica_held_whole(const struct replica_options *options, const struct npu_device *device)
{
	return replica_sharing(options) && !npu_device_shareable(device);
}

unsigned replica_count(const struct replica_options *options, const struct npu_device *device)
{
	return !replica_sharing(options) || replica_held_whole(options, device) ? 1 : options->replicas;
}

int replica_format(const char *chip_id, unsigned k, char *buf, size_t size)
{
	struct strbuf sb;
	strbuf_init(&sb, buf, size, NULL);
	return strbuf_printf(&sb, "%s::%u", chip_id, k);
}

int replica_parse(const struct npu_snapshot *snap, unsigned replicas, const char *id, size_t *ret_index,
		  unsigned *ret_k)
{
	const char *sep = strstr(id, "::");
	if (!sep || (size_t)(sep - id) >= NPU_DEVICE_ID_MAX)
		return -EINVAL;
	const char *digits = sep + 2;
	size_t n = strspn(digits, "0123456789");
	/* At most two digits: REPLICA_MAX is 64. */
	if (n == 0 || n > 2 || digits[n] != '\0' || (n > 1 && digits[0] == '0'))
		return -EINVAL;
	unsigned k = (unsigned)(digits[0] - '0');
	if (n == 2)
		k = k * 10 + (unsigned)(digits[1] - '0');
	if (k >= replicas)
		return -EINVAL;
	char chip[NPU_DEVICE_ID_MAX];
	memcpy(chip, id, (size_t)(sep - id));
	chip[sep - id] = '\0';
	const struct npu_device *d = npu_snapshot_find(snap, chip);
	if (!d)
		return -ENOENT;
	if (k >= replica_count(&(struct replica_options){ .replicas = replicas }, d))
		return -EINVAL;
	*ret_index = (size_t)(d - snap->devices);
	*ret_k = k;
	return 0;
}
