/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes the two parsers of what sysfs says about a chip: PCI addresses
 * (base/pci.c: the last component of a sysfs device link, the simulator's
 * pci=), numa_node contents and the links that name a PCIe root complex
 * (npu/sysfs.c). The whole input goes to each.
 * An address that parses must format back to a name that parses to the
 * same address; a node that parses must be within the bound. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/pci.h"
#include "npu/sysfs.h"
#include "fuzz/fuzz_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size, 4096);
	if (!text)
		return 0;

	struct pci_address a, again;
	if (pci_address_parse(text, &a) == 0) {
		char name[PCI_ADDRESS_SIZE];
		if (pci_address_format(&a, name, sizeof(name)) != 0 || pci_address_parse(name, &again) != 0 ||
		    !pci_address_equal(&a, &again))
			abort();
	}

	/* A root complex is what the name says: "pci", hex digits, ':'. */
	char root[SYSFS_PCIE_ROOT_SIZE];
	if (sysfs_pcie_root_parse(text, "0000:3b:00.0", root, sizeof(root)) == 0 &&
	    (strncmp(root, "pci", 3) != 0 || !strchr(root, ':') || !strstr(text, root)))
		abort();

	uint32_t node;
	if (sysfs_numa_node_parse(text, size, &node) == 0 && node > SYSFS_NUMA_NODE_MAX)
		abort();
	free(text);
	return 0;
}
