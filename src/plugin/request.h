/* SPDX-License-Identifier: Apache-2.0 */
/* What every DevicePlugin request handler does first: unpack the request
 * with protobuf-c, refusing bytes that protobuf-c would read as something
 * else than the kubelet meant, and word a refusal for the gRPC status. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <grpc/status.h>
#include <protobuf-c/protobuf-c.h>

/* Writes the message to details (always NUL-terminated, cut to fit) and
 * returns code, so that a refusal is one statement. */
grpc_status_code request_reject(char *details, size_t details_size, grpc_status_code code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Unpacks len bytes as a message of the descriptor's type. Returns
 * GRPC_STATUS_OK with *ret_message (free it with
 * protobuf_c_message_free_unpacked), or INVALID_ARGUMENT with "malformed
 * <Type>..." in details when the bytes do not decode, or when they are not
 * the canonical encoding of what they decode to (a string holding a NUL
 * byte, for one). */
grpc_status_code request_unpack(const ProtobufCMessageDescriptor *descriptor, const uint8_t *data, size_t len,
				ProtobufCMessage **ret_message, char *details, size_t details_size);
