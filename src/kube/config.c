/* SPDX-License-Identifier: Apache-2.0 */
/* The API server's address and credentials, from a pod or a kubeconfig. */
#include "kube/config.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/parse.h"
#include "config/yaml_tree.h"
#include "config/yaml_walk.h"

/* A kubeconfig with more clusters, users or contexts than this is refused. */
#define KUBECONFIG_MAX_ENTRIES 256

static void blob_free(struct kube_blob *b)
{
	free(b->data);
	*b = (struct kube_blob){ 0 };
}

void kube_config_free(struct kube_config *config)
{
	if (!config)
		return;
	free(config->server);
	blob_free(&config->ca);
	blob_free(&config->cert);
	blob_free(&config->key);
	blob_free(&config->token);
	free(config->token_file);
	free(config->ca_file);
	free(config->namespace_);
	free(config->source);
	*config = (struct kube_config){ 0 };
}

static int blob_dup(const char *s, size_t len, struct kube_blob *ret)
{
	char *d = malloc(len + 1);
	if (!d)
		return -ENOMEM;
	memcpy(d, s, len);
	d[len] = '\0';
	*ret = (struct kube_blob){ .data = d, .len = len };
	return 0;
}

/* Reads a whole file into a blob; what names it in messages. */
static int blob_read(const char *path, const char *what, struct kube_blob *ret, char *why, size_t why_size)
{
	char *buf = NULL;
	size_t len = 0;
	char cause[128];
	int r = file_read_bounded(path, KUBE_CONFIG_FILE_MAX, &buf, &len, cause, sizeof(cause));
	if (r < 0)
		return why_fail(why, why_size, r, "%s %s: %s", what, path, cause);
	*ret = (struct kube_blob){ .data = buf, .len = len };
	return 0;
}

/* A file of one line; the kubelet writes it without a newline, people often with one. */
static void trim_right(struct kube_blob *b)
{
	while (b->len && (b->data[b->len - 1] == '\n' || b->data[b->len - 1] == '\r' || b->data[b->len - 1] == ' '))
		b->data[--b->len] = '\0';
}

int kube_token_check(const char *token, size_t *len, char *why, size_t why_size)
{
	size_t n = *len;
	while (n && strchr(" \t\r\n", token[n - 1]))
		n--;
	if (n == 0)
		return why_fail(why, why_size, -EINVAL, "empty");
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)token[i];
		if (ch < 0x20 || ch == 0x7f)
			return why_fail(why, why_size, -EINVAL,
				    "control character 0x%02x at byte %zu: a token is one line of printable characters",
				    ch, i + 1);
	}
	*len = n;
	return 0;
}

int kube_config_in_cluster(const char *dir, struct kube_config *ret_config, char *why, size_t why_size)
{
	struct kube_config c = { 0 };
	struct kube_blob ns = { 0 };
	char path[PATH_MAX];
	int r;
	if (!dir)
		dir = KUBE_SERVICEACCOUNT_DIR;
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	if (!host || !*host || !port || !*port) {
		r = why_fail(why, why_size, -ENOENT, "KUBERNETES_SERVICE_HOST or KUBERNETES_SERVICE_PORT is not set "
						     "(not running in a pod; use --kubeconfig)");
		goto fail;
	}
	if (strspn(port, "0123456789") != strlen(port) || strlen(port) > 5) {
		r = why_fail(why, why_size, -EINVAL, "KUBERNETES_SERVICE_PORT=%.16s is not a port", port);
		goto fail;
	}
	/* An IPv6 service address needs brackets in a URL. */
	bool v6 = strchr(host, ':') != NULL;
	char url[320];
	int n = snprintf(url, sizeof(url), "https://%s%s%s:%s", v6 ? "[" : "", host, v6 ? "]" : "", port);
	if (n < 0 || (size_t)n >= sizeof(url)) {
		r = why_fail(why, why_size, -EINVAL, "KUBERNETES_SERVICE_HOST is too long");
		goto fail;
	}
	c.server = strdup(url);
	c.source = strdup("in-cluster");
	snprintf(path, sizeof(path), "%s/token", dir);
	c.token_file = strdup(path);
	if (!c.server || !c.source || !c.token_file) {
		r = why_fail(why, why_size, -ENOMEM, "out of memory");
		goto fail;
	}
	/* Read once now, so that a missing or broken token fails at start. */
	r = blob_read(path, "service account token", &c.token, why, why_size);
	if (r < 0) {
		goto fail;
	}
	char problem[128];
	if ((r = kube_token_check(c.token.data, &c.token.len, problem, sizeof(problem))) < 0) {
		why_fail(why, why_size, r, "service account token %s: %s", path, problem);
		goto fail;
	}
	c.token.data[c.token.len] = '\0';
	snprintf(path, sizeof(path), "%s/ca.crt", dir);
	r = blob_read(path, "service account CA", &c.ca, why, why_size);
	if (r < 0)
		goto fail;
	/* The kube-root-ca.crt ConfigMap behind it changes when the cluster's
	 * CA is rotated, and the kubelet updates the projected file. */
	if (!(c.ca_file = strdup(path))) {
		r = why_fail(why, why_size, -ENOMEM, "out of memory");
		goto fail;
	}
	snprintf(path, sizeof(path), "%s/namespace", dir);
	if (blob_read(path, "namespace", &ns, NULL, 0) == 0) {
		trim_right(&ns);
		c.namespace_ = ns.data;
	}
	*ret_config = c;
	return 0;
fail:
	kube_config_free(&c);
	return r;
}

/* --- kubeconfig -------------------------------------------------------------------- */

static int b64_value(unsigned char ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	if (ch == '+')
		return 62;
	if (ch == '/')
		return 63;
	return -1;
}

/* Standard base64 with padding; whitespace (a folded YAML scalar) is
 * skipped. -EINVAL on anything else. */
static int base64_decode(const char *s, size_t len, struct kube_blob *ret)
{
	char *out = malloc(len / 4 * 3 + 4);
	if (!out)
		return -ENOMEM;
	size_t o = 0, quad = 0, pad = 0;
	uint32_t acc = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t')
			continue;
		int v;
		if (ch == '=') {
			if (quad < 2)
				goto bad;
			pad++;
			v = 0;
		} else {
			if (pad)
				goto bad;
			v = b64_value(ch);
			if (v < 0)
				goto bad;
		}
		acc = acc << 6 | (uint32_t)v;
		if (++quad == 4) {
			out[o++] = (char)(acc >> 16);
			if (pad < 2)
				out[o++] = (char)(acc >> 8 & 0xff);
			if (pad < 1)
				out[o++] = (char)(acc & 0xff);
			quad = 0;
			acc = 0;
			if (pad)
				break;
		}
	}
	/* Nothing may follow the padding, and the text must end on a quad. */
	if (quad != 0 || o == 0)
		goto bad;
	out[o] = '\0';
	*ret = (struct kube_blob){ .data = out, .len = o };
	return 0;
bad:
	free(out);
	return -EINVAL;
}

struct kc_walk {
	struct yaml_walk w;
	const char *dir;
	const char *context; /* wanted, or NULL for current-context */
	struct kube_config c;
	bool seen;
};

/* The value of key in the mapping m, or NULL. */
static const struct ynode *map_get(const struct ynode *m, const char *key)
{
	if (!m || m->type != YN_MAP)
		return NULL;
	ynode_for_each_pair(m, k, v) if (k->type == YN_SCALAR && strcmp(k->value, key) == 0) return v;
	return NULL;
}

/* The entry of list key whose name is name, its index in *ret_index. */
static int find_named(struct kc_walk *kw, const struct ynode *root, const char *list, const char *name,
		      const struct ynode **ret_entry, size_t *ret_index)
{
	const struct ynode *seq = map_get(root, list);
	int r;
	if (!seq || ynode_is_null(seq))
		return yaml_walk_fail(&kw->w, 0, -EINVAL, "%s: no entry named \"%.*s\" (the list is missing)", list,
				      YAML_CLIP, name);
	r = yaml_want_seq(&kw->w, seq, list);
	if (r < 0)
		return r;
	size_t i = 0;
	for (const struct ynode *e = seq->first; e; e = e->next, i++) {
		char path[YAML_PATH_SIZE];
		yaml_path_index(path, sizeof(path), list, i);
		r = yaml_want_map(&kw->w, e, path);
		if (r < 0)
			return r;
		const struct ynode *n = map_get(e, "name");
		if (n && n->type == YN_SCALAR && strcmp(n->value, name) == 0) {
			*ret_entry = e;
			*ret_index = i;
			return 0;
		}
	}
	return yaml_walk_fail(&kw->w, seq->line, -EINVAL, "%s: no entry named \"%.*s\"", list, YAML_CLIP, name);
}

/* A text value at key of m, or NULL when absent or null. */
static int get_text(struct kc_walk *kw, const struct ynode *m, const char *path, const char *key,
		    const char **ret)
{
	const struct ynode *v = map_get(m, key);
	*ret = NULL;
	if (!v || ynode_is_null(v))
		return 0;
	char p[YAML_PATH_SIZE];
	yaml_path_key(p, sizeof(p), path, key);
	int r = yaml_want_text(&kw->w, v, p);
	if (r < 0)
		return r;
	if (!*v->value)
		return yaml_walk_fail(&kw->w, v->line, -EINVAL, "%s: empty", p);
	*ret = v->value;
	return 0;
}

/* A relative file name is relative to the kubeconfig's directory. */
static int resolve(struct kc_walk *kw, const char *name, char *buf, size_t size)
{
	int n = name[0] == '/' || !kw->dir ? snprintf(buf, size, "%s", name)
					    : snprintf(buf, size, "%s/%s", kw->dir, name);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* key-data (base64) or key (a file) of m into *ret; both is an error, as in kubectl. */
static int get_pem(struct kc_walk *kw, const struct ynode *m, const char *path, const char *key,
		   struct kube_blob *ret)
{
	char data_key[64], p[YAML_PATH_SIZE];
	const char *file = NULL, *data = NULL;
	int r;
	snprintf(data_key, sizeof(data_key), "%s-data", key);
	if ((r = get_text(kw, m, path, key, &file)) < 0 || (r = get_text(kw, m, path, data_key, &data)) < 0)
		return r;
	if (file && data) {
		yaml_path_key(p, sizeof(p), path, key);
		return yaml_walk_fail(&kw->w, 0, -EINVAL, "%s and %s-data: give one of them, not both", p, key);
	}
	if (data) {
		yaml_path_key(p, sizeof(p), path, data_key);
		r = base64_decode(data, strlen(data), ret);
		if (r == -EINVAL)
			return yaml_walk_fail(&kw->w, map_get(m, data_key)->line, r, "%s: not base64", p);
		return r < 0 ? yaml_walk_fail(&kw->w, 0, r, "out of memory") : 0;
	}
	if (file) {
		char full[PATH_MAX], what[YAML_PATH_SIZE + 8];
		yaml_path_key(p, sizeof(p), path, key);
		if (resolve(kw, file, full, sizeof(full)) < 0)
			return yaml_walk_fail(&kw->w, 0, -ENAMETOOLONG, "%s: path too long", p);
		snprintf(what, sizeof(what), "%s:", p);
		return blob_read(full, what, ret, kw->w.why, kw->w.why_size);
	}
	return 0;
}

static int kc_document(void *ctx, const struct ynode *root, size_t line)
{
	struct kc_walk *kw = ctx;
	const struct ynode *entry, *body;
	const char *name = NULL, *cluster = NULL, *user = NULL, *text = NULL;
	char path[YAML_PATH_SIZE], item[YAML_PATH_SIZE];
	size_t i;
	int r;
	if (kw->seen)
		return yaml_walk_fail(&kw->w, line, -EINVAL, "a kubeconfig is one YAML document");
	kw->seen = true;
	if (!root || root->type != YN_MAP)
		return yaml_walk_fail(&kw->w, root ? root->line : 0, -EINVAL, "not a kubeconfig: the top is not a mapping");
	r = yaml_want_map(&kw->w, root, "");
	if (r < 0)
		return r;

	/* The context: the one asked for, else current-context. */
	name = kw->context;
	if (!name) {
		r = get_text(kw, root, "", "current-context", &name);
		if (r < 0)
			return r;
		if (!name)
			return yaml_walk_fail(&kw->w, 0, -EINVAL, "current-context: not set (and no context given)");
	}
	r = find_named(kw, root, "contexts", name, &entry, &i);
	if (r < 0)
		return r;
	yaml_path_index(item, sizeof(item), "contexts", i);
	yaml_path_key(path, sizeof(path), item, "context");
	body = map_get(entry, "context");
	if (!body || body->type != YN_MAP)
		return yaml_walk_fail(&kw->w, entry->line, -EINVAL, "%s: missing or not a mapping", path);
	if ((r = get_text(kw, body, path, "cluster", &cluster)) < 0 || (r = get_text(kw, body, path, "user", &user)) < 0 ||
	    (r = get_text(kw, body, path, "namespace", &text)) < 0)
		return r;
	if (!cluster)
		return yaml_walk_fail(&kw->w, body->line, -EINVAL, "%s.cluster: missing", path);
	if (text && !(kw->c.namespace_ = strdup(text)))
		return -ENOMEM;

	/* The cluster. */
	r = find_named(kw, root, "clusters", cluster, &entry, &i);
	if (r < 0)
		return r;
	yaml_path_index(item, sizeof(item), "clusters", i);
	yaml_path_key(path, sizeof(path), item, "cluster");
	body = map_get(entry, "cluster");
	if (!body || body->type != YN_MAP)
		return yaml_walk_fail(&kw->w, entry->line, -EINVAL, "%s: missing or not a mapping", path);
	if ((r = get_text(kw, body, path, "server", &text)) < 0)
		return r;
	if (!text)
		return yaml_walk_fail(&kw->w, body->line, -EINVAL, "%s.server: missing", path);
	if (strncmp(text, "https://", 8) != 0)
		return yaml_walk_fail(&kw->w, map_get(body, "server")->line, -EINVAL,
				      "%s.server: \"%.*s\" is not an https:// URL (this client always uses TLS)", path,
				      YAML_CLIP, text);
	const struct ynode *skip = map_get(body, "insecure-skip-tls-verify");
	if (skip && skip->type == YN_SCALAR && skip->kind == YS_BOOL && yaml_true(skip->value))
		return yaml_walk_fail(&kw->w, skip->line, -EINVAL,
				      "%s.insecure-skip-tls-verify: not supported (TLS is always verified)", path);
	size_t slen = strlen(text);
	while (slen > 8 && text[slen - 1] == '/')
		slen--;
	if (slen == 8 || strcspn(text, " \t\r\n") < strlen(text))
		return yaml_walk_fail(&kw->w, map_get(body, "server")->line, -EINVAL,
				      "%s.server: \"%.*s\" is not a URL with a host", path, YAML_CLIP, text);
	if (!(kw->c.server = strndup(text, slen)))
		return -ENOMEM;
	if ((r = get_pem(kw, body, path, "certificate-authority", &kw->c.ca)) < 0)
		return r;

	/* The user: none is allowed (a server that takes anonymous requests). */
	if (!user)
		return 0;
	r = find_named(kw, root, "users", user, &entry, &i);
	if (r < 0)
		return r;
	yaml_path_index(item, sizeof(item), "users", i);
	yaml_path_key(path, sizeof(path), item, "user");
	body = map_get(entry, "user");
	if (!body || ynode_is_null(body))
		return 0;
	if (body->type != YN_MAP)
		return yaml_walk_fail(&kw->w, entry->line, -EINVAL, "%s: not a mapping", path);
	static const char *const unsupported[] = { "exec", "auth-provider", "username", "password" };
	for (size_t u = 0; u < sizeof(unsupported) / sizeof(unsupported[0]); u++) {
		const struct ynode *v = map_get(body, unsupported[u]);
		if (v && !ynode_is_null(v))
			return yaml_walk_fail(&kw->w, v->line, -EINVAL,
					      "%s.%s: not supported (use a client certificate or a token)", path,
					      unsupported[u]);
	}
	if ((r = get_pem(kw, body, path, "client-certificate", &kw->c.cert)) < 0 ||
	    (r = get_pem(kw, body, path, "client-key", &kw->c.key)) < 0)
		return r;
	if (!kw->c.cert.data != !kw->c.key.data)
		return yaml_walk_fail(&kw->w, body->line, -EINVAL, "%s: %s without %s", path,
				      kw->c.cert.data ? "client-certificate" : "client-key",
				      kw->c.cert.data ? "client-key" : "client-certificate");
	if ((r = get_text(kw, body, path, "token", &text)) < 0)
		return r;
	/* An empty token is none, as kubectl reads it. */
	if (text && text[0]) {
		char problem[128];
		size_t len = strlen(text);
		if (kube_token_check(text, &len, problem, sizeof(problem)) < 0)
			return yaml_walk_fail(&kw->w, body->line, -EINVAL, "%s.token: %s", path, problem);
		if ((r = blob_dup(text, len, &kw->c.token)) < 0)
			return r;
	}
	if ((r = get_text(kw, body, path, "tokenFile", &text)) < 0)
		return r;
	if (text) {
		char full[PATH_MAX];
		if (resolve(kw, text, full, sizeof(full)) < 0)
			return yaml_walk_fail(&kw->w, 0, -ENAMETOOLONG, "%s.tokenFile: path too long", path);
		if (!(kw->c.token_file = strdup(full)))
			return -ENOMEM;
	}
	return 0;
}

int kube_config_parse_kubeconfig(const char *text, size_t len, const char *dir, const char *context,
				 struct kube_config *ret_config, char *why, size_t why_size)
{
	struct kc_walk kw = {
		.w = { .why = why, .why_size = why_size, .max_entries = KUBECONFIG_MAX_ENTRIES },
		.dir = dir,
		.context = context,
	};
	const struct yaml_tree_limits limits = { .max_depth = 16, .max_nodes = 16384 };
	int r = yaml_tree_parse(text, len, &limits, kc_document, &kw, why, why_size);
	if (r == 0 && !kw.seen)
		r = why_fail(why, why_size, -EINVAL, "empty kubeconfig");
	if (r == -ENOMEM)
		why_fail(why, why_size, r, "out of memory");
	if (r < 0) {
		kube_config_free(&kw.c);
		return r;
	}
	*ret_config = kw.c;
	return 0;
}

int kube_config_from_kubeconfig(const char *path, const char *context, struct kube_config *ret_config, char *why,
				size_t why_size)
{
	struct kube_blob text = { 0 };
	struct kube_config c = { 0 };
	char dir[PATH_MAX], inner[512];
	int r = blob_read(path, "kubeconfig", &text, why, why_size);
	if (r < 0)
		return r;
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	r = kube_config_parse_kubeconfig(text.data, text.len, slash ? (dir[0] ? dir : "/") : ".", context, &c, inner,
					 sizeof(inner));
	blob_free(&text);
	if (r < 0)
		return why_fail(why, why_size, r, "kubeconfig %s: %s", path, inner);
	if (!(c.source = strdup(path))) {
		kube_config_free(&c);
		return why_fail(why, why_size, -ENOMEM, "out of memory");
	}
	*ret_config = c;
	return 0;
}
