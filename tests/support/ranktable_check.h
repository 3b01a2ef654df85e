/* SPDX-License-Identifier: Apache-2.0 */
/* An HCCL rank table (hccl.json) held against the rules HCCL's own pages
 * state for a chip family (public repository hicann/hccl,
 * docs/zh/user_guide/cluster_info_config/rank_table_config_910.md, _a2.md,
 * _a3.md). It reads the JSON text, not the builder's structures, and shares
 * no code with src/hccl/ranktable.c, so that it can catch the builder's
 * mistakes; the tests run it on every table they build, the fuzzer on every
 * table the builder accepts, and both on tables transcribed from the pages'
 * examples, which it must accept.
 *
 * The rules, as read from the pages:
 * - status "completed" or "initializing"; version "1.0" for 910 and 910B,
 *   "1.0" or "1.2" (super pod mode) for A3;
 * - server_count a string, required but in 1.2, equal to the servers listed;
 * - server_list non-empty; server_id a string of 1 to 64 characters, unique;
 *   host_ip (A3 only) IPv4; device non-empty;
 * - every value a string; device_id, rank_id and super_device_id whole
 *   numbers in decimal; rank ids 0..N-1 over the N devices, each once, and
 *   each server's ranks one unbroken run (no interleaving between servers);
 *   device_id unique on its server;
 * - device_ip IPv4 or IPv6, unique over the table; required on 910, in 1.0
 *   over more than one server, and in 1.2 over more than one super pod;
 * - device_port, host_port and backup_device_port in [1, 65535] where the
 *   family's page has them; backup_device_ip (1.2) IPv4 or IPv6;
 * - super_pod_list only in 1.2: each super_pod_id a unique non-empty string,
 *   each server of server_list in exactly one super pod and nowhere else,
 *   one super pod's servers side by side in server_list; super_device_id on
 *   every device when there is a super_pod_list and on none otherwise, unique
 *   in its super pod (the pages' example repeats SDIDs across super pods);
 * - no key the family's page does not document.
 * Where the pages are silent (leading zeros in numbers, a super_device_id
 * without super_pod_list) this reading is the strict one. */
#pragma once

#include <stddef.h>

struct ranktable_facts {
	char version[4];
	size_t servers, devices, super_pods;
};

/* Checks json as a table for family ("910", "910B" or "A3"). Returns 0 with
 * *ret_facts set (ret_facts may be NULL), or -EINVAL with the first broken
 * rule in why (-ENOMEM when memory is short). */
int ranktable_check(const char *json, const char *family, struct ranktable_facts *ret_facts, char *why,
		    size_t why_size);
