/* SPDX-License-Identifier: Apache-2.0 */
/* Kubernetes resource quantities as the API server writes them
 * (k8s.io/apimachinery resource.Quantity: a signed decimal number with an
 * optional binary suffix Ki..Ei, decimal suffix n, u, m, k, M, G, T, P, E, or
 * exponent e<N>), read for an extended resource such as ascend.com/npu,
 * which must be a whole number: "2" and 2 are 2, "1k" is 1000, "2000m" is
 * refused although it equals 2, as the API server refuses it there. */
#pragma once

#include <stdint.h>

/* The largest count accepted: far above any node's NPUs, and small enough
 * that sums over thousands of pods cannot overflow. */
#define QUANTITY_MAX 1000000000LL

/* Parses s as a whole, non-negative quantity up to QUANTITY_MAX. Returns 0,
 * -EINVAL when s is no quantity, or a fractional one (a fraction, a negative
 * exponent, m, u or n), -ERANGE when negative or above QUANTITY_MAX. */
int quantity_parse_count(const char *s, int64_t *ret_value);

/* Amounts of a device's capacity or counters, such as HBM bytes ("64Gi"):
 * far above any device's, and small enough that sums over every
 * allocation of a pool cannot overflow. */
#define QUANTITY_AMOUNT_MAX 1000000000000000LL

/* quantity_parse_count up to QUANTITY_AMOUNT_MAX. */
int quantity_parse_amount(const char *s, int64_t *ret_value);
