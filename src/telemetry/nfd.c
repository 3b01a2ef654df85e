/* SPDX-License-Identifier: Apache-2.0 */
#include "telemetry/nfd.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/file.h"
#include "base/parse.h"
#include "base/strbuf.h"

static bool alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

int nfd_label_value_sanitize(const char *s, char *out)
{
	char buf[NFD_VALUE_MAX];
	/* Leading characters that cannot start a value are dropped first, so
	 * that a long prefix of them does not eat the room. */
	while (*s && !alnum(*s))
		s++;
	size_t n = 0;
	for (; *s && n < NFD_VALUE_MAX - 1; s++) {
		char c = *s;
		buf[n++] = alnum(c) || c == '.' || c == '_' || c == '-' ? c : '-';
	}
	while (n > 0 && !alnum(buf[n - 1]))
		n--;
	if (n == 0)
		return -EINVAL;
	memcpy(out, buf, n);
	out[n] = '\0';
	return 0;
}

/* One label, left out when its value cannot be made valid. */
static void label(struct strbuf *sb, const char *key, const char *value)
{
	char v[NFD_VALUE_MAX];
	if (value && nfd_label_value_sanitize(value, v) == 0)
		strbuf_printf(sb, "%s=%s\n", key, v);
}

static void label_u64(struct strbuf *sb, const char *key, uint64_t value)
{
	strbuf_printf(sb, "%s=%llu\n", key, (unsigned long long)value);
}

int nfd_render(const struct nfd_info *info, char *buf, size_t size)
{
	struct strbuf sb;
	strbuf_init(&sb, buf, size, NULL);
	strbuf_printf(&sb, "# Written by ascend-device-plugin, removed when it stops.\n");
	strbuf_printf(&sb, "ascend.com/npu.present=true\n");
	label_u64(&sb, "ascend.com/npu.count", info->count);
	label_u64(&sb, "ascend.com/npu.healthy", info->healthy);
	/* Only while there are some: a scheduler can keep new work off such a
	 * node, and a healthy node's file stays as it was. */
	if (info->subhealth)
		label_u64(&sb, "ascend.com/npu.subhealth", info->subhealth);
	if (info->product && info->product[0]) {
		char product[128];
		if (str_printf(product, sizeof(product), "Ascend%s", info->product) == 0)
			label(&sb, "ascend.com/npu.product", product);
	}
	label(&sb, "ascend.com/npu.family", info->family);
	if (info->memory_mib)
		label_u64(&sb, "ascend.com/npu.memory", info->memory_mib);
	if (info->aicore)
		label_u64(&sb, "ascend.com/npu.aicore", info->aicore);
	label(&sb, "ascend.com/npu.topology", info->topology);
	label(&sb, "ascend.com/driver.version", info->driver);
	if (info->replicas > 1) {
		label_u64(&sb, "ascend.com/npu.replicas", info->replicas);
		strbuf_printf(&sb, "ascend.com/npu.sharing-strategy=time-slicing\n");
	}
	return sb.truncated ? -ENOBUFS : 0;
}

int nfd_write(const char *path, const char *text)
{
	size_t len = strlen(text);
	if (len > NFD_FILE_MAX)
		return -EFBIG;
	/* nfd-worker skips the temp dot-file and may run as another user. Not
	 * synced: the rename alone keeps readers from a half-written file, and
	 * the plugin writes the file anew at every start, so a crash that loses
	 * the latest write costs nothing; a sync would cost the daemon's loop
	 * milliseconds at every chip change. */
	return file_write_atomic(path, text, len, 0644, 0);
}

int nfd_remove(const char *path)
{
	return file_remove_atomic(path);
}
