/* SPDX-License-Identifier: Apache-2.0 */
/* Quantity parsing; see quantity.h. */
#include "quantity.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

/* Multiplies *v by base^exp, false beyond max. */
static bool scale(int64_t *v, int64_t base, int exp, int64_t max)
{
	for (int i = 0; i < exp; i++) {
		if (*v > max / base)
			return *v == 0;
		*v *= base;
	}
	return *v <= max;
}

/* A whole, non-negative quantity up to max (at most QUANTITY_AMOUNT_MAX). */
static int parse_whole(const char *s, int64_t max, int64_t *ret_value)
{
	const char *p = s;
	bool negative = false;
	if (*p == '+' || *p == '-')
		negative = *p++ == '-';
	/* Digits, an optional point and digits: the mantissa, kept as an
	 * integer and a count of fraction digits. */
	int64_t mantissa = 0;
	int fraction_digits = 0, digits = 0;
	bool big = false, point = false;
	for (;; p++) {
		if (*p == '.' && !point) {
			point = true;
			continue;
		}
		if (!isdigit((unsigned char)*p))
			break;
		digits++;
		if (point)
			fraction_digits++;
		if (mantissa > max * 10)
			big = true;
		else
			mantissa = mantissa * 10 + (*p - '0');
	}
	if (digits == 0)
		return -EINVAL;

	/* The suffix: power of 2 or of 10. */
	int64_t base = 10;
	int exp = 0;
	static const struct {
		const char *suffix;
		int64_t base;
		int exp;
	} suffixes[] = {
		{ "Ki", 2, 10 }, { "Mi", 2, 20 }, { "Gi", 2, 30 }, { "Ti", 2, 40 }, { "Pi", 2, 50 }, { "Ei", 2, 60 },
		{ "n", 10, -9 }, { "u", 10, -6 }, { "m", 10, -3 }, { "k", 10, 3 },  { "M", 10, 6 },  { "G", 10, 9 },
		{ "T", 10, 12 }, { "P", 10, 15 }, { "E", 10, 18 },
	};
	bool matched = *p == '\0';
	for (size_t i = 0; !matched && i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		if (strcmp(p, suffixes[i].suffix) == 0) {
			/* Milli, micro and nano units are fractions by nature. */
			if (suffixes[i].exp < 0)
				return -EINVAL;
			base = suffixes[i].base;
			exp = suffixes[i].exp;
			matched = true;
		}
	}
	if (!matched && (*p == 'e' || *p == 'E')) {
		const char *q = p + 1;
		bool neg_exp = false;
		if (*q == '+' || *q == '-')
			neg_exp = *q++ == '-';
		if (!isdigit((unsigned char)*q))
			return -EINVAL;
		int e = 0;
		for (; isdigit((unsigned char)*q); q++)
			if (e < 1000)
				e = e * 10 + (*q - '0');
		if (*q != '\0')
			return -EINVAL;
		exp = neg_exp ? -e : e;
		matched = true;
	}
	if (!matched)
		return -EINVAL;

	/* value = mantissa * 10^-fraction_digits * base^exp, whole or refused. */
	if (big)
		return mantissa == 0 ? -EINVAL : -ERANGE;
	if (base == 2) {
		if (!scale(&mantissa, 2, exp, max))
			return -ERANGE;
		exp = 0;
	}
	int decimal = (base == 10 ? exp : 0) - fraction_digits;
	if (decimal < 0) {
		for (int i = 0; i < -decimal; i++) {
			if (mantissa % 10 != 0)
				return -EINVAL;
			mantissa /= 10;
		}
	} else if (!scale(&mantissa, 10, decimal, max)) {
		return -ERANGE;
	}
	if (negative && mantissa != 0)
		return -ERANGE;
	if (mantissa > max)
		return -ERANGE;
	*ret_value = mantissa;
	return 0;
}

int quantity_parse_count(const char *s, int64_t *ret_value)
{
	return parse_whole(s, QUANTITY_MAX, ret_value);
}

int quantity_parse_amount(const char *s, int64_t *ret_value)
{
	return parse_whole(s, QUANTITY_AMOUNT_MAX, ret_value);
}
