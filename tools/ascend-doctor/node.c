/* SPDX-License-Identifier: Apache-2.0 */
/* The node checks; see node.h. */
#include "node.h"

#include <errno.h>
#include <dirent.h>
#include <grp.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/file.h"
#include "base/parse.h"
#include "base/strbuf.h"
#include "deviceplugin.pb-c.h"
#include "deviceplugin_api.h"
#include "fault/policy.h"
#include "grpc/client.h"
#include "npu/dcmi.h"
#include "npu/devfs.h"
#include "npu/family.h"
#include "separated.h"
#include "npu/verfile.h"
#include "versions.h"

#define ID_FILE_MAX (4u * 1024 * 1024)
/* The plugin answers ListAndWatch at once; a plugin that does not within
 * this is stuck. */
#define SOCKET_TIMEOUT_MS 10000

int node_dcmi_open(const struct doctor_options *o, struct dcmi_lib **ret_lib, char *why, size_t why_size)
{
	struct dcmi_search search = {
		.explicit_path = o->dcmi_lib,
		.ld_library_path = getenv("LD_LIBRARY_PATH"),
		.driver_path = o->driver_path,
		.host_root = o->host_root,
	};
	return dcmi_lib_open(&search, ret_lib, why, why_size);
}

/* What the common codes mean; their levels are the fault policy's. */
static const struct {
	uint32_t code;
	const char *meaning;
} fault_codes[] = {
	{ 0x80E01801, "HBM multi-bit ECC error" },
	{ 0x80E18402, "64 HBM rows isolated for ECC errors" },
	{ 0x80E18005, "HBM controller parity error" },
	{ 0x81078603, "RoCE network link down" },
	{ 0x40F84E00, "heartbeat lost: the card dropped" },
	{ 0x80C98008, "AI Core multi-bit ECC error" },
	{ 0x80DE1801, "DDR multi-bit ECC error" },
	{ 0x8C2FA009, "chip initialisation or reset finished" },
};

/* The level the plugin's built-in table (Huawei's faultCode.json) gives
 * code, or FAULT_LEVEL_NONE for a code it does not list. */
static enum fault_level builtin_level(uint32_t code)
{
	static struct fault_policy_config builtin; /* large; the doctor is single-threaded */
	static bool ready;
	if (!ready) {
		fault_policy_config_init(&builtin);
		ready = true;
	}
	enum fault_rule rule;
	enum fault_level level = fault_policy_code_level(&builtin, code, &rule);
	return rule == FAULT_RULE_CODE_TABLE ? level : FAULT_LEVEL_NONE;
}

void node_fault_code_describe(uint32_t code, const char **ret_meaning, const char **ret_level)
{
	*ret_meaning = NULL;
	for (size_t i = 0; i < sizeof(fault_codes) / sizeof(fault_codes[0]); i++)
		if (fault_codes[i].code == code)
			*ret_meaning = fault_codes[i].meaning;
	enum fault_level level = builtin_level(code);
	*ret_level = level == FAULT_LEVEL_NONE ? NULL : fault_level_name(level);
}

/* What to do about a fault of the code's policy level, or NULL for a code
 * the table does not list. */
static const char *level_fix(uint32_t code)
{
	switch (builtin_level(code)) {
	case FAULT_LEVEL_NONE:
	case FAULT_LEVEL_COUNT:
		break;
	case FAULT_LEVEL_NOT_HANDLE:
		return "no action needed for it";
	case FAULT_LEVEL_SUB_HEALTH:
		return "the chip stays in service; have it checked if this persists";
	case FAULT_LEVEL_RESTART_REQUEST:
		return "retry the failed request";
	case FAULT_LEVEL_RESTART_BUSINESS:
		return "restart the workload on the chip (delete its pod)";
	case FAULT_LEVEL_FREE_RESTART_NPU:
	case FAULT_LEVEL_RESTART_NPU:
		return "reset the chip once idle (npu-smi set -t reset -i CARD -c CHIP) or reboot the node";
	case FAULT_LEVEL_PRE_SEPARATE_NPU:
		return "let the pods on the chip finish, then have the chip checked";
	case FAULT_LEVEL_SEPARATE_NPU:
		return "keep work off the chip and have the hardware replaced";
	case FAULT_LEVEL_MANUALLY_SEPARATE_NPU:
		return "have the chip checked, then release it (ascend-doctor release)";
	}
	return NULL;
}

int node_endpoint_name(const char *resource, char *out, size_t size)
{
	const char *slash = strchr(resource, '/');
	if (!slash || slash == resource || !slash[1])
		return -EINVAL;
	size_t domain_label = strcspn(resource, "./");
	return str_printf(out, size, "%.*s-%s.sock", (int)domain_label, resource, slash + 1);
}

/* ---- the driver's run user ------------------------------------------------ */

struct run_user {
	char name[64], group[64];
	bool has_uid, has_gid;
	uint32_t uid, gid;
};

/* The id (third field) of name in a passwd or group file. */
static int lookup_id(const char *path, const char *name, uint32_t *ret_id)
{
	char *buf, why[128];
	size_t len;
	int r = file_read_bounded(path, ID_FILE_MAX, &buf, &len, why, sizeof(why));
	if (r < 0)
		return r;
	r = -ENOENT;
	size_t name_len = strlen(name);
	for (size_t pos = 0; pos < len;) {
		const char *line = buf + pos;
		const char *nl = memchr(line, '\n', len - pos);
		size_t line_len = nl ? (size_t)(nl - line) : len - pos;
		pos += line_len + 1;
		if (line_len <= name_len + 1 || memcmp(line, name, name_len) != 0 || line[name_len] != ':')
			continue;
		const char *p = memchr(line + name_len + 1, ':', line_len - name_len - 1);
		if (!p)
			continue;
		char field[16];
		size_t i = 0;
		for (p++; p < line + line_len && *p != ':' && i + 1 < sizeof(field); p++)
			field[i++] = *p;
		field[i] = '\0';
		if (parse_u32(field, 10, UINT32_MAX - 1, ret_id) == 0) {
			r = 0;
			break;
		}
	}
	free(buf);
	return r;
}

static int check_install_info(const struct doctor_options *o, struct report *report, struct run_user *user)
{
	char path[512], why[256], *text;
	size_t len;
	*user = (struct run_user){ 0 };
	if (doctor_host_path(o, "/etc/ascend_install.info", path, sizeof(path)) < 0)
		return report_add(report, VERDICT_WARN, "install-info", "use a shorter --host-root", "path too long");
	int r = doctor_read_small(path, &text, &len, why, sizeof(why));
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return report_add(report, VERDICT_WARN, "install-info",
				  "the driver's installer writes it: reinstall the driver (in the plugin's pod, mount it)",
				  "unknown run user: %s: %s; device owners are not checked", path, why);
	if (verfile_get(text, len, "UserName", user->name, sizeof(user->name)) < 0)
		user->name[0] = '\0';
	if (verfile_get(text, len, "UserGroup", user->group, sizeof(user->group)) < 0)
		user->group[0] = '\0';
	free(text);
	if (!user->name[0])
		return report_add(report, VERDICT_WARN, "install-info", "reinstall the driver: the file is damaged",
				  "unknown run user: %s has no UserName=", path);
	if (!user->group[0])
		memcpy(user->group, user->name, sizeof(user->group));
	char passwd[512], group[512];
	if (doctor_host_path(o, "/etc/passwd", passwd, sizeof(passwd)) == 0 &&
	    lookup_id(passwd, user->name, &user->uid) == 0)
		user->has_uid = true;
	if (doctor_host_path(o, "/etc/group", group, sizeof(group)) == 0 &&
	    lookup_id(group, user->group, &user->gid) == 0)
		user->has_gid = true;
	if (!user->has_uid && !user->has_gid)
		return report_add(report, VERDICT_WARN, "install-info",
				  "create the user the driver was installed for, or reinstall the driver",
				  "run user %s, group %s (from %s) exist in neither %s nor %s", user->name, user->group,
				  path, passwd, group);
	return report_add(report, VERDICT_OK, "install-info", NULL, "run user %s (uid %s%" PRIu32 "), group %s (gid %s%" PRIu32 ")",
			  user->name, user->has_uid ? "" : "unknown ", user->uid, user->group,
			  user->has_gid ? "" : "unknown ", user->gid);
}

/* ---- device files --------------------------------------------------------- */

enum { DEV_MISSING = 1, DEV_NOT_CHAR = 2, DEV_MODE = 4 };

/* Appends to problems why dev_dir/name is not usable and sets its kind in
 * *kinds; false if it is not. */
static bool check_node_file(const struct doctor_options *o, const char *name, bool required,
			    const struct run_user *user, struct strbuf *problems, bool *any_required_bad, unsigned *kinds)
{
	char path[512];
	struct stat st;
	if (path_join(path, sizeof(path), o->dev_dir, name) < 0 || stat(path, &st) < 0) {
		strbuf_printf(problems, "%s%s missing%s", problems->len ? "; " : "", path, required ? "" : " (optional)");
		*any_required_bad |= required;
		if (required)
			*kinds |= DEV_MISSING;
		return false;
	}
	if (!S_ISCHR(st.st_mode)) {
		strbuf_printf(problems, "%s%s is not a character device", problems->len ? "; " : "", path);
		*any_required_bad = true;
		*kinds |= DEV_NOT_CHAR;
		return false;
	}
	if (!user->has_uid && !user->has_gid)
		return true;
	mode_t m = st.st_mode;
	bool ok = (user->has_uid && st.st_uid == user->uid && (m & S_IRUSR) && (m & S_IWUSR)) ||
		  (user->has_gid && st.st_gid == user->gid && (m & S_IRGRP) && (m & S_IWGRP)) ||
		  ((m & S_IROTH) && (m & S_IWOTH));
	if (!ok) {
		strbuf_printf(problems, "%s%s is mode %04o, uid %u, gid %u: %s cannot open it", problems->len ? "; " : "",
			      path, (unsigned)(m & 07777), (unsigned)st.st_uid, (unsigned)st.st_gid, user->name);
		*any_required_bad = true;
		*kinds |= DEV_MODE;
		return false;
	}
	return true;
}

static int check_device_files(const struct doctor_options *o, struct report *report, const struct npu_chip *chips,
			      size_t n, const struct run_user *user)
{
	char text[REPORT_TEXT_MAX];
	struct strbuf problems;
	strbuf_init(&problems, text, sizeof(text), "...");
	if (n == 0)
		return report_add(report, VERDICT_FAIL, "device-files",
				  "load the driver (it makes /dev/davinciN); in the plugin's pod, --dev-dir must show the "
				  "host's /dev",
				  "no NPU chips: neither DCMI nor %s/davinciN lists any", o->dev_dir);
	enum npu_family family = chips[0].family;
	const struct npu_shared_node *shared;
	size_t n_shared = npu_family_shared_nodes(family, &shared);
	bool bad = false;
	unsigned kinds = 0;
	size_t good = 0;
	for (size_t i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "davinci%" PRIu32, chips[i].phy_id);
		good += check_node_file(o, name, true, user, &problems, &bad, &kinds);
	}
	char shared_names[256] = "";
	struct strbuf names;
	strbuf_init(&names, shared_names, sizeof(shared_names), "...");
	bool optional_missing = false;
	for (size_t i = 0; i < n_shared; i++) {
		bool was_bad = bad;
		size_t before = problems.len;
		if (check_node_file(o, shared[i].name, shared[i].required, user, &problems, &bad, &kinds))
			strbuf_printf(&names, "%s%s", names.len ? ", " : "", shared[i].name);
		else if (!shared[i].required && bad == was_bad && problems.len != before)
			optional_missing = true;
	}
	if (bad) {
		char fix[REPORT_TEXT_MAX];
		struct strbuf fsb;
		strbuf_init(&fsb, fix, sizeof(fix), "...");
		if (kinds & DEV_MISSING)
			strbuf_printf(&fsb, "(re)load the driver, which makes the device nodes (npu-smi info must work); "
					    "pods given a missing node fail with \"Device not found\"");
		if (kinds & DEV_NOT_CHAR)
			strbuf_printf(&fsb, "%sremove what stands in place of a device node and reload the driver",
				      fsb.len ? "; " : "");
		if (kinds & DEV_MODE)
			strbuf_printf(&fsb,
				      "%sgive the nodes back the driver's owner and mode (chown %s:%s, chmod 660), or "
				      "reinstall the driver; non-root pods open them only with that group in "
				      "supplementalGroups, else \"Permission denied\"",
				      fsb.len ? "; " : "", user->name, user->group);
		return report_add(report, VERDICT_FAIL, "device-files", fix, "%s", text);
	}
	if (optional_missing)
		return report_add(report, VERDICT_WARN, "device-files", "reload the driver if a workload needs it",
				  "%zu chip nodes and %s fine; %s", good, shared_names, text);
	return report_add(report, VERDICT_OK, "device-files", NULL,
			  "%zu chip nodes (davinciN) and %s under %s: character devices%s%s", good, shared_names,
			  o->dev_dir, user->name[0] ? ", readable and writable by " : "", user->name);
}

/* ---- chips ---------------------------------------------------------------- */

struct chip_state {
	bool has_health;
	unsigned int health;
	int health_code; /* DCMI code of a failing health call */
	unsigned int codes[DCMI_MAX_ERROR_CODES];
	size_t n_codes;
	bool expected_healthy; /* what the plugin should advertise */
	int share;             /* device-share mode: 1 on, 0 off, -1 unknown */
};

static void describe_codes(const struct chip_state *s, struct strbuf *found, struct strbuf *fix)
{
	for (size_t i = 0; i < s->n_codes && i < 8; i++) {
		const char *meaning, *level;
		node_fault_code_describe(s->codes[i], &meaning, &level);
		const char *sep = i ? ", " : ", error codes ";
		if (meaning && level)
			strbuf_printf(found, "%s%08X (%s; policy %s)", sep, s->codes[i], meaning, level);
		else if (level)
			strbuf_printf(found, "%s%08X (policy %s)", sep, s->codes[i], level);
		else
			strbuf_printf(found, "%s%08X (unknown code)", sep, s->codes[i]);
		const char *f = level_fix(s->codes[i]);
		strbuf_printf(fix, "%s%08X: %s", fix->len ? "; " : "", s->codes[i],
			      f ? f : "look it up in Huawei's fault-code reference (npu-smi info -t health)");
	}
	if (s->n_codes > 8)
		strbuf_printf(found, " and %zu more", s->n_codes - 8);
}

static int check_chips(struct report *report, struct dcmi_lib *lib, const struct npu_chip *chips, size_t n,
		       struct chip_state *states)
{
	static const char *const levels[] = { "normal", "warning", "major", "critical" };
	size_t healthy = 0;
	int r = 0;
	for (size_t i = 0; r == 0 && i < n; i++) {
		struct chip_state *s = &states[i];
		char name[32], found[REPORT_TEXT_MAX], fix[REPORT_TEXT_MAX];
		struct strbuf fsb, xsb;
		snprintf(name, sizeof(name), "chip npu-%" PRIu32, chips[i].phy_id);
		strbuf_init(&fsb, found, sizeof(found), "...");
		strbuf_init(&xsb, fix, sizeof(fix), "...");
		if (dcmi_chip_health(lib, &chips[i], &s->health) == 0) {
			s->has_health = true;
		} else {
			s->health_code = dcmi_last_error(lib).code;
		}
		if (dcmi_chip_error_codes(lib, &chips[i], s->codes, DCMI_MAX_ERROR_CODES, &s->n_codes) < 0)
			s->n_codes = 0;
		bool share_on;
		s->share = dcmi_chip_share_mode(lib, &chips[i], &share_on) == 0 ? share_on : -1;
		enum verdict v;
		if (!s->has_health) {
			strbuf_printf(&fsb, "%s card %d chip %d: dcmi_get_device_health failed with %d%s", chips[i].name,
				      chips[i].card_id, chips[i].device_id, s->health_code,
				      s->health_code == DCMI_ERR_NOT_READY ? " (not ready: the card dropped)" : "");
			strbuf_printf(&xsb, "npu-smi info; reset the card or reboot the node, then check its seating "
					    "and power if it drops again");
			v = VERDICT_FAIL;
		} else if (s->health == DCMI_HEALTH_ABSENT) {
			strbuf_printf(&fsb, "%s card %d chip %d: DCMI reports the chip absent", chips[i].name,
				      chips[i].card_id, chips[i].device_id);
			strbuf_printf(&xsb, "npu-smi info; reboot the node, and have the card checked if it stays absent");
			v = VERDICT_FAIL;
		} else {
			strbuf_printf(&fsb, "%s card %d chip %d: health %u (%s)", chips[i].name, chips[i].card_id,
				      chips[i].device_id, s->health, s->health < 4 ? levels[s->health] : "unknown");
			v = s->health <= 1 ? (s->health == 1 || s->n_codes ? VERDICT_WARN : VERDICT_OK) : VERDICT_FAIL;
		}
		describe_codes(s, &fsb, &xsb);
		if (v != VERDICT_OK && xsb.len == 0)
			strbuf_printf(&xsb, "npu-smi info -t health -i %d -c %d shows the chip's alarms", chips[i].card_id,
				      chips[i].device_id);
		s->expected_healthy = s->has_health && s->health <= 1;
		healthy += s->expected_healthy;
		r = report_add(report, v, name, fix, "%s", found);
	}
	if (r == 0)
		r = report_add(report, healthy == n ? VERDICT_OK : VERDICT_FAIL, "chips",
			       "see the chip lines above; the plugin advertises a chip again once DCMI reports it healthy",
			       "%zu of %zu healthy", healthy, n);
	return r;
}

/* ---- network identity ----------------------------------------------------- */

/* Each chip's RoCE address and link, which multi-node jobs (HCCL's rank
 * table) depend on: a chip of a family with RoCE ports but without an
 * address, or with its link down, is a warning (it still serves single-node
 * pods); two chips with one address is a failure (HCCL needs them unique). */
static int check_network(struct report *report, struct dcmi_lib *lib, const struct npu_chip *chips, size_t n,
			 const struct chip_state *states)
{
	struct npu_net *nets = calloc(n ? n : 1, sizeof(*nets));
	if (!nets)
		return -ENOMEM;
	char summary[REPORT_TEXT_MAX];
	struct strbuf ssb;
	strbuf_init(&ssb, summary, sizeof(summary), "...");
	size_t with_roce = 0, missing_call = 0;
	int r = 0;
	for (size_t i = 0; r == 0 && i < n; i++) {
		/* A chip that is absent or does not answer has its line above. */
		if (!npu_family_has_roce(chips[i].family) || !states[i].has_health ||
		    states[i].health == DCMI_HEALTH_ABSENT)
			continue;
		with_roce++;
		struct npu_net *net = &nets[i];
		char name[32], addr[NPU_NET_ADDRESS_MAX];
		snprintf(name, sizeof(name), "network npu-%" PRIu32, chips[i].phy_id);
		int ra = dcmi_chip_roce_address(lib, &chips[i], net);
		int rl = dcmi_chip_link(lib, &chips[i], net);
		(void)dcmi_chip_super_pod(lib, &chips[i], net);
		if (ra == -EOPNOTSUPP && rl == -EOPNOTSUPP) {
			missing_call++;
			continue;
		}
		(void)npu_net_address(net, true, addr);
		strbuf_printf(&ssb, "%snpu-%" PRIu32 " %s link %s", ssb.len ? ", " : "", chips[i].phy_id,
			      addr[0] ? addr : "no address",
			      npu_link_name(net->link));
		if (net->has_super_pod)
			strbuf_printf(&ssb, " (super pod %" PRIu32 ", SDID %" PRIu32 ")", net->super_pod_id, net->sdid);
		if (ra < 0 && ra != -EOPNOTSUPP)
			r = report_add(report, VERDICT_WARN, name, "hccn_tool -i <phy> -ip -g shows what the driver has",
				       "dcmi_get_device_ip failed with %d", dcmi_last_error(lib).code);
		else if (!net->has_ip)
			r = report_add(report, VERDICT_WARN, name,
				       "give the chip its address: hccn_tool -i <phy> -ip -s address <ip> netmask <mask>",
				       "%s chip without a RoCE address: multi-node jobs (HCCL rank tables) cannot use it",
				       npu_family_name(chips[i].family));
		else if (net->link == NPU_LINK_DOWN)
			r = report_add(report, VERDICT_WARN, name,
				       "check the port's cable and switch port; hccn_tool -i <phy> -net_health -g",
				       "RoCE %s link down (detection result %" PRIu32
				       "): multi-node jobs cannot use the chip",
				       addr, net->link_code);
	}
	for (size_t i = 0; r == 0 && i < n; i++)
		for (size_t j = i + 1; r == 0 && nets[i].has_ip && j < n; j++)
			if (nets[j].has_ip && nets[j].ipv6 == nets[i].ipv6 &&
			    memcmp(nets[i].ip, nets[j].ip, sizeof(nets[i].ip)) == 0) {
				char addr[NPU_NET_ADDRESS_MAX];
				(void)npu_net_address(&nets[i], true, addr);
				r = report_add(report, VERDICT_FAIL, "network",
					       "give each chip its own address (hccn_tool -i <phy> -ip -s ...)",
					       "npu-%" PRIu32 " and npu-%" PRIu32 " have the same RoCE address %s: HCCL "
					       "needs each device_ip unique",
					       chips[i].phy_id, chips[j].phy_id, addr);
			}
	if (r == 0 && with_roce > 0 && missing_call == with_roce)
		r = report_add(report, VERDICT_OK, "network", NULL,
			       "DCMI gives no RoCE address or link for these chips: their network identity is unknown");
	else if (r == 0 && with_roce > 0)
		r = report_add(report, VERDICT_OK, "network", NULL, "%s", summary);
	free(nets);
	return r;
}

/* ---- the kubelet and the plugin ------------------------------------------- */

static int check_kubelet(const struct doctor_options *o, struct report *report)
{
	char path[SOCKET_PATH_MAX + 64];
	struct stat st;
	const char *fix = "the kubelet's device-plugins directory: give --socket-dir the kubelet's "
			  "<root-dir>/device-plugins (deploy/overlays/kubelet-dir in the manifests); is the kubelet "
			  "running (systemctl status kubelet)?";
	if (stat(o->socket_dir, &st) < 0)
		return report_add(report, VERDICT_FAIL, "kubelet", fix, "%s: %s", o->socket_dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return report_add(report, VERDICT_FAIL, "kubelet", fix, "%s is not a directory", o->socket_dir);
	if (path_join(path, sizeof(path), o->socket_dir, "kubelet.sock") < 0)
		return report_add(report, VERDICT_FAIL, "kubelet", "use a shorter --socket-dir", "path too long");
	if (stat(path, &st) < 0)
		return report_add(report, VERDICT_FAIL, "kubelet", fix, "%s: %s", path, strerror(errno));
	if (!S_ISSOCK(st.st_mode))
		return report_add(report, VERDICT_FAIL, "kubelet", fix, "%s is not a socket", path);
	return report_add(report, VERDICT_OK, "kubelet", NULL, "%s is a socket", path);
}

struct advertised {
	char id[64];
	bool healthy;
};

/* One ListAndWatch answer from the plugin. */
static int read_advertised(const char *socket_path, long timeout_ms, struct advertised **ret, size_t *ret_n, char *why,
			   size_t why_size)
{
	struct gc_channel *ch = NULL;
	struct gc_stream *stream = NULL;
	uint8_t *body = NULL;
	size_t len = 0;
	struct advertised *list = NULL;
	int r = gc_channel_open(socket_path, &ch);
	if (r < 0) {
		snprintf(why, why_size, "cannot open a channel: %s", strerror(-r));
		goto out;
	}
	r = gc_stream_open(ch, DP_METHOD_LIST_AND_WATCH, NULL, 0, &stream);
	if (r < 0) {
		snprintf(why, why_size, "cannot start ListAndWatch: %s", strerror(-r));
		goto out;
	}
	r = gc_stream_next(stream, timeout_ms, &body, &len);
	if (r == -EPIPE) {
		grpc_status_code status;
		const char *details;
		gc_stream_status(stream, &status, &details);
		snprintf(why, why_size, "ListAndWatch ended: status %d: %s", (int)status, details ? details : "");
		goto out;
	}
	if (r < 0) {
		snprintf(why, why_size, "no ListAndWatch answer: %s", strerror(-r));
		goto out;
	}
	static const uint8_t empty[1];
	V1beta1__ListAndWatchResponse *msg = v1beta1__list_and_watch_response__unpack(NULL, len, body ? body : empty);
	if (!msg) {
		snprintf(why, why_size, "cannot decode the ListAndWatch answer");
		r = -EBADMSG;
		goto out;
	}
	size_t n = msg->n_devices > NPU_MAX_CHIPS * 64 ? NPU_MAX_CHIPS * 64 : msg->n_devices;
	list = calloc(n ? n : 1, sizeof(*list));
	if (!list) {
		v1beta1__list_and_watch_response__free_unpacked(msg, NULL);
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const V1beta1__Device *d = msg->devices[i];
		snprintf(list[i].id, sizeof(list[i].id), "%s", d->id ? d->id : "");
		list[i].healthy = d->health && strcmp(d->health, DP_HEALTHY) == 0;
	}
	v1beta1__list_and_watch_response__free_unpacked(msg, NULL);
	*ret = list;
	*ret_n = n;
	list = NULL;
	r = 0;
out:
	free(body);
	free(list);
	gc_stream_close(stream);
	gc_channel_close(ch);
	return r;
}

/* The sockets that may be the plugin's, in the socket directory: with an
 * explicit --resource-name its one (one per plugin process: is_endpoint);
 * else every socket but kubelet.sock,
 * sorted, since one plugin process serves several resources (per-family
 * names, which may be in other domains such as huawei.com/Ascend910, vNPU
 * templates, ".shared" names), each on a socket of its own. Which of them
 * are the plugin's is told by their names and devices (see check_plugin). */
#define PLUGIN_SOCKETS_MAX 32

static int compare_names(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* Whether name is endpoint's socket: "ascend-npu.sock", or the same served
 * by one plugin process among others of the node, "ascend-npu@<instance>.sock"
 * (the plugin's $ASCEND_PLUGIN_INSTANCE; two during a surge roll). */
static bool is_endpoint(const char *name, const char *endpoint)
{
	size_t stem = strlen(endpoint) - strlen(".sock");
	if (strcmp(name, endpoint) == 0)
		return true;
	if (strncmp(name, endpoint, stem) != 0 || name[stem] != '@')
		return false;
	const char *instance = name + stem + 1;
	size_t len = strcspn(instance, ".");
	return len > 0 && strcmp(instance + len, ".sock") == 0;
}

static int plugin_sockets(const struct doctor_options *o, char (*names)[128], size_t max, size_t *ret_n)
{
	char endpoint[128];
	if (node_endpoint_name(o->resource_name, endpoint, sizeof(endpoint)) < 0)
		return -EINVAL;
	size_t n = 0;
	DIR *dir = opendir(o->socket_dir);
	struct dirent *e;
	while (dir && n < max && (e = readdir(dir)) != NULL) {
		size_t len = strlen(e->d_name);
		char path[SOCKET_PATH_MAX + 256];
		struct stat st;
		/* "ascend-npu~3.sock" is a link the plugin made of one of its
		 * sockets for one registration (no resource name holds a '~'). */
		if (len >= 128 || strcmp(e->d_name, "kubelet.sock") == 0 || strchr(e->d_name, '~') ||
		    (o->resource_name_given && !is_endpoint(e->d_name, endpoint)) ||
		    path_join(path, sizeof(path), o->socket_dir, e->d_name) < 0 || stat(path, &st) < 0 ||
		    !S_ISSOCK(st.st_mode))
			continue;
		memcpy(names[n++], e->d_name, len + 1);
	}
	if (dir)
		closedir(dir);
	qsort(names, n, sizeof(names[0]), compare_names);
	bool has_default = false;
	for (size_t i = 0; i < n; i++)
		has_default |= is_endpoint(names[i], endpoint);
	/* The default resource's socket is expected even when missing, so
	 * that its absence is reported. */
	if (!has_default && n < max)
		memcpy(names[n++], endpoint, strlen(endpoint) + 1);
	*ret_n = n;
	return 0;
}

/* The chip an advertised ID stands for: "npu-N", "npu-N::k" (time-slicing
 * replicas) or "vnpu-<id>" (a vNPU carved from chip (id - 100) / 16).
 * false for anything else. */
static bool advertised_chip(const char *id, uint32_t *ret_phy)
{
	char number[16];
	bool vnpu = strncmp(id, "vnpu-", 5) == 0;
	const char *p = vnpu ? id + 5 : strncmp(id, "npu-", 4) == 0 ? id + 4 : NULL;
	if (!p)
		return false;
	size_t len = strcspn(p, ":");
	if (len == 0 || len >= sizeof(number) || (p[len] && (vnpu || strncmp(p + len, "::", 2) != 0)))
		return false;
	memcpy(number, p, len);
	number[len] = '\0';
	uint32_t v;
	if (parse_u32(number, 10, 1u << 20, &v) < 0)
		return false;
	if (vnpu)
		return npu_vnpu_chip(v, ret_phy) == 0;
	*ret_phy = v;
	return true;
}

/* Time-slicing against each chip's device-share mode: a chip advertised
 * as replicas ("npu-N::k") whose mode is off is served whole by a plugin
 * that reads the mode (one replica), and breaks the second container on
 * it with one that does not (several). Chips DCMI cannot tell are left
 * alone, as the plugin leaves them. */
static int check_device_share(struct report *report, const struct npu_chip *chips, size_t n,
			      const struct chip_state *states, const struct advertised *all, size_t n_all)
{
	int r = 0;
	for (size_t i = 0; r == 0 && i < n; i++) {
		if (states[i].share != 0)
			continue;
		size_t replicas = 0;
		for (size_t k = 0; k < n_all; k++) {
			uint32_t phy;
			replicas += strstr(all[k].id, "::") && advertised_chip(all[k].id, &phy) && phy == chips[i].phy_id;
		}
		if (replicas == 0)
			continue; /* not time-sliced: the mode does not matter */
		char name[48], fix[REPORT_TEXT_MAX];
		snprintf(name, sizeof(name), "device-share npu-%" PRIu32, chips[i].phy_id);
		snprintf(fix, sizeof(fix),
			 "npu-smi set -t device-share -i %d -c %d -d 1 (as root on the node), or set "
			 "sharing.timeSlicing.enableDeviceShare: true in the plugin's --config file",
			 chips[i].card_id, chips[i].device_id);
		if (replicas == 1)
			r = report_add(report, VERDICT_WARN, name, fix,
				       "time-slicing serves npu-%" PRIu32 " whole (advertised once): its device-share "
				       "mode is off",
				       chips[i].phy_id);
		else
			r = report_add(report, VERDICT_FAIL, name, fix,
				       "npu-%" PRIu32 " is advertised as %zu replicas but its device-share mode is off: "
				       "the driver refuses a second container on it",
				       chips[i].phy_id, replicas);
	}
	return r;
}

static int check_plugin(const struct doctor_options *o, struct report *report, const struct npu_chip *chips, size_t n,
			const struct chip_state *states, bool compare, const char *dev_dir_problem)
{
	char (*names)[128] = calloc(PLUGIN_SOCKETS_MAX, sizeof(*names));
	struct advertised *all = NULL;
	bool *matched = NULL;
	size_t n_names = 0, n_all = 0;
	char why[600], text[REPORT_TEXT_MAX], diff[REPORT_TEXT_MAX];
	struct strbuf sb, dsb;
	int r;
	const char *fix_absent = "the plugin is not serving on this node: kubectl get pods -n kube-system -l "
				 "name=ascend-device-plugin -o wide, and its logs; give the plugin's --resource-name here "
				 "if it has another";
	if (!names)
		return -ENOMEM;
	if (plugin_sockets(o, names, PLUGIN_SOCKETS_MAX, &n_names) < 0) {
		r = report_add(report, VERDICT_FAIL, "plugin", "give a resource name such as ascend.com/npu",
			       "--resource-name %s gives no socket name", o->resource_name);
		goto out;
	}
	char endpoint[128];
	size_t label = strcspn(o->resource_name, "./");
	if (node_endpoint_name(o->resource_name, endpoint, sizeof(endpoint)) < 0)
		endpoint[0] = '\0';
	strbuf_init(&sb, text, sizeof(text), "...");
	for (size_t k = 0, shown_sockets = 0; k < n_names; k++) {
		char path[SOCKET_PATH_MAX + 256];
		struct stat st;
		/* Sockets named like the default resource's ("ascend-...") are
		 * the plugin's; another is when it lists npu-/vnpu- devices
		 * (a per-family name in another domain), else it is another
		 * device plugin's and left alone. */
		bool ours = is_endpoint(names[k], endpoint) ||
			    (strncmp(names[k], o->resource_name, label) == 0 && names[k][label] == '-');
		if (path_join(path, sizeof(path), o->socket_dir, names[k]) < 0 || stat(path, &st) < 0) {
			r = report_add(report, VERDICT_FAIL, "plugin", fix_absent, "%s: %s", path, strerror(errno));
			goto out;
		}
		struct advertised *adv = NULL;
		size_t n_adv = 0;
		r = read_advertised(path, o->timeout_ms > 0 ? o->timeout_ms : SOCKET_TIMEOUT_MS, &adv, &n_adv, why,
				    sizeof(why));
		if (r == -ENOMEM)
			goto out;
		if (r < 0 && !ours)
			continue;
		if (r < 0) {
			r = report_add(report, VERDICT_FAIL, "plugin", fix_absent, "%s does not answer: %s", path, why);
			goto out;
		}
		for (size_t i = 0; !ours && i < n_adv; i++) {
			uint32_t phy;
			ours = advertised_chip(adv[i].id, &phy);
		}
		if (!ours) {
			free(adv);
			continue;
		}
		struct advertised *grown = n_adv ? realloc(all, (n_all + n_adv) * sizeof(*all)) : all;
		if (n_adv && !grown) {
			free(adv);
			r = -ENOMEM;
			goto out;
		}
		all = grown;
		if (n_adv)
			memcpy(all + n_all, adv, n_adv * sizeof(*adv));
		n_all += n_adv;
		size_t healthy = 0;
		for (size_t i = 0; i < n_adv; i++)
			healthy += adv[i].healthy;
		strbuf_printf(&sb, "%s%s advertises %zu devices, %zu Healthy", shown_sockets++ ? "; " : "", names[k], n_adv,
			      healthy);
		for (size_t i = 0, shown = 0; i < n_adv; i++)
			if (!adv[i].healthy)
				strbuf_printf(&sb, "%s%s", shown++ ? "," : ", Unhealthy: ", adv[i].id);
		free(adv);
	}
	if (!compare) {
		r = report_add(report, VERDICT_WARN, "plugin", "see the dcmi check", "%s; not compared with DCMI: %s", text,
			       dev_dir_problem);
		goto out;
	}

	/* Each chip against the devices that stand for it, whole, as
	 * replicas, or as vNPUs carved from it. */
	strbuf_init(&dsb, diff, sizeof(diff), "...");
	matched = calloc(n_all ? n_all : 1, sizeof(*matched));
	if (!matched) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		size_t found = 0, mismatched = 0;
		for (size_t k = 0; k < n_all; k++) {
			uint32_t phy;
			if (!advertised_chip(all[k].id, &phy) || phy != chips[i].phy_id)
				continue;
			matched[k] = true;
			found++;
			mismatched += all[k].healthy != states[i].expected_healthy;
		}
		/* Another resource's socket, not read, may list the chip. */
		if (!found && !o->resource_name_given)
			strbuf_printf(&dsb, "%snpu-%" PRIu32 " not advertised", dsb.len ? "; " : "", chips[i].phy_id);
		else if (mismatched)
			strbuf_printf(&dsb, "%snpu-%" PRIu32 " advertised %s, DCMI and /dev say %s", dsb.len ? "; " : "",
				      chips[i].phy_id, states[i].expected_healthy ? "Unhealthy" : "Healthy",
				      states[i].expected_healthy ? "healthy" : "unhealthy");
	}
	for (size_t k = 0; k < n_all; k++)
		if (!matched[k])
			strbuf_printf(&dsb, "%s%s advertised, no such chip", dsb.len ? "; " : "", all[k].id);
	if (dsb.len)
		r = report_add(report, VERDICT_FAIL, "plugin",
			       "the plugin corrects itself within its --health-interval; if this stays, restart its pod "
			       "and read its log (kubectl logs -n kube-system -l name=ascend-device-plugin)",
			       "%s; differs from DCMI: %s", text, diff);
	else
		r = report_add(report, VERDICT_OK, "plugin", NULL, "%s, as DCMI and %s say%s", text, o->dev_dir,
			       o->resource_name_given ? " (other resources' sockets not read)" : "");
	if (r == 0)
		r = check_device_share(report, chips, n, states, all, n_all);
out:
	free(matched);
	free(all);
	free(names);
	return r;
}

/* ---- the whole -------------------------------------------------------------- */

static int check_dcmi(const struct doctor_options *o, struct report *report, struct dcmi_lib **ret_lib,
		      struct npu_chip *chips, size_t *ret_n)
{
	char why[1024];
	struct dcmi_lib *lib = NULL;
	int r = node_dcmi_open(o, &lib, why, sizeof(why));
	if (r < 0) {
		const char *fix = r == -ENOENT	 ? "install the driver, or point --driver-path (and --host-root) or --dcmi-lib at "
						   "libdcmi.so"
				  : r == -EPERM	 ? "make the named path root-owned and not group/other writable (chown root, "
						   "chmod go-w), as the driver's installer leaves it"
				  : r == -ELIBBAD ? "a library libdcmi.so needs is missing: LD_LIBRARY_PATH must name the "
						    "driver's lib64/driver and lib64/common"
						  : "DCMI cannot reach the chips: load the driver (npu-smi info must work); "
						    "in a container, the device nodes must be visible";
		report_add(report, VERDICT_FAIL, "dcmi", fix, "%s", why);
		*ret_n = 0;
		return r;
	}
	size_t n = 0;
	r = dcmi_enumerate(lib, chips, NPU_MAX_CHIPS, &n);
	if (r < 0) {
		struct dcmi_error e = dcmi_last_error(lib);
		report_add(report, VERDICT_FAIL, "dcmi", "npu-smi info; reload the driver",
			   "%s loaded, but %s failed with %d", dcmi_lib_path(lib), e.call ? e.call : "listing the chips",
			   e.code);
		dcmi_lib_close(lib);
		*ret_n = 0;
		return -EIO;
	}
	for (size_t i = 0; i < n; i++)
		chips[i].family = npu_family_detect(chips[i].name, chips[i].has_board_id, chips[i].board_id);
	char version[64] = "unknown";
	if (dcmi_driver_version(lib, version, sizeof(version)) < 0)
		str_copy(version, sizeof(version), "unknown");
	struct dcmi_error skipped = dcmi_last_error(lib);
	enum verdict v = n == 0 || skipped.code ? VERDICT_FAIL : VERDICT_OK;
	/* The distinct chip names, "910B3, family 910B; 310P3, family 310P". */
	char kinds[256];
	struct strbuf ksb;
	strbuf_init(&ksb, kinds, sizeof(kinds), "...");
	for (size_t i = 0; i < n; i++) {
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(chips[j].name, chips[i].name) == 0;
		if (!seen)
			strbuf_printf(&ksb, "%s%s, family %s", ksb.len ? "; " : "", chips[i].name[0] ? chips[i].name : "?",
				      npu_family_name(chips[i].family));
	}
	report_add(report, v, "dcmi", "npu-smi info; the driver may still be starting, or chips dropped: reload the driver",
		   "%s loaded (DCMI %s), %zu chips%s%s%s", dcmi_lib_path(lib), version, n, n ? " (" : "", kinds,
		   n ? ")" : "");
	if (skipped.code)
		report_add(report, VERDICT_FAIL, "dcmi-skipped", "npu-smi info; reset or reseat the failing card",
			   "chips were skipped: %s failed with %d", skipped.call ? skipped.call : "?", skipped.code);
	*ret_lib = lib;
	*ret_n = n;
	return 0;
}

int node_run(const struct doctor_options *o, struct report *report)
{
	struct driver_facts driver = { 0 };
	struct run_user user;
	struct dcmi_lib *lib = NULL;
	size_t n = 0;
	struct npu_chip *chips = calloc(NPU_MAX_CHIPS, sizeof(*chips));
	struct chip_state *states = calloc(NPU_MAX_CHIPS, sizeof(*states));
	int r = chips && states ? 0 : -ENOMEM;
	for (size_t i = 0; states && i < NPU_MAX_CHIPS; i++)
		states[i].share = -1; /* unknown until DCMI says */
	if (r == 0)
		r = versions_check_driver(o, report, VERDICT_FAIL, &driver);
	if (r == 0)
		r = versions_check_firmware(o, report, &driver);
	if (r == 0)
		r = check_install_info(o, report, &user);
	if (r < 0)
		goto out;
	bool dcmi_ok = check_dcmi(o, report, &lib, chips, &n) == 0;
	if (!dcmi_ok) {
		/* The device files still tell which chips the driver made. */
		if (devfs_scan(o->dev_dir, chips, NPU_MAX_CHIPS, &n) < 0)
			n = 0;
	}
	r = check_device_files(o, report, chips, n, &user);
	if (r == 0 && dcmi_ok)
		r = check_chips(report, lib, chips, n, states);
	if (r == 0 && dcmi_ok)
		r = check_network(report, lib, chips, n, states);
	/* What the plugin should advertise also needs the device nodes. */
	char path[512];
	bool manager = path_join(path, sizeof(path), o->dev_dir, "davinci_manager") == 0 && path_exists(path);
	for (size_t i = 0; dcmi_ok && i < n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "davinci%" PRIu32, chips[i].phy_id);
		if (!manager || path_join(path, sizeof(path), o->dev_dir, name) < 0 || !path_exists(path))
			states[i].expected_healthy = false;
	}
	/* A separated chip is advertised Unhealthy, whatever DCMI says. */
	bool *separated = calloc(NPU_MAX_CHIPS, sizeof(*separated));
	if (r == 0)
		r = separated ? separated_check(o, report, chips, n, separated) : -ENOMEM;
	for (size_t i = 0; r == 0 && i < n; i++)
		if (separated[i])
			states[i].expected_healthy = false;
	free(separated);
	if (r == 0)
		r = check_kubelet(o, report);
	if (r == 0)
		r = check_plugin(o, report, chips, n, states, dcmi_ok, "DCMI is not loaded");
out:
	dcmi_lib_close(lib);
	free(states);
	free(chips);
	return r;
}
