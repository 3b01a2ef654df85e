/* SPDX-License-Identifier: Apache-2.0 */
/* Finds and loads the API-server module (libascend-kube.so, kube/module.h)
 * for the DRA front end. The device-plugin front end never calls this, so a
 * daemon that serves the device plugin only maps no libcurl at all.
 *
 * The module is looked for at an explicit path (a flag's), else at
 * $ASCEND_KUBE_MODULE, else at lib/ascend-k8s/ beside the binary's bin/
 * directory (/usr/local/bin/ascend-device-plugin finds
 * /usr/local/lib/ascend-k8s/libascend-kube.so), where the image and
 * `cmake --install` put it. A module that loaded stays loaded for the life
 * of the process: libcurl and OpenSSL are not made to be unloaded. Nothing
 * here logs. */
#pragma once

#include <stddef.h>

#include "kube/module.h"

#define KUBE_MODULE_ENV "ASCEND_KUBE_MODULE"
/* Below the binary's directory: its parent's lib/ascend-k8s/. */
#define KUBE_MODULE_DIR_FROM_BIN "../lib/ascend-k8s"

/* Where the module is looked for: path when not NULL, else the environment,
 * else beside the binary, as said above. Returns 0, -ENAMETOOLONG, or the
 * errno of reading /proc/self/exe. */
int kube_module_path(const char *path, char *out, size_t size);

/* Loads the module from where kube_module_path says (dlopen with RTLD_NOW,
 * so a missing library of its own fails here, and RTLD_LOCAL) and checks
 * its table: the version, the size, the shared structs' sizes and the
 * project's version must be this daemon's, and no function may be missing.
 * Returns 0 with *ret_api, or with why naming the file and the problem:
 *   -ENOENT (or another errno of stat) no module there;
 *   -ELIBBAD  not loadable (a library it needs is missing), no
 *             KUBE_MODULE_SYMBOL, or a table of another build;
 *   -ENAMETOOLONG the path does not fit.
 * It sets GNUTLS_NO_IMPLICIT_INIT=1 in the environment first (see
 * kube_module.c), so call it before the process has other threads. */
int kube_module_load(const char *path, const struct kube_module_api **ret_api, char *why, size_t why_size);
