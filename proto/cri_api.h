/* SPDX-License-Identifier: Apache-2.0 */
/* The CRI's names that are not messages: the full gRPC method paths of the
 * RuntimeService and ImageService of cri.proto (package runtime.v1), as
 * kubernetes/cri-api defines them. */
#pragma once

#define CRI_METHOD_VERSION "/runtime.v1.RuntimeService/Version"
#define CRI_METHOD_RUN_POD_SANDBOX "/runtime.v1.RuntimeService/RunPodSandbox"
#define CRI_METHOD_STOP_POD_SANDBOX "/runtime.v1.RuntimeService/StopPodSandbox"
#define CRI_METHOD_REMOVE_POD_SANDBOX "/runtime.v1.RuntimeService/RemovePodSandbox"
#define CRI_METHOD_CREATE_CONTAINER "/runtime.v1.RuntimeService/CreateContainer"
#define CRI_METHOD_START_CONTAINER "/runtime.v1.RuntimeService/StartContainer"
#define CRI_METHOD_STOP_CONTAINER "/runtime.v1.RuntimeService/StopContainer"
#define CRI_METHOD_REMOVE_CONTAINER "/runtime.v1.RuntimeService/RemoveContainer"
#define CRI_METHOD_CONTAINER_STATUS "/runtime.v1.RuntimeService/ContainerStatus"
#define CRI_METHOD_EXEC_SYNC "/runtime.v1.RuntimeService/ExecSync"
#define CRI_METHOD_IMAGE_STATUS "/runtime.v1.ImageService/ImageStatus"
