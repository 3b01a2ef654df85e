/* SPDX-License-Identifier: Apache-2.0 */
/* The kubelet_internal_checkpoint file; see checkpoint.h. */
#include "checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "base/parse.h"

#define CHECKPOINT_NAME "kubelet_internal_checkpoint"
#define CHECKPOINT_TMP_NAME "kubelet_internal_checkpoint.tmp"

bool checkpoint_exists(const struct sim *sim)
{
	char path[SIM_PATH_MAX];
	return path_join(path, sizeof(path), sim->dir, CHECKPOINT_NAME) == 0 && path_exists(path);
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void json_base64(FILE *f, const uint8_t *data, size_t len)
{
	static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	fputc('"', f);
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)data[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)data[i + 1] << 8;
		if (i + 2 < len)
			v |= data[i + 2];
		fputc(alphabet[(v >> 18) & 63], f);
		fputc(alphabet[(v >> 12) & 63], f);
		fputc(i + 1 < len ? alphabet[(v >> 6) & 63] : '=', f);
		fputc(i + 2 < len ? alphabet[v & 63] : '=', f);
	}
	fputc('"', f);
}

static void json_id_array(FILE *f, char *const *ids, size_t n)
{
	fputc('[', f);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		json_string(f, ids[i]);
	}
	fputc(']', f);
}

static void write_document(FILE *f, const struct sim *sim)
{
	bool first = true;
	fputs("{\"Data\":{\"PodDeviceEntries\":[", f);
	for (size_t i = 0; i < sim->n_resources; i++) {
		const struct sim_resource *res = &sim->resources[i];
		for (size_t j = 0; j < res->n_allocs; j++) {
			const struct sim_allocation *alloc = &res->allocs[j];
			if (!first)
				fputc(',', f);
			first = false;
			fprintf(f, "{\"PodUID\":\"kubelet-sim-pod-%lu\",\"ContainerName\":\"container-%lu\",",
				alloc->serial, alloc->serial);
			fputs("\"ResourceName\":", f);
			json_string(f, res->name);
			fputs(",\"DeviceIDs\":{\"-1\":", f);
			json_id_array(f, alloc->ids, alloc->n_ids);
			fputs("},\"AllocResp\":", f);
			json_base64(f, alloc->response, alloc->response_len);
			fputc('}', f);
		}
	}
	fputs("],\"RegisteredDevices\":{", f);
	for (size_t i = 0; i < sim->n_resources; i++) {
		const struct sim_resource *res = &sim->resources[i];
		if (i)
			fputc(',', f);
		json_string(f, res->name);
		fputs(":[", f);
		for (size_t j = 0; j < res->n_devices; j++) {
			if (j)
				fputc(',', f);
			json_string(f, res->devices[j].id);
		}
		fputc(']', f);
	}
	fputs("}},\"Checksum\":0}\n", f);
}

int checkpoint_write(const struct sim *sim)
{
	char path[SIM_PATH_MAX], tmp_path[SIM_PATH_MAX];
	int r = path_join(path, sizeof(path), sim->dir, CHECKPOINT_NAME);
	if (r == 0)
		r = path_join(tmp_path, sizeof(tmp_path), sim->dir, CHECKPOINT_TMP_NAME);
	if (r < 0)
		return r;

	int fd = open(tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	FILE *f = fdopen(fd, "w");
	if (!f) {
		r = -errno;
		close(fd);
		goto fail;
	}
	write_document(f, sim);
	/* No fsync: readers need a whole file (the rename), not durability. */
	if (fflush(f) != 0 || ferror(f)) {
		r = -EIO;
		fclose(f);
		goto fail;
	}
	if (fclose(f) != 0) {
		r = -errno;
		goto fail;
	}
	if (rename(tmp_path, path) < 0) {
		r = -errno;
		goto fail;
	}
	return 0;

fail:
	unlink(tmp_path);
	return r;
}
