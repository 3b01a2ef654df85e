/* SPDX-License-Identifier: Apache-2.0 */
/* The version story; see versions.h. */
#include "versions.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "base/file.h"
#include "base/parse.h"
#include "node.h"
#include "npu/dcmi.h"
#include "npu/verfile.h"

int doctor_host_path(const struct doctor_options *o, const char *path, char *out, size_t size)
{
	const char *root = o->host_root ? o->host_root : "/";
	if (strcmp(root, "/") == 0)
		return str_copy(out, size, path);
	return path_join(out, size, root, path);
}

int doctor_read_small(const char *path, char **ret_text, size_t *ret_len, char *why, size_t why_size)
{
	return file_read_bounded(path, VERFILE_MAX_BYTES, ret_text, ret_len, why, why_size);
}

/* key of text into value, "" when absent or unreadable. */
static void get_or_empty(const char *text, size_t len, const char *key, char *value, size_t size)
{
	if (verfile_get(text, len, key, value, size) < 0)
		value[0] = '\0';
}

int versions_check_driver(const struct doctor_options *o, struct report *report, enum verdict missing,
			  struct driver_facts *ret_facts)
{
	struct driver_facts f = { 0 };
	char rel[512], why[256], *text = NULL;
	size_t len;
	int r;
	if (path_join(rel, sizeof(rel), o->driver_path, "version.info") < 0 ||
	    doctor_host_path(o, rel, f.path, sizeof(f.path)) < 0) {
		*ret_facts = f;
		return report_add(report, VERDICT_FAIL, "driver", "use shorter paths", "the driver's path is too long");
	}
	r = doctor_read_small(f.path, &text, &len, why, sizeof(why));
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		*ret_facts = f;
		return report_add(report, missing, "driver",
				  "install the Ascend driver on the host (the driver's .run package), or point --driver-path "
				  "(and --host-root) at it",
				  "unknown: %s: %s", f.path, why);
	}
	get_or_empty(text, len, "Version", f.version, sizeof(f.version));
	get_or_empty(text, len, "Innerversion", f.innerversion, sizeof(f.innerversion));
	get_or_empty(text, len, "compatible_version", f.compatible, sizeof(f.compatible));
	get_or_empty(text, len, "compatible_version_fw", f.compatible_fw, sizeof(f.compatible_fw));
	free(text);
	if (!f.version[0]) {
		*ret_facts = f;
		return report_add(report, VERDICT_WARN, "driver", "reinstall the driver: its version.info is damaged",
				  "unknown: %s has no Version=", f.path);
	}
	f.found = true;
	*ret_facts = f;
	return report_add(report, VERDICT_OK, "driver", NULL, "%s%s%s%s from %s", f.version,
			  f.innerversion[0] ? " (Innerversion " : "", f.innerversion, f.innerversion[0] ? ")" : "", f.path);
}

int versions_check_firmware(const struct doctor_options *o, struct report *report, const struct driver_facts *driver)
{
	char rel[512], path[512], why[256], *text = NULL;
	char version[64], compatible_drv[512];
	size_t len;
	/* The firmware sits beside the driver: /usr/local/Ascend/{driver,firmware}. */
	char parent[512];
	if (str_copy(parent, sizeof(parent), o->driver_path) < 0)
		return report_add(report, VERDICT_WARN, "firmware", "use shorter paths", "unknown: path too long");
	char *slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = '\0';
	else
		str_copy(parent, sizeof(parent), "/");
	if (path_join(rel, sizeof(rel), parent, "firmware/version.info") < 0 ||
	    doctor_host_path(o, rel, path, sizeof(path)) < 0)
		return report_add(report, VERDICT_WARN, "firmware", "use shorter paths", "unknown: path too long");
	int r = doctor_read_small(path, &text, &len, why, sizeof(why));
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return report_add(report, VERDICT_WARN, "firmware",
				  "install the firmware package that goes with the driver (npu-smi info shows what the chips run)",
				  "unknown: %s: %s", path, why);
	get_or_empty(text, len, "Version", version, sizeof(version));
	get_or_empty(text, len, "compatible_version_drv", compatible_drv, sizeof(compatible_drv));
	free(text);
	if (!version[0])
		return report_add(report, VERDICT_WARN, "firmware", "reinstall the firmware: its version.info is damaged",
				  "unknown: %s has no Version=", path);
	if (!driver->found)
		return report_add(report, VERDICT_WARN, "firmware", "see the driver check",
				  "%s; not compared: the driver's version is unknown", version);

	/* Each side's list of the other. */
	bool fw_ok = false, drv_ok = false;
	int fw_r = driver->compatible_fw[0] ? verrange_contains(driver->compatible_fw, version, &fw_ok) : -ENOENT;
	int drv_r = compatible_drv[0] ? verrange_contains(compatible_drv, driver->version, &drv_ok) : -ENOENT;
	char fix[1400];
	snprintf(fix, sizeof(fix),
		 "install a firmware the driver lists (compatible_version_fw=%s) or the driver the firmware lists "
		 "(compatible_version_drv=%s): they are released in pairs",
		 driver->compatible_fw[0] ? driver->compatible_fw : "none", compatible_drv[0] ? compatible_drv : "none");
	if ((fw_r == 0 && !fw_ok) || (drv_r == 0 && !drv_ok))
		return report_add(report, VERDICT_FAIL, "firmware", fix, "%s does not go with driver %s: %s%s%s", version,
				  driver->version,
				  fw_r == 0 && !fw_ok ? "not in the driver's compatible_version_fw " : "",
				  fw_r == 0 && !fw_ok ? driver->compatible_fw : "",
				  drv_r == 0 && !drv_ok ? (fw_r == 0 && !fw_ok ? "; driver not in its compatible_version_drv"
									 : "the driver is not in its compatible_version_drv")
							 : "");
	if (fw_r < 0 && drv_r < 0)
		return report_add(report, VERDICT_WARN, "firmware",
				  "compare the versions with the driver's release notes",
				  "%s; compatibility unknown: %s", version,
				  fw_r == -ENOENT && drv_r == -ENOENT ? "neither file lists the other"
								       : "unreadable compatibility lists");
	return report_add(report, VERDICT_OK, "firmware", NULL, "%s, within the driver's compatible_version_fw %s", version,
			  fw_r == 0 ? driver->compatible_fw : "(none; the firmware lists the driver)");
}

/* CANN's install info: --toolkit-path, else the usual places, each with an
 * <arch>-linux directory (or the file directly in it). */
static int find_toolkit(const struct doctor_options *o, char *path, size_t size, char *searched, size_t searched_size)
{
	struct utsname u;
	const char *arch = uname(&u) == 0 ? u.machine : "x86_64";
	const char *dirs[3] = { o->toolkit_path, NULL, NULL };
	char d1[512], d2[512];
	if (!o->toolkit_path) {
		if (doctor_host_path(o, "/usr/local/Ascend/ascend-toolkit/latest", d1, sizeof(d1)) < 0 ||
		    doctor_host_path(o, "/usr/local/Ascend/cann", d2, sizeof(d2)) < 0)
			return -ENAMETOOLONG;
		dirs[0] = d1;
		dirs[1] = d2;
	}
	size_t used = 0;
	searched[0] = '\0';
	for (size_t i = 0; i < 3 && dirs[i]; i++) {
		char sub[128], candidate[1024];
		const char *arches[] = { arch, "x86_64", "aarch64" };
		for (size_t a = 0; a < 4; a++) {
			if (a < 3)
				snprintf(sub, sizeof(sub), "%s-linux/ascend_toolkit_install.info", arches[a]);
			else
				snprintf(sub, sizeof(sub), "ascend_toolkit_install.info");
			if (path_join(candidate, sizeof(candidate), dirs[i], sub) < 0)
				continue;
			if (path_exists(candidate))
				return str_copy(path, size, candidate);
		}
		int w = snprintf(searched + used, searched_size - used, "%s%s/*-linux", used ? ", " : "", dirs[i]);
		if (w > 0 && (size_t)w < searched_size - used)
			used += (size_t)w;
	}
	return -ENOENT;
}

static int check_cann(const struct doctor_options *o, struct report *report, const struct driver_facts *driver)
{
	char path[1024], searched[1200], why[256], *text;
	size_t len;
	int r = find_toolkit(o, path, sizeof(path), searched, sizeof(searched));
	if (r < 0)
		return report_add(report, VERDICT_WARN, "cann",
				  "give --toolkit-path, or run this where CANN is installed (the inference image, with the "
				  "driver mounted)",
				  "unknown: no ascend_toolkit_install.info (searched %s)", searched);
	r = doctor_read_small(path, &text, &len, why, sizeof(why));
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return report_add(report, VERDICT_WARN, "cann", "check the file's permissions", "unknown: %s: %s", path, why);
	char version[64], inner[96], compatible[1024];
	get_or_empty(text, len, "version", version, sizeof(version));
	get_or_empty(text, len, "innerversion", inner, sizeof(inner));
	get_or_empty(text, len, "compatible_version", compatible, sizeof(compatible));
	free(text);
	if (!version[0])
		return report_add(report, VERDICT_WARN, "cann", "reinstall CANN: its install info is damaged",
				  "unknown: %s has no version=", path);
	char release[64], cann_release[64];
	if (!driver->found || innerversion_release(driver->innerversion, release, sizeof(release)) < 0)
		return report_add(report, VERDICT_WARN, "cann", "see the driver check",
				  "CANN %s from %s; not compared: the driver's Innerversion is unknown", version, path);
	/* Each names the other's releases it works with: CANN the driver's,
	 * the driver CANN's. */
	bool cann_ok = false, driver_ok = false;
	int cann_r = compatible[0] ? verlist_has_prefix_of(compatible, release, &cann_ok) : -ENOENT;
	int driver_r = driver->compatible[0] && innerversion_release(inner, cann_release, sizeof(cann_release)) == 0
			       ? verlist_has_prefix_of(driver->compatible, cann_release, &driver_ok)
			       : -ENOENT;
	const char *fix = "use a CANN image released with the node's driver (or upgrade the driver); never install a "
			  "driver inside the image";
	if (cann_r == 0 && !cann_ok)
		return report_add(report, VERDICT_FAIL, "cann", fix,
				  "CANN %s does not support driver %s: its release %s is not in compatible_version %s",
				  version, driver->version, release, compatible);
	if (driver_r == 0 && !driver_ok)
		return report_add(report, VERDICT_FAIL, "cann", fix,
				  "driver %s does not support CANN %s: its release %s is not in the driver's "
				  "compatible_version %s",
				  driver->version, version, cann_release, driver->compatible);
	if (cann_r < 0 && driver_r < 0)
		return report_add(report, VERDICT_WARN, "cann", "compare the versions with CANN's release notes",
				  "CANN %s from %s; compatibility unknown: no readable compatible_version on either side",
				  version, path);
	if (cann_r == 0)
		return report_add(report, VERDICT_OK, "cann", NULL,
				  "CANN %s supports driver %s (release %s in compatible_version)", version, driver->version,
				  release);
	return report_add(report, VERDICT_OK, "cann", NULL,
			  "driver %s supports CANN %s (release %s in the driver's compatible_version)", driver->version,
			  version, cann_release);
}

/* The distinct chip names DCMI reports, "910B3" or "910B3,310P3". */
static int check_chip(const struct doctor_options *o, struct report *report, char *names, size_t size)
{
	struct dcmi_lib *lib = NULL;
	char why[1024];
	names[0] = '\0';
	int r = node_dcmi_open(o, &lib, why, sizeof(why));
	if (r < 0)
		return report_add(report, VERDICT_WARN, "chip",
				  "run this on the NPU node or in the plugin's pod, where DCMI loads (ascend-doctor node "
				  "says why it does not)",
				  "unknown: DCMI: %s", why);
	struct npu_chip *chips = calloc(NPU_MAX_CHIPS, sizeof(*chips));
	size_t n = 0;
	r = chips ? dcmi_enumerate(lib, chips, NPU_MAX_CHIPS, &n) : -ENOMEM;
	dcmi_lib_close(lib);
	if (r == -ENOMEM)
		return r;
	if (r < 0 || n == 0) {
		free(chips);
		return report_add(report, VERDICT_WARN, "chip", "see ascend-doctor node", "unknown: DCMI lists %s",
				  r < 0 ? "nothing (the card list fails)" : "no chips");
	}
	size_t used = 0;
	for (size_t i = 0; i < n; i++) {
		if (!chips[i].name[0])
			continue;
		bool seen = false;
		for (size_t j = 0; j < i; j++)
			seen |= strcmp(chips[j].name, chips[i].name) == 0;
		if (seen)
			continue;
		int w = snprintf(names + used, size - used, "%s%s", used ? "," : "", chips[i].name);
		if (w < 0 || (size_t)w >= size - used)
			break;
		used += (size_t)w;
	}
	free(chips);
	if (!names[0])
		return report_add(report, VERDICT_WARN, "chip", "see ascend-doctor node",
				  "unknown: DCMI gives no chip name for %zu chips", n);
	return report_add(report, VERDICT_OK, "chip", NULL, "%zu chips, %s (soc_version Ascend%s)", n, names, names);
}

static int check_soc(const struct doctor_options *o, struct report *report, const char *names)
{
	if (!names[0])
		return report_add(report, VERDICT_WARN, "soc-version", "see the chip check",
				  "model compiled for %s; not compared: the chip is unknown", o->soc_version);
	const char *want = o->soc_version;
	if (strncasecmp(want, "Ascend", 6) == 0)
		want += 6;
	/* Every chip of the node must be the model's. */
	char copy[256], fix[512];
	str_copy(copy, sizeof(copy), names);
	char *save = NULL;
	for (char *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		if (strcasecmp(name, want) == 0)
			continue;
		snprintf(fix, sizeof(fix),
			 "recompile with atc --soc_version=Ascend%s, or run the pod on %s nodes (label the nodes by chip, "
			 "use node affinity)",
			 name, o->soc_version);
		return report_add(report, VERDICT_FAIL, "soc-version", fix,
				  "the model was compiled for %s, the node's chips are %s", o->soc_version, names);
	}
	return report_add(report, VERDICT_OK, "soc-version", NULL, "the model's %s is the node's chip", o->soc_version);
}

int versions_run(const struct doctor_options *o, struct report *report)
{
	struct driver_facts driver = { 0 };
	char names[256];
	int r = versions_check_driver(o, report, VERDICT_WARN, &driver);
	if (r == 0)
		r = versions_check_firmware(o, report, &driver);
	if (r == 0)
		r = check_cann(o, report, &driver);
	if (r == 0)
		r = check_chip(o, report, names, sizeof(names));
	if (r == 0 && o->soc_version)
		r = check_soc(o, report, names);
	return r;
}
