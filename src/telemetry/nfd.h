/* SPDX-License-Identifier: Apache-2.0 */
/* Node labels through Node Feature Discovery: the text of a local feature
 * file (features.d, one "key=value" per line, read by nfd-worker) that
 * describes the node's NPUs, and writing it atomically (a dot-file in the
 * same directory renamed over the final name: nfd-worker ignores dot-files
 * and sees a whole file or none). Every value is a valid Kubernetes label
 * value, sanitised or left out, never emitted invalid. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* nfd-worker skips a file above 64 KiB. */
#define NFD_FILE_MAX 65536
/* A label value: at most 63 characters, terminator included here. */
#define NFD_VALUE_MAX 64

struct nfd_info {
	size_t count;           /* chips on the node */
	size_t healthy;         /* of which Healthy */
	size_t subhealth;       /* of which the fault policy finds sub-healthy (SubHealthFault) */
	const char *product;    /* DCMI chip name, e.g. "910B3" (NULL/empty: unknown or mixed) */
	const char *family;     /* e.g. "910B" (NULL: unknown) */
	uint64_t memory_mib;    /* HBM per chip (0: unknown) */
	uint32_t aicore;        /* AI Cores per chip (0: unknown) */
	const char *topology;   /* "hccs-ring", "hccs-mesh", "die-pairs", "pcie" (NULL: unknown) */
	const char *driver;     /* driver version (NULL/empty: unknown) */
	unsigned replicas;      /* time-slicing replicas (0: no sharing) */
};

/* Makes s a valid label value in out[NFD_VALUE_MAX]: characters other than
 * [A-Za-z0-9._-] become '-', then the ends are trimmed to an alphanumeric
 * character and the rest cut to 63 characters. -EINVAL when nothing valid
 * remains (the label is then left out). */
int nfd_label_value_sanitize(const char *s, char *out);

/* The file's text, in buf[size]: a comment line, then ascend.com/npu.present
 * =true, npu.count, npu.healthy, npu.subhealth (only when some are),
 * npu.product ("Ascend<name>"), npu.family,
 * npu.memory, npu.aicore, npu.topology, driver.version, and with sharing
 * npu.replicas and npu.sharing-strategy=time-slicing; a label whose value is
 * unknown or cannot be made valid is left out. -ENOBUFS when it does not fit. */
int nfd_render(const struct nfd_info *info, char *buf, size_t size);

/* Writes text to path atomically (mode 0644): "<dir>/.<name>.tmp", then
 * rename. Not synced (see nfd.c). Returns 0 or a negative errno. */
int nfd_write(const char *path, const char *text);

/* Removes the file (and a temporary file a crash left). 0 when it is gone. */
int nfd_remove(const char *path);
