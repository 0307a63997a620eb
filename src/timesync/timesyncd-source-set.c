/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

#include "macro.h"
#include "string-util.h"
#include "timesyncd-source-set.h"

static const char *const standing_table[_SOURCE_SET_STANDING_MAX] = {
        [SOURCE_SET_PENDING] = "pending",
        [SOURCE_SET_ANSWERING] = "answering",
        [SOURCE_SET_FAILING] = "failing",
};

const char *source_set_standing_to_string(SourceSetStanding s) {
        return s >= 0 && s < _SOURCE_SET_STANDING_MAX ? standing_table[s] : NULL;
}

void source_set_done(SourceSet *set) {
        if (!set)
                return;
        for (size_t i = 0; i < set->n_entries; i++)
                free(set->entries[i].ke_host);
        *set = (SourceSet) { .selected = SIZE_MAX, .preferred = SIZE_MAX };
}

SourceSetEntry *source_set_find(SourceSet *set, const void *source) {
        for (size_t i = 0; i < set->n_entries; i++)
                if (set->entries[i].source == source)
                        return &set->entries[i];
        return NULL;
}

int source_set_add(SourceSet *set, void *source, const char *ke_host) {
        SourceSetEntry *e;
        char *host = NULL;

        assert(set);
        assert(source);
        assert(!source_set_find(set, source));

        if (set->n_entries >= NTP_SELECT_MAX)
                return -E2BIG;
        if (ke_host) {
                host = strdup(ke_host);
                if (!host)
                        return -ENOMEM;
                /* Host names compare without case; address literals have none. */
                for (char *p = host; *p; p++)
                        *p = (char) tolower((unsigned char) *p);
        }

        e = &set->entries[set->n_entries++];
        *e = (SourceSetEntry) {
                .source = source,
                .ke_host = host,
                .standing = SOURCE_SET_PENDING,
                .verdict = NTP_SELECT_NOT_CANDIDATE,
        };
        return 0;
}

static bool mark_duplicates(SourceSet *set);

/* An index into the entries after entry i went. */
static void index_removed(size_t *k, size_t i) {
        if (*k == i)
                *k = SIZE_MAX;
        else if (*k != SIZE_MAX && *k > i)
                (*k)--;
}

void source_set_remove(SourceSet *set, void *source) {
        SourceSetEntry *e = source_set_find(set, source);
        size_t i;

        if (!e)
                return;
        i = (size_t) (e - set->entries);
        for (size_t k = 0; k < set->n_entries; k++)
                if (set->entries[k].replaces == source)
                        set->entries[k].replaces = NULL;
        free(e->ke_host);
        memmove(e, e + 1, (set->n_entries - i - 1) * sizeof *e);
        set->n_entries--;

        index_removed(&set->selected, i);
        index_removed(&set->preferred, i);
        /* What it was the same server as may count now. */
        (void) mark_duplicates(set);
}

void source_set_restart(SourceSet *set) {
        for (size_t i = 0; i < set->n_entries; i++) {
                SourceSetEntry *e = &set->entries[i];

                /* A failing source stays failing: it may back off for an hour, and must not be
                 * waited for meanwhile. */
                if (e->standing == SOURCE_SET_ANSWERING)
                        e->standing = SOURCE_SET_PENDING;
                e->has_candidate = false;
                e->verdict = NTP_SELECT_NOT_CANDIDATE;
        }
        set->selected = set->preferred = SIZE_MAX;
}

void source_set_sample(SourceSet *set, const void *source, const SourceSetSample *sample) {
        SourceSetEntry *e = source_set_find(set, source);

        assert(sample);

        if (!e)
                return;
        e->standing = SOURCE_SET_ANSWERING;
        e->vacant = false;
        e->silent = 0;
        e->answered = sample->boottime;
        e->delayed = sample->delayed;
        /* A spike keeps the candidate before it (stock does not steer by one either); the first
         * samples after a start cannot be spikes (the filter needs three). A sample whose delay
         * is not trusted is never one: an honest interval widened by a delay agrees with a
         * liar's tight one anywhere inside it. The candidate before it stays, ageing: the
         * clock follows no one while it is stale, rather than the liar. */
        if (sample->delayed || (sample->spike && e->has_candidate))
                return;

        e->candidate = *sample;
        e->has_candidate = true;
        e->slewed_at = set->slewed_nsec;
        e->steered = false;
}

int source_set_add_spare(SourceSet *set, void *spare, const char *ke_host, void *silent) {
        int r;

        assert(source_set_find(set, silent));

        r = source_set_add(set, spare, ke_host);
        if (r < 0)
                return r;
        set->entries[set->n_entries - 1].replaces = silent;
        return 0;
}

void *source_set_spare_for(const SourceSet *set, const void *source) {
        for (size_t i = 0; i < set->n_entries; i++)
                if (set->entries[i].replaces == source)
                        return set->entries[i].source;
        return NULL;
}

void source_set_promote(SourceSet *set, void *spare) {
        SourceSetEntry *e = source_set_find(set, spare);
        void *silent;

        assert(e && e->replaces);
        silent = e->replaces;
        e->replaces = NULL;
        source_set_remove(set, silent);
}

void source_set_vacant(SourceSet *set, const void *source, bool vacant) {
        SourceSetEntry *e = source_set_find(set, source);

        if (e)
                e->vacant = vacant;
}

void source_set_failed(SourceSet *set, const void *source) {
        SourceSetEntry *e = source_set_find(set, source);

        if (!e)
                return;
        /* The candidate stays: a source whose replies are lost still says where the truth
         * was, and its interval grows with its age. */
        e->standing = SOURCE_SET_FAILING;
        e->silent++;
}

void source_set_stepped(SourceSet *set, int64_t offset_nsec) {
        for (size_t i = 0; i < set->n_entries; i++)
                set->entries[i].candidate.ntp.offset_nsec =
                        int64_sub_saturating(set->entries[i].candidate.ntp.offset_nsec, offset_nsec);
}

void source_set_slewed(SourceSet *set, int64_t offset_nsec) {
        set->slewed_nsec = int64_add_saturating(set->slewed_nsec,
                                                offset_nsec == INT64_MIN ? INT64_MAX : llabs(offset_nsec));
}

void source_set_steered(SourceSet *set) {
        /* The combined offset used every truechimer's candidate: none of them steers again. A
         * bootstrap is over once the clock followed: what the stored candidates say is now a
         * correction like any other (a new sample from keys that are still bootstrap keys
         * says so again). */
        for (size_t i = 0; i < set->n_entries; i++) {
                set->entries[i].steered = true;
                set->entries[i].candidate.bootstrap = NTS_CLIENT_BOOTSTRAP_NONE;
        }
}

/* The candidate's error bound now: its root distance with the dispersion grown by its age
 * (RFC 5905 section 10), widened by what we slewed since it was taken. */
static int64_t entry_root_distance(const SourceSet *set, const SourceSetEntry *e, usec_t now) {
        const SourceSetSample *c = &e->candidate;
        int64_t age = now > c->boottime ? (int64_t) MIN(now - c->boottime, (usec_t) INT64_MAX / 1000) * 1000 : 0;
        int64_t rd;

        rd = ntp_sample_root_distance_nsec(&c->ntp, &c->header,
                                           ntp_dispersion_nsec(c->header.precision, SOURCE_SET_LOCAL_PRECISION, age));
        return int64_add_saturating(rd, int64_sub_saturating(set->slewed_nsec, e->slewed_at));
}

static bool entry_usable(const SourceSetEntry *e, int64_t root_distance, const SourceSetPolicy *p) {
        return e->has_candidate && root_distance <= p->root_distance_max_nsec;
}

/* Answering now: a candidate that is not older than its source's age limit. */
static bool entry_current(const SourceSetEntry *e, const SourceSetPolicy *p) {
        return e->standing == SOURCE_SET_ANSWERING && e->has_candidate &&
               p->now_boottime - MIN(p->now_boottime, e->candidate.boottime) <= e->candidate.max_age;
}

static bool hosts_differ(const SourceSet *set, const NTPSelectResult *r) {
        const char *first = NULL;

        for (size_t i = 0; i < set->n_entries; i++) {
                const char *h = set->entries[i].ke_host;

                if (r->verdicts[i] != NTP_SELECT_TRUECHIMER || !h)
                        continue;
                if (!first)
                        first = h;
                else if (!streq(first, h))
                        return true;
        }
        return false;
}

/* With several sources, time from bootstrap keys (docs/NTS.md, "Bootstrap from several
 * sources") moves the clock only with more agreement than time from fully checked keys: two
 * different key-exchange names, no fully checked source against it, one direction, and
 * backward never before the floor (a majority of every source in use is what any time
 * needs). Returns NULL when allowed, else why not. */
static const char *bootstrap_refusal(const SourceSet *set, const SourceSetPolicy *p, SourceSetDecision *d) {
        const NTPSelectResult *r = &d->select;

        for (size_t i = 0; i < set->n_entries; i++) {
                const SourceSetEntry *e = &set->entries[i];

                if (r->verdicts[i] == NTP_SELECT_FALSETICKER && e->candidate.bootstrap == NTS_CLIENT_BOOTSTRAP_NONE)
                        return "a source with fully checked keys disagrees";
                if (r->verdicts[i] != NTP_SELECT_TRUECHIMER || e->candidate.bootstrap == NTS_CLIENT_BOOTSTRAP_NONE)
                        continue;
                if (d->bootstrap_direction == NTS_CLIENT_BOOTSTRAP_NONE)
                        d->bootstrap_direction = e->candidate.bootstrap;
                else if (d->bootstrap_direction != e->candidate.bootstrap)
                        return "bootstrap keys disagree on which way the clock is wrong";
        }

        if (!p->one_server && !hosts_differ(set, r))
                return "it needs the agreement of two sources with different key-exchange names";
        if (d->bootstrap_direction == NTS_CLIENT_BOOTSTRAP_FORWARD ? r->offset_nsec <= 0 : r->offset_nsec >= 0)
                return "the agreed time lies the other way";
        if (d->bootstrap_direction == NTS_CLIENT_BOOTSTRAP_BACKWARD &&
            int64_add_saturating(p->now_realtime_nsec, r->offset_nsec) < p->backward_floor_nsec)
                return "the agreed time lies before this program was built";
        return NULL;
}

/* A candidate measured before the clock was slewed by more than its own root distance (the
 * first rounds, while a large start is slewed out): its offset is stale by what was slewed
 * since, so it bounds the clock in the selection but is not combined into where the clock
 * goes. */
static bool entry_slewed_past(const SourceSet *set, const SourceSetEntry *e) {
        int64_t since = int64_sub_saturating(set->slewed_nsec, e->slewed_at);

        return since > int64_sub_saturating(e->root_distance_nsec, since);
}

/* The clock moves only with a majority of the sources in use that agree now: the selection
 * again over the current candidates alone, its offset kept inside the region that every
 * agreeing candidate keeps it in (stale ones bound where the clock may go, too; ntp_select():
 * the intersection, where a minority's tight intervals do not narrow it). Returns false when
 * the current candidates alone do not reach the quorum. */
static bool select_current(SourceSet *set, const NTPSelectCandidate *all, const SourceSetPolicy *p,
                           SourceSetDecision *d) {
        NTPSelectCandidate c[NTP_SELECT_MAX];
        NTPSelectResult now;
        size_t previous = set->preferred < set->n_entries && set->entries[set->preferred].current ?
                          set->preferred : SIZE_MAX;

        for (size_t i = 0; i < set->n_entries; i++) {
                bool agrees = all[i].usable && set->entries[i].current &&
                              d->select.verdicts[i] == NTP_SELECT_TRUECHIMER;

                c[i] = all[i];
                c[i].usable = agrees && !entry_slewed_past(set, &set->entries[i]);
                if (agrees && !c[i].usable)
                        d->n_before_slew++;
                if (c[i].usable)
                        d->n_current_agree++;
                if (c[i].usable && previous == SIZE_MAX)
                        previous = i;
        }
        if (d->n_current_agree < d->select.n_needed)
                return false;
        /* Every current truechimer contains [low, high] of the whole selection, so this agrees. */
        assert_se(ntp_select(c, set->n_entries, d->select.n_needed, previous, &now) >= 0);
        if (now.outcome != NTP_SELECT_AGREED)
                return false;
        d->select.offset_nsec = CLAMP(now.offset_nsec, d->select.keep_low_nsec, d->select.keep_high_nsec);
        d->select.selected = now.selected;
        return true;
}

/* A spare on probation qualifies when its current candidate contains the intersection that a
 * majority of the sources in use reached without it: it agrees with them, so that replacing
 * the silent source cannot give a liar a vote. A spare tighter than the truechimers counts as
 * wide as their median, as in the combination (ntp_select()): else a spare on a better path
 * than theirs could never take a place, however well it agrees. The first such spare. */
static void *spare_qualified(SourceSet *set, const SourceSetDecision *d) {
        for (size_t i = 0; i < set->n_entries; i++) {
                SourceSetEntry *e = &set->entries[i];
                NTPSelectCandidate c = {
                        .offset_nsec = e->candidate.ntp.offset_nsec,
                        .root_distance_nsec = MAX(e->root_distance_nsec, d->select.floor_nsec),
                };

                /* A duplicate (one server, one vote) never takes a place. */
                if (e->replaces && !e->duplicate_of && e->current && e->root_distance_nsec >= 0 &&
                    ntp_select_candidate_low(&c) <= d->select.low_nsec &&
                    ntp_select_candidate_high(&c) >= d->select.high_nsec)
                        return e->source;
        }
        return NULL;
}

int source_set_select(SourceSet *set, const SourceSetPolicy *p, SourceSetDecision *ret) {
        NTPSelectCandidate c[NTP_SELECT_MAX] = {};
        SourceSetDecision d = {};
        size_t needed;
        int r;

        assert(set);
        assert(p);
        assert(ret);

        for (size_t i = 0; i < set->n_entries; i++) {
                SourceSetEntry *e = &set->entries[i];

                e->root_distance_nsec = e->has_candidate ? entry_root_distance(set, e, p->now_boottime) : 0;
                e->current = entry_current(e, p);
                c[i] = (NTPSelectCandidate) {
                        .usable = !e->replaces && entry_usable(e, e->root_distance_nsec, p),
                        .offset_nsec = e->candidate.ntp.offset_nsec,
                        .root_distance_nsec = e->root_distance_nsec,
                };
                /* One server, one vote: a duplicate is no candidate and is not in use. */
                if (e->duplicate_of)
                        c[i].usable = false;
                if (e->vacant || e->replaces || e->duplicate_of)
                        continue;
                d.n_in_use++;
                d.n_pending += e->standing == SOURCE_SET_PENDING;
                d.n_failing += e->standing == SOURCE_SET_FAILING;
        }

        /* The majority is of every source in use, whatever it answered lately. */
        needed = MAX((size_t) p->min_agreeing, d.n_in_use / 2 + 1);
        r = ntp_select(c, set->n_entries, needed, SIZE_MAX, &d.select);
        if (r < 0)
                return r;

        for (size_t i = 0; i < set->n_entries; i++)
                set->entries[i].verdict = d.select.verdicts[i];

        if (d.select.outcome == NTP_SELECT_AGREED)
                d.qualified = spare_qualified(set, &d);
        if (d.select.outcome == NTP_SELECT_AGREED && !select_current(set, c, p, &d)) {
                d.held = true;
                d.select.selected = SIZE_MAX;
        }
        set->selected = d.select.selected;

        if (d.select.outcome == NTP_SELECT_AGREED && !d.held) {
                set->preferred = d.select.selected;
                for (size_t i = 0; i < set->n_entries; i++)
                        if (d.select.verdicts[i] == NTP_SELECT_TRUECHIMER &&
                            set->entries[i].candidate.bootstrap != NTS_CLIENT_BOOTSTRAP_NONE)
                                d.bootstrap = true;
                if (d.bootstrap)
                        d.bootstrap_refusal = bootstrap_refusal(set, p, &d);
                d.steer = !set->entries[d.select.selected].steered && !d.bootstrap_refusal;
        }

        *ret = d;
        return 0;
}

bool source_set_disagree(const SourceSetDecision *d) {
        switch (d->select.outcome) {
        case NTP_SELECT_NO_MAJORITY:
        case NTP_SELECT_AMBIGUOUS:
                return true;
        case NTP_SELECT_TOO_FEW:
                return d->n_pending == 0;
        case NTP_SELECT_AGREED:
                return d->held || d->bootstrap_refusal;
        default:
                return false;
        }
}

static const char *format_spread(int64_t nsec, char buf[static 32]) {
        if (nsec >= NTP_NSEC_PER_SEC)
                snprintf(buf, 32, "%.0f s", (double) nsec / NTP_NSEC_PER_SEC);
        else
                snprintf(buf, 32, "%.0f ms", (double) nsec / 1e6);
        return buf;
}

void source_set_describe(const SourceSet *set, const SourceSetDecision *d, char *buf, size_t size) {
        const NTPSelectResult *r = &d->select;
        size_t n_false = 0;
        char spread[32], waiting[64] = "", silent[64] = "", why[160];

        for (size_t i = 0; i < set->n_entries; i++)
                if (r->verdicts[i] == NTP_SELECT_FALSETICKER)
                        n_false++;
        if (d->n_pending > 0)
                snprintf(waiting, sizeof waiting, ", waiting for %zu more", d->n_pending);
        if (d->n_failing > 0)
                snprintf(silent, sizeof silent, " (%zu %s not answer)", d->n_failing, d->n_failing == 1 ? "does" : "do");
        (void) format_spread(r->spread_nsec, spread);
        /* Held by answers from before the last slew: they answered, and say so. */
        if (d->n_before_slew > 0)
                snprintf(why, sizeof why, "%s (%zu measured before the clock's last slew)", silent, d->n_before_slew);
        else
                snprintf(why, sizeof why, "%s", silent);

        switch (r->outcome) {
        case NTP_SELECT_AGREED:
                if (d->held)
                        snprintf(buf, size, "Only %zu of %zu NTS sources answer and agree, %zu needed%s; clock left alone",
                                 d->n_current_agree, d->n_in_use, r->n_needed, why);
                else if (d->bootstrap_refusal)
                        snprintf(buf, size, "%zu of %zu NTS sources agree, but not enough for a bootstrap (%s); "
                                 "clock left alone", r->n_agree, d->n_in_use, d->bootstrap_refusal);
                else if (n_false > 0)
                        snprintf(buf, size, "%zu of %zu NTS sources agree, %zu %s%s", d->n_current_agree,
                                 d->n_in_use, n_false, n_false == 1 ? "falseticker" : "falsetickers", silent);
                else
                        snprintf(buf, size, "%zu of %zu NTS sources agree%s", d->n_current_agree, d->n_in_use, silent);
                return;
        case NTP_SELECT_NO_CANDIDATES:
                snprintf(buf, size, d->n_pending > 0 ? "Waiting for NTS sources to answer" : "No NTS source answers");
                return;
        case NTP_SELECT_TOO_FEW:
                if (d->n_pending > 0)
                        snprintf(buf, size, "%zu of %zu NTS sources agree, %zu needed%s", r->n_agree,
                                 d->n_in_use, r->n_needed, waiting);
                else
                        snprintf(buf, size, "Only %zu of %zu NTS sources agree, %zu needed%s; clock left alone",
                                 r->n_agree, d->n_in_use, r->n_needed, silent);
                return;
        case NTP_SELECT_NO_MAJORITY:
                snprintf(buf, size, "%zu NTS sources disagree by %s%s; clock left alone", r->n_candidates, spread,
                         waiting);
                return;
        case NTP_SELECT_AMBIGUOUS:
                snprintf(buf, size, "%zu NTS sources disagree by %s (two groups agree in separate places)%s; "
                         "clock left alone", r->n_candidates, spread, waiting);
                return;
        }
        assert_not_reached();
}

const char *source_set_verdict_string(const SourceSet *set, size_t i) {
        assert(i < set->n_entries);

        if (set->entries[i].duplicate_of)
                return "duplicate";
        switch (set->entries[i].verdict) {
        case NTP_SELECT_TRUECHIMER:
                /* A silent source's stale candidate still bounds the others, but the source
                 * cannot be used now. */
                if (!set->entries[i].current)
                        return "unusable";
                return i == set->selected ? "selected" : "truechimer";
        case NTP_SELECT_FALSETICKER:
                return "falseticker";
        case NTP_SELECT_UNDECIDED:
                return "undecided";
        default:
                return "unusable";
        }
}

/* ---- one server, one vote ---- */

/* Each source is a duplicate of the first source before it that is the same server (the
 * configured order decides which one counts); a source that is no duplicate but names the NTP
 * address of one before it is in conflict with the first such. Returns true when anything
 * changed. */
static bool mark_duplicates(SourceSet *set) {
        bool changed = false;

        for (size_t i = 0; i < set->n_entries; i++) {
                SourceSetEntry *e = &set->entries[i];
                const void *of = NULL, *conflict = NULL;
                SourceSameness why = SOURCE_DISTINCT;

                for (size_t j = 0; j < i && !of; j++) {
                        why = source_identity_same(&set->entries[j].identity, &e->identity);
                        if (why != SOURCE_DISTINCT)
                                of = set->entries[j].source;
                }
                for (size_t j = 0; j < i && !of && !conflict; j++)
                        if (!set->entries[j].duplicate_of &&
                            source_identity_conflict(&set->entries[j].identity, &e->identity))
                                conflict = set->entries[j].source;
                if (e->duplicate_of != of || e->duplicate_why != why || e->conflict_with != conflict) {
                        e->duplicate_of = of;
                        e->duplicate_why = why;
                        e->conflict_with = conflict;
                        changed = true;
                }
        }
        return changed;
}

bool source_set_identify(SourceSet *set, const void *source, const SourceIdentity *id) {
        SourceSetEntry *e = source_set_find(set, source);

        assert(id);

        if (!e)
                return false;
        e->identity = *id;
        return mark_duplicates(set);
}
