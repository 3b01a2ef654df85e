/* SPDX-License-Identifier: Apache-2.0 */
/* What an API server whose DRA feature gates are off keeps of a
 * ResourceSlice: it drops each gate's fields when it stores a slice (on
 * create and on update of a slice that did not use them yet:
 * dropDisabledFields in Kubernetes' pkg/registry/resource/resourceslice/
 * strategy.go). For the tests of the publisher's probe, of what the slices
 * leave out (kube/slices.h) and of a fake API server playing an old one. */
#pragma once

#include <json-c/json.h>

/* Removes from the ResourceSlice object slice, in place, the fields of
 * each KUBE_LACKS_* bit of drops: device taints; sharedCounters and
 * consumesCounters; allowMultipleAllocations and every capacity's
 * requestPolicy. Anything not a slice is left as it is. */
void gated_fields_drop(json_object *slice, unsigned drops);
