/* SPDX-License-Identifier: Apache-2.0 */
#include "base/k8s_names.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define REQUESTS_PREFIX "requests."

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
	if (len == 0 || len > K8S_DNS_SUBDOMAIN_MAX)
		return -EINVAL;
	/* [a-z0-9]([-a-z0-9]*[a-z0-9])? labels separated by dots. */
	size_t label_start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != '.') {
			if (!is_lower_alnum(s[i]) && s[i] != '-')
				return -EINVAL;
			continue;
		}
		if (i == label_start || !is_lower_alnum(s[label_start]) || !is_lower_alnum(s[i - 1]))
			return -EINVAL;
		label_start = i + 1;
	}
	return 0;
}

int k8s_extended_resource_name_check(const char *name, char *why, size_t why_size)
{
	const char *slash = strchr(name, '/');
	const char *problem = NULL;
	size_t requests_len = strlen(REQUESTS_PREFIX);

	if (!slash)
		problem = "it must have the form <domain>/<name>";
	else if (strstr(name, "kubernetes.io/"))
		problem = "the kubernetes.io/ domain is reserved";
	else if (strncmp(name, REQUESTS_PREFIX, requests_len) == 0)
		problem = "it must not start with \"requests.\"";
	else if (strchr(slash + 1, '/'))
		problem = "it must contain one '/'";
	/* The kubelet checks "requests." + name as a qualified name, so the
	 * domain has 253 characters minus that prefix. */
	else if ((size_t)(slash - name) + requests_len > K8S_DNS_SUBDOMAIN_MAX ||
		 k8s_dns_subdomain_check(name, (size_t)(slash - name)) < 0)
		problem = "the domain must be a lowercase DNS-1123 subdomain";
	else {
		const char *n = slash + 1;
		size_t len = strlen(n);
		bool ok = len > 0 && len <= K8S_NAME_MAX && is_alnum(n[0]) && is_alnum(n[len - 1]);
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
