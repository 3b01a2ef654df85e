/* SPDX-License-Identifier: Apache-2.0 */
/* The slice of Huawei's DCMI C ABI (dcmi_interface_api.h) that this project
 * uses, written from the public reference. Both the plugin's loader and the
 * DCMI simulator compile against it, so a layout mistake would show up as a
 * test failure rather than stay hidden. All functions return 0 on success or
 * one of the DCMI_ERR_* codes. */
#pragma once

#define DCMI_OK 0
#define DCMI_ERR_INVALID_PARAMETER (-8001)
#define DCMI_ERR_NOT_PERMITTED (-8002)
#define DCMI_ERR_MEMORY (-8003)
#define DCMI_ERR_INNER (-8005)
#define DCMI_ERR_TIMEOUT (-8006)
#define DCMI_ERR_INVALID_DEVICE_ID (-8007)
#define DCMI_ERR_DEVICE_NOT_EXIST (-8008)
#define DCMI_ERR_IOCTL (-8009)
#define DCMI_ERR_NOT_READY (-8012)
#define DCMI_ERR_NOT_SUPPORTED_IN_CONTAINER (-8013)
#define DCMI_ERR_RESET_FAILED (-8015)
#define DCMI_ERR_RESOURCE_OCCUPIED (-8020)
#define DCMI_ERR_NOT_SUPPORTED (-8255)

#define DCMI_MAX_CARDS 64
#define DCMI_MAX_DEVICES_PER_CARD 4
#define DCMI_MAX_ERROR_CODES 128
#define DCMI_HEALTH_ABSENT 0xFFFFFFFFu

/* input_type of dcmi_get_device_utilization_rate: the AI Core's busy share, in percent. */
#define DCMI_UTILIZATION_AICORE 2

struct dcmi_chip_info {
	unsigned char chip_type[32];
	unsigned char chip_name[32];
	unsigned char chip_ver[32];
	unsigned int aicore_cnt;
};

struct dcmi_board_info {
	unsigned int board_id;
	unsigned int pcb_id;
	unsigned int bom_id;
	unsigned int slot_id;
};

/* PCIe identity of a chip (dcmi_get_device_pcie_info_v2); the vendor header
 * notes that the structure is 64 bytes. */
struct dcmi_pcie_info_all {
	unsigned int venderid;
	unsigned int subvenderid;
	unsigned int deviceid;
	unsigned int subdeviceid;
	int domain;
	unsigned int bdf_busid;
	unsigned int bdf_deviceid;
	unsigned int bdf_funcid;
	unsigned char reserve[32];
};
_Static_assert(sizeof(struct dcmi_pcie_info_all) == 64, "struct dcmi_pcie_info_all is 64 bytes");

struct dcmi_hbm_info {
	unsigned long long memory_size; /* MB */
	unsigned int freq;
	unsigned long long memory_usage; /* MB */
	int temp;
	unsigned int bandwith_util_rate;
};

struct dcmi_event_filter {
	unsigned long long filter_flag;
	unsigned int event_id;
	unsigned char severity;
	unsigned char node_type;
	unsigned char resv[32];
};

struct dcmi_dms_fault_event {
	unsigned int event_id;
	unsigned short deviceid; /* logic id */
	unsigned char node_type;
	unsigned char node_id;
	unsigned char sub_node_type;
	unsigned char sub_node_id;
	unsigned char severity; /* 0 warning .. 3 critical */
	unsigned char assertion; /* 0 recovery, 1 occur, 2 one-off */
	int event_serial_num;
	int notify_serial_num;
	unsigned long long alarm_raised_time;
	char event_name[256];
	char additional_info[32];
	unsigned char resv[32];
};

#define DCMI_EVENT_TYPE_DMS_FAULT 0
#define DCMI_ASSERTION_RECOVERY 0
#define DCMI_ASSERTION_OCCUR 1
#define DCMI_ASSERTION_ONE_OFF 2

struct dcmi_event {
	int type;
	union {
		struct dcmi_dms_fault_event dms_event;
	} event_t;
};

typedef void (*dcmi_fault_event_callback)(struct dcmi_event *event);

/* The path a chip reset takes (dcmi_set_device_reset): through the BMC
 * (out of band) or through the driver on the host (in band, what the
 * plugin uses). */
enum dcmi_reset_channel {
	OUTBAND_CHANNEL = 0,
	INBAND_CHANNEL = 1,
};

/* dcmi_get_device_info's vNPU queries (main command 52, VDEV_MNG). The
 * answers are large structures whose tails changed between driver releases;
 * the plugin reads only their leading fields, which did not:
 *   sub 1 (GET_TOTAL_RESOURCE): unsigned int vdev_num; unsigned int vdev_id[32]; ...
 *   sub 0 (GET_VDEV_RESOURCE):  unsigned int vdev_id (in); char name[16] (the template); ...
 * and hands DCMI a zeroed buffer larger than either. */
enum dcmi_main_cmd {
	DCMI_MAIN_CMD_CHIP_INF = 12,
	DCMI_MAIN_CMD_VDEV_MNG = 52,
};
#define DCMI_VMNG_SUB_CMD_GET_VDEV_RESOURCE 0u
#define DCMI_VMNG_SUB_CMD_GET_TOTAL_RESOURCE 1u
#define DCMI_VDEV_MAX_PER_CHIP 32
#define DCMI_VDEV_NAME_LEN 16
#define DCMI_VDEV_QUERY_BYTES 4096

/* A chip's place in an A3 super pod (dcmi_get_device_info, main command 12
 * CHIP_INF, sub-command 1 SPOD_INFO): SDID is the chip's id across the super
 * pod, what HCCL's rank table calls super_device_id. The vendor header notes
 * that the structure is 48 bytes. */
#define DCMI_CHIP_INF_SUB_CMD_SPOD_INFO 1u
struct dcmi_spod_info {
	unsigned int sdid;
	unsigned int super_pod_size;
	unsigned int super_pod_id;
	unsigned int server_index;
	unsigned int chassis_id;
	unsigned int super_pod_type;
	unsigned int reserve[6];
};
_Static_assert(sizeof(struct dcmi_spod_info) == 48, "struct dcmi_spod_info is 48 bytes");

/* A chip's network ports (dcmi_get_device_ip): the RoCE port is the one
 * HCCL talks over between servers, its address the rank table's device_ip.
 * The address is IPv4 in the first four bytes or IPv6 in all sixteen, as
 * ip_type says (an enum in the vendor header, int-sized). */
enum dcmi_port_type {
	DCMI_VNIC_PORT = 0,
	DCMI_ROCE_PORT = 1,
};
#define DCMI_IPADDR_TYPE_V4 0
#define DCMI_IPADDR_TYPE_V6 1
struct dcmi_ip_addr {
	union {
		unsigned char ip6[16];
		unsigned char ip4[4];
	} u_addr;
	int ip_type;
};
_Static_assert(sizeof(struct dcmi_ip_addr) == 20, "struct dcmi_ip_addr is 20 bytes");

/* What the driver's network detection found for the RoCE port
 * (dcmi_get_device_network_health, enum dcmi_rdfx_detect_result): OK, a
 * socket failure, a receive timeout, the detection address unreachable,
 * time exceeded, a fault, detection not started (no detection address
 * configured), a thread error, the address being set. */
#define DCMI_RDFX_DETECT_OK 0u
#define DCMI_RDFX_DETECT_INIT 6u
#define DCMI_RDFX_DETECT_IP_SET 8u

/* Carving a vNPU at run time (dcmi_create_vdevice) and destroying it
 * (dcmi_set_destroy_vdevice), as Huawei's DCMI API reference describes them
 * (hiascend.com, "dcmi_create_vdevice" in the DCMI API reference of the
 * Atlas 200I A2 and later products). vdev_id and vfg_id 0xFFFFFFFF let the
 * driver choose; a vdev_id asks for that id, in the chip's range
 * [phy*16+100, phy*16+115]. Of the output only vdev_id is filled; the PCIe
 * fields and vfg_id are reserved. The reference lists the codes an
 * operation refused answers: -8001 (invalid parameter), -8002 (not
 * permitted: the chip is used whole, or in another vNPU mode) and -8020
 * (resource occupied, which is what a chip without room for the template
 * answers here). */
#define DCMI_VDEV_ID_ANY 0xFFFFFFFFu
#define DCMI_VDEV_TEMPLATE_NAME_LEN 32
struct dcmi_create_vdev_res_stru {
	unsigned int vdev_id;
	unsigned int vfg_id;
	char template_name[DCMI_VDEV_TEMPLATE_NAME_LEN];
	unsigned char reserved[64];
};
_Static_assert(sizeof(struct dcmi_create_vdev_res_stru) == 104, "struct dcmi_create_vdev_res_stru is 104 bytes");

struct dcmi_create_vdev_out {
	unsigned int vdev_id;
	unsigned int pcie_bus;
	unsigned int pcie_device;
	unsigned int pcie_func;
	unsigned int vfg_id;
	unsigned char reserved[32];
};
_Static_assert(sizeof(struct dcmi_create_vdev_out) == 52, "struct dcmi_create_vdev_out is 52 bytes");

/* A chip's device-share mode (dcmi_get_device_share_enable and
 * dcmi_set_device_share_enable in Huawei's DCMI API reference; npu-smi's
 * "set -t device-share"): whether containers may share the chip. Chips ship
 * with it off; enable_flag is 1 for on, 0 for off. */
#define DCMI_DEVICE_SHARE_OFF 0
#define DCMI_DEVICE_SHARE_ON 1

/* The processes running on a chip (dcmi_get_device_resource_info): each
 * one's pid and the device memory it uses, in bytes. The call takes no
 * length: Huawei's own caller (MindCluster's ascend-common devmanager,
 * DcGetDevProcessInfo) hands it room for 32 entries and treats a larger
 * count as invalid; the plugin hands it DCMI_PROC_ROOM, four times that,
 * and reads at most DCMI_MAX_PROCS. */
struct dcmi_proc_mem_info {
	int proc_id;
	unsigned long proc_mem_usage;
};
#define DCMI_MAX_PROCS 32
#define DCMI_PROC_ROOM (4 * DCMI_MAX_PROCS)

/* X-macro of every symbol the plugin resolves: (name, required, return, params).
 * A missing required symbol fails the load naming it; optional ones may be
 * absent on older drivers. */
#define DCMI_SYMBOLS(X)                                                                              \
	X(dcmi_init, 1, int, (void))                                                                 \
	X(dcmi_get_card_list, 1, int, (int *card_num, int *card_list, int list_len))                 \
	X(dcmi_get_device_num_in_card, 1, int, (int card_id, int *device_num))                      \
	X(dcmi_get_device_logic_id, 1, int, (int *device_logic_id, int card_id, int device_id))     \
	X(dcmi_get_device_phyid_from_logicid, 1, int, (unsigned int logicid, unsigned int *phyid))  \
	X(dcmi_get_device_chip_info, 1, int,                                                         \
	  (int card_id, int device_id, struct dcmi_chip_info *chip_info))                           \
	X(dcmi_get_device_health, 1, int, (int card_id, int device_id, unsigned int *health))       \
	X(dcmi_get_device_board_info, 0, int,                                                        \
	  (int card_id, int device_id, struct dcmi_board_info *board_info))                         \
	X(dcmi_get_dcmi_version, 0, int, (char *buf, int len))                                      \
	X(dcmi_get_device_info, 0, int,                                                              \
	  (int card_id, int device_id, enum dcmi_main_cmd main_cmd, unsigned int sub_cmd, void *buf, \
	   unsigned int *size))                                                                      \
	X(dcmi_get_device_errorcode_v2, 0, int,                                                      \
	  (int card_id, int device_id, int *error_count, unsigned int *error_code_list,             \
	   unsigned int list_len))                                                                   \
	X(dcmi_subscribe_fault_event, 0, int,                                                        \
	  (int card_id, int device_id, struct dcmi_event_filter filter,                             \
	   dcmi_fault_event_callback handler))                                                       \
	X(dcmi_get_device_hbm_info, 0, int,                                                          \
	  (int card_id, int device_id, struct dcmi_hbm_info *hbm_info))                             \
	X(dcmi_get_device_pcie_info_v2, 0, int,                                                      \
	  (int card_id, int device_id, struct dcmi_pcie_info_all *pcie_info))                       \
	X(dcmi_get_device_temperature, 0, int, (int card_id, int device_id, int *temperature))      \
	X(dcmi_get_device_power_info, 0, int, (int card_id, int device_id, int *power))             \
	X(dcmi_get_device_utilization_rate, 0, int,                                                  \
	  (int card_id, int device_id, int input_type, unsigned int *utilization_rate))              \
	X(dcmi_set_device_pre_reset, 0, int, (int card_id, int device_id))                          \
	X(dcmi_set_device_reset, 0, int, (int card_id, int device_id, enum dcmi_reset_channel channel))  \
	X(dcmi_get_device_ip, 0, int,                                                                \
	  (int card_id, int device_id, enum dcmi_port_type input_type, int port_id,                 \
	   struct dcmi_ip_addr *ip, struct dcmi_ip_addr *mask))                                     \
	X(dcmi_get_device_network_health, 0, int, (int card_id, int device_id, unsigned int *result))     \
	X(dcmi_create_vdevice, 0, int,                                                               \
	  (int card_id, int device_id, struct dcmi_create_vdev_res_stru *vdev,                      \
	   struct dcmi_create_vdev_out *out))                                                        \
	X(dcmi_set_destroy_vdevice, 0, int, (int card_id, int device_id, unsigned int vdevid))         \
	X(dcmi_get_device_share_enable, 0, int, (int card_id, int device_id, int *enable_flag))       \
	X(dcmi_set_device_share_enable, 0, int, (int card_id, int device_id, int enable_flag))       \
	X(dcmi_get_device_resource_info, 0, int,                                                     \
	  (int card_id, int device_id, struct dcmi_proc_mem_info *proc_info, int *proc_num))         \
	X(dcmi_get_netdev_brother_device, 0, int, (int card_id, int device_id, int *brother_card_id))

/* Prototypes as the vendor header declares them (used by the simulator). */
#define DCMI_DECLARE(name, required, ret, params) ret name params;
DCMI_SYMBOLS(DCMI_DECLARE)
#undef DCMI_DECLARE
