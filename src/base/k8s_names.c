#include "base/k8s_names.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static bool is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool is_alnum(char c)
{
	return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

int k8s_dns_subdomain_check(const char *s, size_t len)
{
	if (len == 0 || len > 253)
		return -EINVAL;
	size_t label = 0;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (c == '.') {
			if (label == 0 || s[i - 1] == '-')
				return -EINVAL;
			label = 0;
			continue;
		}
		if (!is_lower_alnum(c) && c != '-')
			return -EINVAL;
		if (c == '-' && label == 0)
			return -EINVAL;
		if (++label > 63)
			return -EINVAL;
	}
	return label > 0 && s[len - 1] != '-' ? 0 : -EINVAL;
}

int k8s_extended_resource_name_check(const char *name, char *why, size_t why_size)
{
	const char *slash = strchr(name, '/');
	const char *problem = NULL;

	if (!slash)
		problem = "it must have the form <domain>/<name>";
	else if (strstr(name, "kubernetes.io/"))
		problem = "the kubernetes.io/ domain is reserved";
	else if (strncmp(name, "requests.", 9) == 0)
		problem = "it must not start with \"requests.\"";
	else if (k8s_dns_subdomain_check(name, (size_t)(slash - name)) < 0)
		problem = "the domain must be a lowercase DNS-1123 subdomain";
	else {
		const char *n = slash + 1;
		size_t len = strlen(n);
		bool ok = len > 0 && len <= 63 && is_alnum(n[0]) && is_alnum(n[len - 1]);
		for (size_t i = 0; ok && i < len; i++)
			ok = is_alnum(n[i]) || n[i] == '-' || n[i] == '_' || n[i] == '.';
		if (!ok)
			problem = "the name after '/' must be 1-63 characters of [A-Za-z0-9-_.], "
				  "starting and ending alphanumeric";
	}
	if (!problem)
		return 0;
	snprintf(why, why_size, "%s", problem);
	return -EINVAL;
}
