/* SPDX-License-Identifier: Apache-2.0 */
/* PCI device addresses as Linux names them under /sys/bus/pci/devices:
 * "<domain>:<bus>:<device>.<function>" in hex, e.g. "0000:3b:00.0" (the
 * kernel's pci_name(), "%04x:%02x:%02x.%d"). Shared by the plugin, which
 * finds a chip's NUMA node through it, and the DCMI simulator, which reads
 * it from its state file. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pci_address {
	uint32_t domain; /* up to PCI_DOMAIN_MAX: DCMI and the kernel keep it in an int */
	uint8_t bus;
	uint8_t device;   /* 0-31 */
	uint8_t function; /* 0-7 */
};

#define PCI_DOMAIN_MAX 0x7fffffffu
#define PCI_DEVICE_MAX 31u
#define PCI_FUNCTION_MAX 7u
/* "7fffffff:ff:1f.7" and its terminator. */
#define PCI_ADDRESS_SIZE 17

/* Parses the whole of s: a domain of 4 to 8 hex digits (more than 4 only
 * when the domain needs them, as on VMD domains such as "10000"), 2 for the
 * bus, 2 for the device, 1 for the function; either letter case. Returns 0,
 * -EINVAL for anything else (NULL included), -ERANGE for a domain above
 * PCI_DOMAIN_MAX, a device above 31 or a function above 7. */
int pci_address_parse(const char *s, struct pci_address *ret_address);

/* Writes the kernel's name of the address (lowercase, domain padded to 4
 * digits) into buf[size]. -ERANGE for fields out of range, -ENAMETOOLONG
 * when it does not fit (a buffer of PCI_ADDRESS_SIZE always does). */
int pci_address_format(const struct pci_address *address, char *buf, size_t size);

static inline bool pci_address_equal(const struct pci_address *a, const struct pci_address *b)
{
	return a->domain == b->domain && a->bus == b->bus && a->device == b->device && a->function == b->function;
}
