/* SPDX-License-Identifier: Apache-2.0 */
/* Where the API server is and how to prove who we are: from inside a pod
 * (the service account's projected token and CA, as client-go's
 * rest.InClusterConfig reads them) or from a kubeconfig file (the subset of
 * client-go's clientcmd that a daemon needs). Nothing here logs. */
#pragma once

#include <stddef.h>

/* Where the service account's files are mounted in a pod. */
#define KUBE_SERVICEACCOUNT_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/* A kubeconfig or in-cluster file larger than this is refused. */
#define KUBE_CONFIG_FILE_MAX (1u * 1024u * 1024u)

/* Blobs are malloc'd and NUL-terminated beyond len. */
struct kube_blob {
	char *data;
	size_t len;
};

/* Everything needed to reach one API server. */
struct kube_config {
	char *server;              /* "https://host:port", no trailing '/' */
	struct kube_blob ca;       /* PEM; empty: the system's CA store */
	struct kube_blob cert;     /* PEM client certificate; empty: none */
	struct kube_blob key;      /* PEM key of cert */
	struct kube_blob token;    /* bearer token read from the config; empty: none */
	char *token_file;          /* a file to read the bearer token from (rotated); NULL: none */
	char *ca_file;             /* the file ca came from, read again when it changes (in-cluster); NULL: none */
	char *namespace_;          /* the pod's namespace in a cluster, else the context's; NULL: none */
	char *source;              /* "in-cluster" or the kubeconfig's path, for messages */
};

void kube_config_free(struct kube_config *config);

/* A bearer token as it goes into the Authorization header, from a file or
 * a kubeconfig: trailing white space (the newline people leave) comes off
 * *len; what is left must be one line of no control character, which would
 * otherwise go onto the wire inside the header (a CR or LF there could
 * also split it). Returns 0, or -EINVAL with why saying what is wrong (the
 * token's text is never quoted: it is a secret). */
int kube_token_check(const char *token, size_t *len, char *why, size_t why_size);

/* The in-cluster configuration: KUBERNETES_SERVICE_HOST and _PORT from the
 * environment, the CA, token and namespace under dir (NULL:
 * KUBE_SERVICEACCOUNT_DIR). Returns 0, -ENOENT (not in a pod: a variable or
 * the token is missing), -EINVAL or another negative errno of reading the
 * files, with why naming the variable or file and the problem. */
int kube_config_in_cluster(const char *dir, struct kube_config *ret_config, char *why, size_t why_size);

/* Reads a kubeconfig file: its current-context (or context, when not NULL)
 * names a cluster and a user; the cluster's server, certificate-authority or
 * certificate-authority-data; the user's client-certificate(-data),
 * client-key(-data), token or tokenFile. Relative file names are relative to
 * the kubeconfig's directory, as kubectl reads them. Anything else in the
 * file is ignored; a user authenticating otherwise (exec, auth-provider,
 * username/password) is refused by name. Returns 0, or -EINVAL with why
 * naming the key ("users[0].user.client-key-data: not base64") or another
 * negative errno of reading a file. */
int kube_config_from_kubeconfig(const char *path, const char *context, struct kube_config *ret_config, char *why,
				size_t why_size);
/* The same from text in memory; files it names are read relative to dir. */
int kube_config_parse_kubeconfig(const char *text, size_t len, const char *dir, const char *context,
				 struct kube_config *ret_config, char *why, size_t why_size);
