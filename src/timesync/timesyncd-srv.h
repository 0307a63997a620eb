/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* NTS-KE servers found through DNS SRV records (`_ntske._tcp.NAME`), for SRV pools: the
 * lookup goes through systemd-resolved's D-Bus API (ResolveRecord), and only an answer that
 * resolved marks DNSSEC-authenticated is used. Unsigned or unvalidated answers, resolved
 * absent, resolved with DNSSEC=no, a failed validation: one error with the reason and what to
 * configure, and no targets; there is no fallback to an unvalidated lookup or to the
 * addresses of NAME.
 *
 * Two layers: the pure one parses resource records in wire format (network input: every
 * length is checked) and orders the targets as RFC 2782 says, with an injectable random
 * source; the D-Bus one runs the asynchronous lookup on the caller's bus and event loop. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>
#include <systemd/sd-bus.h>

/* RFC 2782; the "_ntske._tcp" label pair is the one the NTS pool drafts use. */
#define SRV_NTSKE_PREFIX "_ntske._tcp."
#define DNS_TYPE_SRV 33         /* RFC 2782 */
#define DNS_CLASS_IN 1          /* RFC 1035 section 3.2.4 */
/* The reply flag checked, RESOLVED_FLAG_AUTHENTICATED, is in resolve-util.h. */

typedef struct SrvRecord {
        uint16_t priority;
        uint16_t weight;
        uint16_t port;
        uint32_t ttl;           /* seconds, from the record itself */
        char *target;           /* lower case, no trailing dot; "" for "." (no service) */
} SrvRecord;

typedef struct SrvAnswer {
        SrvRecord *records;
        size_t n_records;
        uint32_t ttl;           /* the smallest TTL of the records: when to look again */
} SrvAnswer;

void srv_answer_done(SrvAnswer *a);
/* A deep copy, for a caller that keeps an answer beyond the lookup's callback. */
int srv_answer_copy(const SrvAnswer *a, SrvAnswer *ret);

/* Parses one resource record in wire format as ResolveRecord returns it: owner name
 * (uncompressed), type, class, TTL, RDATA length, RDATA. -EBADMSG for anything malformed:
 * truncation, trailing bytes, compression pointers, a label or name too long, a target that
 * is not a valid host name; -EMEDIUMTYPE for a record that is not IN SRV. */
int srv_record_parse(const struct iovec *rr, SrvRecord *ret);
/* Appends a parsed record; the answer's TTL becomes the smallest one. */
int srv_answer_add(SrvAnswer *a, const struct iovec *rr);

/* A uniform random number in [0, n) (n >= 1). */
typedef uint32_t (*srv_random_t)(uint32_t n, void *userdata);
/* The default source: the kernel's CSPRNG, without modulo bias. */
uint32_t srv_random_uniform(uint32_t n, void *userdata);

/* Orders the records as RFC 2782 says (priority ascending; within one priority, weighted
 * random selection with zero weights first in line), then drops "." targets and later
 * duplicates of a target name (case-insensitive; the first port stays). -ENOENT if no target
 * is left: the name says it offers no service. */
int srv_answer_order(SrvAnswer *a, srv_random_t random, void *userdata);

/* Which records of an ordered answer the sources of an SRV pool use, one SrvPick per record in
 * the answer's order (docs/NTS.md, "SRV pools"). A working source is kept whatever the new draw
 * says, and only empty or failed places are filled: every new target is a key exchange, and
 * another chance for a bad one. */
typedef struct SrvPick {
        bool in_use;            /* a source of the pool has this target */
        bool failed;            /* ... and it failed lately, or the target did (passed over) */
        bool use;               /* set by srv_pick() */
} SrvPick;

/* Marks at most wanted records use, in this order of preference: those in use that did not
 * fail; those not in use that did not fail, in the answer's order; those in use that failed
 * (nothing better can take their place). Returns how many are marked. */
size_t srv_pick(SrvPick *picks, size_t n, size_t wanted);

/* Sorts the records by priority, target, port and weight: an order that does not depend on
 * the random draw, for comparing and showing answers. */
void srv_answer_sort(SrvAnswer *a);
/* Both hold the same records (priority, weight, port, target; not the TTL) in the same order:
 * for two answers sorted with srv_answer_sort(), the same set. */
bool srv_answer_same(const SrvAnswer *a, const SrvAnswer *b);
/* Writes the records into buf as "target:port (priority P, weight W), ...". Stops at a whole
 * record when the next would not fit, and then ends with "... and N more": never cut inside a
 * record. size must hold at least SRV_DESCRIBE_MIN bytes. */
#define SRV_DESCRIBE_MIN 40U
void srv_answer_describe(const SrvAnswer *a, char *buf, size_t size);

typedef struct SrvLookup SrvLookup;

/* Called once. On success error is 0, message NULL and answer ordered and non-empty; the
 * callee may keep nothing of it after returning. On failure answer is NULL, error one of
 *   -ENOTCONN   systemd-resolved is not on the bus (or there is no bus)
 *   -ENOKEY     the answer is not DNSSEC-authenticated (unsigned zone, or DNSSEC=no)
 *   -EBADMSG    DNSSEC validation failed, or the records are malformed
 *   -ENOENT     no SRV records, or only "." (no service)
 *   other       resolved's error as an errno (timeouts, network down, ...)
 * and message one sentence with the reason and what to configure, for the log. */
typedef void (*srv_handler_t)(SrvLookup *l, int error, const char *message, const SrvAnswer *answer,
                              void *userdata);

/* Looks up `_ntske._tcp.NAME` (NAME without the prefix; a trailing dot is allowed) on bus,
 * which must be attached to an event loop. The handler is not called if the lookup is freed
 * first; it may free the lookup. */
int srv_lookup_new(sd_bus *bus, const char *name, srv_random_t random, void *random_userdata,
                   srv_handler_t handler, void *userdata, SrvLookup **ret);
SrvLookup *srv_lookup_free(SrvLookup *l);
