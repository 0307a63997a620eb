/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* When a client may talk to an NTS-KE server again, chosen so that a fleet that failed together
 * (a pool outage, a power cut, a data centre rebooting) does not come back together:
 *  - the retry ladder after failed key exchanges: "equal jitter" over a range that grows with
 *    the time spent failing, between a floor and a cap;
 *  - the time to renew keys before their age limit, spread over a window before it;
 *  - a cap on key exchanges per pool name per hour (a sliding window);
 *  - what Error records of a key exchange and RATE kiss codes of NTP do to both.
 * docs/POOLS.md explains the choices and shows the simulation (test/simulation/sim-pool.c)
 * that measures them against the deterministic schedule.
 *
 * Pure: no I/O, no logging, no globals. Times are usec_t on the caller's clock (a monotonic one,
 * CLOCK_BOOTTIME, for retries and the cap; CLOCK_REALTIME for the age of keys), and randomness
 * comes from the caller, so tests and the simulation are deterministic. */

#include <stdbool.h>
#include <stdint.h>

#include "nts.h"
#include "time-util.h"

/* 64 uniformly random bits. */
typedef uint64_t (*backoff_random_t)(void *userdata);
/* The daemon's source of them: the kernel's CSPRNG (random_bytes_pooled()); tests and the
 * simulation pass their own. */
uint64_t backoff_random(void *userdata);

/* Top of the retry ladder: no wait between two key exchanges with one server is longer. */
#define BACKOFF_KE_MAX_USEC (1 * USEC_PER_HOUR)
/* Keys are renewed at a random time within this window before their age limit. */
#define BACKOFF_RENEW_WINDOW_USEC (1 * USEC_PER_DAY)
/* At most this many key exchanges (started, whatever their outcome) with one pool name per
 * BACKOFF_LIMIT_PERIOD_USEC: four for each of four sources from one pool. The ladder of one
 * source stays below it (at most 13 attempts in its first hour of failures). */
#define BACKOFF_LIMIT_DEFAULT 16U
#define BACKOFF_LIMIT_MAX 16U
#define BACKOFF_LIMIT_PERIOD_USEC (1 * USEC_PER_HOUR)

/* The top T of the range a retry waits in, after `failures` (>= 1) failures in a row over
 * `elapsed` since the first of them: the elapsed time, but at least twice floor (> 0), at most
 * floor doubled once per failure, and at most cap. A floor above cap counts as cap. */
usec_t backoff_ke_delay_max(unsigned failures, usec_t elapsed, usec_t floor, usec_t cap);
/* The wait before the next retry: uniform in [T/2, T) ("equal jitter"), never below floor. */
usec_t backoff_ke_delay(unsigned failures, usec_t elapsed, usec_t floor, usec_t cap,
                        backoff_random_t random, void *userdata);

/* How a failed key exchange, or the first use of its cookies, ended. */
typedef enum BackoffOutcome {
        BACKOFF_KE_FAILED,              /* no usable answer (DNS, connect, TLS, timeout, a malformed
                                         * response, NTSN for cookies it had just issued), or an
                                         * Error record 2 (internal server error), an unknown error
                                         * code or Warning: a server in trouble, which may recover
                                         * soon; the next rung of the ladder */
        BACKOFF_KE_REFUSED,             /* Error records 0 and 1 (unrecognized critical record, bad
                                         * request), or a server without any of our AEADs or
                                         * without NTPv4: it gives the same answer until someone
                                         * reconfigures it; the top of the ladder */
        _BACKOFF_OUTCOME_MAX,
} BackoffOutcome;

/* The outcome a key exchange that failed with this NTS error stands for (NTS_OK included:
 * the failure was not the protocol's). */
BackoffOutcome backoff_outcome_from_nts_error(NTS_Error e);

/* Failures in a row of one source's key exchanges. Zero-initialized: no failure. */
typedef struct BackoffLadder {
        unsigned failures;
        usec_t first_failure;           /* monotonic clock */
        bool refused;                   /* a refusal was among them */
} BackoffLadder;

/* A key exchange failed at now: counts it and returns the wait before the next one. A refusal
 * puts the ladder at its top at once, until a key exchange succeeds. */
usec_t backoff_ke_failed(BackoffLadder *l, BackoffOutcome outcome, usec_t now, usec_t floor, usec_t cap,
                         backoff_random_t random, void *userdata);
/* A key exchange succeeded, or its cookies were accepted: the ladder starts again. */
void backoff_ke_done(BackoffLadder *l);

/* When to renew the keys of a key exchange at ke_time that may be used until ke_time + max_age:
 * uniform in the last `window` before that limit, never before now and never after the limit;
 * now if the limit has passed. Drawn again after a restart (the time is not stored), it is
 * uniform over what is left of the window, so a fleet restarting together stays spread. */
usec_t backoff_renewal_time(usec_t ke_time, usec_t now, usec_t max_age, usec_t window,
                            backoff_random_t random, void *userdata);

/* A sliding window over the starts of key exchanges with one pool name. */
typedef struct BackoffLimit {
        usec_t starts[BACKOFF_LIMIT_MAX];       /* a ring of the last `max` starts */
        unsigned max;
        unsigned n;                             /* starts in the ring, at most max */
        unsigned next;                          /* where the next start goes */
        usec_t period;
        bool refusing;                          /* refused since the last start */
} BackoffLimit;

/* max in [1, BACKOFF_LIMIT_MAX]. */
void backoff_limit_init(BackoffLimit *l, unsigned max, usec_t period);
/* True: a key exchange may start at now, and is counted. False: *ret_until is when one may;
 * *ret_first is true for the first refusal after a start, so that the caller logs once. */
bool backoff_limit_take(BackoffLimit *l, usec_t now, usec_t *ret_until, bool *ret_first);

/* An authenticated RATE kiss code (RFC 5905 section 7.4: reduce the rate, and again with each
 * further RATE) from a source polled at poll level `level`: returns the source's new lowest
 * poll level, one above the level it polls at (the interval doubles), at most max_level. The
 * caller keeps it for the source's life and passes it as the minimum to the poll adaptation,
 * so later samples cannot undo it. */
unsigned backoff_rate_kiss(unsigned level, unsigned min_level, unsigned max_level);
