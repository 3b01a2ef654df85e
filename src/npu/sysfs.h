/* SPDX-License-Identifier: Apache-2.0 */
/* What the host's sysfs says about where a chip sits: the PCI device behind
 * a character device node, and the NUMA node of a PCI device. sysfs is read
 * under host_root (the plugin's --host-root, "/" by default), so a plugin
 * that sees the host's / at /host reads /host/sys. The kernel interfaces are
 * the stable ABI documented in the kernel's Documentation/ABI
 * (sysfs-dev: /sys/dev/char/<major>:<minor>; sysfs-bus-pci: numa_node).
 * Never logs; every function returns 0 or a negative errno and writes its
 * output only on success. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "base/pci.h"

/* Linux keeps at most 1024 NUMA nodes (MAX_NUMNODES with NODES_SHIFT 10). */
#define SYSFS_NUMA_NODE_MAX 1023u

/* Parses the content of a numa_node attribute, a decimal number and an
 * optional newline as the kernel writes it ("%d\n"). Returns 0 and the node,
 * -ENODATA for -1 (the kernel knows no node for the device: a machine with
 * one node, or firmware that does not say), -ERANGE above
 * SYSFS_NUMA_NODE_MAX, -EINVAL for anything else. */
int sysfs_numa_node_parse(const char *text, size_t len, uint32_t *ret_node);

/* Reads <host_root>/sys/bus/pci/devices/<address>/numa_node (host_root NULL
 * means "/"). Returns what sysfs_numa_node_parse returns, -EINVAL as well
 * for a file of 32 bytes or more, or the -errno of opening or reading it
 * (-ENOENT: no such device, or a kernel built without NUMA). */
int sysfs_pci_numa_node(const char *host_root, const struct pci_address *address, uint32_t *ret_node);

/* The PCIe root complex a PCI device hangs under, as Kubernetes' standard
 * device attribute resource.kubernetes.io/pcieRoot names it ("pci0000:00"):
 * the first component of the device's path under /sys/devices, which
 * mirrors the hardware's hierarchy. */
#define SYSFS_PCIE_ROOT_SIZE 24

/* From the target of the link /sys/bus/pci/devices/<name> (relative to that
 * directory, as the kernel writes it, or absolute from sysfs' root): the
 * root into buf. Returns 0, -EINVAL when the target does not lead to
 * devices/pci<domain>:<bus>/.../<name> (the device's own name last), or
 * -ENAMETOOLONG for a root that does not fit size. Pure, for the fuzzer. */
int sysfs_pcie_root_parse(const char *target, const char *name, char *buf, size_t size);

/* Reads the link <host_root>/sys/bus/pci/devices/<address> and parses it.
 * Returns what sysfs_pcie_root_parse returns, or the -errno of readlink
 * (-ENOENT: no such device; -EINVAL: not a link, as in a test tree). */
int sysfs_pci_pcie_root(const char *host_root, const struct pci_address *address, char *buf, size_t size);

/* The PCI device behind the character device node dev_node (a path of the
 * plugin's own filesystem; symlinks are followed): its major and minor
 * numbers lead to <host_root>/sys/dev/char/<major>:<minor>/device, the link
 * to the device's parent, whose last path component must be a PCI address
 * ("../../../0000:3b:00.0"). Returns 0, the -errno of stat (-ENOENT: no such
 * node), -ENODEV when dev_node is not a character device, -ENOENT when the
 * device has no parent link (a class device created without a parent has
 * none), -EINVAL when the parent is not a PCI device (or the entry is no
 * link), -ENAMETOOLONG for paths that do not fit. */
int sysfs_char_device_pci_address(const char *host_root, const char *dev_node, struct pci_address *ret_address);
