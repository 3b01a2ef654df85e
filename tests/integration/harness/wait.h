/* SPDX-License-Identifier: Apache-2.0 */
/* The deadline for every wait on an event in the tests, shared by the
 * integration harness and the unit tests that wait on another thread.
 * Generous: sanitizer builds on a loaded 2-core machine are slow, and a
 * deadline only bounds a test that is failing anyway. */
#pragma once

#define WAIT_MS 10000
