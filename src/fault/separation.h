/* SPDX-License-Identifier: Apache-2.0 */
/* The record of separated chips (fault level ManuallySeparateNPU), kept in
 * a small file of the plugin's own directory (--state-dir) so that a plugin
 * restart or a node reboot does not hand a separated chip out again, and
 * shared with ascend-doctor, which lists the records and releases a chip by
 * removing its record. This module owns the file's format, its bounded
 * reader and its atomic writer; when to write and what to do with what is
 * read is the caller's.
 *
 * The file is text, one chip a line, hand-readable and hand-editable:
 *
 *   # comments and blank lines are skipped
 *   npu-5 level=ManuallySeparateNPU code=80E01801 rule=frequency since=2026-12-02T14:40:00Z pci=0000:c1:00.0
 *
 * code is the code that separated the chip ("none": DCMI health without a
 * code, or an operator's separation without one), rule is the fault
 * policy's rule with dashes for spaces ("code-table", "frequency",
 * "duration", "manual-separation", ...), since is UTC, pci (optional) is
 * the chip's PCI address when the inventory knew it. A record stands for
 * the chip at its PCI address when both the record and the chip have one,
 * else for the chip of its phy id: a board moved to another slot, or a
 * driver that numbers the chips anew, does not move a separation onto
 * another chip. Keys this version does not know are skipped, so that a
 * file written by a later version still reads after a rollback; a known
 * key with a bad value, a line that is not a record, a chip listed twice,
 * more than FAULT_SEPARATION_MAX records or a file above
 * FAULT_SEPARATION_FILE_MAX bytes make the whole file unreadable.
 *
 * Writers (the plugin and ascend-doctor) hold fault_separation_lock on the
 * directory while they read, change and write the file, so that neither
 * loses the other's change; readers need no lock, since the file is
 * replaced atomically and always holds a whole version. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/pci.h"
#include "fault/policy.h"
#include "npu/chip.h"

/* The file's name in the state directory. */
#define FAULT_SEPARATION_FILE "separated-chips"
/* The plugin's state directory unless --state-dir says otherwise. */
#define FAULT_SEPARATION_DEFAULT_DIR "/var/lib/ascend-device-plugin"
#define FAULT_SEPARATION_MAX NPU_MAX_CHIPS
/* Each line is at most FAULT_SEPARATION_LINE_MAX bytes; comments count. */
#define FAULT_SEPARATION_LINE_MAX 512
#define FAULT_SEPARATION_FILE_MAX (64 * 1024)

struct fault_separation_record {
	uint32_t phy;
	char pci_address[PCI_ADDRESS_SIZE]; /* "" when unknown */
	uint32_t code;                      /* 0: none */
	enum fault_rule rule;
	int64_t since_s; /* UTC, seconds since the epoch */
};

struct fault_separations {
	size_t count;
	struct fault_separation_record records[FAULT_SEPARATION_MAX];
};

/* Parses the file's text (len bytes, a NUL inside refused). Returns 0 with
 * *ret, or -EINVAL with "line N: what is wrong" in why (*ret untouched). */
int fault_separations_parse(const char *text, size_t len, struct fault_separations *ret, char *why,
			    size_t why_size);

/* The text of set: a comment line, then one line per record. Returns 0 with
 * a malloc'd NUL-terminated *ret_text of *ret_len bytes, or -ENOMEM. */
int fault_separations_format(const struct fault_separations *set, char **ret_text, size_t *ret_len);

/* "<dir>/separated-chips" into buf. -ENAMETOOLONG when it does not fit. */
int fault_separations_path(const char *dir, char *buf, size_t size);

/* Reads the file at path. No file is no record: 0 with an empty set.
 * Otherwise as fault_separations_parse, or the negative errno of reading
 * it, with why. */
int fault_separations_read(const char *path, struct fault_separations *ret, char *why, size_t why_size);

/* Replaces the file at path with set, atomically and durably (written
 * beside it, fsync'd, renamed over it, the directory fsync'd). Returns 0
 * or a negative errno, the file as it was. */
int fault_separations_write(const char *path, const struct fault_separations *set);

/* Takes the writers' lock on the directory dir (flock on the directory
 * itself). wait: block until it is free; else -EWOULDBLOCK when another
 * writer holds it. Returns 0 with *ret_fd (close it to release the lock),
 * or a negative errno (-ENOENT: no such directory). */
int fault_separations_lock(const char *dir, bool wait, int *ret_fd);

/* The record that stands for the chip of phy at pci_address (may be "" or
 * NULL when unknown), or -1. */
int fault_separations_find(const struct fault_separations *set, uint32_t phy, const char *pci_address);

/* The record of the chip named "npu-<phy>" by its phy id, or -1. */
int fault_separations_find_phy(const struct fault_separations *set, uint32_t phy);

/* Adds record, replacing the record that stands for the same chip.
 * -E2BIG when FAULT_SEPARATION_MAX others are there already. */
int fault_separations_put(struct fault_separations *set, const struct fault_separation_record *record);

/* Removes the record at index (as found). */
void fault_separations_remove(struct fault_separations *set, size_t index);

/* "2026-12-02T14:40:00Z" for since_s into buf (at least 21 bytes). */
void fault_separation_time_format(int64_t since_s, char *buf, size_t size);
