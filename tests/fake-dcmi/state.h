/* SPDX-License-Identifier: Apache-2.0 */
/* The DCMI simulator's state file parser: turns the text of a state file
 * (see docs/fake-dcmi.md) into a struct fake_state describing the simulated
 * node. It is pure: no I/O, no globals, no logging. Problems found in the
 * text are reported line by line through a callback, and the offending line
 * (or, for an unknown key inside a `chip` line, only that key) is ignored,
 * so a state file with a typo still describes the rest of the node. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/pci.h"

/* Bounds on everything a state file can grow. The chip and card limits match
 * what real DCMI reports (64 cards of at most 4 devices); 256 chips leaves
 * room for unusual layouts in tests. */
#define FAKE_STATE_MAX_FILE (1u << 20)
#define FAKE_STATE_MAX_LINE 4096
#define FAKE_STATE_MAX_CHIPS 256
#define FAKE_STATE_MAX_CARDS 64
#define FAKE_STATE_MAX_DEVICE 3
#define FAKE_STATE_MAX_ERRORS 128
/* phy and logic ids travel in unsigned short fields of DCMI events. */
#define FAKE_STATE_MAX_ID 65535u
/* Sizes include the terminating NUL; chip_name in struct dcmi_chip_info is 32 bytes. */
#define FAKE_STATE_NAME_SIZE 32
#define FAKE_STATE_DRIVER_SIZE 64
/* vNPUs: DCMI ids are phy*16+100 .. phy*16+115, at most 16 per chip; the
 * template name travels in a 16-byte field of DCMI's vdev query. */
#define FAKE_STATE_MAX_VNPUS 512
#define FAKE_STATE_VNPUS_PER_CHIP 16
#define FAKE_STATE_TEMPLATE_SIZE 16
/* Processes on a chip (procs=): as many as DCMI lists (DCMI_MAX_PROCS). */
#define FAKE_STATE_MAX_PROCS 32

/* Calls a chip line can make fail (fail=) or hang (hang=, hang_ms=): the
 * chip calls with telemetry or identity the plugin reads after discovery,
 * the two reset calls, the two that carve and destroy vNPUs and the two
 * that read and set the device-share mode. */
enum fake_call {
	FAKE_CALL_HEALTH,
	FAKE_CALL_ERRORCODE,
	FAKE_CALL_HBM,
	FAKE_CALL_TEMPERATURE,
	FAKE_CALL_POWER,
	FAKE_CALL_UTILIZATION,
	FAKE_CALL_PRE_RESET,
	FAKE_CALL_RESET,
	FAKE_CALL_IP,
	FAKE_CALL_NETWORK_HEALTH,
	FAKE_CALL_INFO,
	FAKE_CALL_CREATE_VDEVICE,
	FAKE_CALL_DESTROY_VDEVICE,
	FAKE_CALL_GET_SHARE,
	FAKE_CALL_SET_SHARE,
	FAKE_CALL_RESOURCE_INFO,
	FAKE_CALL_COUNT,
};

/* How a chip comes back from dcmi_set_device_reset (reset=). */
enum fake_reset_outcome {
	FAKE_RESET_CLEAN,  /* healthy, without error codes */
	FAKE_RESET_FAULTY, /* as the state file has it: the fault is still there */
	FAKE_RESET_NEVER,  /* it stays away */
};

/* How long a reset chip stays away by default (reset_ms=), and at most. */
#define FAKE_RESET_DEFAULT_MS 1000u
#define FAKE_RESET_MAX_MS 3600000u
/* The longest a call may hang (hang=, hang_ms=): an hour. */
#define FAKE_HANG_MAX_MS 3600000u

/* The DCMI function name of a call ("dcmi_get_device_temperature"). */
const char *fake_call_name(enum fake_call call);

/* DCMI's health values: 0 normal, 1 warning, 2 major, 3 critical, or absent. */
#define FAKE_HEALTH_ABSENT 0xFFFFFFFFu

struct fake_chip {
	uint32_t phy;
	uint32_t card;
	uint32_t device;
	uint32_t logic;
	char name[FAKE_STATE_NAME_SIZE];
	uint32_t health;
	int32_t health_rc; /* what dcmi_get_device_health returns; 0 = success */
	uint32_t aicore;
	uint64_t hbm_mb;
	/* Telemetry: a call whose value was not given answers -8255 (not supported). */
	bool has_temp, has_power, has_util, has_hbm_used;
	int32_t temp;          /* degrees Celsius */
	uint32_t power_tenths; /* tenths of a watt, as DCMI reports power */
	uint32_t util;         /* AI Core utilisation, percent */
	uint64_t hbm_used_mb;
	/* fail=: the calls that fail, with the code each returns (0: does not fail). */
	int32_t fail_rc[FAKE_CALL_COUNT];
	/* hang= (seconds), hang_ms= (milliseconds): the calls that block, each
	 * for how many milliseconds (0: does not), like a vendor library stuck
	 * in one call (its other calls and its event thread still work). */
	uint32_t hang_ms[FAKE_CALL_COUNT];
	/* busy=1: a process uses the chip whole, so no vNPU can be carved
	 * from it (dcmi_create_vdevice answers -8002). */
	bool busy;
	bool has_board;
	uint32_t board;
	bool has_pci; /* pci= given: dcmi_get_device_pcie_info_v2 answers it */
	struct pci_address pci;
	uint32_t error_count;
	uint32_t errors[FAKE_STATE_MAX_ERRORS];
	/* The RoCE port (ip=, link=): without them dcmi_get_device_ip and
	 * dcmi_get_device_network_health answer -8255, as on a 310P. */
	bool has_ip, ipv6;
	uint8_t ip[16];
	uint8_t prefix_len;
	bool has_link;
	uint32_t link; /* the detection result dcmi_get_device_network_health gives */
	/* A3 super pod (super_pod=, sdid=, server_index=): given any of them,
	 * dcmi_get_device_info answers CHIP_INF/SPOD_INFO, 0 for the others. */
	bool has_spod;
	uint32_t super_pod_id, sdid, server_index;
	enum fake_reset_outcome reset; /* reset=: how it comes back from a reset */
	uint32_t reset_ms;             /* reset_ms=: how long it is away meanwhile */
	/* A "share phy=<p> mode=off" line: the chip's device-share mode is off
	 * (on without one); share_line is that line, 1-based (0: none), which
	 * dcmi_set_device_share_enable rewrites. */
	bool share_off;
	unsigned share_line;
	/* reset_group=: the chips a reset of this one resets as well, as the
	 * hardware does (the chips with the same number); alone without it. */
	bool has_reset_group;
	uint32_t reset_group;
	/* brother=: the card dcmi_get_netdev_brother_device names (-8255 without). */
	bool has_brother;
	uint32_t brother;
	/* procs=: the processes dcmi_get_device_resource_info lists. */
	uint32_t proc_count;
	int32_t proc_pid[FAKE_STATE_MAX_PROCS];
	uint64_t proc_mem_mb[FAKE_STATE_MAX_PROCS];
};

/* A static vNPU an administrator created on a chip (npu-smi set -t create-vnpu). */
struct fake_vnpu {
	uint32_t id;  /* the N of /dev/vdavinciN */
	uint32_t phy; /* the chip it is carved from: a chip line with this phy */
	char template_name[FAKE_STATE_TEMPLATE_SIZE];
	unsigned line; /* the line of the state file that defines it, 1-based */
};

struct fake_state {
	char driver[FAKE_STATE_DRIVER_SIZE];
	bool subscribe;
	size_t chip_count;
	struct fake_chip chips[FAKE_STATE_MAX_CHIPS]; /* in file order */
	size_t vnpu_count;
	struct fake_vnpu vnpus[FAKE_STATE_MAX_VNPUS]; /* in file order */
};

/* Called once per problem: line is 1-based, message is one line of text
 * without a trailing newline, valid only during the call. */
typedef void (*fake_state_diag_fn)(void *userdata, unsigned line, const char *message);

/* Resets state to an empty node: driver "unknown", subscribe on, no chips. */
void fake_state_init(struct fake_state *state);

/* Parses buf[len] (need not be NUL-terminated) into state, which is reset
 * first. diag may be NULL. Returns 0 (bad lines are reported and skipped;
 * after 100 diagnostics one more says the rest go unreported), or -EFBIG when
 * len exceeds FAKE_STATE_MAX_FILE: then nothing is parsed, one diagnostic
 * with line 0 is reported and state is left empty. */
int fake_state_parse(struct fake_state *state, const char *buf, size_t len, fake_state_diag_fn diag,
		     void *userdata);

/* Healthy means DCMI health 0 or 1; 2, 3 and absent are unhealthy. Fault
 * events are sent only when a chip crosses between these two classes. */
bool fake_health_is_healthy(uint32_t health);

/* Lookups; NULL when no chip matches. */
const struct fake_chip *fake_state_find_device(const struct fake_state *state, uint32_t card, uint32_t device);
const struct fake_chip *fake_state_find_logic(const struct fake_state *state, uint32_t logic);
const struct fake_chip *fake_state_find_phy(const struct fake_state *state, uint32_t phy);

/* Writes the distinct card ids, ascending, to cards[max]. Returns how many
 * there are (at most FAKE_STATE_MAX_CARDS); only the first max are written. */
size_t fake_state_card_list(const struct fake_state *state, uint32_t *cards, size_t max);

/* Number of chips on a card (0 when the card is unknown). */
uint32_t fake_state_devices_in_card(const struct fake_state *state, uint32_t card);

/* Where line (1-based, as the parser counts) is in buf[len]: its first byte
 * at *ret_start, and *ret_end just past its newline (or at len for a last
 * line without one), so that removing [start, end) removes the line whole.
 * -ENOENT when buf has fewer lines. */
int fake_state_line_span(const char *buf, size_t len, unsigned line, size_t *ret_start, size_t *ret_end);
