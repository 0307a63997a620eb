/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The sources in use, one or several (docs/ARCHITECTURE.md, "Several sources"): which of
 * them count, what each last said, and what their agreement lets the clock do. The policy
 * (timesyncd-policy) owns the set and its sources, the manager the clock; a SourceSet keeps per
 * source the candidate for the selection
 * (the last sample that was not a spike, corrected for our own steps, its error bound grown
 * with its age and with our own slews), decides which sources count, runs ntp_select(), applies
 * the rule for a bootstrap from several sources, and says in words what came out. It does no
 * I/O, does not log and reads no clock: the caller passes the times. The sources are the
 * caller's (a pointer it gives, never dereferenced here), so that one configured entry may
 * bring several (a pool) without this module knowing.
 *
 * Which sources count: every source in use, whatever it does now. Agreement needs more than
 * half of the sources in use (and at least NTSMinAgreeingSources=), never only of those that
 * answered lately, so that losing packets never gives the remaining sources more say: an
 * attacker on the path who drops the honest servers' replies stops synchronization and cannot
 * hand the clock to the one server left. Each source is
 *   PENDING    from its start (and after a clock jump voided every sample) until its first
 *              answer or failure;
 *   ANSWERING  with a current candidate (younger than its age limit: two poll intervals and
 *              some);
 *   FAILING    after a failure (no reply, key exchange failed), until it answers again; it keeps
 *              being polled by its own backoff.
 * A source that stops answering keeps its last candidate, its interval grown with its age
 * (RFC 5905 section 10) and with our slews since: it still takes part in the intersection, so
 * an honest server that went silent still tells a liar from the truth, and still bounds where
 * the clock may go. It no longer counts towards the quorum that lets the clock move: the clock
 * follows only when a majority of the sources in use agree with current candidates, and then
 * only to a point that every agreeing interval, stale ones included, contains. A candidate is
 * dropped only when its grown root distance exceeds RootDistanceMaxSec=. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntp-packet.h"
#include "time-util.h"
#include "timesyncd-nts-client.h"
#include "timesyncd-select.h"
#include "timesyncd-source-identity.h"

/* Our own precision for the dispersion (RFC 5905 section 7.3): about a microsecond, what reading
 * CLOCK_REALTIME and the kernel's receive time stamp are good for. */
#define SOURCE_SET_LOCAL_PRECISION (-20)

typedef enum SourceSetStanding {
        SOURCE_SET_PENDING,
        SOURCE_SET_ANSWERING,
        SOURCE_SET_FAILING,
        _SOURCE_SET_STANDING_MAX,
} SourceSetStanding;

/* What the selection needs of one sample. */
typedef struct SourceSetSample {
        NTPHeader header;               /* root delay, root dispersion, precision, leap */
        NTPSample ntp;                  /* offset and delay */
        usec_t boottime;                /* CLOCK_BOOTTIME at t1: the sample's age is measured from it */
        usec_t max_age;                 /* after this long without a newer one it no longer counts */
        bool spike;                     /* the source's filter says so: not a candidate */
        bool delayed;                   /* its delay is not trusted (held back on the way, or too
                                         * long): never a candidate */
        NTSClientBootstrap bootstrap;   /* the keys it was verified with came from a bootstrap */
} SourceSetSample;

typedef struct SourceSetEntry {
        void *source;                   /* the caller's */
        char *ke_host;                  /* key-exchange host name, lower case: the bootstrap needs
                                         * two different ones */
        SourceSetStanding standing;
        bool vacant;                    /* a key-exchange pool's slot that has no member yet: no
                                         * server, so it does not count as in use */
        void *replaces;                 /* a spare on probation for this silent source: not in the
                                         * selection, not counted; NULL for the others */
        unsigned silent;                /* failures since its last answer */
        usec_t answered;                /* CLOCK_BOOTTIME of its last answer (its request's);
                                         * 0: none since it was added */
        bool delayed;                   /* its last sample's delay was not trusted */
        bool has_candidate;
        SourceSetSample candidate;
        int64_t slewed_at;              /* SourceSet.slewed_nsec when it was taken */
        bool steered;                   /* the clock followed the set since this candidate came */
        bool current;                   /* of the last selection: answering, candidate young enough */
        NTPSelectVerdict verdict;       /* of the last selection */
        int64_t root_distance_nsec;     /* of the last selection: grown, widened */
        /* One server, one vote (source_set_identify()): a source that is the same server as
         * one listed before it is a duplicate, neither a candidate nor counted. */
        SourceIdentity identity;
        const void *duplicate_of;       /* that source; NULL: none */
        SourceSameness duplicate_why;
        /* A source listed before it that names the same NTP address without being the same
         * server (source_identity_conflict()): a claim, reported, never merged. Both keep
         * their votes. NULL: none. */
        const void *conflict_with;
} SourceSetEntry;

typedef struct SourceSet {
        SourceSetEntry entries[NTP_SELECT_MAX];
        size_t n_entries;
        int64_t slewed_nsec;            /* the sum of |offset| handed to the kernel PLL so far */
        size_t selected;                /* by the last selection, SIZE_MAX: none */
        size_t preferred;               /* the one selected last, kept while good enough */
} SourceSet;

/* What the caller knows that the selection needs. */
typedef struct SourceSetPolicy {
        unsigned min_agreeing;          /* NTSMinAgreeingSources=; 0: a majority of those counted */
        int64_t root_distance_max_nsec; /* RootDistanceMaxSec= */
        usec_t now_boottime;
        int64_t now_realtime_nsec;      /* our clock: for the backward bootstrap's floor */
        int64_t backward_floor_nsec;    /* a backward bootstrap never sets the clock before this
                                         * (this program's build time: true time is later) */
        /* A set of one (one server at a time): a forward bootstrap needs no second key-exchange
         * name, the clock's floor was the evidence before its keys were taken, and a backward
         * one never comes (nts_bootstrap_decide()). */
        bool one_server;
} SourceSetPolicy;

typedef struct SourceSetDecision {
        NTPSelectResult select;         /* over the entries, in their order; offset_nsec and
                                         * selected from the current candidates only */
        size_t n_in_use;                /* what the majority is of: the sources in use (not
                                         * vacant, not on probation, not duplicates) */
        size_t n_pending;
        size_t n_failing;
        size_t n_current_agree;         /* truechimers whose candidate is current */
        size_t n_before_slew;           /* current truechimers measured before the clock was
                                         * slewed by more than their root distance: not counted
                                         * in n_current_agree */
        /* AGREED, but fewer than select.n_needed of the truechimers answer now: the rest of the
         * agreement is stale candidates. The clock is left alone. */
        bool held;
        /* The clock may follow select.offset_nsec now: AGREED, enough current truechimers, the
         * selected source's candidate has not steered yet, and a bootstrap (a truechimer with
         * bootstrap keys) is allowed. */
        bool steer;
        /* A spare on probation whose current candidate contains the intersection of an agreement
         * reached without it: it may take the place of the source it replaces. NULL: none. */
        void *qualified;
        bool bootstrap;                 /* the truechimers include bootstrap keys */
        NTSClientBootstrap bootstrap_direction;
        const char *bootstrap_refusal;  /* why such a step is not allowed: static text, or NULL */
} SourceSetDecision;

void source_set_done(SourceSet *set);

/* Adds a source (PENDING). -E2BIG when the set is full, -ENOMEM. ke_host may be NULL (plain). */
int source_set_add(SourceSet *set, void *source, const char *ke_host);
void source_set_remove(SourceSet *set, void *source);
/* The entry of source, NULL if it has none. */
SourceSetEntry *source_set_find(SourceSet *set, const void *source);

/* What the caller learned of which server source is (its NTP address, its key-exchange
 * server and certificate key): marks again which sources are duplicates of one listed before
 * them (entry order), and which name the NTP address of one listed before them without being
 * its server (conflict_with). Returns true when either changed. */
bool source_set_identify(SourceSet *set, const void *source, const SourceIdentity *id);

/* Every source that answers starts over (PENDING, no candidate): after the clock jumped by
 * someone else's hand. A failing one stays failing. */
void source_set_restart(SourceSet *set);
/* A sample of source: it answers; the sample is its candidate unless it is a spike. */
void source_set_sample(SourceSet *set, const void *source, const SourceSetSample *sample);
/* Adds spare on probation for silent, a source of the set: it is polled and judged, but takes
 * no part in the selection and does not count, until a decision names it qualified (its
 * current candidate agrees with what a majority reached without it); then the caller swaps
 * them with source_set_promote(). -E2BIG, -ENOMEM as source_set_add(). */
int source_set_add_spare(SourceSet *set, void *spare, const char *ke_host, void *silent);
/* The spare takes the place of the source it replaces, which leaves the set. */
void source_set_promote(SourceSet *set, void *spare);
/* The spare on probation for source, NULL when there is none. */
void *source_set_spare_for(const SourceSet *set, const void *source);

/* A slot of a key-exchange pool that has no member yet is vacant: it is not a server, and does
 * not count as in use until its key exchange named one (or it answers). */
void source_set_vacant(SourceSet *set, const void *source, bool vacant);
/* source failed: its candidate stays (stale, growing with its age), it counts as in use. */
void source_set_failed(SourceSet *set, const void *source);
/* Our own step of the clock by offset_nsec: every candidate's offset is corrected by it. */
void source_set_stepped(SourceSet *set, int64_t offset_nsec);
/* Our own slew through the kernel PLL by offset_nsec: how much of it the kernel applies by
 * when is not known, so every older candidate's interval is widened by it. */
void source_set_slewed(SourceSet *set, int64_t offset_nsec);
/* The clock followed the decision: no stored candidate steers again, and none counts as a
 * bootstrap any more. */
void source_set_steered(SourceSet *set);

/* Judges the sources now: verdicts (in the entries), the selected one, whether the clock may
 * follow. Returns 0, or a negative errno from ntp_select(). */
int source_set_select(SourceSet *set, const SourceSetPolicy *policy, SourceSetDecision *ret);

/* One sentence (no final period) for STATUS=, NTSStatus and the log: what the sources say
 * together, e.g. "3 of 4 NTS sources agree, 1 falseticker" (of the sources in use), "2 NTS
 * sources disagree by 3600 s; clock left alone" (those with a candidate) or "Only 1 of 4 NTS
 * sources answer and agree, 3 needed (3 do not answer); clock left alone". */
void source_set_describe(const SourceSet *set, const SourceSetDecision *d, char *buf, size_t size);
/* Whether the decision leaves the clock alone because the sources disagree or too few agree or
 * answer (not merely because they have not all answered yet, or none answers). */
bool source_set_disagree(const SourceSetDecision *d);

const char *source_set_standing_to_string(SourceSetStanding s);
/* "selected", "truechimer", "falseticker", "undecided", "unusable" (no candidate, or only a
 * stale one) or "duplicate" (the same server as one listed before it). */
const char *source_set_verdict_string(const SourceSet *set, size_t i);
