/* SPDX-License-Identifier: Apache-2.0 */
/* Reaching the API server (kube/config.c): kubeconfig files as kubectl
 * writes them (data inline in base64, or files relative to the kubeconfig),
 * the context chosen, and each mistake refused with the key that holds it;
 * the in-cluster configuration from the environment and a service account
 * directory; a token with a control character left after its trailing
 * white space is refused, without quoting it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "kube/config.h"
#include "support/tmpdir.h"

/* "-----BEGIN CERTIFICATE-----\n" and "KEY" in base64. */
#define CA_B64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="
#define KEY_B64 "S0VZ"

static int parse(const char *text, const char *dir, const char *context, struct kube_config *c, char *why)
{
	return kube_config_parse_kubeconfig(text, strlen(text), dir, context, c, why, 256);
}

static const char kubeconfig[] = "apiVersion: v1\n"
				 "kind: Config\n"
				 "current-context: admin@k\n"
				 "clusters:\n"
				 "- name: other\n"
				 "  cluster: {server: https://other:6443}\n"
				 "- name: k\n"
				 "  cluster:\n"
				 "    server: https://127.0.0.1:6443/\n"
				 "    certificate-authority-data: " CA_B64 "\n"
				 "contexts:\n"
				 "- name: admin@k\n"
				 "  context: {cluster: k, user: admin, namespace: npu}\n"
				 "- name: other\n"
				 "  context: {cluster: other, user: tok}\n"
				 "users:\n"
				 "- name: admin\n"
				 "  user:\n"
				 "    client-certificate-data: " CA_B64 "\n"
				 "    client-key-data: " KEY_B64 "\n"
				 "- name: tok\n"
				 "  user: {token: abc.def}\n";

static void test_kubeconfig_inline(void **state)
{
	(void)state;
	struct kube_config c = { 0 };
	char why[256] = "";
	assert_int_equal(parse(kubeconfig, "/nowhere", NULL, &c, why), 0);
	assert_string_equal(c.server, "https://127.0.0.1:6443");
	assert_string_equal(c.ca.data, "-----BEGIN CERTIFICATE-----\n");
	assert_int_equal(c.ca.len, 28);
	assert_string_equal(c.cert.data, "-----BEGIN CERTIFICATE-----\n");
	assert_string_equal(c.key.data, "KEY");
	assert_string_equal(c.namespace_, "npu");
	assert_null(c.token.data);
	kube_config_free(&c);

	/* Another context, by name: a token, the system's CAs. */
	assert_int_equal(parse(kubeconfig, "/nowhere", "other", &c, why), 0);
	assert_string_equal(c.server, "https://other:6443");
	assert_null(c.ca.data);
	assert_string_equal(c.token.data, "abc.def");
	assert_null(c.namespace_);
	kube_config_free(&c);
}

static void test_kubeconfig_files(void **state)
{
	(void)state;
	char dir[64];
	assert_int_equal(tmpdir_make(dir, sizeof(dir), "kube-config"), 0);
	char path[256];
	static const char *const files[][2] = { { "ca.crt", "CA PEM\n" }, { "admin.crt", "CERT\n" }, { "admin.key", "KEY\n" } };
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i][0]);
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fputs(files[i][1], f);
		fclose(f);
	}
	char text[1024];
	snprintf(text, sizeof(text),
		 "current-context: c\n"
		 "clusters: [{name: k, cluster: {server: 'https://[::1]:6443', certificate-authority: ca.crt}}]\n"
		 "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
		 "users: [{name: u, user: {client-certificate: admin.crt, client-key: %s/admin.key, tokenFile: tok}}]\n",
		 dir);
	snprintf(path, sizeof(path), "%s/config", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	struct kube_config c = { 0 };
	char why[512] = "";
	int r = kube_config_from_kubeconfig(path, NULL, &c, why, sizeof(why));
	if (r < 0)
		fail_msg("%s", why);
	assert_string_equal(c.server, "https://[::1]:6443");
	assert_string_equal(c.ca.data, "CA PEM\n");
	assert_string_equal(c.cert.data, "CERT\n");
	assert_string_equal(c.key.data, "KEY\n");
	snprintf(text, sizeof(text), "%s/tok", dir);
	assert_string_equal(c.token_file, text);
	assert_string_equal(c.source, path);
	kube_config_free(&c);

	/* A missing file is named with its key. */
	snprintf(path, sizeof(path), "%s/ca.crt", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/config", dir);
	assert_int_equal(kube_config_from_kubeconfig(path, NULL, &c, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "clusters[0].cluster.certificate-authority:"));
	assert_non_null(strstr(why, "ca.crt"));
	for (size_t i = 1; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i][0]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/config", dir);
	unlink(path);
	assert_int_equal(rmdir(dir), 0);

	assert_int_equal(kube_config_from_kubeconfig("/nonexistent/kubeconfig", NULL, &c, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "/nonexistent/kubeconfig"));
}

/* Each mistake, and the words the message must hold. */
static void test_kubeconfig_errors(void **state)
{
	(void)state;
	static const struct {
		const char *text, *context, *says;
	} cases[] = {
		{ "", NULL, "empty kubeconfig" },
		{ "- a\n", NULL, "not a mapping" },
		{ "clusters: []\n", NULL, "current-context: not set" },
		{ "current-context: x\ncontexts: []\n", NULL, "contexts: no entry named \"x\"" },
		{ "current-context: x\ncontexts: [{name: x, context: {user: u}}]\n", NULL, "contexts[0].context.cluster: missing" },
		{ "current-context: x\ncontexts: [{name: x, context: {cluster: k}}]\nclusters: [{name: k, cluster: {}}]\n",
		  NULL, "clusters[0].cluster.server: missing" },
		{ "current-context: x\ncontexts: [{name: x, context: {cluster: k}}]\n"
		  "clusters: [{name: k, cluster: {server: 'http://a:8080'}}]\n",
		  NULL, "clusters[0].cluster.server: \"http://a:8080\" is not an https:// URL" },
		{ "current-context: x\ncontexts: [{name: x, context: {cluster: k}}]\n"
		  "clusters: [{name: k, cluster: {server: 'https:///'}}]\n",
		  NULL, "clusters[0].cluster.server: \"https:///\" is not a URL with a host" },
		{ "current-context: x\ncontexts: [{name: x, context: {cluster: k}}]\n"
		  "clusters: [{name: k, cluster: {server: 'https://a', insecure-skip-tls-verify: true}}]\n",
		  NULL, "insecure-skip-tls-verify: not supported" },
		{ "current-context: x\ncontexts: [{name: x, context: {cluster: k}}]\n"
		  "clusters: [{name: k, cluster: {server: 'https://a', certificate-authority-data: 'no*base64'}}]\n",
		  NULL, "clusters[0].cluster.certificate-authority-data: not base64" },
		{ "current-context: x\ncontexts: [{name: x, context: {cluster: k}}]\n"
		  "clusters: [{name: k, cluster: {server: 'https://a', certificate-authority-data: " CA_B64
		  ", certificate-authority: /ca}}]\n",
		  NULL, "certificate-authority and certificate-authority-data: give one of them" },
		{ "current-context: x\ncontexts: [{name: x, context: {cluster: k, user: u}}]\n"
		  "clusters: [{name: k, cluster: {server: 'https://a'}}]\nusers: [{name: u, user: {exec: {command: x}}}]\n",
		  NULL, "users[0].user.exec: not supported" },
		{ "current-context: x\ncontexts: [{name: x, context: {cluster: k, user: u}}]\n"
		  "clusters: [{name: k, cluster: {server: 'https://a'}}]\nusers: [{name: u, user: {client-key-data: " KEY_B64
		  "}}]\n",
		  NULL, "users[0].user: client-key without client-certificate" },
		{ "current-context: x\ncontexts: [{name: x, context: {cluster: k, user: v}}]\n"
		  "clusters: [{name: k, cluster: {server: 'https://a'}}]\nusers: [{name: u, user: {}}]\n",
		  NULL, "users: no entry named \"v\"" },
		{ "current-context: x\ncontexts: [{name: x, context: {cluster: k}}]\n"
		  "clusters: [{name: k, cluster: {server: 'https://a'}}]\n",
		  "y", "contexts: no entry named \"y\"" },
		{ "current-context: x\ncontexts: [{name: x, context: {cluster: k}}]\n"
		  "clusters: [{name: k, cluster: {server: 'https://a'}}]\n---\nb: 2\n",
		  NULL, "one YAML document" },
		{ "a: [\n", NULL, "line" },
		{ "current-context: x\ncontexts: [{name: x, context: {cluster: k, user: u}}]\n"
		  "clusters: [{name: k, cluster: {server: 'https://a'}}]\nusers: [{name: u, user: {token: \"ab\\rc\"}}]\n",
		  NULL, "users[0].user.token: control character 0x0d at byte 3" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kube_config c = { 0 };
		char why[256] = "";
		int r = parse(cases[i].text, "/", cases[i].context, &c, why);
		if (r != -EINVAL || !strstr(why, cases[i].says))
			fail_msg("case %zu: %d \"%s\", wanted -EINVAL and \"%s\"", i, r, why, cases[i].says);
		assert_null(c.server);
	}
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_in_cluster(void **state)
{
	(void)state;
	char dir[64];
	assert_int_equal(tmpdir_make(dir, sizeof(dir), "kube-sa"), 0);
	struct kube_config c = { 0 };
	char why[256] = "";
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	assert_int_equal(kube_config_in_cluster(dir, &c, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "KUBERNETES_SERVICE_HOST"));

	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443x", 1);
	assert_int_equal(kube_config_in_cluster(dir, &c, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "KUBERNETES_SERVICE_PORT=443x"));
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	assert_int_equal(kube_config_in_cluster(dir, &c, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "service account token"));

	write_file(dir, "ca.crt", "CA\n");
	write_file(dir, "namespace", "kube-system");
	/* A bare CR would go onto the wire inside the Authorization header. */
	write_file(dir, "token", "eyJ\r.token\n");
	assert_int_equal(kube_config_in_cluster(dir, &c, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "/token: control character 0x0d at byte 4"));
	assert_null(strstr(why, "eyJ"));
	write_file(dir, "token", "eyJ.token\r\n");
	assert_int_equal(kube_config_in_cluster(dir, &c, why, sizeof(why)), 0);
	assert_string_equal(c.server, "https://10.96.0.1:443");
	assert_string_equal(c.token.data, "eyJ.token");
	assert_string_equal(c.ca.data, "CA\n");
	assert_string_equal(c.namespace_, "kube-system");
	assert_non_null(strstr(c.token_file, "/token"));
	kube_config_free(&c);

	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	assert_int_equal(kube_config_in_cluster(dir, &c, why, sizeof(why)), 0);
	assert_string_equal(c.server, "https://[fd00::1]:443");
	kube_config_free(&c);
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");

	static const char *const names[] = { "token", "ca.crt", "namespace" };
	for (size_t i = 0; i < 3; i++) {
		char path[256];
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kubeconfig_inline),
		cmocka_unit_test(test_kubeconfig_files),
		cmocka_unit_test(test_kubeconfig_errors),
		cmocka_unit_test(test_in_cluster),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
