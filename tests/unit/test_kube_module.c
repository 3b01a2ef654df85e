/* SPDX-License-Identifier: Apache-2.0 */
/* The loader of the API-server module (daemon/kube_module.c) in a program
 * that, like the daemon, does not link src/kube/ or libcurl: where it looks,
 * what it refuses and why, and that the module it loads is self-contained,
 * shows one symbol only, and answers with its own code (a request through
 * it is test_kube_api's test_module). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/kube_module.h"

static void test_path(void **state)
{
	(void)state;
	char out[PATH_MAX];
	unsetenv(KUBE_MODULE_ENV);
	/* Beside the binary: <its dir>/../lib/ascend-k8s/. */
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	char want[PATH_MAX + 64];
	snprintf(want, sizeof(want), "%s/../lib/ascend-k8s/libascend-kube.so", exe);
	assert_int_equal(kube_module_path(NULL, out, sizeof(out)), 0);
	assert_string_equal(out, want);
	/* The environment, then an explicit path, win. */
	setenv(KUBE_MODULE_ENV, "/opt/x/libascend-kube.so", 1);
	assert_int_equal(kube_module_path(NULL, out, sizeof(out)), 0);
	assert_string_equal(out, "/opt/x/libascend-kube.so");
	assert_int_equal(kube_module_path("/flag/m.so", out, sizeof(out)), 0);
	assert_string_equal(out, "/flag/m.so");
	assert_int_equal(kube_module_path(NULL, out, 8), -ENAMETOOLONG);
	unsetenv(KUBE_MODULE_ENV);
}

static void test_refused(void **state)
{
	(void)state;
	const struct kube_module_api *api = NULL;
	char why[512];
	/* Nothing there. */
	assert_int_equal(kube_module_load("/nonexistent/libascend-kube.so", &api, why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "/nonexistent/libascend-kube.so: No such file or directory");
	/* Not a library. */
	char path[] = "/tmp/kube-module-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "not ELF\n", 8), 8);
	close(fd);
	assert_int_equal(kube_module_load(path, &api, why, sizeof(why)), -ELIBBAD);
	assert_non_null(strstr(why, "cannot load"));
	unlink(path);
	/* A library, but not this one (the DCMI simulator). */
	assert_int_equal(kube_module_load(FAKE_DCMI_LIB, &api, why, sizeof(why)), -ELIBBAD);
	assert_non_null(strstr(why, "has no symbol ascend_kube_module_v1"));
	assert_null(api);

	/* A table of another build, each way it can differ. */
	static const struct {
		const char *bad, *cause;
	} tables[] = {
		{ "none", "ascend_kube_module_v1() returned no table" },
		{ "version", "table version 4, this daemon reads version 3" },
		{ "size", "bytes, this daemon reads" },
		{ "layout", "built with another snapshot struct than this daemon" },
		{ "build", "of version 0.0.1, this daemon is " ASCEND_VERSION },
		{ "", "the table has no config_in_cluster function" },
	};
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		setenv("KUBE_MODULE_BAD", tables[i].bad, 1);
		assert_int_equal(kube_module_load(KUBE_MODULE_BAD_LIB, &api, why, sizeof(why)), -ELIBBAD);
		if (!strstr(why, tables[i].cause) || !strstr(why, KUBE_MODULE_BAD_LIB))
			fail_msg("%s: %s", tables[i].bad, why);
		assert_null(api);
	}
	unsetenv("KUBE_MODULE_BAD");
}

static void test_module(void **state)
{
	(void)state;
	const struct kube_module_api *api = NULL;
	char why[512];
	/* Through the environment, as the integration tests point the daemon at it. */
	setenv(KUBE_MODULE_ENV, KUBE_MODULE_LIB, 1);
	/* The sanitizer builds' libmicrohttpd brings GnuTLS in and sets it up. */
	void *gnutls = dlopen("libgnutls.so.30", RTLD_NOW | RTLD_NOLOAD);
	bool gnutls_before = gnutls != NULL;
	if (gnutls)
		dlclose(gnutls);
	if (kube_module_load(NULL, &api, why, sizeof(why)) < 0)
		fail_msg("%s", why);
	unsetenv(KUBE_MODULE_ENV);
	/* libcurl's libraries map GnuTLS, which the module never uses: left
	 * unset-up, it answers every call with GNUTLS_E_LIB_IN_ERROR_STATE. */
	if (!gnutls_before && (gnutls = dlopen("libgnutls.so.30", RTLD_NOW | RTLD_NOLOAD))) {
		int (*rnd)(int, void *, size_t) = (int (*)(int, void *, size_t))dlsym(gnutls, "gnutls_rnd");
		assert_non_null(rnd);
		unsigned char nonce[8];
		assert_int_equal(rnd(0, nonce, sizeof(nonce)), -402);
		dlclose(gnutls);
	}
	assert_int_equal(api->version, KUBE_MODULE_API_VERSION);
	assert_int_equal(api->size, sizeof(*api));
	assert_string_equal(api->build_version, ASCEND_VERSION);

	/* One symbol: none of its src/, json-c or libyaml copies shows. A
	 * handle's lookup also searches the libraries the module needs (the
	 * sanitizer builds link json-c and libyaml as such), so what counts is
	 * whether the definition found is the module's. */
	void *handle = dlopen(KUBE_MODULE_LIB, RTLD_NOW | RTLD_NOLOAD);
	assert_non_null(handle);
	assert_non_null(dlsym(handle, KUBE_MODULE_SYMBOL));
	static const char *const hidden[] = { "kube_client_new", "kube_publisher_start", "json_tokener_parse",
					      "yaml_parser_initialize", "npu_snapshot_unref", "file_read_bounded" };
	for (size_t i = 0; i < sizeof(hidden) / sizeof(hidden[0]); i++) {
		void *sym = dlsym(handle, hidden[i]);
		Dl_info info;
		if (sym && dladdr(sym, &info) && info.dli_fname && strstr(info.dli_fname, KUBE_MODULE_FILE))
			fail_msg("the module exports %s", hidden[i]);
	}
	dlclose(handle);

	/* Its own code answers: not in a pod, and a kubeconfig with an exec user. */
	struct kube_config conf;
	assert_int_equal(api->config_in_cluster("/nonexistent", &conf, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "KUBERNETES_SERVICE_HOST"));
	char path[] = "/tmp/kube-module-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	static const char kubeconfig[] = "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
					 "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
					 "clusters: [{name: k, cluster: {server: 'https://127.0.0.1:1'}}]\n"
					 "users: [{name: u, user: {exec: {command: x}}}]\n";
	assert_int_equal(write(fd, kubeconfig, sizeof(kubeconfig) - 1), (ssize_t)(sizeof(kubeconfig) - 1));
	close(fd);
	assert_int_equal(api->config_from_kubeconfig(path, NULL, &conf, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "exec"));
	unlink(path);
	/* A client refuses a server that is not https://. */
	struct kube_config plain = { .server = strdup("http://127.0.0.1:1") };
	struct kube_client *c = NULL;
	assert_int_equal(api->client_new(&plain, 0, &c, why, sizeof(why)), -EINVAL);
	api->config_free(&plain);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_module),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
