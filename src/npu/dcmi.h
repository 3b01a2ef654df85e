/* The DCMI backend: finds libdcmi.so, refuses it unless it and every parent
 * directory are root-owned and not writable by group or others, loads it with
 * dlopen, resolves the symbols of dcmi_abi.h (a missing required one fails the
 * load naming it), calls dcmi_init, and wraps the calls the plugin makes.
 *
 * DCMI failures return -EIO and leave the vendor code and the name of the
 * failing call in dcmi_last_error(), so the caller can log them once. */
#pragma once

#include <stddef.h>

#include "npu/chip.h"
#include "npu/dcmi_abi.h"

struct dcmi_lib;

struct dcmi_search {
	const char *explicit_path;   /* --dcmi-lib: when set, the only candidate */
	const char *ld_library_path; /* the plugin's LD_LIBRARY_PATH, may be NULL */
	const char *driver_path;     /* e.g. /usr/local/Ascend/driver (a host path) */
	const char *host_root;       /* where the host's / is mounted, "/" by default */
};

/* Tries, in order: explicit_path alone if set; else each directory of
 * ld_library_path, <host_root><driver>/lib64/driver, <host_root><driver>/lib64,
 * <host_root>/usr/local/dcmi, then the ldconfig cache (dlopen of the bare
 * name). The first candidate that exists decides: on failure the reason
 * (missing file, untrusted path naming the offender, dlopen error, missing
 * symbol, dcmi_init code) goes to why[why_size]. Returns 0, -ENOENT when no
 * candidate exists, -EPERM when untrusted, -ELIBBAD when it cannot be loaded
 * or lacks a symbol, -EIO when dcmi_init fails. */
int dcmi_lib_open(const struct dcmi_search *search, struct dcmi_lib **ret_lib, char *why, size_t why_size);

/* Frees the handle. The library stays mapped: its threads may still run. */
void dcmi_lib_close(struct dcmi_lib *lib);

/* The file that was loaded. */
const char *dcmi_lib_path(const struct dcmi_lib *lib);

/* Checks path and each parent directory: root-owned and not group/other
 * writable, except that a root-owned directory with the sticky bit (like /tmp)
 * is accepted as an ancestor. On refusal why names the offending path. */
int dcmi_path_trusted(const char *path, char *why, size_t why_size);

struct dcmi_error {
	int code;         /* DCMI's return code, e.g. -8008 */
	const char *call; /* e.g. "dcmi_get_card_list" */
};
struct dcmi_error dcmi_last_error(const struct dcmi_lib *lib);

/* Card list -> devices per card -> logic id -> phy id, chip info and board
 * info where available. Chips come back sorted by phy id. Chips whose
 * identity calls fail are skipped (the error is remembered). -E2BIG if more
 * than max. */
int dcmi_enumerate(struct dcmi_lib *lib, struct npu_chip *chips, size_t max, size_t *ret_count);

/* DCMI health of one chip: 0..3 or DCMI_HEALTH_ABSENT. */
int dcmi_chip_health(struct dcmi_lib *lib, const struct npu_chip *chip, unsigned int *ret_health);

/* Up to max error codes of the chip; 0 codes when the call is missing. */
int dcmi_chip_error_codes(struct dcmi_lib *lib, const struct npu_chip *chip, unsigned int *codes, size_t max,
			  size_t *ret_count);

/* Subscribes handler to fault events of every chip. -EOPNOTSUPP when the
 * symbol is missing or DCMI answers -8255. */
int dcmi_subscribe_faults(struct dcmi_lib *lib, dcmi_fault_event_callback handler);

/* dcmi_get_dcmi_version into buf; -EOPNOTSUPP when missing. */
int dcmi_driver_version(struct dcmi_lib *lib, char *buf, size_t size);
