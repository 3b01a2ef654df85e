/* SPDX-License-Identifier: Apache-2.0 */
/* What the command line of ascend-doctor sets, shared by its subcommands.
 * The node paths mean what the plugin's flags of the same names mean. */
#pragma once

#include <stdbool.h>

struct doctor_options {
	const char *host_root;     /* where the host's / is visible ("/") */
	const char *driver_path;   /* a host path, read under host_root */
	const char *dev_dir;       /* as seen by this process */
	const char *socket_dir;    /* the kubelet's device-plugins directory */
	const char *resource_name; /* ascend.com/npu */
	bool resource_name_given;  /* node: only its socket, not every one of the plugin's */
	const char *dcmi_lib;      /* --dcmi-lib, or NULL to search like the plugin */
	const char *soc_version;   /* versions: what the model was compiled for, or NULL */
	const char *toolkit_path;  /* versions: CANN's directory, or NULL for the usual places */
	long timeout_ms;           /* for the plugin's socket and kubectl; 0: each one's default */
	/* explain */
	const char *pod_file, *nodes_file, *pods_file;
	const char *namespace;
	const char *kubectl; /* the program to run ("kubectl") */
	/* explain, for ResourceClaims: `kubectl get -o json` files of all
	 * claims, the DeviceClasses, the ResourceSlices, the DeviceTaintRules */
	const char *claims_file, *classes_file, *slices_file, *rules_file;
	const char *claim;  /* explain claim NAME: the claim, else NULL for a pod */
	const char *driver; /* the DRA driver's name (npu.ascend.com) */
	const char *state_dir; /* node, release: the plugin's --state-dir */
	/* pods */
	const char *pod_resources_socket; /* the kubelet's pod resources API */
};
