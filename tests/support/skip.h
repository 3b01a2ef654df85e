/* SPDX-License-Identifier: Apache-2.0 */
/* A test that cannot run here says so with an exit code CTest reports as
 * skipped (77, its SKIP_RETURN_CODE), never as passed. Where CI=true, the
 * README's `make test` promises every test (it installs and builds what they
 * need first), so a skip there is a failure. */
#pragma once

#define TEST_SKIP_CODE 77

/* Prints "skip: <why>" (and, under CI=true, why that fails) to stderr and
 * returns the exit code: TEST_SKIP_CODE, or 1 under CI=true. */
int test_skip(const char *why);
