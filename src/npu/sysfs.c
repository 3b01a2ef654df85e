/* SPDX-License-Identifier: Apache-2.0 */
#include "npu/sysfs.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/parse.h"

/* numa_node holds "%d\n": anything this long is not one. */
#define NUMA_NODE_TEXT_MAX 32

int sysfs_numa_node_parse(const char *text, size_t len, uint32_t *ret_node)
{
	char number[NUMA_NODE_TEXT_MAX];

	if (len > 0 && text[len - 1] == '\n')
		len--;
	if (len == 0 || len >= sizeof(number) || memchr(text, '\0', len))
		return -EINVAL;
	memcpy(number, text, len);
	number[len] = '\0';
	if (strcmp(number, "-1") == 0)
		return -ENODATA;
	return parse_u32(number, 10, SYSFS_NUMA_NODE_MAX, ret_node);
}

int sysfs_pci_numa_node(const char *host_root, const struct pci_address *address, uint32_t *ret_node)
{
	char name[PCI_ADDRESS_SIZE], relative[64], path[PATH_MAX];
	char text[NUMA_NODE_TEXT_MAX];
	size_t len = 0;
	int r;

	if ((r = pci_address_format(address, name, sizeof(name))) < 0 ||
	    (r = str_printf(relative, sizeof(relative), "sys/bus/pci/devices/%s/numa_node", name)) < 0 ||
	    (r = path_join(path, sizeof(path), host_root ? host_root : "/", relative)) < 0)
		return r;

	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	/* sysfs hands an attribute over in one read; a regular file (a test
	 * tree) may take more, and the loop stops at the bound. */
	while (len < sizeof(text)) {
		ssize_t n = read(fd, text + len, sizeof(text) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	r = len == sizeof(text) ? -EINVAL : sysfs_numa_node_parse(text, len, ret_node);
out:
	close(fd);
	return r;
}

/* "pci" then a domain of 4 to 8 hex digits, ":" and a bus of 2. */
static bool is_pcie_root(const char *s, size_t n)
{
	if (n < 10 || n > 14 || strncmp(s, "pci", 3) != 0 || s[n - 3] != ':')
		return false;
	for (size_t i = 3; i < n; i++)
		if (i != n - 3 && !isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

int sysfs_pcie_root_parse(const char *target, const char *name, char *buf, size_t size)
{
	/* A relative target starts from sys/bus/pci/devices: three levels up
	 * is sysfs' root. */
	const char *p = target;
	if (strncmp(p, "../../../", 9) == 0)
		p += 9;
	else if (strncmp(p, "/sys/", 5) == 0)
		p += 5;
	else
		return -EINVAL;
	if (strncmp(p, "devices/", 8) != 0)
		return -EINVAL;
	p += 8;
	size_t root = strcspn(p, "/");
	const char *last = strrchr(p, '/');
	if (!is_pcie_root(p, root) || !last || strcmp(last + 1, name) != 0 || strstr(p, "/../") || strstr(p, "/./"))
		return -EINVAL;
	if (root >= size)
		return -ENAMETOOLONG;
	memcpy(buf, p, root);
	buf[root] = '\0';
	return 0;
}

/* The target of the link <host_root>/<relative> into target[PATH_MAX]. */
static int read_link(const char *host_root, const char *relative, char *target)
{
	char path[PATH_MAX];
	int r = path_join(path, sizeof(path), host_root ? host_root : "/", relative);
	if (r < 0)
		return r;
	ssize_t n = readlink(path, target, PATH_MAX);
	if (n < 0)
		return -errno;
	if ((size_t)n >= PATH_MAX)
		return -ENAMETOOLONG;
	target[n] = '\0';
	return 0;
}

int sysfs_pci_pcie_root(const char *host_root, const struct pci_address *address, char *buf, size_t size)
{
	char name[PCI_ADDRESS_SIZE], relative[64], target[PATH_MAX];
	int r;
	if ((r = pci_address_format(address, name, sizeof(name))) < 0 ||
	    (r = str_printf(relative, sizeof(relative), "sys/bus/pci/devices/%s", name)) < 0 ||
	    (r = read_link(host_root, relative, target)) < 0)
		return r;
	return sysfs_pcie_root_parse(target, name, buf, size);
}

int sysfs_char_device_pci_address(const char *host_root, const char *dev_node, struct pci_address *ret_address)
{
	char relative[64], target[PATH_MAX];
	struct stat st;
	int r;

	if (stat(dev_node, &st) < 0)
		return -errno;
	if (!S_ISCHR(st.st_mode))
		return -ENODEV;
	/* The link is relative ("../../../0000:3b:00.0"): its last component
	 * names the parent whatever host_root is, so it is never followed. */
	if ((r = str_printf(relative, sizeof(relative), "sys/dev/char/%u:%u/device", major(st.st_rdev),
			    minor(st.st_rdev))) < 0 ||
	    (r = read_link(host_root, relative, target)) < 0)
		return r;
	const char *slash = strrchr(target, '/');
	struct pci_address address;
	r = pci_address_parse(slash ? slash + 1 : target, &address);
	if (r < 0)
		return -EINVAL;
	*ret_address = address;
	return 0;
}
