/* SPDX-License-Identifier: Apache-2.0 */
#include "grpc/wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/byte_buffer_reader.h>
#include <grpc/slice.h>

grpc_byte_buffer *wire_buffer_from(const uint8_t *body, size_t len)
{
	grpc_slice slice = len ? grpc_slice_from_copied_buffer((const char *)body, len) : grpc_empty_slice();
	grpc_byte_buffer *buffer = grpc_raw_byte_buffer_create(&slice, 1);
	grpc_slice_unref(slice);
	return buffer;
}

int wire_buffer_read(grpc_byte_buffer *buffer, uint8_t **ret_body, size_t *ret_len)
{
	grpc_byte_buffer_reader reader;
	if (!grpc_byte_buffer_reader_init(&reader, buffer))
		return -EINVAL;
	grpc_slice all = grpc_byte_buffer_reader_readall(&reader);
	grpc_byte_buffer_reader_destroy(&reader);

	size_t len = GRPC_SLICE_LENGTH(all);
	uint8_t *body = NULL;
	if (len > 0) {
		body = malloc(len);
		if (!body) {
			grpc_slice_unref(all);
			return -ENOMEM;
		}
		memcpy(body, GRPC_SLICE_START_PTR(all), len);
	}
	grpc_slice_unref(all);
	*ret_body = body;
	*ret_len = len;
	return 0;
}
