/* SPDX-License-Identifier: Apache-2.0 */
/* The version-file readers; see verfile.h. */
#include "npu/verfile.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

int verfile_get(const char *text, size_t len, const char *key, char *value, size_t size)
{
	if (memchr(text, '\0', len))
		return -EINVAL;
	size_t key_len = strlen(key);
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *line_end = nl ? nl : end;
		const char *next = nl ? nl + 1 : end;
		const char *eq = memchr(p, '=', (size_t)(line_end - p));
		if (!eq) {
			p = next;
			continue;
		}
		const char *k = p, *k_end = eq;
		while (k < k_end && is_blank(*k))
			k++;
		while (k_end > k && is_blank(k_end[-1]))
			k_end--;
		if ((size_t)(k_end - k) != key_len || strncasecmp(k, key, key_len) != 0) {
			p = next;
			continue;
		}
		const char *v = eq + 1, *v_end = line_end;
		while (v < v_end && is_blank(*v))
			v++;
		while (v_end > v && is_blank(v_end[-1]))
			v_end--;
		size_t n = (size_t)(v_end - v);
		for (size_t i = 0; i < n; i++)
			if (iscntrl((unsigned char)v[i]))
				return -EINVAL;
		if (n >= size)
			return -ENAMETOOLONG;
		memcpy(value, v, n);
		value[n] = '\0';
		return 0;
	}
	return -ENOENT;
}

/* One dotted component: its leading letters and the number after them. */
struct component {
	const char *word;
	size_t word_len;
	bool has_number;
	unsigned long long number;
	const char *rest; /* what follows, past the separator; NULL at the end */
};

static void next_component(const char *s, size_t len, struct component *c)
{
	size_t i = 0;
	*c = (struct component){ .word = s };
	while (i < len && s[i] != '.' && !isdigit((unsigned char)s[i]))
		i++;
	c->word_len = i;
	while (i < len && isdigit((unsigned char)s[i])) {
		c->has_number = true;
		/* Saturate: versions are compared, never computed with. */
		if (c->number < 100000000000000ULL)
			c->number = c->number * 10 + (unsigned)(s[i] - '0');
		i++;
	}
	/* Anything else up to the dot belongs to the word's tail: compared as text. */
	while (i < len && s[i] != '.')
		i++;
	c->rest = i < len ? s + i + 1 : NULL;
}

static int compare_n(const char *a, size_t a_len, const char *b, size_t b_len)
{
	while (a_len > 0 && b_len > 0) {
		struct component ca, cb;
		next_component(a, a_len, &ca);
		next_component(b, b_len, &cb);
		bool a_word = ca.word_len > 0, b_word = cb.word_len > 0;
		if (a_word != b_word)
			return a_word ? -1 : 1;
		if (a_word) {
			size_t n = ca.word_len < cb.word_len ? ca.word_len : cb.word_len;
			int r = strncasecmp(ca.word, cb.word, n);
			if (r != 0)
				return r;
			if (ca.word_len != cb.word_len)
				return ca.word_len < cb.word_len ? -1 : 1;
		}
		if (ca.has_number != cb.has_number)
			return ca.has_number ? 1 : -1;
		if (ca.number != cb.number)
			return ca.number < cb.number ? -1 : 1;
		a_len = ca.rest ? a_len - (size_t)(ca.rest - a) : 0;
		b_len = cb.rest ? b_len - (size_t)(cb.rest - b) : 0;
		a = ca.rest ? ca.rest : a + a_len;
		b = cb.rest ? cb.rest : b + b_len;
	}
	return (a_len > 0) - (b_len > 0);
}

int version_compare(const char *a, const char *b)
{
	return compare_n(a, strlen(a), b, strlen(b));
}

/* Calls fn for each bracketed item of list. -EINVAL when malformed. */
typedef bool (*item_fn)(const char *item, size_t len, const char *arg);

static int for_each_item(const char *list, item_fn fn, const char *arg, bool *ret_any)
{
	const char *p = list;
	size_t items = 0;
	bool any = false;
	while (*p == ' ')
		p++;
	if (*p == '\0')
		return -EINVAL;
	while (*p) {
		if (*p != '[')
			return -EINVAL;
		const char *close = strchr(p + 1, ']');
		if (!close || memchr(p + 1, '[', (size_t)(close - p - 1)))
			return -EINVAL;
		if (++items > VERLIST_MAX_ITEMS)
			return -EINVAL;
		if (fn(p + 1, (size_t)(close - p - 1), arg))
			any = true;
		p = close + 1;
		while (*p == ' ')
			p++;
		if (*p == ',') {
			p++;
			while (*p == ' ')
				p++;
			if (*p == '\0')
				return -EINVAL;
		} else if (*p != '\0') {
			return -EINVAL;
		}
	}
	*ret_any = any;
	return 0;
}

static bool range_has(const char *item, size_t len, const char *version)
{
	const char *comma = memchr(item, ',', len);
	if (!comma)
		return false;
	const char *low = item, *high = comma + 1;
	size_t low_len = (size_t)(comma - item), high_len = len - low_len - 1;
	while (low_len > 0 && *low == ' ')
		low++, low_len--;
	while (high_len > 0 && *high == ' ')
		high++, high_len--;
	while (high_len > 0 && high[high_len - 1] == ' ')
		high_len--;
	if (low_len == 0 || high_len == 0)
		return false;
	size_t v_len = strlen(version);
	if (compare_n(version, v_len, low, low_len) < 0)
		return false;
	if (high[high_len - 1] == '.') {
		/* A prefix bound: the version up to the bound's length, or the
		 * bound without its dot exactly. */
		if (v_len == high_len - 1 && strncasecmp(version, high, high_len - 1) == 0)
			return true;
		if (v_len >= high_len && strncasecmp(version, high, high_len) == 0)
			return true;
		return compare_n(version, v_len, high, high_len - 1) <= 0;
	}
	return compare_n(version, v_len, high, high_len) <= 0;
}

static bool range_item_valid(const char *item, size_t len, const char *unused)
{
	(void)unused;
	return memchr(item, ',', len) == NULL;
}

int verrange_contains(const char *list, const char *version, bool *ret_contains)
{
	bool bad, any;
	/* Every item must be a range. */
	int r = for_each_item(list, range_item_valid, NULL, &bad);
	if (r < 0)
		return r;
	if (bad)
		return -EINVAL;
	r = for_each_item(list, range_has, version, &any);
	if (r < 0)
		return r;
	*ret_contains = any;
	return 0;
}

static bool prefix_of(const char *item, size_t len, const char *value)
{
	while (len > 0 && *item == ' ')
		item++, len--;
	while (len > 0 && item[len - 1] == ' ')
		len--;
	return len > 0 && strlen(value) >= len && strncasecmp(value, item, len) == 0;
}

int verlist_has_prefix_of(const char *list, const char *value, bool *ret_contains)
{
	bool any;
	int r = for_each_item(list, prefix_of, value, &any);
	if (r < 0)
		return r;
	*ret_contains = any;
	return 0;
}

int innerversion_release(const char *innerversion, char *release, size_t size)
{
	const char *p = innerversion;
	static const char parts[] = "VRC";
	for (size_t i = 0; i < 3; i++) {
		if (toupper((unsigned char)*p) != parts[i] || !isdigit((unsigned char)p[1]))
			return -EINVAL;
		p++;
		while (isdigit((unsigned char)*p))
			p++;
	}
	size_t n = (size_t)(p - innerversion);
	if (n >= size)
		return -ENAMETOOLONG;
	memcpy(release, innerversion, n);
	release[n] = '\0';
	return 0;
}
