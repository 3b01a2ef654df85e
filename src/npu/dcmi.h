/* SPDX-License-Identifier: Apache-2.0 */
/* The DCMI backend: finds libdcmi.so, refuses it unless it and every parent
 * directory are root-owned and not writable by group or others, loads it with
 * dlopen, resolves the symbols of dcmi_abi.h (a missing required one fails the
 * load naming it), calls dcmi_init, and wraps the calls the plugin makes.
 *
 * DCMI failures return -EIO and leave the vendor code and the name of the
 * failing call in dcmi_last_error(), so the caller can log them once. The
 * module never logs.
 *
 * A vendor call may hang (a chip reset, a wedged driver). Every call after
 * dcmi_init runs on a worker thread of its own with a deadline of
 * DCMI_CALL_DEADLINE_MS (npu/vendor_call.h): each wrapper below may also
 * return -ETIMEDOUT, the call (or the same call on the same chip, still
 * running) is overdue, or -EBUSY, the library is stuck in another call and
 * was not asked; both with the call's name and code 0 in dcmi_last_error().
 * dcmi_lib_open (dcmi_init) and dcmi_subscribe_faults run on the caller's
 * thread.
 *
 * Threads: a struct dcmi_lib is used by one thread at a time (the plugin's
 * event loop); the calls run on its worker, the fault handler on DCMI's
 * thread. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/pci.h"
#include "npu/chip.h"
#include "npu/dcmi_abi.h"

struct dcmi_lib;

/* How long a caller waits for a DCMI call: far beyond a healthy call's
 * milliseconds, short enough that the event loop never waits noticeably. */
/* What a fatal signal in DCMI's code says (base/crash.h): on the threads
 * that load and call it, and around the loop's own calls. */
#define DCMI_CRASH_WHAT                                                                                        \
	"loading or querying the DCMI library (libdcmi.so); check the driver installation, or run with --backend devfs"

#define DCMI_CALL_DEADLINE_MS 1000

struct dcmi_search {
	const char *explicit_path;   /* --dcmi-lib: when set, the only candidate */
	const char *ld_library_path; /* the plugin's LD_LIBRARY_PATH, may be NULL */
	const char *driver_path;     /* e.g. /usr/local/Ascend/driver (a host path) */
	const char *host_root;       /* where the host's / is mounted, "/" by default */
};

/* Tries, in order: explicit_path alone if set; else each directory of
 * ld_library_path (used as is, not under host_root; empty entries skipped),
 * <host_root><driver>/lib64/driver, <host_root><driver>/lib64,
 * <host_root>/usr/local/dcmi, then the ldconfig cache (dlopen of the bare
 * name). host_root NULL means "/", driver_path NULL /usr/local/Ascend/driver;
 * "/tmp/t" + "/usr/local/Ascend/driver" is /tmp/t/usr/local/Ascend/driver.
 * The first candidate that exists decides, even when it is refused: on
 * failure the reason (missing file, untrusted path naming the offender,
 * dlopen error, missing symbol, dcmi_init code) goes to why[why_size] (may be
 * NULL; truncated to fit); when nothing is found it reads "libdcmi.so not
 * found (searched: <every candidate>, ldconfig cache: <dlerror>)". The loaded
 * file is the resolved path that was checked, opened RTLD_NOW | RTLD_LOCAL.
 * A library found through the ldconfig cache can only be checked after
 * dlopen, so its constructors have run by then; it is closed when refused.
 * Returns 0, -ENOENT when no candidate exists, -EPERM when untrusted,
 * -ELIBBAD when it cannot be loaded or lacks a required symbol, -EIO when
 * dcmi_init fails (the library then stays mapped), -ENOMEM. */
int dcmi_lib_open(const struct dcmi_search *search, struct dcmi_lib **ret_lib, char *why, size_t why_size);

/* Frees the handle (NULL is fine). It never calls dlclose: the library stays
 * mapped because threads started by dcmi_init or the fault subscription may
 * still run its code. */
void dcmi_lib_close(struct dcmi_lib *lib);

/* The resolved path of the file that was loaded. */
const char *dcmi_lib_path(const struct dcmi_lib *lib);

/* Resolves path (realpath) and checks the file and each parent directory up
 * to /: root-owned and not group/other writable, except that a root-owned
 * directory with the sticky bit (like /tmp) is accepted as an ancestor. On
 * refusal (-EPERM) why names the offending path and the reason, e.g.
 * "/tmp/x/lib64: directory is group or other writable" or
 * "/opt/lib: owned by uid 1000, not root". -ENOENT (or another -errno) when
 * the path cannot be resolved. */
int dcmi_path_trusted(const char *path, char *why, size_t why_size);

struct dcmi_error {
	int code;         /* DCMI's return code, e.g. -8008 */
	const char *call; /* e.g. "dcmi_get_card_list" */
};
/* The last vendor failure recorded by the calls below. Each call clears it
 * first, so after a dcmi_enumerate that returned 0 a non-zero code means
 * chips were skipped. {0, NULL} when there was none. Not synchronised: read
 * it from the thread that made the call. */
struct dcmi_error dcmi_last_error(struct dcmi_lib *lib);

/* Card list -> devices per card (clamped to 1..4) -> logic id -> phy id, chip
 * info and board info where available (has_board_id only when that call
 * succeeds; its failures are not recorded). Card ids need not be contiguous
 * nor logic ids equal phy ids. Chips come back sorted by phy id; of two chips
 * with one phy id the first found is kept. Chips whose identity calls fail
 * are skipped (the error is remembered). Returns 0, -EIO when the card list
 * fails, -E2BIG if more than max; on error *ret_count is untouched and the
 * contents of chips are unspecified. */
int dcmi_enumerate(struct dcmi_lib *lib, struct npu_chip *chips, size_t max, size_t *ret_count);

/* DCMI health of one chip: 0..3 or DCMI_HEALTH_ABSENT. A failing call
 * (e.g. -8012, the card dropped) is -EIO with the code recorded. -EINVAL for
 * a chip without a DCMI address (card_id or device_id < 0, as from devfs). */
int dcmi_chip_health(struct dcmi_lib *lib, const struct npu_chip *chip, unsigned int *ret_health);

/* Up to max error codes of the chip (DCMI gives at most
 * DCMI_MAX_ERROR_CODES; extra ones are dropped); 0 codes when the call is
 * missing. -EIO with the code recorded when it fails (an absent chip answers
 * -8008), -EINVAL for a chip without a DCMI address. */
int dcmi_chip_error_codes(struct dcmi_lib *lib, const struct npu_chip *chip, unsigned int *codes, size_t max,
			  size_t *ret_count);

/* The chip's PCI address from dcmi_get_device_pcie_info_v2 (domain, bus,
 * device and function). -EOPNOTSUPP when the call is missing (older
 * drivers) or answers -8255, -EIO with the code recorded on other failures
 * (an absent chip answers -8008), -ERANGE when DCMI's fields are no PCI
 * address (a negative domain, a device above 31...), -EINVAL for a chip
 * without a DCMI address. */
int dcmi_chip_pci_address(struct dcmi_lib *lib, const struct npu_chip *chip, struct pci_address *ret_address);

/* The static vNPUs carved from the chip (dcmi_get_device_info, VDEV_MNG):
 * their ids and template names, in DCMI's order, at most max. -EOPNOTSUPP
 * when the call is missing or DCMI answers -8255 (chips without vNPU
 * support), -EIO with the code recorded on other failures, -EINVAL for a
 * chip without a DCMI address. A vNPU whose template query fails is listed
 * with an empty template. */
int dcmi_chip_vnpus(struct dcmi_lib *lib, const struct npu_chip *chip, struct npu_vnpu *vnpus, size_t max,
		    size_t *ret_count);

/* Receives a fault event on a DCMI thread: it must only copy what it needs
 * and wake its owner. */
typedef void (*dcmi_fault_fn)(void *ctx, const struct dcmi_event *event);

/* Subscribes fn(ctx, ...) to fault events of every chip (card = device = -1,
 * an all-zero filter). DCMI's callback carries no context and cannot be
 * unsubscribed, so this module hands each event to the one subscriber it
 * holds. -EBUSY when another subscriber holds it, -EOPNOTSUPP when the symbol
 * is missing or DCMI answers -8255, -EIO on other failures. */
int dcmi_subscribe_faults(struct dcmi_lib *lib, dcmi_fault_fn fn, void *ctx);

/* Drops the subscriber. When it returns, fn is not running and is never
 * called again, so ctx may be freed. Harmless when not subscribed. */
void dcmi_unsubscribe_faults(void);

/* dcmi_get_dcmi_version into buf (non-printable bytes replaced);
 * -EOPNOTSUPP when missing, -ENAMETOOLONG (buf untouched) when it does not fit. */
int dcmi_driver_version(struct dcmi_lib *lib, char *buf, size_t size);

/* Telemetry of one chip, for the metrics (never on a request path: the
 * plugin's loop reads them into a cache). Each returns 0, -EOPNOTSUPP when
 * the driver lacks the call or answers -8255, -EIO with the code recorded on
 * other failures, -ERANGE for a reading that cannot be true (a negative
 * power, a utilisation above 100 %, more HBM used than there is), -EINVAL
 * for a chip without a DCMI address. dcmi_get_device_temperature (degrees
 * Celsius), dcmi_get_device_power_info (tenths of a watt), the AI Core's
 * dcmi_get_device_utilization_rate (percent) and dcmi_get_device_hbm_info
 * (megabytes). */
int dcmi_chip_temperature(struct dcmi_lib *lib, const struct npu_chip *chip, int *ret_celsius);
int dcmi_chip_power(struct dcmi_lib *lib, const struct npu_chip *chip, double *ret_watts);
int dcmi_chip_aicore_utilization(struct dcmi_lib *lib, const struct npu_chip *chip, unsigned int *ret_percent);
int dcmi_chip_hbm(struct dcmi_lib *lib, const struct npu_chip *chip, uint64_t *ret_total_mb, uint64_t *ret_used_mb);

/* --- Network identity ----------------------------------------------------------- */

/* The address and mask of the chip's RoCE port (dcmi_get_device_ip, port
 * type RoCE, port 0) into ret_net's has_ip, ipv6, ip and prefix_len. 0 with
 * has_ip false when the port has no address (all zero, as the driver reports
 * a port hccn_tool never configured); -EOPNOTSUPP when the library lacks the
 * call or answers -8255 (310P and 310B have no RoCE port); -EPROTO for a mask
 * that is not a prefix or an address type DCMI does not define; -EIO with
 * the code recorded on other failures. */
int dcmi_chip_roce_address(struct dcmi_lib *lib, const struct npu_chip *chip, struct npu_net *ret_net);

/* The RoCE link as the driver's network detection sees it
 * (dcmi_get_device_network_health) into ret_net's link and link_code: up for
 * OK; unknown while detection has not started (no detection address
 * configured, DCMI_RDFX_DETECT_INIT) or the address is being set; down for
 * every failure it reports. Errors as dcmi_chip_roce_address. */
int dcmi_chip_link(struct dcmi_lib *lib, const struct npu_chip *chip, struct npu_net *ret_net);

/* The chip's place in an A3 super pod (dcmi_get_device_info, CHIP_INF,
 * SPOD_INFO) into ret_net's has_super_pod, super_pod_id, sdid and
 * server_index. -EOPNOTSUPP when the library or the chip does not answer
 * (every family but A3). */
int dcmi_chip_super_pod(struct dcmi_lib *lib, const struct npu_chip *chip, struct npu_net *ret_net);

/* --- Device-share ------------------------------------------------------------ */

/* Whether the chip's device-share mode is on (dcmi_get_device_share_enable):
 * containers may share it only then. -EOPNOTSUPP when the library lacks the
 * call or answers -8255, -ERANGE for a flag other than 0 or 1, -EIO with the
 * code recorded on other failures, -EINVAL for a chip without a DCMI
 * address. */
int dcmi_chip_share_mode(struct dcmi_lib *lib, const struct npu_chip *chip, bool *ret_on);

/* Switches the chip's device-share mode on (dcmi_set_device_share_enable,
 * what "npu-smi set -t device-share -i <card> -c <chip> -d 1" does). Errors
 * as dcmi_chip_share_mode's, without -ERANGE. */
int dcmi_chip_share_enable(struct dcmi_lib *lib, const struct npu_chip *chip);

/* --- Processes and the paired card (group resets) ------------------------------- */

/* How many processes run on the chip (dcmi_get_device_resource_info, what
 * Huawei's plugin asks before a hot reset), and the first one's pid (0 when
 * none). -EOPNOTSUPP when the driver lacks the call, -EIO when it fails or
 * answers a count below 0 or above DCMI_MAX_PROCS. */
int dcmi_chip_processes(struct dcmi_lib *lib, const struct npu_chip *chip, size_t *ret_count, int *ret_first_pid);

/* Whether the driver has dcmi_get_device_resource_info. */
bool dcmi_can_list_processes(const struct dcmi_lib *lib);

/* The card an A3 chip's card is paired with for its network and its hot
 * reset (dcmi_get_netdev_brother_device; Huawei's plugin resets both
 * cards' dies together). -EOPNOTSUPP when the driver lacks the call or
 * answers that it is not supported, -EIO when it fails. */
int dcmi_chip_brother_card(struct dcmi_lib *lib, const struct npu_chip *chip, int *ret_card);

/* --- Chip reset --------------------------------------------------------------- */

/* Whether the library has the reset calls (dcmi_set_device_pre_reset and
 * dcmi_set_device_reset; older drivers lack them). */
bool dcmi_can_reset(const struct dcmi_lib *lib);

/* What a reset came to. */
struct dcmi_reset_outcome {
	int result;       /* 0, or the negative errno below */
	struct dcmi_error error; /* -EIO: the call that failed and its code */
};

/* Resets the chip in the background (the call may block for as long as the
 * driver takes): dcmi_set_device_pre_reset, then dcmi_set_device_reset
 * in band. done(ctx) runs on the worker thread when the calls returned,
 * only to wake the caller (see vendor_call_start), which then takes the
 * outcome with dcmi_chip_reset_take. Meanwhile every other call of lib
 * gives -EBUSY. Returns 0, -EOPNOTSUPP when the library lacks the calls,
 * -EBUSY when it is busy or stuck, -EINVAL for a chip without a DCMI
 * address. */
int dcmi_chip_reset_start(struct dcmi_lib *lib, const struct npu_chip *chip, void (*done)(void *ctx), void *ctx);

/* The outcome of the reset started last: 0 with *ret_outcome (result 0:
 * both calls succeeded; -EIO: one failed, named in error), -EINPROGRESS
 * while it runs, or with give_up -ETIMEDOUT: the reset is abandoned and
 * the library stays stuck in it until it returns (later calls of the
 * same chip give -ETIMEDOUT, others -EBUSY, as for any overdue call).
 * -ENOENT when no reset was started. */
int dcmi_chip_reset_take(struct dcmi_lib *lib, bool give_up, struct dcmi_reset_outcome *ret_outcome);

/* --- vNPUs carved at run time ------------------------------------------- */

/* Whether the library has the calls that carve and destroy vNPUs
 * (dcmi_create_vdevice and dcmi_set_destroy_vdevice; older drivers lack
 * them). */
bool dcmi_can_carve(const struct dcmi_lib *lib);

/* The vNPU id that lets the driver choose (the lowest free one of the chip). */
#define DCMI_VNPU_ID_ANY 0xFFFFFFFFu

/* What a carve or a destruction came to. */
struct dcmi_carve_outcome {
	int result;              /* 0, or -EIO */
	struct dcmi_error error; /* -EIO: the call that failed and its code (-8001 bad template or id,
				  * -8002 the chip is in use, -8020 no room left on it) */
	uint32_t vnpu_id;        /* the vNPU made (its /dev/vdavinci<id>), or the one destroyed */
};

/* Carves a vNPU of template_name (e.g. "vir10_3c_32g") from the chip in
 * the background (dcmi_create_vdevice), with vnpu_id, or the id the driver
 * chooses with DCMI_VNPU_ID_ANY; destroys one (dcmi_set_destroy_vdevice).
 * The contract is dcmi_chip_reset_start's: done(ctx) runs on the worker
 * thread when the call returned, only to wake the caller, which takes the
 * outcome with dcmi_vnpu_take; meanwhile every other call of lib gives
 * -EBUSY. Returns 0, -EOPNOTSUPP when the library lacks the calls, -EBUSY
 * when it is busy or stuck, -EINVAL for a chip without a DCMI address or
 * a template name that is empty or longer than NPU_VNPU_TEMPLATE_MAX - 1
 * (what DCMI's vNPU query can give back). */
int dcmi_vnpu_create_start(struct dcmi_lib *lib, const struct npu_chip *chip, const char *template_name,
			   uint32_t vnpu_id, void (*done)(void *ctx), void *ctx);
int dcmi_vnpu_destroy_start(struct dcmi_lib *lib, const struct npu_chip *chip, uint32_t vnpu_id,
			    void (*done)(void *ctx), void *ctx);

/* The outcome of the carve or destruction started last, as
 * dcmi_chip_reset_take gives a reset's: 0 with *ret_outcome, -EINPROGRESS
 * while it runs, -ETIMEDOUT with give_up (abandoned: the library stays stuck
 * in it until it returns), -ENOENT when none was started. The library runs
 * one background call at a time, so this takes whichever was started:
 * take a reset with dcmi_chip_reset_take. */
int dcmi_vnpu_take(struct dcmi_lib *lib, bool give_up, struct dcmi_carve_outcome *ret_outcome);
