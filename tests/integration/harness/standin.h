/* SPDX-License-Identifier: Apache-2.0 */
/* A stand-in API server for the integration tests that need one to
 * misbehave on demand, as the real kube-apiserver (harness/apiserver.h)
 * cannot be made to: HTTPS on a free port of 127.0.0.1 with the fixtures'
 * certificate (tests/fixtures/kube/), in the test's own process, serving
 * the ResourceClaims a test gives it. A claim can be held without an
 * answer (until standin_release, or until its client goes away, which is
 * counted), or refused with 429 and a Retry-After for its first reads.
 * Every other request (the ResourceSlice publisher's) is answered 403,
 * which the publisher backs off from, or held while standin_hold_all says.
 * What came is counted, so that tests wait on events, never on time; every
 * wait has a deadline. One connection per request (Connection: close).
 * Threads: an accept thread and one per connection. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Claims one stand-in serves; reads of one claim whose times are kept. */
#define STANDIN_MAX_CLAIMS 32
#define STANDIN_MAX_TIMES 8

enum standin_mode {
	STANDIN_ANSWER,   /* 200 with the claim */
	STANDIN_HOLD,     /* no answer until standin_release */
	STANDIN_THROTTLE, /* 429 with Retry-After for the first reads, then 200 */
};

enum standin_counter {
	STANDIN_CLAIM_GETS, /* claim GETs received */
	STANDIN_HELD,       /* requests held now */
	STANDIN_ABANDONED,  /* held requests whose client closed the connection */
};

struct standin;

/* Starts it; fails the test on error. */
struct standin *standin_start(void);

/* Releases what is held, closes every connection and frees it. Accepts NULL. */
void standin_stop(struct standin *s);

/* Writes a kubeconfig for it at path: the fixtures' CA, a token. */
void standin_kubeconfig(struct standin *s, const char *path);

/* Serves ResourceClaim name (any namespace) with uid, allocated device of
 * pool by driver npu.ascend.com. mode STANDIN_THROTTLE answers the first
 * throttles reads 429 with "Retry-After: retry_after_s". */
void standin_add_claim(struct standin *s, const char *name, const char *uid, const char *pool, const char *device,
		       enum standin_mode mode, unsigned throttles, unsigned retry_after_s);

/* Holds every request but the reads of the claims it serves (the
 * publisher's, a claim it does not have) from now on, or no longer. */
void standin_hold_all(struct standin *s, bool hold);

/* Answers every held request and every later one as if nothing was held:
 * the claims of mode STANDIN_HOLD become STANDIN_ANSWER, hold_all ends. */
void standin_release(struct standin *s);

/* A counter now, and a wait (up to timeout_ms) until it is at least
 * at_least: returns whether it got there. */
unsigned standin_count(struct standin *s, enum standin_counter counter);
bool standin_wait(struct standin *s, enum standin_counter counter, unsigned at_least, int timeout_ms);

/* now_ms() of the last held request abandoned by its client (0: none). */
int64_t standin_last_abandoned_ms(struct standin *s);

/* How many times claim name was read, and the now_ms() of the first
 * STANDIN_MAX_TIMES reads in times. */
unsigned standin_claim_reads(struct standin *s, const char *name, int64_t times[STANDIN_MAX_TIMES]);
