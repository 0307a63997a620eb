/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "string-util.h"
#include "timesyncd-messages.h"
#include "timesyncd-nts.h"
#include "timesyncd-several.h"
#include "timesyncd-several-vote.h"

/* A sample stops counting when it is this much older than twice its source's poll interval:
 * by then the source has either answered again or failed (a reply times out after 10 s per
 * address, a key exchange after KeyExchangeTimeoutSec=), so this only catches a source that
 * somehow did neither. */
#define SEVERAL_AGE_SLACK_USEC (2 * USEC_PER_MINUTE)

/* A verdict or a verdict of the whole set that keeps flipping (a liar at the edge of the honest
 * intervals) is logged at its level at most this often; the other changes at debug level. For
 * the set, the interval doubles while it keeps flipping, up to SEVERAL_LOG_INTERVAL_MAX_USEC. */
#define SEVERAL_LOG_INTERVAL_USEC (5 * USEC_PER_MINUTE)
#define SEVERAL_LOG_INTERVAL_MAX_USEC USEC_PER_HOUR

/* A failing source is silent, and a spare listed beyond NTSMaxSources= is tried on probation in
 * its place, once it failed this often since its last answer, or once this many of its poll
 * intervals passed since then, whichever comes first: its backoff stretches the time between
 * failures (a retry after ConnectionRetrySec=, key exchanges backing off), never the bound in
 * polls. */
#define SEVERAL_SILENT_FAILURES 3U
#define SEVERAL_SILENT_POLLS 3U

/* The NTS list in use: the runtime one while it names servers (runtime servers come first, as
 * in stock), else NTS=. */
static ServerName *several_list(const Several *sv) {
        return sv->ctx.servers[SERVER_NTS_RUNTIME] ?: sv->ctx.servers[SERVER_NTS];
}

/* A server that refused service (kiss code DENY or RSTR) is out for good; one that backs off
 * stays and tries again by itself. */
static bool several_name_usable(const ServerName *n) {
        return !n->source || source_state(n->source) != SOURCE_FAILED;
}

void several_init(Several *sv, const SeveralContext *ctx) {
        assert(sv);
        assert(ctx);

        *sv = (Several) {
                .ctx = *ctx,
                .set = { .selected = SIZE_MAX, .preferred = SIZE_MAX },
        };
}

bool several_wanted(const Several *sv, bool nts_usable) {
        bool pools = false;
        size_t n = 0;

        if (!nts_usable)
                return false;
        LIST_FOREACH(names, i, several_list(sv)) {
                n++;
                pools = pools || i->kind != SERVER_NAME_ONE;
        }
        /* A pool brings its sources here, also one alone with NTSMaxSources=1. */
        return pools || (n >= 2 && sv->ctx.config->nts_max_sources >= 2);
}

/* The first pool entry of the list in use whose lookup failed, as "ENTRY: REASON", for
 * NTSStatus and STATUS=; "" when there is none. */
static const char *several_pool_failure(const Several *sv, char *buf, size_t size) {
        buf[0] = '\0';
        LIST_FOREACH(names, n, several_list(sv))
                if (n->pool && !isempty(pool_last_error(n->pool))) {
                        snprintf(buf, size, "%s: %s", n->string, pool_last_error(n->pool));
                        break;
                }
        return buf;
}

const char *several_verdict(Several *sv, const Source *s) {
        SourceSetEntry *e = sv->running ? source_set_find(&sv->set, s) : NULL;

        return e ? source_set_verdict_string(&sv->set, (size_t) (e - sv->set.entries)) : NULL;
}

/* NTSStatus becomes text: compared with what the manager shows, or with what out says already.
 * Returns true when NTSStatus changes. */
static bool several_set_nts_status(Several *sv, const char *text, SeveralDecision *out) {
        if (streq(out->set_nts_status ? out->nts_status : sv->ctx.nts_status, text))
                return false;
        out->set_nts_status = true;
        snprintf(out->nts_status, sizeof out->nts_status, "%s", text);
        out->changed |= BUS_PROPERTY_NTS_STATUS;
        return true;
}

/* Appends "NAME (REASON)" of the failing source s to the list in buf (size bytes); a list too
 * long for buf ends in ", ..." instead of a name cut in half. */
static void several_failing_append(char *buf, size_t size, size_t *n, const Source *s) {
        static const char more[] = ", ...";
        size_t l = strlen(buf);
        int k;

        (*n)++;
        if (endswith(buf, more))
                return;
        k = snprintf(buf + l, size - l, "%s%s (%s)", l > 0 ? ", " : "", source_name(s), source_last_error(s));
        if (k < 0 || l + (size_t) k + strlen(more) >= size)
                (void) snprintf(buf + l, size - l, "%s", more);
}

/* The servers of the list in use that fail, in the order listed: the sources in use that fail
 * now (a pool's among them), and the servers that refuse service (out of the set for good, but
 * configured and not working). Writes "N of M NTS servers failing: NAME (REASON), ..." to buf,
 * "" when none fails; M counts the sources in use and those refusing servers. */
static const char *several_failing(Several *sv, const SourceSetDecision *d, char *buf, size_t size) {
        /* Room for the count before the list. */
        char list[sizeof sv->notified - 48] = "";
        size_t n = 0, n_refusing = 0;

        LIST_FOREACH(names, i, several_list(sv)) {
                if (i->kind == SERVER_NAME_ONE && i->source && source_state(i->source) == SOURCE_FAILED &&
                    !source_set_find(&sv->set, i->source)) {
                        several_failing_append(list, sizeof list, &n, i->source);
                        n_refusing++;
                        continue;
                }
                for (size_t k = 0; k < sv->set.n_entries; k++) {
                        const SourceSetEntry *e = &sv->set.entries[k];

                        if (e->vacant || e->replaces || e->duplicate_of || e->standing != SOURCE_SET_FAILING)
                                continue;
                        if (e->source == i->source || (i->pool && pool_has_source(i->pool, e->source)))
                                several_failing_append(list, sizeof list, &n, e->source);
                }
        }

        buf[0] = '\0';
        if (n > 0)
                (void) snprintf(buf, size, "%zu of %zu NTS servers failing: %s", n, d->n_in_use + n_refusing, list);
        return buf;
}

/* The falsetickers of the set, with their offsets: "Falseticker: NAME (+3600.000000 s)", or
 * "Falsetickers: ..." for several; "" when there is none. */
static const char *several_falsetickers(const Several *sv, char *buf, size_t size) {
        size_t n = 0, l;

        buf[0] = '\0';
        for (size_t i = 0; i < sv->set.n_entries; i++)
                n += sv->set.entries[i].verdict == NTP_SELECT_FALSETICKER;
        if (n == 0)
                return buf;
        l = (size_t) MAX(snprintf(buf, size, "%s: ", n == 1 ? "Falseticker" : "Falsetickers"), 0);
        for (size_t i = 0, k = 0; i < sv->set.n_entries && l < size; i++) {
                const SourceSetEntry *e = &sv->set.entries[i];

                if (e->verdict != NTP_SELECT_FALSETICKER)
                        continue;
                l += (size_t) MAX(snprintf(buf + l, size - l, "%s%s (%+.6f s)", k++ > 0 ? ", " : "",
                                           source_name(e->source),
                                           (double) e->candidate.ntp.offset_nsec / NTP_NSEC_PER_SEC), 0);
        }
        return buf;
}

/* The sources in use whose delay is not trusted, for NTSStatus: "delay jumped: NAME (was
 * 0.021 s), NAME (above 3 s)"; "" when none. Not the delay itself, which changes with every
 * reply: NTSStatus changes when a source's judgement does. */
static const char *several_delayed(Several *sv, char *buf, size_t size) {
        size_t l = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < sv->set.n_entries && l < size; i++) {
                const SourceSetEntry *e = &sv->set.entries[i];
                const SourceSample *p = source_sample(e->source);
                char why[48];
                int k;

                if (!e->delayed || e->replaces || e->duplicate_of || !p)
                        continue;
                if (p->delay == NTP_FILTER_DELAY_JUMPED)
                        (void) snprintf(why, sizeof why, "was %.3f s", (double) p->delay_min_nsec / NTP_NSEC_PER_SEC);
                else
                        (void) snprintf(why, sizeof why, "above %.0f s",
                                        (double) NTP_FILTER_DELAY_MAX_NSEC / NTP_NSEC_PER_SEC);
                k = snprintf(buf + l, size - l, "%s%s (%s)", l > 0 ? ", " : "delay jumped: ", source_name(e->source), why);
                if (k < 0)
                        break;
                l += (size_t) k;
        }
        return buf;
}

/* ---- which source is selected ---- */

/* The selected source changes: stock's ServerName, ServerAddress and NTPMessage describe it,
 * and so do the NTS properties. While nothing is selected the clock is not steered, and
 * NTPMessage describes no server (the manager clears it). */
static void several_select(Several *sv, Source *s, const SourceSetDecision *d, SeveralDecision *out) {
        if (sv->selected == s)
                return;

        sv->selected = s;
        out->select = true;
        out->changed |= BUS_PROPERTIES_SELECTED;
        /* A set of one selects its server from the start, before it answers: there is nothing
         * to choose between, and ServerName shows whom the daemon talks to (as stock). */
        if (sv->one) {
                if (s)
                        log_debug("Selected server %s.", source_name(s));
                return;
        }
        out->record = s && source_sample(s);
        /* The same source selected again after the set lost its agreement for a while (a liar
         * at the edge of the honest intervals) is no news: the set's own line says that it
         * agrees again. */
        if (out->record) {
                log_full(s == sv->selected_logged ? LOG_DEBUG : LOG_INFO, "Selected server %s (%zu of %zu NTS sources agree).",
                         source_name(s), d->n_current_agree, d->n_in_use);
                sv->selected_logged = s;
        }
}

/* ---- what the sources say together ---- */

static void several_log_falseticker(const SourceSetEntry *e, const SourceSetDecision *d, int level) {
        char offset[32];

        (void) snprintf(offset, sizeof offset, "%+.6f", (double) e->candidate.ntp.offset_nsec / NTP_NSEC_PER_SEC);
        log_struct(level, TIMESYNC_MESSAGE_NTS_FALSETICKER,
                   ((const char *const[]) { "NTS_SERVER", source_name(e->source), "OFFSET_SEC", offset, NULL }),
                   "NTS source %s is a falseticker: its offset %s s (+/- %.6f s) lies outside what %zu other "
                   "sources agree on (%+.6f s to %+.6f s); it is not used, and polled on.", source_name(e->source),
                   offset, (double) e->root_distance_nsec / NTP_NSEC_PER_SEC, d->select.n_agree,
                   (double) d->select.low_nsec / NTP_NSEC_PER_SEC, (double) d->select.high_nsec / NTP_NSEC_PER_SEC);
}

/* When a change of s's verdict was last logged above debug level (0: never). s is in the set,
 * which has at most NTP_SELECT_MAX sources: it has a slot, or one is free. */
static usec_t *several_verdict_logged(Several *sv, const Source *s) {
        size_t free_slot = SIZE_MAX;

        for (size_t i = 0; i < ELEMENTSOF(sv->verdict_logged); i++) {
                const Source *o = sv->verdict_logged[i].source;

                if (o == s)
                        return &sv->verdict_logged[i].usec;
                if (free_slot == SIZE_MAX && (!o || !source_set_find(&sv->set, o)))
                        free_slot = i;
        }
        assert(free_slot != SIZE_MAX);
        sv->verdict_logged[free_slot].source = s;
        sv->verdict_logged[free_slot].usec = 0;
        return &sv->verdict_logged[free_slot].usec;
}

/* A source joins the set: what was logged of it before does not count. */
static void several_verdict_logged_forget(Several *sv, const Source *s) {
        for (size_t i = 0; i < ELEMENTSOF(sv->verdict_logged); i++)
                if (sv->verdict_logged[i].source == s)
                        sv->verdict_logged[i].source = NULL;
}

/* Falsetickers are logged once per change, and so is their return; a source whose verdict
 * flips at the edge of an interval says so at most once per SEVERAL_LOG_INTERVAL_USEC (the
 * rest at debug level). */
static void several_log_verdicts(Several *sv, const NTPSelectVerdict *before, const SourceSetDecision *d) {
        usec_t t = now(CLOCK_BOOTTIME);

        for (size_t i = 0; i < sv->set.n_entries; i++) {
                SourceSetEntry *e = &sv->set.entries[i];
                usec_t *logged;
                bool loud;

                if (e->verdict == before[i] ||
                    (e->verdict != NTP_SELECT_FALSETICKER && before[i] != NTP_SELECT_FALSETICKER))
                        continue;
                logged = several_verdict_logged(sv, e->source);
                loud = *logged == 0 || t >= *logged + SEVERAL_LOG_INTERVAL_USEC;
                if (loud)
                        *logged = t;
                if (e->verdict == NTP_SELECT_FALSETICKER)
                        several_log_falseticker(e, d, loud ? LOG_WARNING : LOG_DEBUG);
                else if (e->verdict == NTP_SELECT_TRUECHIMER)
                        log_full(loud ? LOG_NOTICE : LOG_DEBUG, "NTS source %s agrees with the others again.",
                                 source_name(e->source));
        }
}

/* Whether the set was in the state key within SEVERAL_LOG_INTERVAL_MAX_USEC before t; marks it
 * as seen at t. */
static bool several_state_seen(Several *sv, const char *key, usec_t t) {
        size_t slot = 0;
        bool seen = false;

        for (size_t i = 0; i < ELEMENTSOF(sv->states_seen); i++) {
                if (streq(sv->states_seen[i].key, key)) {
                        seen = sv->states_seen[i].usec > 0 && t < sv->states_seen[i].usec + SEVERAL_LOG_INTERVAL_MAX_USEC;
                        slot = i;
                        break;
                }
                if (sv->states_seen[i].usec < sv->states_seen[slot].usec)
                        slot = i;
        }
        snprintf(sv->states_seen[slot].key, sizeof sv->states_seen[slot].key, "%s", key);
        sv->states_seen[slot].usec = t;
        return seen;
}

/* The log line of what the set says (text; key: its state), once per change of state:
 * disagreement at warning level, agreement at info. A set that flips between states it was in
 * lately (a liar at the edge of the honest intervals: "3 of 4 agree, 1 falseticker", "4 of 4
 * agree", "4 disagree") logs at debug level while the last line at its level is younger than
 * the quiet interval; after that the state it is in is logged once more, saying how many
 * changes were logged at debug level, also when it stopped flipping, and the quiet interval
 * doubles (from SEVERAL_LOG_INTERVAL_USEC up to SEVERAL_LOG_INTERVAL_MAX_USEC). A state not seen
 * within SEVERAL_LOG_INTERVAL_MAX_USEC is news, logged at once, and starts the quiet interval
 * over, as does a change after two quiet intervals without a line: one line per change of
 * state, fewer and fewer while it flips, and the last line at its level says where the set is
 * within an interval of its last change. */
static void several_log_status(Several *sv, const SourceSetDecision *d, const char *text, const char *key,
                               bool disagree) {
        usec_t t = now(CLOCK_BOOTTIME);
        int level = disagree ? LOG_WARNING :
                    d->select.outcome == NTP_SELECT_AGREED ? LOG_INFO :
                    d->n_pending > 0 ? LOG_DEBUG : LOG_NOTICE;
        bool changed = !streq(key, sv->status), seen, quiet;

        snprintf(sv->status, sizeof sv->status, "%s", key);
        seen = several_state_seen(sv, key, t);
        if (!changed && (sv->changes_unlogged == 0 || streq(key, sv->status_logged)))
                return;
        /* Back where the last line left it, with nothing logged in between: no news. */
        quiet = level == LOG_DEBUG || (seen && sv->logged_usec > 0 && t < sv->logged_usec + sv->quiet_usec) ||
                (streq(key, sv->status_logged) && sv->changes_unlogged == 0);
        if (quiet) {
                if (changed) {
                        sv->changes_unlogged += level != LOG_DEBUG;
                        log_debug("%s.", text);
                }
                return;
        }
        sv->quiet_usec = !seen || t >= sv->logged_usec + 2 * sv->quiet_usec ? SEVERAL_LOG_INTERVAL_USEC :
                         sv->changes_unlogged > 0 ? MIN(2 * sv->quiet_usec, SEVERAL_LOG_INTERVAL_MAX_USEC) :
                         sv->quiet_usec;
        sv->logged_usec = t;
        snprintf(sv->status_logged, sizeof sv->status_logged, "%s", key);
        if (sv->changes_unlogged > 0)
                log_full(level, "%s (after %u changes back and forth logged at debug level).", text,
                         sv->changes_unlogged);
        else
                log_full(level, "%s.", text);
        sv->changes_unlogged = 0;
}

/* What the set says when none answers and each source that fails got keys but never an NTP
 * reply: TCP to the key exchange goes through, UDP to NTP does not. */
#define SEVERAL_UDP_BLOCKED "No NTS source answers: key exchanges work, no NTP reply (outgoing UDP blocked?)"

/* Every source of the set that fails never heard from its NTP server after its key exchange
 * worked (source_silent()), and one does. */
static bool several_all_silent(const Several *sv) {
        bool any = false;

        for (size_t i = 0; i < sv->set.n_entries; i++) {
                const SourceSetEntry *e = &sv->set.entries[i];

                if (e->vacant || e->replaces || e->duplicate_of || e->standing != SOURCE_SET_FAILING)
                        continue;
                if (!source_silent(e->source))
                        return false;
                any = true;
        }
        return any;
}

/* STATUS=, NTSStatus and the log say what the sources say together, once per change. While the
 * clock is left alone they say since when. */
static void several_report(Several *sv, const SourceSetDecision *d, SeveralDecision *out) {
        char text[sizeof sv->status], status[sizeof sv->notified], pool[256], since[256],
             failing[sizeof sv->notified], nts[sizeof sv->notified], conflict[256], key[sizeof sv->status],
             delayed[256], both[sizeof sv->notified], falsetickers[256];
        SourceSetDecision key_decision;
        bool disagree = source_set_disagree(d), changed;
        bool none_answers = d->select.outcome == NTP_SELECT_NO_CANDIDATES && d->n_pending == 0;
        bool silent = several_all_silent(sv);
        const char *nts_status;
        SeveralStatusInput in;

        source_set_describe(&sv->set, d, text, sizeof text);
        out->nts_none = none_answers;
        /* None answers: what the administrator can do. Key exchanges that work with NTP that
         * does not is a firewall's doing, not the servers'. */
        if (none_answers && silent)
                (void) snprintf(text, sizeof text, "%s", SEVERAL_UDP_BLOCKED);
        else if (sv->fallback && none_answers)
                (void) snprintf(text, sizeof text, "%s", FALLBACK_NTS_UNREACHABLE);
        (void) several_pool_failure(sv, pool, sizeof pool);

        if (!disagree)
                sv->alone_since_usec = 0;
        else if (sv->alone_since_usec == 0)
                sv->alone_since_usec = now(CLOCK_REALTIME);
        if (disagree) {
                char ts[FORMAT_TIMESTAMP_MAX];

                (void) snprintf(since, sizeof since, "%s since %s", text,
                                format_timestamp(ts, sizeof ts, sv->alone_since_usec));
        } else
                (void) snprintf(since, sizeof since, "%s", text);

        in = (SeveralStatusInput) {
                .disagree = disagree,
                .outcome = d->select.outcome,
                .n_pending = d->n_pending,
                .fallback = sv->fallback,
                .since = since,
                .pool_failure = pool,
                .last_failure = sv->last_failure,
                .failing = several_failing(sv, d, failing, sizeof failing),
                .falsetickers = several_falsetickers(sv, falsetickers, sizeof falsetickers),
                .conflict = several_conflict(sv, conflict, sizeof conflict),
        };
        /* Delays held back say where to look when the clock is left alone. */
        if (!isempty(several_delayed(sv, delayed, sizeof delayed))) {
                (void) snprintf(both, sizeof both, "%s%s%s", failing, isempty(failing) ? "" : "; ", delayed);
                in.failing = both;
        }
        nts_status = several_nts_status(&in, nts, sizeof nts);
        changed = several_set_nts_status(sv, nts_status, out);

        /* While the clock is left alone or none answers, STATUS= begins with NTSStatus, which
         * names the failing servers after the set's sentence. */
        (void) snprintf(status, sizeof status, "%s%s%s%s%s.", disagree || none_answers ? nts_status : since,
                        sv->selected ? "; selected " : "", sv->selected ? source_name(sv->selected) : "",
                        isempty(pool) ? "" : "; ", pool);

        /* STATUS= carries NTSStatus where it does not say the same: the manager appends it. */
        if (changed || !streq(status, sv->notified)) {
                snprintf(sv->notified, sizeof sv->notified, "%s", status);
                out->notify = true;
                snprintf(out->status, sizeof out->status, "%s", status);
        }
        /* The selected source's changes have a line of their own. The state is the sentence
         * without the spread, which moves by a millisecond from one sample to the next. */
        key_decision = *d;
        key_decision.select.spread_nsec = 0;
        source_set_describe(&sv->set, &key_decision, key, sizeof key);
        several_log_status(sv, d, text, key, disagree);
}

/* NTSStatus says why NTS gives no time: the sources disagree, or too few agree or answer, or
 * none answers (then the last failure, as with one server); and why a pool gives nothing,
 * which only a change of configuration mends. While the others agree, it names the servers
 * that fail: the clock is steered, but by fewer than were configured; while the clock is left
 * alone, it names them after saying so. */
static const char *several_nts_status_without_conflict(const SeveralStatusInput *in, char *buf, size_t size) {
        bool none_answers = in->outcome == NTP_SELECT_NO_CANDIDATES && in->n_pending == 0;

        assert(in);
        assert(buf);

        /* The clock is left alone: why, and then who fails, as while they agree. */
        if (in->disagree && !isempty(in->failing)) {
                (void) snprintf(buf, size, "%s; %s", in->since, in->failing);
                return buf;
        }
        if (in->disagree)
                return in->since;
        if (!isempty(in->pool_failure))
                return in->pool_failure;
        /* None answers: every server that fails, not only the last one. */
        if (none_answers && !isempty(in->failing)) {
                (void) snprintf(buf, size, "%s; %s", in->since, in->failing);
                return buf;
        }
        if (none_answers && in->fallback)
                return in->since;
        if (none_answers && !isempty(in->last_failure))
                return in->last_failure;
        /* The others agree: who fails, and who is not believed. */
        if (in->outcome == NTP_SELECT_AGREED && !isempty(in->failing) && !isempty(in->falsetickers)) {
                (void) snprintf(buf, size, "%s; %s", in->failing, in->falsetickers);
                return buf;
        }
        if (in->outcome == NTP_SELECT_AGREED)
                return !isempty(in->failing) ? in->failing : strempty(in->falsetickers);
        return "";
}

/* A conflict of claims is said whatever else is: it lasts until one of the two key-exchange
 * servers names another address, and may be an attack. */
const char *several_nts_status(const SeveralStatusInput *in, char *buf, size_t size) {
        char rest[512];
        const char *r;

        assert(in);
        assert(buf);

        if (isempty(in->conflict))
                return several_nts_status_without_conflict(in, buf, size);
        r = several_nts_status_without_conflict(in, rest, sizeof rest);
        (void) snprintf(buf, size, "%s%s%s", r, isempty(r) ? "" : "; ", in->conflict);
        return buf;
}

const char *several_failure_reason(const char *error, const char *ke_error, bool ke_logged) {
        if (ke_logged && !isempty(error) && streq_ptr(error, ke_error))
                return "key exchange failed";
        return strempty(error);
}

ClockAdjustment several_adjustment(int64_t offset_nsec, int leap, int64_t max_error_nsec) {
        return (ClockAdjustment) {
                .offset_nsec = offset_nsec,
                .step = offset_nsec <= -NTP_STEP_THRESHOLD_NSEC || offset_nsec >= NTP_STEP_THRESHOLD_NSEC,
                .leap = leap,
                .max_error_nsec = max_error_nsec,
        };
}

int several_leap(const SourceSet *set, size_t n_current_agree) {
        unsigned votes[4] = {};

        for (size_t i = 0; i < set->n_entries; i++)
                if (set->entries[i].verdict == NTP_SELECT_TRUECHIMER && set->entries[i].current)
                        votes[set->entries[i].candidate.header.leap & 3]++;
        for (int l = NTP_LEAP_PLUSSEC; l <= NTP_LEAP_MINUSSEC; l++)
                if (2 * votes[l] > n_current_agree)
                        return l;
        return NTP_LEAP_NONE;
}

/* The clock is to follow the combined offset of the agreeing sources: the manager steers, and
 * several_steered() does the rest. */
static void several_steer(Several *sv, const SourceSetDecision *d, SeveralDecision *out) {
        const SourceSetEntry *sel = &sv->set.entries[d->select.selected];
        Source *s = sel->source;

        out->steer = true;
        out->adjustment = several_adjustment(d->select.offset_nsec, several_leap(&sv->set, d->n_current_agree),
                                             sel->root_distance_nsec);
        out->poll_interval_usec = source_poll_interval(s);
        snprintf(out->server, sizeof out->server, "%s", source_name(s));
        if (!sv->one)
                snprintf(out->agreement, sizeof out->agreement, ", %zu of %zu NTS sources agree", d->n_current_agree,
                         d->n_in_use);
        out->steer_authenticated = source_sample(s) && source_sample(s)->authenticated;
        out->steer_bootstrap = d->bootstrap;
        out->steer_agree = d->n_current_agree;
}

static void several_promote(Several *sv, Source *spare, SeveralDecision *out);

void several_steered(Several *sv, const SeveralDecision *d, int r, SeveralDecision *next) {
        assert(sv);
        assert(d);
        assert(next);

        if (r < 0)
                goto promote;

        /* Bootstrap keys are good for this one step: each source with such keys repeats its key
         * exchange with every check, against the corrected clock. */
        if (d->steer_bootstrap) {
                /* One server's client says so itself, as each source's does below. */
                if (!sv->one)
                        log_notice("Bootstrap: the clock took the time that %zu NTS sources agree on.",
                                   d->steer_agree);
                for (size_t i = 0; i < sv->set.n_entries; i++)
                        if (sv->set.entries[i].candidate.bootstrap != NTS_CLIENT_BOOTSTRAP_NONE)
                                (void) source_sample_used(sv->set.entries[i].source);
        }
        source_set_steered(&sv->set);

        /* Every stored offset was measured against the clock before the step. In observe mode
         * the clock did not move (r == 0): the stored offsets stay true, and correcting them
         * would judge later samples against a clock that was never stepped. */
        if (d->adjustment.step && r > 0) {
                source_set_stepped(&sv->set, d->adjustment.offset_nsec);
                for (size_t i = 0; i < sv->set.n_entries; i++) {
                        source_clock_stepped(sv->set.entries[i].source, /* poll_now= */ false);
                        source_sample_stepped(sv->set.entries[i].source, d->adjustment.offset_nsec);
                }
        } else if (clock_backend_type(sv->ctx.clock) == CLOCK_BACKEND_KERNEL)
                source_set_slewed(&sv->set, d->adjustment.offset_nsec);

promote:
        if (d->promote)
                several_promote(sv, d->promote, next);
        /* The verdicts of several changed with the step; one server's state did not. */
        next->sources_changed = !sv->one;
}

/* A spare on probation agrees with the others: it takes the place of the silent source, which
 * stops (its name is a spare itself now, and can come back the same way). */
static void several_promote(Several *sv, Source *spare, SeveralDecision *out) {
        Source *silent = source_set_find(&sv->set, spare)->replaces;

        if (source_set_find(&sv->set, silent)->standing != SOURCE_SET_FAILING)
                return;

        log_notice("NTS server %s takes the place of %s, which does not answer: it agrees with the others.",
                   source_name(spare), source_name(silent));
        if (sv->selected == silent)
                several_select(sv, NULL, NULL, out);
        source_set_promote(&sv->set, spare);
        source_stop(silent);
}

static void several_try_spare(Several *sv, Source *s);

static void several_judge(Several *sv, SeveralDecision *out) {
        NTPSelectVerdict before[NTP_SELECT_MAX];
        struct timespec ts = {};
        SourceSetDecision d;
        int r;

        /* A source may become silent between its own failures (several_silent()): each judgement
         * looks, so that the others' answers bound the wait, whatever its backoff. */
        for (size_t i = 0, n = sv->one ? 0 : sv->set.n_entries; i < n; i++)
                several_try_spare(sv, sv->set.entries[i].source);

        (void) clock_backend_now(sv->ctx.clock, &ts);
        SourceSetPolicy p = {
                /* NTSMinAgreeingSources= is about several servers: one alone is its majority. */
                .min_agreeing = sv->one ? 0 : sv->ctx.config->nts_min_agreeing,
                .root_distance_max_nsec = (int64_t) MIN(sv->ctx.config->root_distance_max_usec, (usec_t) INT64_MAX / 1000) * 1000,
                .now_boottime = now(CLOCK_BOOTTIME),
                .now_realtime_nsec = (int64_t) ts.tv_sec * NTP_NSEC_PER_SEC + ts.tv_nsec,
                .backward_floor_nsec = sv->backward_floor_nsec,
                .one_server = sv->one,
        };

        for (size_t i = 0; i < sv->set.n_entries; i++)
                before[i] = sv->set.entries[i].verdict;

        r = source_set_select(&sv->set, &p, &d);
        if (r < 0) {
                log_error_errno(r, "Failed to select among the NTS sources: %m");
                return;
        }

        several_log_verdicts(sv, before, &d);
        for (size_t i = 0; i < sv->set.n_entries; i++)
                source_set_unused(sv->set.entries[i].source, sv->set.entries[i].verdict == NTP_SELECT_FALSETICKER);
        /* A set of one keeps its server selected, and what it says is that server's own: STATUS=
         * and NTSStatus follow its events (several_on_event(), nts_source_event()). */
        if (!sv->one) {
                several_select(sv, d.select.selected < sv->set.n_entries ?
                               sv->set.entries[d.select.selected].source : NULL, &d, out);
                several_report(sv, &d, out);
                out->sources_changed = true;
        }
        if (d.steer) {
                /* The spare takes its place after the step, as the others' samples are. */
                several_steer(sv, &d, out);
                out->promote = d.qualified;
        } else if (d.qualified)
                several_promote(sv, d.qualified, out);
}

/* ---- the set's life cycle ---- */

static bool several_failed(Several *sv, Source *s, SeveralDecision *out);

/* Adds s (of n) to the set and starts it; one that cannot start now backs off by itself and
 * counts as failing. The key-exchange host is n's: a pool's members share its name, and count
 * as one name for the bootstrap. */
static int several_add_source(Several *sv, ServerName *n, Source *s) {
        int r;

        r = source_set_add(&sv->set, s, n->host);
        if (r < 0)
                return log_error_errno(r, "Failed to add a source of %s to the NTS sources: %m", n->string);
        several_verdict_logged_forget(sv, s);

        if (source_keep_trying(s) < 0) {
                snprintf(sv->last_failure, sizeof sv->last_failure, "%s: %s", source_name(s),
                         source_last_error(s));
                source_set_failed(&sv->set, s);
        }
        return 0;
}

static int several_add(Several *sv, ServerName *n) {
        int r;

        r = server_name_source(n, sv->ctx.source_settings, sv->ctx.source_handler, sv->ctx.userdata);
        if (r < 0)
                return r;
        return several_add_source(sv, n, n->source);
}

/* The set follows the sources of n's pool: those it retired leave, new ones join and start. */
static void several_follow_pool(Several *sv, ServerName *n, SeveralDecision *out) {
        for (size_t i = sv->set.n_entries; i-- > 0;) {
                Source *s = sv->set.entries[i].source;

                if (!pool_source_retired(n->pool, s))
                        continue;
                source_set_remove(&sv->set, s);
                if (sv->selected == s)
                        several_select(sv, NULL, NULL, out);
        }
        for (size_t i = 0; i < pool_n_sources(n->pool); i++) {
                Source *s = pool_source(n->pool, i);

                if (!source_set_find(&sv->set, s))
                        (void) several_add_source(sv, n, s);
        }
        out->sources_changed = true;
}

static int several_add_pool(Several *sv, ServerName *n, size_t quota, SeveralDecision *out) {
        int r;

        r = server_name_pool(n, sv->ctx.pool_settings, sv->ctx.source_handler, sv->ctx.pool_handler,
                             sv->ctx.userdata);
        if (r < 0)
                return r;
        pool_start(n->pool, quota);
        several_follow_pool(sv, n, out);
        return 0;
}

/* ---- a set of one: one server at a time ---- */

/* STATUS= says what format says. */
_printf_(2, 3) static void several_notify(SeveralDecision *out, const char *format, ...) {
        va_list ap;

        out->notify = true;
        va_start(ap, format);
        (void) vsnprintf(out->status, sizeof out->status, format, ap);
        va_end(ap);
}

/* The set's one server becomes n (NULL: none): the one before stops and leaves the set (its
 * source stays with its name, and so do its NTS keys). n's source exists. */
static void several_one_use(Several *sv, ServerName *n, SeveralDecision *out) {
        Source *old = sv->selected;

        if (old && (!n || old != n->source)) {
                source_stop(old);
                source_set_remove(&sv->set, old);
        }
        sv->one_name = n;
        several_select(sv, n ? n->source : NULL, NULL, out);
}

/* Makes n the set's one server and starts its source. Returns 0 when it runs, -EAGAIN when its
 * NTS client backs off (n is not usable now: try the next one), another negative errno when it
 * cannot start (out of memory or descriptors: wait and try again). */
static int several_one_try(Several *sv, ServerName *n, SeveralDecision *out) {
        int r;

        r = server_name_source(n, sv->ctx.source_settings, sv->ctx.source_handler, sv->ctx.userdata);
        if (r < 0)
                return r;
        several_one_use(sv, n, out);
        if (!source_set_find(&sv->set, n->source)) {
                r = source_set_add(&sv->set, n->source, n->host);
                if (r < 0)
                        return r;
                several_verdict_logged_forget(sv, n->source);
        }
        r = source_start(n->source);
        if (r < 0)
                return r;
        out->polling = true;
        return 0;
}

/* No server usable: every NTS server refuses service or backs off, or no plain one is. */
static void several_one_none(Several *sv, SeveralDecision *out) {
        several_one_use(sv, NULL, out);
        if (sv->nts && nts_all_refuse(sv->ctx.servers)) {
                out->refused = true;
                return;
        }
        if (sv->nts) {
                /* Every NTS server backs off after failed key exchanges: look again when the
                 * first may try again. */
                several_notify(out, "%s", sv->fallback ? FALLBACK_NTS_UNREACHABLE ". Retrying." :
                               "No NTS server usable, retrying.");
                out->nts_none = true;
                out->wait = true;
                out->wait_until = nts_earliest_retry(sv->ctx.servers);
                return;
        }
        log_debug("No usable server configured.");
        several_notify(out, "Idle.");
        out->idle = "no usable server configured";
}

/* Moves on to the next usable server after the one tried last, in stock's order (with NTS in
 * the NTS lists only). Every server tried once: a wait of ConnectionRetrySec= first. */
static void several_one_next(Several *sv, SeveralDecision *out) {
        bool wrapped;
        int r;

        for (;;) {
                ServerName *n = server_next(sv->ctx.servers, sv->one_name, sv->nts, &wrapped);

                if (!n) {
                        several_one_none(sv, out);
                        return;
                }
                if (wrapped && !sv->walked_round) {
                        sv->walked_round = true;
                        several_one_use(sv, NULL, out);
                        log_debug("Tried every server, waiting %s before trying again.",
                                  FORMAT_TIMESPAN(sv->ctx.config->connection_retry_usec, USEC_PER_SEC));
                        several_notify(out, "No server answered, retrying.");
                        out->nts_none = sv->nts;
                        out->wait = true;
                        return;
                }
                sv->walked_round = false;

                /* -EAGAIN: backing off now (a key exchange could not even start), so no longer
                 * usable, and the walk moves past it. */
                r = several_one_try(sv, n, out);
                if (r != -EAGAIN || server_name_usable(n))
                        break;
        }
        if (r < 0)
                /* Out of descriptors or memory: try again later rather than stop for good. */
                out->wait = true;
}

/* What the one server reports that the set of several handles otherwise: stock's STATUS=, and
 * on failure the next server. Returns true when e was handled. */
static bool several_one_event(Several *sv, Source *s, SourceEvent e, SeveralDecision *out) {
        char addr[SOCKET_ADDRESS_STRING_MAX];

        switch (e) {
        case SOURCE_EVENT_ADDRESS:
                if (!source_address(s))
                        return false;
                (void) socket_address_to_string(source_address(s), addr);
                log_debug("Connecting to time server %s (%s).", addr, source_name(s));
                several_notify(out, "Connecting to time server %s (%s).", addr, source_name(s));
                return false;
        case SOURCE_EVENT_FAILED:
                /* A failed key exchange said why in NTSStatus already; a server that never
                 * answered after one did not. */
                if (source_silent(s)) {
                        char text[sizeof sv->last_failure];

                        (void) snprintf(text, sizeof text, "%s: %s", source_name(s), source_last_error(s));
                        (void) several_set_nts_status(sv, text, out);
                }
                /* The next one takes over while this one backs off. */
                source_stop(s);
                several_one_next(sv, out);
                out->sources_changed = true;
                return true;
        default:
                return false;
        }
}

/* ---- the set's life cycle, continued ---- */

static void several_reset(Several *sv, bool nts, bool fallback, int64_t backward_floor_nsec) {
        sv->running = true;
        sv->nts = nts;
        sv->one = !several_wanted(sv, nts);
        sv->one_name = NULL;
        sv->fallback = fallback;
        sv->backward_floor_nsec = backward_floor_nsec;
        sv->set = (SourceSet) { .selected = SIZE_MAX, .preferred = SIZE_MAX };
        memset(sv->verdict_logged, 0, sizeof sv->verdict_logged);
        sv->status[0] = sv->status_logged[0] = sv->notified[0] = sv->last_failure[0] = '\0';
        memset(sv->states_seen, 0, sizeof sv->states_seen);
        sv->alone_since_usec = sv->logged_usec = 0;
        sv->quiet_usec = SEVERAL_LOG_INTERVAL_USEC;
        sv->changes_unlogged = 0;
        sv->selected_logged = NULL;
}

void several_start(Several *sv, bool nts, bool fallback, int64_t backward_floor_nsec, SeveralDecision *out) {
        ServerName *used[NTP_SELECT_MAX];
        size_t quota[NTP_SELECT_MAX], n_used = 0, left, n = 0, n_pools = 0, n_sources = 0;
        bool more = true;

        assert(sv);
        assert(out);

        several_stop(sv, out);
        several_reset(sv, nts, fallback, backward_floor_nsec);
        if (sv->one) {
                several_one_next(sv, out);
                return;
        }

        /* The first NTSMaxSources= usable entries get a source each, in order, so that a server
         * listed beside a pool is always used; what is left goes to the pools among them, one
         * more each in turn. */
        LIST_FOREACH(names, i, several_list(sv)) {
                if (n_used >= sv->ctx.config->nts_max_sources)
                        break;
                if (several_name_usable(i)) {
                        used[n_used] = i;
                        quota[n_used++] = 1;
                }
        }
        left = sv->ctx.config->nts_max_sources - n_used;
        while (more && left > 0) {
                more = false;
                for (size_t k = 0; k < n_used && left > 0; k++)
                        if (used[k]->kind != SERVER_NAME_ONE && quota[k] < NTS_CLIENT_POOL_MAX) {
                                quota[k]++;
                                left--;
                                more = true;
                        }
        }

        for (size_t k = 0; k < n_used; k++)
                if (used[k]->kind == SERVER_NAME_ONE) {
                        if (several_add(sv, used[k]) >= 0)
                                n++;
                } else if (several_add_pool(sv, used[k], quota[k], out) >= 0) {
                        n_pools++;
                        n_sources += quota[k];
                }

        if (n == 0 && n_pools == 0) {
                out->refused = true;
                return;
        }

        if (n_pools == 0 && n == 1)
                /* Several listed, all but one refused service (several_name_usable()). */
                log_info("Using 1 NTS server, the only one listed that does not refuse service%s.",
                         sv->ctx.config->nts_min_agreeing > 1 ?
                         ": NTSMinAgreeingSources= asks for more sources that agree, so the clock is left alone" : "");
        else if (n_pools == 0)
                log_info("Using %zu NTS servers together: the clock follows only what a majority of them agree on "
                         "(%zu), and a server that does not answer still counts%s.", n, n / 2 + 1,
                         sv->ctx.config->nts_min_agreeing > n / 2 + 1 ? ", and at least NTSMinAgreeingSources= of them" : "");
        else
                log_info("Using up to %zu NTS sources together, %zu of them from %zu %s: the clock follows only what "
                         "a majority of those in use agree on, and a source that does not answer still counts%s.",
                         n + n_sources, n_sources, n_pools, n_pools == 1 ? "pool" : "pools",
                         sv->ctx.config->nts_min_agreeing > 1 ? ", and at least NTSMinAgreeingSources= of them" : "");
        if (sv->ctx.config->nts_min_agreeing > n + n_sources)
                log_warning("NTSMinAgreeingSources=%u can never be met: at most %zu NTS sources are in use "
                            "(NTSMaxSources=%u); the clock is left alone.", sv->ctx.config->nts_min_agreeing,
                            n + n_sources, sv->ctx.config->nts_max_sources);
        out->polling = true;
        several_judge(sv, out);
}

void several_stop(Several *sv, SeveralDecision *out) {
        assert(sv);
        assert(out);

        if (!sv->running)
                return;

        for (size_t i = 0; i < sv->set.n_entries; i++)
                source_stop(sv->set.entries[i].source);
        for (ServerType t = 0; t < _SERVER_TYPE_MAX; t++)
                LIST_FOREACH(names, n, sv->ctx.servers[t])
                        if (n->pool)
                                pool_stop(n->pool);
        source_set_done(&sv->set);
        sv->running = false;
        sv->selected = NULL;
        sv->one_name = NULL;
        out->stopped = true;
        out->select = out->record = false;
        sv->status[0] = sv->status_logged[0] = sv->notified[0] = '\0';
        sv->alone_since_usec = 0;
        /* NTSStatus said what the set of several said together (several_report()): left
         * standing, one server after a reload would carry it in NTSStatus and in every STATUS=
         * until its first reply. That of a set of one says why its server failed: it stays. */
        if (!sv->one)
                (void) several_set_nts_status(sv, "", out);
        out->changed |= BUS_PROPERTY_SERVER_NAME | BUS_PROPERTY_SERVER_ADDRESS |
                BUS_PROPERTY_NTS_AUTHENTICATED | BUS_PROPERTY_NTS_KE_SERVER | BUS_PROPERTY_NTS_AEAD |
                BUS_PROPERTY_NTS_COOKIES;
        out->sources_changed = true;
}

static bool several_pool_started(const Several *sv) {
        LIST_FOREACH(names, n, several_list(sv))
                if (n->pool && pool_started(n->pool))
                        return true;
        return false;
}

/* A server that refuses service gives its place to the next one of the list not in use.
 * Returns true when the set started over instead. */
static bool several_replace(Several *sv, Source *s, SeveralDecision *out) {
        source_set_remove(&sv->set, s);
        if (sv->selected == s)
                several_select(sv, NULL, NULL, out);

        LIST_FOREACH(names, n, several_list(sv)) {
                /* A pool that is not in use has no quota to fill a place with. */
                if (n->kind != SERVER_NAME_ONE || !several_name_usable(n) ||
                    (n->source && source_set_find(&sv->set, n->source)))
                        continue;
                log_info("NTS server %s takes the place of %s.", n->string, source_name(s));
                (void) several_add(sv, n);
                return false;
        }

        /* Nobody left in the set and no pool in use to bring someone: choose again from the
         * whole list, where a pool not used so far takes over, or else every server refuses.
         * Without this the manager would stay "polling" with nothing in progress. */
        if (sv->set.n_entries > 0 || several_pool_started(sv))
                return false;
        several_start(sv, sv->nts, sv->fallback, sv->backward_floor_nsec, out);
        return true;
}

/* The first server of the list that is neither in the set nor refusing service, and has not
 * failed since it was made (a spare that failed its probation is tried again only when no
 * other is left). NULL: none. */
static ServerName *several_spare(Several *sv) {
        ServerName *tried = NULL;

        LIST_FOREACH(names, n, several_list(sv)) {
                if (n->kind != SERVER_NAME_ONE || !several_name_usable(n) ||
                    (n->source && source_set_find(&sv->set, n->source)))
                        continue;
                if (!n->source || source_failures(n->source) == 0)
                        return n;
                tried = tried ?: n;
        }
        return tried;
}

/* A source that stays silent (SEVERAL_SILENT_FAILURES failures since its last answer) is not
 * simply dropped: that would give the others more say. A spare is started on probation for it,
 * and takes its place only once it agrees with what a majority reached without it
 * (several_judge()). */
static bool several_silent(const SourceSetEntry *e) {
        usec_t t = now(CLOCK_BOOTTIME);

        if (e->replaces || e->standing != SOURCE_SET_FAILING)
                return false;
        /* A source that never answered has been silent since its start. */
        return e->silent >= SEVERAL_SILENT_FAILURES || e->answered == 0 ||
               t - MIN(t, e->answered) >= SEVERAL_SILENT_POLLS * source_poll_interval(e->source);
}

static void several_try_spare(Several *sv, Source *s) {
        SourceSetEntry *e = source_set_find(&sv->set, s);
        char since[64];
        ServerName *n;
        usec_t t;
        int r;

        if (!e || !several_silent(e) || source_set_spare_for(&sv->set, s) || source_state(s) == SOURCE_FAILED)
                return;
        /* A pool's source is replaced by its pool (pool_source_event()). */
        n = server_lists_find_source(sv->ctx.servers, s);
        if (n && n->pool)
                return;
        n = several_spare(sv);
        if (!n)
                return;
        r = server_name_source(n, sv->ctx.source_settings, sv->ctx.source_handler, sv->ctx.userdata);
        if (r >= 0)
                r = source_set_add_spare(&sv->set, n->source, n->host, s);
        if (r < 0) {
                log_warning_errno(r, "Failed to start the spare NTS server %s: %m", n->string);
                return;
        }
        several_verdict_logged_forget(sv, n->source);
        t = now(CLOCK_BOOTTIME);
        (void) snprintf(since, sizeof since, e->answered > 0 ? "last answer %s ago" : "no answer since its start",
                        FORMAT_TIMESPAN(t - MIN(t, e->answered), USEC_PER_SEC));
        log_notice("NTS source %s does not answer (%u %s in a row, %s): trying %s in its place; it takes the "
                   "place once it agrees with the others.", source_name(s), e->silent,
                   e->silent == 1 ? "failure" : "failures", since, n->string);
        if (source_keep_trying(n->source) < 0)
                source_set_failed(&sv->set, n->source);
}

/* The silent source answers again: the spare on probation for it is not needed. */
static void several_drop_spare(Several *sv, Source *s) {
        Source *spare = source_set_spare_for(&sv->set, s);

        if (!spare)
                return;
        log_info("NTS source %s answers again; the spare %s is not needed.", source_name(s), source_name(spare));
        source_set_remove(&sv->set, spare);
        source_stop(spare);
}

/* A spare whose probation failed leaves the set; the next failure of the silent source tries
 * another. */
static void several_spare_failed(Several *sv, Source *s, SourceSetEntry *e) {
        log_notice("Spare NTS server %s fails (%s) on probation for %s; it is not used.", source_name(s),
                   source_last_error(s), source_name(e->replaces));
        source_set_remove(&sv->set, s);
        source_stop(s);
}

/* Returns true when the set started over (nothing of the old one is left to judge). */
static bool several_failed(Several *sv, Source *s, SeveralDecision *out) {
        SourceSetEntry *e = source_set_find(&sv->set, s);
        NTSClient *c = source_nts(s);
        ServerName *n;

        if (e->replaces) {
                several_spare_failed(sv, s, e);
                return false;
        }

        snprintf(sv->last_failure, sizeof sv->last_failure, "%s: %s", source_name(s), source_last_error(s));
        /* Once per change: a source that keeps failing says so in its own lines. */
        if (e->standing != SOURCE_SET_FAILING)
                log_notice("NTS source %s fails (%s); %s.", source_name(s),
                           several_failure_reason(source_last_error(s), c ? nts_client_last_error(c) : NULL,
                                                  c && nts_client_last_error_logged(c)),
                           source_state(s) == SOURCE_FAILED ? "it is not used any more" :
                           "it is tried again, and still counts as in use: its last sample stays in the vote");
        source_set_failed(&sv->set, s);
        /* A pool's source is replaced by its pool (pool_source_event()). */
        n = server_lists_find_source(sv->ctx.servers, s);
        if (n && n->pool)
                return false;
        if (source_state(s) == SOURCE_FAILED)
                return several_replace(sv, s, out);
        several_try_spare(sv, s);
        return false;
}

/* Once per change: a source whose delay is not trusted is not used as time (an attacker may
 * hold its replies back to widen its interval around a liar's), and says why. */
static void several_log_delay(Source *s) {
        const SourceSample *p = source_sample(s);
        const char *what = source_nts(s) ? "NTS source" : "Time server";

        if (p->delay == NTP_FILTER_DELAY_USUAL)
                log_notice("%s %s: its delay (%.3f s) is trusted again; its samples are used.", what, source_name(s),
                           (double) p->ntp.delay_nsec / NTP_NSEC_PER_SEC);
        else if (p->delay == NTP_FILTER_DELAY_JUMPED)
                log_warning("%s %s: its delay jumped to %.3f s (least of its recent ones %.3f s); its samples are not "
                            "used until it is back, or has lasted %u replies.", what, source_name(s),
                            (double) p->ntp.delay_nsec / NTP_NSEC_PER_SEC,
                            (double) p->delay_min_nsec / NTP_NSEC_PER_SEC, NTP_FILTER_SIZE);
        else
                log_warning("%s %s: its delay of %.3f s is above %.0f s; its samples are not used while it stays so.",
                            what, source_name(s), (double) p->ntp.delay_nsec / NTP_NSEC_PER_SEC,
                            (double) NTP_FILTER_DELAY_MAX_NSEC / NTP_NSEC_PER_SEC);
}

static void several_sample(Several *sv, Source *s, SeveralDecision *out) {
        const SourceSample *p = source_sample(s);
        char addr[SOCKET_ADDRESS_STRING_MAX];
        SourceSetSample x = {
                .header = p->header,
                .ntp = p->ntp,
                .boottime = p->boottime,
                .max_age = 2 * source_poll_interval(s) + SEVERAL_AGE_SLACK_USEC,
                .spike = p->spike,
                .delayed = p->delay != NTP_FILTER_DELAY_USUAL,
                .bootstrap = p->bootstrap,
        };
        bool delayed = source_set_find(&sv->set, s)->delayed;

        /* The first reply from a new address: stock's words, and whether it is authenticated
         * (whenever the clock follows plain NTP, the log and STATUS= say so). */
        if (p->first) {
                const char *auth = p->authenticated ? ", NTS authenticated" : ", plain NTP, not authenticated";

                (void) socket_address_to_string(source_address(s), addr);
                log_info("Contacted time server %s (%s)%s.", addr, source_name(s), auth);
                if (sv->one)
                        several_notify(out, "Contacted time server %s (%s)%s.", addr, source_name(s), auth);
        }

        if (p->authenticated)
                out->nts_answered = s;
        source_set_sample(&sv->set, s, &x);
        if (x.delayed != delayed)
                several_log_delay(s);
        several_drop_spare(sv, s);
        if (s == sv->selected)
                out->record = true;
}

/* A source of a pool: the pool may replace it (an SRV target that keeps failing). */
static void several_pool_event(Several *sv, Source *s, SourceEvent e, SeveralDecision *out) {
        ServerName *n = server_lists_find_source(sv->ctx.servers, s);

        if (n && n->pool && pool_source_event(n->pool, s, e))
                several_follow_pool(sv, n, out);
}

void several_on_pool_event(Several *sv, ServerName *n, PoolEvent e, SeveralDecision *out) {
        assert(sv);
        assert(out);

        if (!sv->running)
                return;
        several_follow_pool(sv, n, out);
        several_judge(sv, out);
}

void several_on_event(Several *sv, Source *s, SourceEvent e, SeveralDecision *out) {
        assert(sv);
        assert(out);

        /* A source that is not in the set (it ran before, its key exchange ran on): only its NTS
         * counters and state. */
        if (!source_set_find(&sv->set, s)) {
                out->nts_event = e >= SOURCE_EVENT_REFUSED;
                return;
        }

        /* One server, one vote: what s told of which server it is may make it, or another,
         * a duplicate (timesyncd-several-vote.c). */
        if ((e == SOURCE_EVENT_ADDRESS || e == SOURCE_EVENT_NTS_KEYS) && several_identify(sv, s))
                several_judge(sv, out);

        if (sv->one && several_one_event(sv, s, e, out))
                return;

        switch (e) {
        case SOURCE_EVENT_ADDRESS:
                /* NTSAuthenticated speaks of the server at this address: nothing is shown as
                 * authenticated until its next verified reply. */
                if (s == sv->selected) {
                        out->changed |= BUS_PROPERTY_SERVER_ADDRESS | BUS_PROPERTY_NTS_AUTHENTICATED;
                        out->new_address = true;
                }
                out->sources_changed = true;
                return;
        case SOURCE_EVENT_SAMPLE:
                several_pool_event(sv, s, e, out);
                several_sample(sv, s, out);
                several_judge(sv, out);
                /* One signal per sample of the selected source, as stock. With one server
                 * NTPMessage says what each sample says, and Sources changes with its state. */
                if (s == sv->selected)
                        out->changed |= BUS_PROPERTY_NTP_MESSAGE | BUS_PROPERTY_POLL_INTERVAL |
                                BUS_PROPERTY_FREQUENCY | BUS_PROPERTY_NTS_AUTHENTICATED |
                                BUS_PROPERTY_NTS_COOKIES;
                return;
        case SOURCE_EVENT_FAILED:
                if (several_failed(sv, s, out))
                        return;
                several_pool_event(sv, s, e, out);
                break;
        default:
                /* A pool's slot that the pool has no member for (an authenticated answer of the
                 * pool, which no one on the path can forge) is no server, and is not counted. */
                if (e == SOURCE_EVENT_NTS_KEYS || e == SOURCE_EVENT_NTS_KE_FAILED)
                        source_set_vacant(&sv->set, s, nts_client_pool_exhausted(source_nts(s)));
                out->nts_event = true;
                /* What Sources shows of one server changes with its state, not with each
                 * verified reply or cookie. */
                out->sources_changed = !sv->one || (e != SOURCE_EVENT_NTS_VERIFIED && e != SOURCE_EVENT_NTS_COOKIES);
                return;
        }
        several_judge(sv, out);
}

void several_clock_changed(Several *sv, SeveralDecision *out) {
        assert(sv);
        assert(out);

        source_set_restart(&sv->set);
        for (size_t i = 0; i < sv->set.n_entries; i++)
                source_clock_stepped(sv->set.entries[i].source, /* poll_now= */ true);
        several_judge(sv, out);
}

void several_poll_limits_changed(Several *sv) {
        for (size_t i = 0; i < sv->set.n_entries; i++)
                source_poll_limits_changed(sv->set.entries[i].source);
}

bool several_uses_list(const Several *sv, ServerType t) {
        if (!sv->running)
                return false;
        if (sv->one)
                return sv->one_name && sv->one_name->type == t;
        return server_type_is_nts(t);
}

bool several_in_use(const Several *sv) {
        return sv->running && !sv->one;
}

bool several_clock_may_be_ahead(const Several *sv) {
        for (size_t i = 0; i < sv->set.n_entries; i++) {
                const SourceSetEntry *e = &sv->set.entries[i];

                if (e->vacant || e->replaces || e->duplicate_of)
                        continue;
                /* Not known yet: the question is asked again at the next failure. */
                if (e->standing == SOURCE_SET_PENDING)
                        return false;
                if (e->standing == SOURCE_SET_ANSWERING && e->candidate.bootstrap == NTS_CLIENT_BOOTSTRAP_NONE)
                        return false;
        }
        return sv->set.n_entries > 0;
}

bool several_stalled(const Several *sv) {
        bool pools = false;

        for (size_t i = 0; i < sv->set.n_entries; i++) {
                Source *s = sv->set.entries[i].source;

                if (source_state(s) == SOURCE_IDLE || source_stalled(s))
                        return true;
        }
        /* An SRV pool without sources waits for its lookup or its timer. */
        LIST_FOREACH(names, n, several_list(sv))
                if (n->pool) {
                        if (pool_stalled(n->pool))
                                return true;
                        pools = true;
                }
        return sv->set.n_entries == 0 && !pools;
}
