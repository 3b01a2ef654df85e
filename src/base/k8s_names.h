/* SPDX-License-Identifier: Apache-2.0 */
/* Kubernetes name rules the kubelet enforces on device plugins, so that the
 * plugin rejects at start-up what the kubelet would reject at registration. */
#pragma once

#include <assert.h>
#include <stddef.h>

/* A lowercase DNS-1123 subdomain, such as the domain of a qualified name. */
#define K8S_DNS_SUBDOMAIN_MAX 253
/* The name of a qualified name (after its '/'). */
#define K8S_NAME_MAX 63

/* Room for an extended resource name, terminator included, as the plugin,
 * its configuration, its telemetry and kubelet-sim keep one. A resource
 * name is a Kubernetes qualified name: a DNS subdomain of at most 253 bytes,
 * '/' and a name of at most 63, 318 bytes with the terminator; 320 leaves
 * room beyond that (and names that break the rules are refused by
 * k8s_extended_resource_name_check, not cut here). */
#define RESOURCE_NAME_MAX 320
static_assert(RESOURCE_NAME_MAX >= K8S_DNS_SUBDOMAIN_MAX + 1 + K8S_NAME_MAX + 1,
	      "a qualified name fits RESOURCE_NAME_MAX");

/* An extended resource name such as "ascend.com/npu", checked as the kubelet
 * does: one '/', no "kubernetes.io/", no "requests." prefix, a lowercase
 * DNS-1123 subdomain before the '/' (at most 244 characters, as the kubelet
 * validates it behind "requests."), and after it at most 63 characters
 * matching [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?. Returns 0 or -EINVAL
 * with the broken rule in why. */
int k8s_extended_resource_name_check(const char *name, char *why, size_t why_size);

/* A lowercase RFC 1123 subdomain as Kubernetes checks it: at most 253
 * characters of dot-separated labels matching [a-z0-9]([-a-z0-9]*[a-z0-9])?. */
int k8s_dns_subdomain_check(const char *s, size_t len);
