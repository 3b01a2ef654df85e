/* SPDX-License-Identifier: Apache-2.0 */
#include "telemetry/nfd.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* "<dir>/.<name>.tmp" next to path. */
static int tmp_path(const char *path, char *tmp, size_t size)
{
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	if (!name[0])
		return -EINVAL;
	int dir_len = slash ? (int)(slash - path + 1) : 0;
	return str_printf(tmp, size, "%.*s.%s.tmp", dir_len, path, name);
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int nfd_write(const char *path, const char *text)
{
	char tmp[PATH_MAX];
	int r = tmp_path(path, tmp, sizeof(tmp));
	if (r < 0)
		return r;
	size_t len = strlen(text);
	if (len > NFD_FILE_MAX)
		return -EFBIG;
	if (unlink(tmp) < 0 && errno != ENOENT)
		return -errno;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	r = write_all(fd, text, len);
	/* nfd-worker may run as another user: the umask must not narrow it. */
	if (r == 0 && fchmod(fd, 0644) < 0)
		r = -errno;
	/* No fsync: the rename alone keeps readers from a half-written file,
	 * and the plugin writes the file anew at every start, so a crash that
	 * loses the latest write costs nothing; a sync would cost the daemon's
	 * loop milliseconds at every chip change. */
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}

int nfd_remove(const char *path)
{
	char tmp[PATH_MAX];
	int r = tmp_path(path, tmp, sizeof(tmp));
	if (r < 0)
		return r;
	(void)unlink(tmp);
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}
