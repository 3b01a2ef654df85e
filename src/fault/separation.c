/* SPDX-License-Identifier: Apache-2.0 */
/* The record of separated chips; see separation.h. */
#include "fault/separation.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "base/file.h"
#include "base/parse.h"
#include "base/strbuf.h"

/* Input quoted in a message is cut to this. */
#define CLIP 40

/* "line 3: code 'xyz' is not ...": what, the value quoted and cut, then is. */
static int line_fail(char *why, size_t why_size, size_t line, const char *what, const char *value, const char *is)
{
	return why_invalid(why, why_size, "line %zu: %s'%.*s' %s", line, what, CLIP, value, is);
}

/* The rule as the file spells it: fault_rule_name with dashes for spaces. */
static void rule_token(enum fault_rule rule, char *buf, size_t size)
{
	(void)str_copy(buf, size, fault_rule_name(rule));
	for (char *p = buf; *p; p++)
		if (*p == ' ')
			*p = '-';
}

static int rule_parse(const char *token, enum fault_rule *ret_rule)
{
	for (int r = FAULT_RULE_NONE; r <= FAULT_RULE_RELEASE_WINDOW; r++) {
		char name[64];
		rule_token((enum fault_rule)r, name, sizeof(name));
		if (strcmp(name, token) == 0) {
			*ret_rule = (enum fault_rule)r;
			return 0;
		}
	}
	return -EINVAL;
}

/* "2026-12-02T14:40:00Z", exactly that shape, a real date. */
static int time_parse(const char *s, int64_t *ret_s)
{
	struct tm tm = { 0 };
	const char *end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (!end || *end || strlen(s) != 20)
		return -EINVAL;
	time_t t = timegm(&tm);
	char back[32];
	fault_separation_time_format((int64_t)t, back, sizeof(back));
	if (strcmp(back, s) != 0) /* 2026-02-30 and such */
		return -EINVAL;
	*ret_s = (int64_t)t;
	return 0;
}

void fault_separation_time_format(int64_t since_s, char *buf, size_t size)
{
	time_t t = (time_t)since_s;
	struct tm tm;
	if (!gmtime_r(&t, &tm) || strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		(void)str_copy(buf, size, "?");
}

/* "npu-<phy>": the chip's device ID. */
static int chip_parse(const char *token, uint32_t *ret_phy)
{
	if (strncmp(token, "npu-", 4) != 0 || (token[4] == '0' && token[5] != '\0'))
		return -EINVAL;
	return parse_u32(token + 4, 10, 1u << 20, ret_phy);
}

/* One key=value of a record; unknown keys are skipped. *seen collects the
 * required keys found (1 level, 2 code, 4 rule, 8 since). */
static int record_key(struct fault_separation_record *rec, char *token, unsigned *seen, size_t line, char *why,
		      size_t why_size)
{
	char *eq = strchr(token, '=');
	if (!eq || eq == token)
		return line_fail(why, why_size, line, "", token, "is not key=value");
	*eq = '\0';
	const char *key = token, *value = eq + 1;
	enum fault_level level;
	if (strcmp(key, "level") == 0) {
		if (fault_level_parse(value, &level) < 0 || level != FAULT_LEVEL_MANUALLY_SEPARATE_NPU)
			return line_fail(why, why_size, line, "level ", value, "is not ManuallySeparateNPU");
		*seen |= 1;
	} else if (strcmp(key, "code") == 0) {
		if (strcmp(value, "none") == 0)
			rec->code = 0;
		else if (fault_code_parse(value, &rec->code) < 0)
			return line_fail(why, why_size, line, "code ", value, "is not a fault code (hex) or none");
		*seen |= 2;
	} else if (strcmp(key, "rule") == 0) {
		if (rule_parse(value, &rec->rule) < 0)
			return line_fail(why, why_size, line, "rule ", value, "is not a rule of the fault policy");
		*seen |= 4;
	} else if (strcmp(key, "since") == 0) {
		if (time_parse(value, &rec->since_s) < 0)
			return line_fail(why, why_size, line, "since ", value, "is not a UTC time such as 2026-12-02T14:40:00Z");
		*seen |= 8;
	} else if (strcmp(key, "pci") == 0) {
		struct pci_address a;
		if (pci_address_parse(value, &a) < 0 ||
		    pci_address_format(&a, rec->pci_address, sizeof(rec->pci_address)) < 0)
			return line_fail(why, why_size, line, "pci ", value, "is not a PCI address such as 0000:c1:00.0");
	}
	return 0;
}

static int parse_line(char *text, size_t line, struct fault_separations *set, char *why, size_t why_size)
{
	char *save = NULL;
	char *token = strtok_r(text, " \t", &save);
	if (!token || token[0] == '#')
		return 0;
	struct fault_separation_record rec;
	memset(&rec, 0, sizeof(rec)); /* padding too: records are compared whole */
	if (chip_parse(token, &rec.phy) < 0)
		return line_fail(why, why_size, line, "", token, "is not a chip (npu-<phy>)");
	unsigned seen = 0;
	int r;
	while ((token = strtok_r(NULL, " \t", &save)) != NULL)
		if ((r = record_key(&rec, token, &seen, line, why, why_size)) < 0)
			return r;
	if (seen != 15)
		return why_invalid(why, why_size, "line %zu: npu-%u lacks %s", line, rec.phy,
				   !(seen & 1) ? "level=" : !(seen & 2) ? "code=" : !(seen & 4) ? "rule=" : "since=");
	for (size_t i = 0; i < set->count; i++)
		if (set->records[i].phy == rec.phy ||
		    (rec.pci_address[0] && strcmp(set->records[i].pci_address, rec.pci_address) == 0))
			return why_invalid(why, why_size, "line %zu: npu-%u is listed twice", line, rec.phy);
	if (set->count == FAULT_SEPARATION_MAX)
		return why_invalid(why, why_size, "line %zu: more than %d chips", line, FAULT_SEPARATION_MAX);
	set->records[set->count++] = rec;
	return 0;
}

int fault_separations_parse(const char *text, size_t len, struct fault_separations *ret, char *why,
			    size_t why_size)
{
	if (len > FAULT_SEPARATION_FILE_MAX)
		return why_invalid(why, why_size, "larger than %d bytes", FAULT_SEPARATION_FILE_MAX);
	if (memchr(text, '\0', len))
		return why_invalid(why, why_size, "a NUL byte: not a text file");
	struct fault_separations *set = malloc(sizeof(*set));
	if (!set) {
		(void)str_copy(why, why_size, "out of memory");
		return -ENOMEM;
	}
	set->count = 0;
	int r = 0;
	size_t line = 0;
	for (size_t pos = 0; pos < len && r == 0;) {
		const char *start = text + pos;
		const char *nl = memchr(start, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - start) : len - pos;
		pos += n + 1;
		line++;
		char buf[FAULT_SEPARATION_LINE_MAX + 1];
		if (n > FAULT_SEPARATION_LINE_MAX) {
			r = why_invalid(why, why_size, "line %zu: longer than %d bytes", line, FAULT_SEPARATION_LINE_MAX);
			break;
		}
		memcpy(buf, start, n);
		buf[n] = '\0';
		if (n && buf[n - 1] == '\r')
			buf[n - 1] = '\0';
		r = parse_line(buf, line, set, why, why_size);
	}
	if (r == 0)
		memcpy(ret, set, sizeof(*set));
	free(set);
	return r;
}

int fault_separations_format(const struct fault_separations *set, char **ret_text, size_t *ret_len)
{
	static const char head[] = "# Chips the Ascend device plugin separated (fault level ManuallySeparateNPU).\n"
				   "# `ascend-doctor release npu-<phy>` releases one; see docs/ascend-doctor.md.\n";
	size_t size = sizeof(head) + set->count * 160;
	char *buf = malloc(size);
	if (!buf)
		return -ENOMEM;
	struct strbuf sb;
	strbuf_init(&sb, buf, size, NULL);
	int r = strbuf_printf(&sb, "%s", head);
	for (size_t i = 0; r == 0 && i < set->count; i++) {
		const struct fault_separation_record *rec = &set->records[i];
		char code[16], rule[64], since[32];
		if (rec->code)
			(void)str_printf(code, sizeof(code), "%08X", rec->code);
		else
			(void)str_copy(code, sizeof(code), "none");
		rule_token(rec->rule, rule, sizeof(rule));
		fault_separation_time_format(rec->since_s, since, sizeof(since));
		r = strbuf_printf(&sb, "npu-%u level=%s code=%s rule=%s since=%s%s%s\n", rec->phy,
				  fault_level_name(FAULT_LEVEL_MANUALLY_SEPARATE_NPU), code, rule, since,
				  rec->pci_address[0] ? " pci=" : "", rec->pci_address);
	}
	if (r < 0) { /* never: each line fits 160 bytes */
		free(buf);
		return -ENOBUFS;
	}
	*ret_text = buf;
	*ret_len = sb.len;
	return 0;
}

int fault_separations_path(const char *dir, char *buf, size_t size)
{
	return path_join(buf, size, dir, FAULT_SEPARATION_FILE);
}

int fault_separations_read(const char *path, struct fault_separations *ret, char *why, size_t why_size)
{
	char *text;
	size_t len;
	int r = file_read_bounded(path, FAULT_SEPARATION_FILE_MAX, &text, &len, why, why_size);
	if (r == -ENOENT) {
		ret->count = 0;
		return 0;
	}
	if (r < 0)
		return r;
	r = fault_separations_parse(text, len, ret, why, why_size);
	free(text);
	return r;
}

int fault_separations_write(const char *path, const struct fault_separations *set)
{
	char *text;
	size_t len;
	int r = fault_separations_format(set, &text, &len);
	if (r < 0)
		return r;
	r = file_write_atomic(path, text, len, 0644, FILE_WRITE_SYNC);
	free(text);
	return r;
}

int fault_separations_lock(const char *dir, bool wait, int *ret_fd)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r;
	do
		r = flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB));
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

int fault_separations_find(const struct fault_separations *set, uint32_t phy, const char *pci_address)
{
	bool has_pci = pci_address && pci_address[0];
	for (size_t i = 0; i < set->count; i++) {
		const struct fault_separation_record *rec = &set->records[i];
		if (has_pci && rec->pci_address[0] ? strcmp(rec->pci_address, pci_address) == 0 : rec->phy == phy)
			return (int)i;
	}
	return -1;
}

int fault_separations_find_phy(const struct fault_separations *set, uint32_t phy)
{
	for (size_t i = 0; i < set->count; i++)
		if (set->records[i].phy == phy)
			return (int)i;
	return -1;
}

int fault_separations_put(struct fault_separations *set, const struct fault_separation_record *record)
{
	int i = fault_separations_find(set, record->phy, record->pci_address);
	if (i < 0)
		i = fault_separations_find_phy(set, record->phy);
	if (i >= 0) {
		set->records[i] = *record;
		return 0;
	}
	if (set->count == FAULT_SEPARATION_MAX)
		return -E2BIG;
	set->records[set->count++] = *record;
	return 0;
}

void fault_separations_remove(struct fault_separations *set, size_t index)
{
	if (index >= set->count)
		return;
	memmove(&set->records[index], &set->records[index + 1], (set->count - index - 1) * sizeof(set->records[0]));
	set->count--;
}
