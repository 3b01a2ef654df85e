/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/k8s_names.h"
#include "base/parse.h"
#include "options.h"

void rt_options_usage(FILE *out)
{
	fputs("Usage: ascend-ranktable [--pod NAME] [--namespace NS] [--group-label KEY] [--size N]\n"
	      "                        [--mode auto|dra|device-plugin] [--driver NAME] [--timeout D]\n"
	      "                        [--output FILE] [--env-file FILE] [--kubeconfig FILE]\n"
	      "       ascend-ranktable --help | --version\n"
	      "\n"
	      "Run as an init container of every pod of a group (docs/ranktable.md): waits until every\n"
	      "member's NPUs are known, writes the same HCCL rank table in every pod, and exits 0.\n"
	      "\n"
	      "  --pod NAME           this pod (default $POD_NAME, from the downward API)\n"
	      "  --namespace NS       its namespace (default $POD_NAMESPACE, else the service account's)\n"
	      "  --group-label KEY    the label naming the group (default " RT_GROUP_LABEL_DEFAULT ");\n"
	      "                       without it, the pod's Indexed Job, StatefulSet or LeaderWorkerSet\n"
	      "  --size N             the group's pods (default $ASCEND_HCCL_GROUP_SIZE, else the owner's)\n"
	      "  --mode M             dra, device-plugin, or auto: dra when the pod has resource claims\n"
	      "  --driver NAME        the NPU DRA driver whose devices count (default " RT_DRIVER_DEFAULT ")\n"
	      "  --timeout D          how long to wait for every member (default 10m)\n"
	      "  --output FILE        the rank table (default " RT_OUTPUT_DEFAULT ")\n"
	      "  --env-file FILE      RANK_TABLE_FILE and RANK_SIZE for a shell (default " RT_ENV_FILE_NAME
	      " beside --output)\n"
	      "  --kubeconfig FILE    reach the API server as this file says (default: in-cluster)\n"
	      "\n"
	      "Exit status: 0 the table is written, 1 it could not be (the error says why), 2 a usage error.\n",
	      out);
}

static int set_size(const char *what, const char *v, uint32_t *ret, char *why, size_t why_size)
{
	if (parse_u32(v, 10, RT_GROUP_MAX, ret) < 0 || *ret == 0)
		return why_invalid(why, why_size, "%s: '%.32s' is not a group size in 1-%d", what, v, RT_GROUP_MAX);
	return 0;
}

/* The env file beside the output, unless given. */
static int env_beside(struct rt_options *o, char *why, size_t why_size)
{
	const char *slash = strrchr(o->output, '/');
	int n = slash ? (int)(slash - o->output + 1) : 0;
	if (str_printf(o->env_file, sizeof(o->env_file), "%.*s%s", n, o->output, RT_ENV_FILE_NAME) < 0)
		return why_invalid(why, why_size, "--output: too long");
	return 0;
}

int rt_options_parse(int argc, char **argv, struct rt_options *ret, char *why, size_t why_size)
{
	static const struct option longs[] = {
		{ "pod", required_argument, NULL, 'p' },	 { "namespace", required_argument, NULL, 'n' },
		{ "group-label", required_argument, NULL, 'l' }, { "size", required_argument, NULL, 's' },
		{ "mode", required_argument, NULL, 'm' },	 { "driver", required_argument, NULL, 'd' },
		{ "timeout", required_argument, NULL, 't' },	 { "output", required_argument, NULL, 'o' },
		{ "env-file", required_argument, NULL, 'e' },	 { "kubeconfig", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },		 { "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct rt_options o = {
		.pod_name = getenv("POD_NAME"),
		.namespace_ = getenv("POD_NAMESPACE"),
		.label_key = RT_GROUP_LABEL_DEFAULT,
		.driver = RT_DRIVER_DEFAULT,
		.timeout_ms = RT_TIMEOUT_DEFAULT_MS,
		.watch_s = RT_WATCH_DEFAULT_S,
	};
	const char *size_env = getenv("ASCEND_HCCL_GROUP_SIZE");
	int r;
	if (size_env && size_env[0] && (r = set_size("ASCEND_HCCL_GROUP_SIZE", size_env, &o.size, why, why_size)) < 0)
		return r;
	str_copy(o.output, sizeof(o.output), RT_OUTPUT_DEFAULT);
	opterr = 0;
	optind = 1;
	for (int ch; (ch = getopt_long(argc, argv, ":h", longs, NULL)) != -1;) {
		switch (ch) {
		case 'p':
			o.pod_name = optarg;
			break;
		case 'n':
			o.namespace_ = optarg;
			break;
		case 'l':
			o.label_key = optarg;
			break;
		case 's':
			if ((r = set_size("--size", optarg, &o.size, why, why_size)) < 0)
				return r;
			break;
		case 'm':
			if (strcmp(optarg, "auto") == 0)
				o.mode = RT_MODE_AUTO;
			else if (strcmp(optarg, "dra") == 0)
				o.mode = RT_MODE_DRA;
			else if (strcmp(optarg, "device-plugin") == 0)
				o.mode = RT_MODE_DEVICE_PLUGIN;
			else
				return why_invalid(why, why_size, "--mode: '%.32s' is none of auto, dra, device-plugin",
						   optarg);
			break;
		case 'd':
			o.driver = optarg;
			break;
		case 't':
			if (parse_duration_ms_max(optarg, RT_TIMEOUT_MAX_MS, &o.timeout_ms) < 0 || o.timeout_ms <= 0)
				return why_invalid(why, why_size, "--timeout: '%.32s' is not a duration up to 24h",
						   optarg);
			break;
		case 'o':
			if (!optarg[0] || str_copy(o.output, sizeof(o.output), optarg) < 0)
				return why_invalid(why, why_size, "--output: empty or longer than %d bytes",
						   RT_PATH_MAX - 1);
			break;
		case 'e':
			if (!optarg[0] || str_copy(o.env_file, sizeof(o.env_file), optarg) < 0)
				return why_invalid(why, why_size, "--env-file: empty or longer than %d bytes",
						   RT_PATH_MAX - 1);
			break;
		case 'k':
			o.kubeconfig = optarg;
			break;
		case 'h':
			o.help = true;
			break;
		case 'V':
			o.version = true;
			break;
		case ':':
			return why_invalid(why, why_size, "%s: needs a value", argv[optind - 1]);
		default:
			return why_invalid(why, why_size, "%s: unknown flag", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return why_invalid(why, why_size, "'%.64s': no arguments are taken, only flags", argv[optind]);
	if (!o.env_file[0] && (r = env_beside(&o, why, why_size)) < 0)
		return r;
	if (!o.help && !o.version) {
		if (!o.pod_name || k8s_dns_subdomain_check(o.pod_name, strlen(o.pod_name)) < 0)
			return why_invalid(why, why_size, "--pod (or POD_NAME): %s", o.pod_name ? "not a pod name" : "not given");
		if (o.namespace_ && k8s_dns_subdomain_check(o.namespace_, strlen(o.namespace_)) < 0)
			return why_invalid(why, why_size, "--namespace (or POD_NAMESPACE): not a namespace");
		if (!o.label_key[0] || strlen(o.label_key) > 317 || strchr(o.label_key, '=') || strchr(o.label_key, ','))
			return why_invalid(why, why_size, "--group-label: not a label key");
		if (k8s_dns_subdomain_check(o.driver, strlen(o.driver)) < 0)
			return why_invalid(why, why_size, "--driver: not a driver name");
	}
	*ret = o;
	return 0;
}
