/* SPDX-License-Identifier: Apache-2.0 */
/* What ascend-ranktable leaves in the pod's shared volume: the rank table,
 * and beside it an env file for a shell (`set -a; . hccl.env; set +a`)
 * with what belongs to the table: RANK_TABLE_FILE, the variable HCCL and
 * the frameworks on it (MindSpore, MindIE, torch_npu) read the table's
 * path from (CANN's environment variable reference), and RANK_SIZE, the
 * table's number of ranks. RANK_ID is each process's own (the rank_id of
 * the chip it drives), not the pod's, so it is not written. Both files are
 * replaced atomically: a reader never sees half of one. */
#pragma once

#include <stddef.h>

/* Writes json to table_path and the env file to env_path (mode 0644), the
 * directories made when missing. Returns 0, or a negative errno with why
 * naming the file. */
int rt_output_write(const char *table_path, const char *env_path, const char *json, size_t ranks, char *why,
		    size_t why_size);
