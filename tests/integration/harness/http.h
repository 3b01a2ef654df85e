/* SPDX-License-Identifier: Apache-2.0 */
/* A minimal HTTP/1.1 client for the plugin's metrics endpoint in tests:
 * one request per connection (Connection: close), read until the server
 * closes, every wait bounded by a deadline. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "harness.h"

struct http_response {
	int status;   /* 0 when no status line came */
	char *head;   /* status line and headers, malloc'd */
	char *body;   /* malloc'd, terminated */
	size_t body_len;
};

/* Sends raw (a whole request, or any bytes) to ip:port and reads the answer
 * until the server closes or timeout_ms passes. Returns 0 (the response may
 * be empty when the server closed without answering) or a negative errno. */
int http_raw(const char *ip, uint16_t port, const char *raw, size_t raw_len, int timeout_ms,
	     struct http_response *ret_response);

/* METHOD path HTTP/1.1 from 127.0.0.1; fails the test when no answer came. */
void http_call(uint16_t port, const char *method, const char *path, struct http_response *ret_response);

void http_response_clear(struct http_response *response);

/* The plugin's metrics port, from its "serving /metrics ... (port N)" line. */
uint16_t http_plugin_port(struct proc *plugin);

/* The value of the sample whose line starts with series ("name{labels}"),
 * or -1 when there is none (all values in these tests are >= 0). */
double http_metric(const char *text, const char *series);
