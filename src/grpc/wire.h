/* SPDX-License-Identifier: Apache-2.0 */
/* Conversions between gRPC byte buffers and flat byte arrays, and the unix
 * socket path limit, shared by the server and the client. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <grpc/byte_buffer.h>

/* A new byte buffer holding a copy of body[len] (len may be 0). */
grpc_byte_buffer *wire_buffer_from(const uint8_t *body, size_t len);

/* Copies the buffer into a malloc'd array (NULL for an empty message). */
int wire_buffer_read(grpc_byte_buffer *buffer, uint8_t **ret_body, size_t *ret_len);
