/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/kube_module.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/parse.h"

int kube_module_path(const char *path, char *out, size_t size)
{
	if (!path || !path[0])
		path = getenv(KUBE_MODULE_ENV);
	if (path && path[0])
		return str_copy(out, size, path);

	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe));
	if (n < 0)
		return -errno;
	if ((size_t)n >= sizeof(exe))
		return -ENAMETOOLONG;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	return str_printf(out, size, "%s/" KUBE_MODULE_DIR_FROM_BIN "/" KUBE_MODULE_FILE, slash ? exe : ".");
}

/* The first of the shared structs whose size differs, NULL when none does. */
static const char *layout_mismatch(const struct kube_module_layout *theirs)
{
	static const struct kube_module_layout ours = KUBE_MODULE_LAYOUT;
#define KUBE_LAYOUT_FIELD(field)            \
	if (theirs->field != ours.field) \
		return #field;
	KUBE_LAYOUT_FIELD(config)
	KUBE_LAYOUT_FIELD(response)
	KUBE_LAYOUT_FIELD(request_limits)
	KUBE_LAYOUT_FIELD(meta)
	KUBE_LAYOUT_FIELD(slice_list)
	KUBE_LAYOUT_FIELD(publish_report)
	KUBE_LAYOUT_FIELD(publisher_options)
	KUBE_LAYOUT_FIELD(snapshot)
	KUBE_LAYOUT_FIELD(device)
#undef KUBE_LAYOUT_FIELD
	return NULL;
}

/* Whether the table is one this daemon can use; why says what is not. */
static int check_table(const char *path, const struct kube_module_api *api, char *why, size_t why_size)
{
	if (!api)
		return why_fail(why, why_size, -ELIBBAD, "%s: " KUBE_MODULE_SYMBOL "() returned no table", path);
	if (api->version != KUBE_MODULE_API_VERSION)
		return why_fail(why, why_size, -ELIBBAD, "%s: table version %u, this daemon reads version %u", path,
				api->version, KUBE_MODULE_API_VERSION);
	if (api->size < sizeof(*api))
		return why_fail(why, why_size, -ELIBBAD, "%s: table of %u bytes, this daemon reads %zu", path,
				api->size, sizeof(*api));
	const char *struct_name = layout_mismatch(&api->layout);
	if (struct_name)
		return why_fail(why, why_size, -ELIBBAD, "%s: built with another %s struct than this daemon", path,
				struct_name);
	if (!api->build_version || strcmp(api->build_version, ASCEND_VERSION) != 0)
		return why_fail(why, why_size, -ELIBBAD, "%s: of version %s, this daemon is %s", path,
				api->build_version ? api->build_version : "(none)", ASCEND_VERSION);
#define KUBE_REQUIRE_FN(fn)                                                                            \
	if (!api->fn)                                                                                  \
		return why_fail(why, why_size, -ELIBBAD, "%s: the table has no " #fn " function", path);
	KUBE_REQUIRE_FN(config_in_cluster)
	KUBE_REQUIRE_FN(config_from_kubeconfig)
	KUBE_REQUIRE_FN(config_free)
	KUBE_REQUIRE_FN(client_new)
	KUBE_REQUIRE_FN(client_free)
	KUBE_REQUIRE_FN(client_config)
	KUBE_REQUIRE_FN(client_request)
	KUBE_REQUIRE_FN(client_abort)
	KUBE_REQUIRE_FN(response_free)
	KUBE_REQUIRE_FN(parse_meta)
	KUBE_REQUIRE_FN(parse_slice_list)
	KUBE_REQUIRE_FN(status_message)
	KUBE_REQUIRE_FN(publisher_start)
	KUBE_REQUIRE_FN(publisher_offer)
	KUBE_REQUIRE_FN(publisher_stop)
	KUBE_REQUIRE_FN(publisher_recheck)
#undef KUBE_REQUIRE_FN
	return 0;
}

int kube_module_load(const char *path, const struct kube_module_api **ret_api, char *why, size_t why_size)
{
	char where[PATH_MAX];
	int r = kube_module_path(path, where, sizeof(where));
	if (r < 0)
		return why_fail(why, why_size, r, "cannot tell where " KUBE_MODULE_FILE " is: %s", strerror(-r));
	struct stat st;
	if (stat(where, &st) < 0) {
		r = -errno;
		return why_fail(why, why_size, r, "%s: %s", where, strerror(-r));
	}

	/* Debian's libcurl maps GnuTLS (librtmp and libldap need it) beside
	 * the OpenSSL it speaks TLS with, and GnuTLS's constructor would set
	 * itself up all the same: about 0.75 MiB of its, nettle's and gmp's
	 * pages touched for a library nothing here calls (the rtmp and ldap
	 * code that would is off: the client allows https only, and each
	 * calls gnutls_global_init itself before use). GNUTLS_NO_IMPLICIT_INIT
	 * is GnuTLS's documented switch for that; a value already set stays.
	 * A setenv that fails costs only that memory. */
	(void)setenv("GNUTLS_NO_IMPLICIT_INIT", "1", 0);
	dlerror();
	void *handle = dlopen(where, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		const char *err = dlerror();
		return why_fail(why, why_size, -ELIBBAD, "cannot load %s", err ? err : where);
	}
	/* POSIX guarantees that dlsym's void * converts to a function pointer. */
	kube_module_entry_fn entry = (kube_module_entry_fn)dlsym(handle, KUBE_MODULE_SYMBOL);
	if (!entry) {
		r = why_fail(why, why_size, -ELIBBAD, "%s has no symbol " KUBE_MODULE_SYMBOL, where);
		goto fail;
	}
	const struct kube_module_api *api = entry();
	r = check_table(where, api, why, why_size);
	if (r < 0)
		goto fail;
	*ret_api = api;
	return 0;

fail:
	dlclose(handle);
	return r;
}
