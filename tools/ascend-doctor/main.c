/* SPDX-License-Identifier: Apache-2.0 */
/* ascend-doctor: the troubleshooting chapter as one command per failure
 * (docs/ascend-doctor.md). The table of contents: parse the command line,
 * run the subcommand into a report, print it as text or JSON, exit with its
 * worst verdict (0 OK, 1 WARN, 2 FAIL; 3 for usage errors). */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/cli.h"
#include "base/parse.h"
#include "explain.h"
#include "node.h"
#include "options.h"
#include "pods.h"
#include "fault/separation.h"
#include "report.h"
#include "separated.h"
#include "versions.h"

static void usage(FILE *out)
{
	fputs("Usage: ascend-doctor [--json] node [--host-root DIR] [--driver-path DIR] [--dev-dir DIR]\n"
	      "                     [--socket-dir DIR] [--resource-name NAME] [--dcmi-lib PATH] [--timeout D]\n"
	      "                     [--state-dir DIR]\n"
	      "       ascend-doctor [--json] explain [NAMESPACE/]POD [--namespace NS] [--pod FILE]\n"
	      "                     [--nodes FILE] [--pods FILE] [--resource-name NAME] [--kubectl PATH] [--timeout D]\n"
	      "                     [--claims FILE] [--classes FILE] [--slices FILE] [--taint-rules FILE] [--driver NAME]\n"
	      "       ascend-doctor [--json] explain claim [NAMESPACE/]CLAIM [--namespace NS] [the files above]\n"
	      "       ascend-doctor [--json] versions [--soc-version SOC] [--toolkit-path DIR] [--host-root DIR]\n"
	      "                     [--driver-path DIR] [--dcmi-lib PATH]\n"
	      "       ascend-doctor [--json] pods [--pod-resources-socket PATH] [--resource-name NAME] [--timeout D]\n"
	      "       ascend-doctor [--json] release npu-<phy> [--state-dir DIR]\n"
	      "       ascend-doctor --help | --version\n"
	      "\n"
	      "Answers the three failure stories of Ascend NPU pods with a verdict and the fix:\n"
	      "  node      devices, driver, DCMI, chip health, kubelet and plugin on this node\n"
	      "            (\"Device not found\", \"Permission denied\")\n"
	      "  explain   why a pod stays Pending, node by node (\"Insufficient ascend.com/npu\"), or\n"
	      "            why its ResourceClaims (or one claim) wait for devices (\"cannot allocate all claims\")\n"
	      "  versions  driver, firmware, CANN and the model's soc_version against each other\n"
	      "  pods      which container holds which chip, from the kubelet's pod resources API\n"
	      "  release   returns a chip the plugin separated (ManuallySeparateNPU) to service\n"
	      "\n"
	      "Each check prints `OK|WARN|FAIL <check>: <found>` and, unless OK, `  fix: <what to do>`.\n"
	      "Exit status: 0 all OK, 1 a WARN, 2 a FAIL, 3 a usage error.\n"
	      "\n"
	      "  --json               print a JSON document instead (docs/ascend-doctor.md)\n"
	      "  --host-root DIR      where the host's / is visible (default /)\n"
	      "  --driver-path DIR    the driver, a host path (default $ASCEND_DRIVER_PATH or /usr/local/Ascend/driver)\n"
	      "  --dev-dir DIR        the device nodes (default /dev)\n"
	      "  --socket-dir DIR     the kubelet's device-plugins directory (default /var/lib/kubelet/device-plugins)\n"
	      "  --resource-name NAME the plugin's resource (default ascend.com/npu); node reads only its socket\n"
	      "                       when given, else every socket of the plugin\n"
	      "  --dcmi-lib PATH      libdcmi.so to load instead of searching like the plugin\n"
	      "  --state-dir DIR      the plugin's --state-dir, where it records separated chips\n"
	      "                       (default " FAULT_SEPARATION_DEFAULT_DIR ")\n"
	      "  --timeout D          deadline for the plugin's answer (default 10s) and each kubectl run (60s)\n"
	      "  --namespace NS, -n   the pod's namespace (default: kubectl's)\n"
	      "  --pod FILE           the pod as `kubectl get pod -o json` prints it\n"
	      "  --nodes FILE         `kubectl get nodes -o json`\n"
	      "  --pods FILE          `kubectl get pods -A -o json`; POD is looked up in it without --pod\n"
	      "  --kubectl PATH       the kubectl to run for what no file gives (default kubectl)\n"
	      "  --claims FILE        `kubectl get resourceclaims -A -o json`; CLAIM is looked up in it\n"
	      "  --classes FILE       `kubectl get deviceclasses -o json`\n"
	      "  --slices FILE        `kubectl get resourceslices -o json`\n"
	      "  --taint-rules FILE   `kubectl get devicetaintrules -o json`\n"
	      "  --driver NAME        the DRA driver whose devices count (default npu.ascend.com)\n"
	      "  --pod-resources-socket PATH\n"
	      "                       the kubelet's pod resources API (default\n"
	      "                       /var/lib/kubelet/pod-resources/kubelet.sock)\n"
	      "  --soc-version SOC    what the model was compiled for (atc --soc_version), e.g. Ascend910B3\n"
	      "  --toolkit-path DIR   CANN's directory (default /usr/local/Ascend/ascend-toolkit/latest, then\n"
	      "                       /usr/local/Ascend/cann, under --host-root)\n",
	      out);
}

/* One line naming what is wrong and the hint to --help (base/cli.h);
 * returns the exit status of a usage error. */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cli_usage_verror("ascend-doctor", fmt, ap);
	va_end(ap);
	return REPORT_EXIT_USAGE;
}

/* How --json output is written. */
#define JSON_FLAGS (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)

/* A run that reached no verdict, for --json readers: {"command", "verdict":
 * "FAIL", "exit_code": 2, "error"}. */
static void print_error_json(const char *command, const char *error)
{
	struct json_object *doc = json_object_new_object();
	if (doc && json_object_object_add(doc, "command", json_object_new_string(command)) == 0 &&
	    json_object_object_add(doc, "verdict", json_object_new_string("FAIL")) == 0 &&
	    json_object_object_add(doc, "exit_code", json_object_new_int(2)) == 0 &&
	    json_object_object_add(doc, "error", json_object_new_string(error)) == 0)
		printf("%s\n", json_object_to_json_string_ext(doc, JSON_FLAGS));
	json_object_put(doc);
}

static bool absolute(const char *path)
{
	return path[0] == '/';
}

int main(int argc, char **argv)
{
	struct doctor_options o = {
		.host_root = "/",
		.driver_path = "/usr/local/Ascend/driver",
		.dev_dir = "/dev",
		.socket_dir = "/var/lib/kubelet/device-plugins",
		.resource_name = "ascend.com/npu",
		.kubectl = "kubectl",
		.pod_resources_socket = "/var/lib/kubelet/pod-resources/kubelet.sock",
		.state_dir = FAULT_SEPARATION_DEFAULT_DIR,
		.driver = "npu.ascend.com",
	};
	const char *env_driver = getenv("ASCEND_DRIVER_PATH");
	if (env_driver && env_driver[0])
		o.driver_path = env_driver;
	bool json = false;
	enum { OPT_JSON = 256, OPT_HOST_ROOT, OPT_DRIVER, OPT_DEV, OPT_SOCKET, OPT_RESOURCE, OPT_DCMI, OPT_TIMEOUT,
	       OPT_POD, OPT_NODES, OPT_PODS, OPT_KUBECTL, OPT_SOC, OPT_TOOLKIT, OPT_PODRES, OPT_STATE, OPT_HELP, OPT_VERSION,
	       OPT_CLAIMS, OPT_CLASSES, OPT_SLICES, OPT_RULES, OPT_DRIVER_NAME };
	static const struct option long_options[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "host-root", required_argument, NULL, OPT_HOST_ROOT },
		{ "driver-path", required_argument, NULL, OPT_DRIVER },
		{ "dev-dir", required_argument, NULL, OPT_DEV },
		{ "socket-dir", required_argument, NULL, OPT_SOCKET },
		{ "resource-name", required_argument, NULL, OPT_RESOURCE },
		{ "dcmi-lib", required_argument, NULL, OPT_DCMI },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "namespace", required_argument, NULL, 'n' },
		{ "pod", required_argument, NULL, OPT_POD },
		{ "nodes", required_argument, NULL, OPT_NODES },
		{ "pods", required_argument, NULL, OPT_PODS },
		{ "kubectl", required_argument, NULL, OPT_KUBECTL },
		{ "soc-version", required_argument, NULL, OPT_SOC },
		{ "toolkit-path", required_argument, NULL, OPT_TOOLKIT },
		{ "pod-resources-socket", required_argument, NULL, OPT_PODRES },
		{ "state-dir", required_argument, NULL, OPT_STATE },
		{ "claims", required_argument, NULL, OPT_CLAIMS },
		{ "classes", required_argument, NULL, OPT_CLASSES },
		{ "slices", required_argument, NULL, OPT_SLICES },
		{ "taint-rules", required_argument, NULL, OPT_RULES },
		{ "driver", required_argument, NULL, OPT_DRIVER_NAME },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	/* The flags whose value is kept as given, and where. */
	const struct {
		int code;
		const char **value;
	} kept[] = {
		{ OPT_HOST_ROOT, &o.host_root },
		{ OPT_DRIVER, &o.driver_path },
		{ OPT_DEV, &o.dev_dir },
		{ OPT_SOCKET, &o.socket_dir },
		{ OPT_DCMI, &o.dcmi_lib },
		{ 'n', &o.namespace },
		{ OPT_POD, &o.pod_file },
		{ OPT_NODES, &o.nodes_file },
		{ OPT_PODS, &o.pods_file },
		{ OPT_KUBECTL, &o.kubectl },
		{ OPT_SOC, &o.soc_version },
		{ OPT_TOOLKIT, &o.toolkit_path },
		{ OPT_PODRES, &o.pod_resources_socket },
		{ OPT_STATE, &o.state_dir },
		{ OPT_CLAIMS, &o.claims_file },
		{ OPT_CLASSES, &o.classes_file },
		{ OPT_SLICES, &o.slices_file },
		{ OPT_RULES, &o.rules_file },
		{ OPT_DRIVER_NAME, &o.driver },
	};
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":n:", long_options, NULL)) != -1) {
		size_t k = 0;
		while (k < sizeof(kept) / sizeof(kept[0]) && kept[k].code != c)
			k++;
		if (k < sizeof(kept) / sizeof(kept[0])) {
			*kept[k].value = optarg;
			continue;
		}
		int64_t ms;
		switch (c) {
		case OPT_JSON:
			json = true;
			break;
		case OPT_RESOURCE:
			if (!strchr(optarg, '/'))
				return usage_error("--resource-name: '%s' is not an extended resource name (domain/name)",
						   optarg);
			o.resource_name = optarg;
			o.resource_name_given = true;
			break;
		case OPT_TIMEOUT:
			if (parse_duration_ms(optarg, &ms) < 0 || ms <= 0)
				return usage_error("--timeout: '%s' is not a duration such as 10s", optarg);
			o.timeout_ms = (long)ms;
			break;
		case OPT_HELP:
			usage(stdout);
			return 0;
		case OPT_VERSION:
			printf("ascend-doctor %s\n", ASCEND_VERSION);
			return 0;
		case ':':
			return usage_error("%s needs a value", argv[optind - 1]);
		default:
			/* getopt_long sets optopt to a known flag's code when it was
			 * given a value it takes none of. */
			if (optopt >= OPT_JSON)
				return usage_error("%.*s takes no value", (int)strcspn(argv[optind - 1], "="),
						   argv[optind - 1]);
			return usage_error("unknown flag '%s'", argv[optind - 1]);
		}
	}
	const char *paths[][2] = { { "--host-root", o.host_root },   { "--driver-path", o.driver_path },
				   { "--dev-dir", o.dev_dir },       { "--socket-dir", o.socket_dir },
				   { "--pod-resources-socket", o.pod_resources_socket },
				   { "--state-dir", o.state_dir } };
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (!absolute(paths[i][1]))
			return usage_error("%s: '%s' is not an absolute path", paths[i][0], paths[i][1]);
	}
	if (optind >= argc)
		return usage_error("%s", "no command: node, explain, versions, pods or release");
	const char *command = argv[optind++];
	const char *operand = NULL; /* explain: the pod; release: the chip */
	if ((strcmp(command, "explain") == 0 || strcmp(command, "release") == 0) && optind < argc)
		operand = argv[optind++];
	/* explain claim NAME: a claim, not a pod called "claim". */
	if (strcmp(command, "explain") == 0 && operand && strcmp(operand, "claim") == 0) {
		if (optind >= argc)
			return usage_error("%s", "explain claim: which claim? ascend-doctor explain claim [NAMESPACE/]NAME");
		o.claim = argv[optind++];
		operand = NULL;
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);

	struct report report;
	struct json_object *doc = NULL;
	char why[1024] = "";
	int r;
	report_init(&report);
	if (strcmp(command, "node") == 0) {
		r = node_run(&o, &report);
	} else if (strcmp(command, "versions") == 0) {
		r = versions_run(&o, &report);
	} else if (strcmp(command, "pods") == 0) {
		r = pods_run(&o, &report);
	} else if (strcmp(command, "release") == 0) {
		if (!operand)
			return usage_error("%s", "release: which chip? ascend-doctor release npu-<phy>");
		r = separated_release(&o, operand, &report);
		if (r == -EINVAL)
			return usage_error("release: '%s' is not a chip (npu-<phy>)", operand);
	} else if (strcmp(command, "explain") == 0) {
		r = explain_run(&o, operand, &report, &doc, why, sizeof(why));
		if (r == -EINVAL && !o.pod_file && !operand && !o.claim) {
			report_clear(&report);
			return usage_error("%s", why);
		}
		if (r == -ENOEXEC) {
			/* No kubectl and no files: what to give is a matter of usage. */
			report_clear(&report);
			return usage_error("explain: %s", why);
		}
		if (r < 0) {
			/* No verdict without the pod and the nodes: the cause is in why. */
			fprintf(stderr, "ascend-doctor: explain: %s\n", why);
			if (json)
				print_error_json(command, why);
			report_clear(&report);
			return 2;
		}
	} else {
		return usage_error("unknown command '%s' (node, explain, versions, pods or release)", command);
	}
	if (r < 0) {
		fprintf(stderr, "ascend-doctor: %s\n", strerror(-r));
		report_clear(&report);
		return 2;
	}
	if (json) {
		if (!doc)
			doc = report_to_json(&report, command);
		const char *text = doc ? json_object_to_json_string_ext(doc, JSON_FLAGS) : NULL;
		if (!text) {
			fprintf(stderr, "ascend-doctor: out of memory\n");
			json_object_put(doc);
			report_clear(&report);
			return 2;
		}
		printf("%s\n", text);
	} else {
		report_print(&report, stdout);
	}
	int code = report_exit_code(&report);
	json_object_put(doc);
	report_clear(&report);
	return code;
}
