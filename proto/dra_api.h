/* SPDX-License-Identifier: Apache-2.0 */
/* The names of the kubelet's plugin registration and DRA APIs that are not
 * messages: the full gRPC method paths (the packages of pluginregistration.proto
 * and dra.proto), the plugin type and the service names a DRA plugin
 * advertises in PluginInfo.supported_versions, as the kubelet
 * (pkg/kubelet/cm/dra/plugin) matches them. One definition for the DRA
 * driver, kubelet-sim and the tests. */
#pragma once

#define PLUGINREG_METHOD_GET_INFO "/pluginregistration.Registration/GetInfo"
#define PLUGINREG_METHOD_NOTIFY "/pluginregistration.Registration/NotifyRegistrationStatus"
#define PLUGINREG_TYPE_DRA "DRAPlugin"

/* "<package>.<service>" as the kubelet knows them, most recent first. */
#define DRA_SERVICE_V1 "v1.DRAPlugin"
#define DRA_SERVICE_V1BETA1 "v1beta1.DRAPlugin"

/* The optional health service, served on the same socket. v1alpha1 is the
 * same service and messages in another package: the kubelets of 1.31 to 1.36
 * call only it, whatever the plugin advertises; from 1.37 the kubelet takes
 * the first of v1 and v1alpha1 the plugin advertises. */
#define DRA_SERVICE_HEALTH_V1 "v1.DRAResourceHealth"
#define DRA_SERVICE_HEALTH_V1ALPHA1 "v1alpha1.DRAResourceHealth"
#define DRA_METHOD_HEALTH_V1_WATCH "/v1.DRAResourceHealth/NodeWatchResources"
#define DRA_METHOD_HEALTH_V1ALPHA1_WATCH "/v1alpha1.DRAResourceHealth/NodeWatchResources"

#define DRA_METHOD_V1_PREPARE "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources"
#define DRA_METHOD_V1_UNPREPARE "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources"
#define DRA_METHOD_V1BETA1_PREPARE "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodePrepareResources"
#define DRA_METHOD_V1BETA1_UNPREPARE "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodeUnprepareResources"
