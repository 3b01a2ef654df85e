/* SPDX-License-Identifier: Apache-2.0 */
/* The YAML walk helpers (config/yaml_walk.c) on trees from yaml_tree_parse:
 * mappings and lists are bounded and checked for their type, null stands
 * for none, a key twice is refused with both lines, key paths are built and
 * clipped as messages show them, and every message has yaml_fail's
 * "line N: " form. The --config file's own messages are in test_config_file. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "config/yaml_tree.h"
#include "config/yaml_walk.h"

/* What a check said about the root of a one-document text. */
typedef int (*check_fn)(const struct yaml_walk *w, const struct ynode *root);

struct run {
	check_fn check;
	struct yaml_walk w;
};

static int on_document(void *ctx, const struct ynode *root, size_t line)
{
	(void)line;
	struct run *run = ctx;
	return run->check(&run->w, root);
}

/* Runs check on the root of text, with at most max_entries entries, and
 * expects it to return r with the message want (NULL: not looked at). */
static void walks(const char *text, size_t max_entries, check_fn check, int r, const char *want)
{
	static const struct yaml_tree_limits limits = { .max_depth = 8, .max_nodes = 100 };
	char why[256] = "";
	struct run run = { .check = check,
			   .w = { .why = why, .why_size = sizeof(why), .max_entries = max_entries } };
	assert_int_equal(yaml_tree_parse(text, strlen(text), &limits, on_document, &run, why, sizeof(why)), r);
	if (want)
		assert_string_equal(why, want);
}

static int check_map(const struct yaml_walk *w, const struct ynode *root)
{
	return yaml_want_map(w, root, "");
}

static int check_seq(const struct yaml_walk *w, const struct ynode *root)
{
	return yaml_want_seq(w, root, "items");
}

static int check_text(const struct yaml_walk *w, const struct ynode *root)
{
	return yaml_want_text(w, root, "name");
}

static bool last_bool;

static int check_bool(const struct yaml_walk *w, const struct ynode *root)
{
	last_bool = true;
	return yaml_get_bool(w, root, "flag", &last_bool);
}

/* Walks a mapping's pairs: "a" is taken, anything else is unknown. */
static int check_keys(const struct yaml_walk *w, const struct ynode *root)
{
	int r = yaml_want_map(w, root, "top");
	if (r < 0 || ynode_is_null(root))
		return r;
	ynode_for_each_pair(root, k, v) {
		if (strcmp(k->value, "a") != 0)
			return yaml_unknown_key(w, k, "top", "a");
		if (strcmp(v->value, "1") != 0)
			return yaml_walk_fail(w, v->line, -EINVAL, "top.a: '%s' is not 1", v->value);
	}
	return 0;
}

static void test_mappings(void **state)
{
	(void)state;
	walks("a: 1\nb: 2\n", 2, check_map, 0, NULL);
	walks("~\n", 2, check_map, 0, NULL);
	walks("a: 1\nb: 2\nc: 3\n", 2, check_map, -E2BIG, "line 1: the top level: more than 2 entries");
	walks("- 1\n", 2, check_map, -EINVAL, "line 1: the top level: must be a mapping, not a list");
	walks("a: 1\nb: 2\na: 3\n", 4, check_map, -EINVAL,
	      "line 3: a: the key appears twice (first on line 1)");
}

static void test_lists(void **state)
{
	(void)state;
	walks("- 1\n- 2\n", 2, check_seq, 0, NULL);
	walks("null\n", 2, check_seq, 0, NULL);
	walks("[1, 2, 3]\n", 2, check_seq, -E2BIG, "line 1: items: more than 2 entries");
	walks("a: 1\n", 2, check_seq, -EINVAL, "line 1: items: must be a list, not a mapping");
}

static void test_scalars(void **state)
{
	(void)state;
	walks("910\n", 2, check_text, 0, NULL);
	walks("\"\"\n", 2, check_text, 0, NULL);
	walks("~\n", 2, check_text, -EINVAL, "line 1: name: needs a value");
	walks("[a]\n", 2, check_text, -EINVAL, "line 1: name: must be a scalar, not a list");

	walks("no\n", 2, check_bool, 0, NULL);
	assert_false(last_bool);
	walks("On\n", 2, check_bool, 0, NULL);
	assert_true(last_bool);
	/* Null leaves the value as it was. */
	walks("~\n", 2, check_bool, 0, NULL);
	assert_true(last_bool);
	walks("\"true\"\n", 2, check_bool, -EINVAL, "line 1: flag: must be true or false");
}

static void test_keys_and_messages(void **state)
{
	(void)state;
	char why[256];
	walks("a: 1\n", 2, check_keys, 0, NULL);
	walks("a: 1\nzz: 2\n", 2, check_keys, -EINVAL, "line 2: top.zz: unknown key (top takes a)");
	walks("\na: 2\n", 2, check_keys, -EINVAL, "line 2: top.a: '2' is not 1");
	/* A message without a position, and a why of size 0. */
	assert_int_equal(yaml_fail(why, sizeof(why), 0, -ENOMEM, "out of %s", "memory"), -ENOMEM);
	assert_string_equal(why, "out of memory");
	assert_int_equal(yaml_fail(why, 0, 3, -EINVAL, "unseen"), -EINVAL);
	assert_string_equal(why, "out of memory");
}

static void test_paths(void **state)
{
	(void)state;
	char p[YAML_PATH_SIZE], q[YAML_PATH_SIZE];
	yaml_path_key(p, sizeof(p), "", "sharing");
	assert_string_equal(p, "sharing");
	yaml_path_key(q, sizeof(q), p, "timeSlicing");
	assert_string_equal(q, "sharing.timeSlicing");
	yaml_path_index(p, sizeof(p), "resources", 3);
	assert_string_equal(p, "resources[3]");
	/* A long key is clipped, and says so. */
	char key[YAML_CLIP + 10];
	memset(key, 'k', sizeof(key) - 1);
	key[sizeof(key) - 1] = '\0';
	yaml_path_key(p, sizeof(p), "flags", key);
	assert_int_equal(strlen(p), strlen("flags.") + YAML_CLIP + strlen("..."));
	assert_string_equal(p + strlen(p) - 4, "k...");
	/* A small buffer is cut, terminated. */
	char small[8];
	yaml_path_key(small, sizeof(small), "sharing", "timeSlicing");
	assert_string_equal(small, "sharing");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mappings),
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_scalars),
		cmocka_unit_test(test_keys_and_messages),
		cmocka_unit_test(test_paths),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
