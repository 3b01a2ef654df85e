/* SPDX-License-Identifier: Apache-2.0 */
/* PCI addresses as sysfs names them (base/pci.c): the kernel's form parses
 * and formats back unchanged, wider domains and upper case are read, and
 * everything else (short or long fields, a missing separator, out of range
 * device, function or domain) is refused with nothing written. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/macro.h"
#include "base/pci.h"

/* text parses into *a, which formats as formatted. */
static void round_trip(const char *text, struct pci_address *a, const char *formatted)
{
	char name[PCI_ADDRESS_SIZE];
	assert_int_equal(pci_address_parse(text, a), 0);
	assert_int_equal(pci_address_format(a, name, sizeof(name)), 0);
	assert_string_equal(name, formatted);
}

static void test_parse_and_format(void **state)
{
	(void)state;
	struct pci_address a;

	round_trip("0000:3b:00.0", &a, "0000:3b:00.0");
	assert_int_equal(a.domain, 0);
	assert_int_equal(a.bus, 0x3b);
	assert_int_equal(a.device, 0);
	assert_int_equal(a.function, 0);

	/* Upper case is read; the kernel's lower case is written. */
	round_trip("0001:C1:1F.7", &a, "0001:c1:1f.7");
	assert_int_equal(a.domain, 1);
	assert_int_equal(a.bus, 0xc1);
	assert_int_equal(a.device, 0x1f);
	assert_int_equal(a.function, 7);

	/* Domains past 0xffff (VMD) have more digits, up to an int's range. */
	round_trip("10000:e1:00.0", &a, "10000:e1:00.0");
	assert_int_equal(a.domain, 0x10000);
	round_trip("7fffffff:ff:1f.7", &a, "7fffffff:ff:1f.7");
	assert_int_equal(strlen("7fffffff:ff:1f.7") + 1, PCI_ADDRESS_SIZE);
}

static void test_parse_refuses(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"",
		"3b:00.0",          /* no domain */
		"000:3b:00.0",      /* short domain */
		"000000000:3b:00.0", /* 9 domain digits */
		"0000:3:00.0",      /* short bus */
		"0000:3bb:00.0",    /* long bus */
		"0000:3b:0.0",      /* short device */
		"0000:3b:00.00",    /* long function */
		"0000:3b:00",       /* no function */
		"0000:3b:00.",      /* empty function */
		"0000-3b:00.0",     /* wrong separator */
		"0000:3b.00.0",
		"0000:3b:00.0 ",    /* trailing blank */
		" 0000:3b:00.0",
		"+000:3b:00.0",
		"0000:3g:00.0",     /* not hex */
		"0000:3b:00.0\n",
	};
	static const char *const out_of_range[] = {
		"0000:3b:20.0",      /* device above 31 */
		"0000:3b:00.8",      /* function above 7 */
		"80000000:00:00.0", /* domain beyond an int */
	};
	struct pci_address a = { .domain = 9, .bus = 9, .device = 9, .function = 1 };

	for (size_t i = 0; i < ELEMENTSOF(bad); i++)
		assert_int_equal(pci_address_parse(bad[i], &a), -EINVAL);
	for (size_t i = 0; i < ELEMENTSOF(out_of_range); i++)
		assert_int_equal(pci_address_parse(out_of_range[i], &a), -ERANGE);
	assert_int_equal(pci_address_parse(NULL, &a), -EINVAL);
	/* Nothing was written. */
	assert_int_equal(a.domain, 9);
	assert_int_equal(a.bus, 9);
	assert_int_equal(a.device, 9);
	assert_int_equal(a.function, 1);
}

static void test_format_refuses(void **state)
{
	(void)state;
	char name[PCI_ADDRESS_SIZE] = "untouched";
	const struct pci_address bad_device = { .device = 32 };
	const struct pci_address bad_function = { .function = 8 };
	const struct pci_address bad_domain = { .domain = 0x80000000u };
	const struct pci_address fine = { .bus = 0x3b };

	assert_int_equal(pci_address_format(&bad_device, name, sizeof(name)), -ERANGE);
	assert_int_equal(pci_address_format(&bad_function, name, sizeof(name)), -ERANGE);
	assert_int_equal(pci_address_format(&bad_domain, name, sizeof(name)), -ERANGE);
	assert_int_equal(pci_address_format(&fine, name, 12), -ENAMETOOLONG);
	assert_string_equal(name, "untouched");
	assert_true(pci_address_equal(&fine, &(struct pci_address){ .bus = 0x3b }));
	assert_false(pci_address_equal(&fine, &bad_function));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_and_format),
		cmocka_unit_test(test_parse_refuses),
		cmocka_unit_test(test_format_refuses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
