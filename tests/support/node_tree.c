/* SPDX-License-Identifier: Apache-2.0 */
/* A simulated node's files; see node_tree.h. */
#include "support/node_tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/file.h"
#include "base/macro.h"
#include "base/parse.h"

/* The simulator's library is a few MiB, more with sanitizers. */
#define LIBRARY_MAX (256 * 1024 * 1024)

int node_tree_touch(const char *root, const char *relative)
{
	char path[PATH_MAX];
	int r = path_join(path, sizeof(path), root, relative);
	if (r < 0)
		return r;
	char *slash = strrchr(path, '/');
	*slash = '\0';
	r = mkdir_p(path, 0755);
	*slash = '/';
	if (r < 0)
		return r;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

int node_tree_install(const char *from, const char *to, mode_t mode)
{
	char *data, why[128];
	size_t len;
	int r = file_read_bounded(from, LIBRARY_MAX, &data, &len, why, sizeof(why));
	if (r < 0)
		return r;
	r = file_write_atomic(to, data, len, mode, 0);
	free(data);
	return r;
}

int node_tree_build(const char *root, const struct node_tree_options *o)
{
	static const char *const dirs[] = { NODE_TREE_DEV_DIR, NODE_TREE_SOCKET_DIR, NODE_TREE_DCMI_DIR };
	static const char *const files[] = {
		"dev/devmm_svm",
		"dev/hisi_hdc",
		"usr/local/Ascend/driver/version.info",
		"usr/local/Ascend/driver/lib64/libascend_hal.so",
		"usr/local/bin/npu-smi",
		"etc/ascend_install.info",
	};
	char path[PATH_MAX], relative[64];
	int r;
	for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
		if ((r = path_join(path, sizeof(path), root, dirs[i])) < 0 || (r = mkdir_p(path, 0755)) < 0)
			return r;
	for (unsigned i = 0; i < o->chips; i++) {
		snprintf(relative, sizeof(relative), NODE_TREE_DEV_DIR "/davinci%u", i);
		if ((r = node_tree_touch(root, relative)) < 0)
			return r;
	}
	if (!o->no_manager && (r = node_tree_touch(root, NODE_TREE_DEV_DIR "/davinci_manager")) < 0)
		return r;
	for (size_t i = 0; i < ELEMENTSOF(files); i++)
		if ((r = node_tree_touch(root, files[i])) < 0)
			return r;
	if (!o->dcmi_lib)
		return 0;
	if ((r = path_join(path, sizeof(path), root, NODE_TREE_DCMI_DIR "/libdcmi.so")) < 0)
		return r;
	return node_tree_install(o->dcmi_lib, path, 0755);
}

int node_tree_list(const char *dir, char *buf, size_t size)
{
	if (size == 0)
		return -ENOBUFS;
	struct dirent **entries;
	int n = scandir(dir, &entries, NULL, alphasort);
	if (n < 0)
		return -errno;
	int r = 0;
	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (strcmp(entries[i]->d_name, ".") != 0 && strcmp(entries[i]->d_name, "..") != 0) {
			size_t len = strlen(buf);
			int w = snprintf(buf + len, size - len, "%s%s", len ? "," : "", entries[i]->d_name);
			if (w < 0 || (size_t)w >= size - len)
				r = -ENOBUFS;
		}
		free(entries[i]);
	}
	free(entries);
	return r;
}

int chip_state_write(const char *path, const struct chip_state *st)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	unsigned per_card = st->per_card ? st->per_card : st->chips > 64 ? 4 : 1;
	fprintf(f, "driver 24.1.rc1\n%s", st->head ? st->head : "");
	for (unsigned i = 0; i < st->chips; i++) {
		const char *attrs = st->attrs && st->attrs[i] ? st->attrs[i] : "health=0";
		fprintf(f, "chip phy=%u card=%u device=%u name=%s aicore=20 hbm_mb=65536 %s\n", i, i / per_card,
			i % per_card, st->name ? st->name : "910B3", attrs);
	}
	fputs(st->tail ? st->tail : "", f);
	int r = ferror(f) ? -ENOMEM : 0;
	if (fclose(f) != 0 && r == 0)
		r = -ENOMEM;
	if (r == 0)
		r = file_write_atomic(path, text, len, 0644, 0);
	free(text);
	return r;
}
