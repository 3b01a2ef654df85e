/* SPDX-License-Identifier: Apache-2.0 */
/* The device plugin API's names that are not messages: the full gRPC method
 * paths of the Registration and DevicePlugin services of deviceplugin.proto
 * (package v1beta1), and the string constants of the API. One definition
 * for the plugin, kubelet-sim, the tests and the benchmark. */
#pragma once

#define DP_API_VERSION "v1beta1"
#define DP_HEALTHY "Healthy"
#define DP_UNHEALTHY "Unhealthy"

#define DP_METHOD_REGISTER "/v1beta1.Registration/Register"
#define DP_METHOD_GET_OPTIONS "/v1beta1.DevicePlugin/GetDevicePluginOptions"
#define DP_METHOD_LIST_AND_WATCH "/v1beta1.DevicePlugin/ListAndWatch"
#define DP_METHOD_GET_PREFERRED "/v1beta1.DevicePlugin/GetPreferredAllocation"
#define DP_METHOD_ALLOCATE "/v1beta1.DevicePlugin/Allocate"
#define DP_METHOD_PRE_START "/v1beta1.DevicePlugin/PreStartContainer"
