/* SPDX-License-Identifier: Apache-2.0 */
#include "plugin/request.h"

#include <stdarg.h>
#include <stdio.h>

grpc_status_code request_reject(char *details, size_t details_size, grpc_status_code code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(details, details_size, fmt, ap);
	va_end(ap);
	return code;
}

grpc_status_code request_unpack(const ProtobufCMessageDescriptor *descriptor, const uint8_t *data, size_t len,
				ProtobufCMessage **ret_message, char *details, size_t details_size)
{
	ProtobufCMessage *message = protobuf_c_message_unpack(descriptor, NULL, len, data);
	if (!message)
		return request_reject(details, details_size, GRPC_STATUS_INVALID_ARGUMENT, "malformed %s",
				      descriptor->short_name);
	/* protobuf-c hands strings over NUL-terminated, so "npu-0\0x" would read
	 * as "npu-0". Such a string packs shorter than it arrived; the kubelet
	 * encodes canonically, so any difference means a request to refuse. */
	if (protobuf_c_message_get_packed_size(message) != len) {
		protobuf_c_message_free_unpacked(message, NULL);
		return request_reject(details, details_size, GRPC_STATUS_INVALID_ARGUMENT,
				      "malformed %s: a string holds a NUL byte or the encoding is not canonical",
				      descriptor->short_name);
	}
	*ret_message = message;
	return GRPC_STATUS_OK;
}
