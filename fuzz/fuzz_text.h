/* SPDX-License-Identifier: Apache-2.0 */
/* The fuzzers' input as text: the parsers take C strings, libFuzzer gives
 * bytes. Header-only, as every fuzzer is one file. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A malloc'd copy of data[size] with a NUL after it (a NUL inside stays,
 * for the parser to refuse), or NULL when size is above max or memory is
 * short: an input the fuzzer skips. */
static inline char *fuzz_text(const uint8_t *data, size_t size, size_t max)
{
	if (size > max)
		return NULL;
	char *text = malloc(size + 1);
	if (!text)
		return NULL;
	memcpy(text, data, size);
	text[size] = '\0';
	return text;
}
