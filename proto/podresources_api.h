/* SPDX-License-Identifier: Apache-2.0 */
/* The pod resources API's names that are not messages: the socket the
 * kubelet serves it on and the full gRPC method paths of
 * podresources.proto (package v1). One definition for the plugin,
 * kubelet-sim and the tests. */
#pragma once

#define PODRES_DEFAULT_SOCKET "/var/lib/kubelet/pod-resources/kubelet.sock"
#define PODRES_METHOD_LIST "/v1.PodResourcesLister/List"
#define PODRES_METHOD_GET_ALLOCATABLE "/v1.PodResourcesLister/GetAllocatableResources"
#define PODRES_METHOD_GET "/v1.PodResourcesLister/Get"
