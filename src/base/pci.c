/* SPDX-License-Identifier: Apache-2.0 */
#include "base/pci.h"

#include <errno.h>

#include "base/parse.h"

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Reads between min and max hex digits from *p up to the terminator end
 * ('\0' for the last field); an overlong run is a syntax error, so a value
 * never overflows. */
static int hex_field(const char **p, size_t min, size_t max, char end, uint64_t *ret_value)
{
	uint64_t v = 0;
	size_t n = 0;
	const char *s = *p;
	for (; hex_value(s[n]) >= 0; n++) {
		if (n == max)
			return -EINVAL;
		v = v * 16 + (uint64_t)hex_value(s[n]);
	}
	if (n < min || s[n] != end)
		return -EINVAL;
	*p = s + n + (end ? 1 : 0);
	*ret_value = v;
	return 0;
}

int pci_address_parse(const char *s, struct pci_address *ret_address)
{
	uint64_t domain, bus, device, function;
	int r;

	if (!s)
		return -EINVAL;
	if ((r = hex_field(&s, 4, 8, ':', &domain)) < 0 || (r = hex_field(&s, 2, 2, ':', &bus)) < 0 ||
	    (r = hex_field(&s, 2, 2, '.', &device)) < 0 || (r = hex_field(&s, 1, 1, '\0', &function)) < 0)
		return r;
	if (domain > PCI_DOMAIN_MAX || device > PCI_DEVICE_MAX || function > PCI_FUNCTION_MAX)
		return -ERANGE;
	*ret_address = (struct pci_address){
		.domain = (uint32_t)domain,
		.bus = (uint8_t)bus,
		.device = (uint8_t)device,
		.function = (uint8_t)function,
	};
	return 0;
}

int pci_address_format(const struct pci_address *a, char *buf, size_t size)
{
	if (a->domain > PCI_DOMAIN_MAX || a->device > PCI_DEVICE_MAX || a->function > PCI_FUNCTION_MAX)
		return -ERANGE;
	return str_printf(buf, size, "%04x:%02x:%02x.%x", (unsigned)a->domain, (unsigned)a->bus, (unsigned)a->device,
			  (unsigned)a->function);
}
