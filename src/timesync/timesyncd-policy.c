/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "string-util.h"
#include "timesyncd-messages.h"
#include "timesyncd-nts.h"
#include "timesyncd-policy-internal.h"
#include "timesyncd-policy-vote.h"

/* A sample stops counting when it is this much older than twice its source's poll interval:
 * by then the source has either answered again or failed (a reply times out after 10 s per
 * address, a key exchange after KeyExchangeTimeoutSec=), so this only catches a source that
 * somehow did neither. */
#define POLICY_AGE_SLACK_USEC (2 * USEC_PER_MINUTE)

/* A verdict or a verdict of the whole set that keeps flipping (a liar at the edge of the honest
 * intervals) is logged at its level at most this often; the other changes at debug level. For
 * the set, the interval doubles while it keeps flipping, up to POLICY_LOG_INTERVAL_MAX_USEC. */
#define POLICY_LOG_INTERVAL_USEC (5 * USEC_PER_MINUTE)
#define POLICY_LOG_INTERVAL_MAX_USEC USEC_PER_HOUR

/* A failing source is silent, and a spare listed beyond NTSMaxSources= is tried on probation in
 * its place, once it failed this often since its last answer, or once this many of its poll
 * intervals passed since then, whichever comes first: its backoff stretches the time between
 * failures (a retry after ConnectionRetrySec=, key exchanges backing off), never the bound in
 * polls. */
#define POLICY_SILENT_FAILURES 3U
#define POLICY_SILENT_POLLS 3U

static usec_t policy_now(const Policy *pol) {
        return pol->ctx.now_boottime ? pol->ctx.now_boottime() : now(CLOCK_BOOTTIME);
}

/* The NTS list in use: the runtime one while it names servers (runtime servers come first, as
 * in stock), else NTS=. */
static ServerName *policy_list(const Policy *pol) {
        return pol->ctx.servers[SERVER_NTS_RUNTIME] ?: pol->ctx.servers[SERVER_NTS];
}

/* A server that refused service (kiss code DENY or RSTR) is out for good; one that backs off
 * stays and tries again by itself. */
static bool policy_name_usable(const Policy *pol, const ServerName *n) {
        return !n->source || pol->ctx.sources->state(n->source) != SOURCE_FAILED;
}

void policy_init(Policy *pol, const PolicyContext *ctx) {
        assert(pol);
        assert(ctx);
        assert(ctx->sources);
        assert(ctx->lists);

        *pol = (Policy) {
                .ctx = *ctx,
                /* Until a start decides: no walk state to keep. */
                .mode = &policy_vote_mode,
                .set = { .selected = SIZE_MAX, .preferred = SIZE_MAX },
        };
}

bool policy_wanted(const Policy *pol, bool nts_usable) {
        bool pools = false;
        size_t n = 0;

        if (!nts_usable)
                return false;
        LIST_FOREACH(names, i, policy_list(pol)) {
                n++;
                pools = pools || i->kind != SERVER_NAME_ONE;
        }
        /* A pool brings its sources here, also one alone with NTSMaxSources=1. */
        return pools || (n >= 2 && pol->ctx.config->nts_max_sources >= 2);
}

/* The first pool entry of the list in use whose lookup failed, as "ENTRY: REASON", for
 * NTSStatus and STATUS=; "" when there is none. */
static const char *policy_pool_failure(const Policy *pol, char *buf, size_t size) {
        buf[0] = '\0';
        LIST_FOREACH(names, n, policy_list(pol))
                if (n->pool && !isempty(pol->ctx.lists->pool_last_error(n->pool))) {
                        snprintf(buf, size, "%s: %s", n->string, pol->ctx.lists->pool_last_error(n->pool));
                        break;
                }
        return buf;
}

const char *policy_verdict(Policy *pol, const Source *s) {
        SourceSetEntry *e = pol->running ? source_set_find(&pol->set, s) : NULL;

        return e ? source_set_verdict_string(&pol->set, (size_t) (e - pol->set.entries)) : NULL;
}

const Source *policy_conflict_with(const Policy *pol, const Source *s) {
        if (!pol->running)
                return NULL;
        for (size_t i = 0; i < pol->set.n_entries; i++) {
                const SourceSetEntry *e = &pol->set.entries[i];

                if (!e->conflict_with)
                        continue;
                if (e->source == s)
                        return e->conflict_with;
                if (e->conflict_with == s)
                        return e->source;
        }
        return NULL;
}

/* NTSStatus becomes text: compared with what the manager shows, or with what out says already.
 * Returns true when NTSStatus changes. */
bool policy_set_nts_status(Policy *pol, const char *text, PolicyDecision *out) {
        if (streq(out->set_nts_status ? out->nts_status : pol->ctx.nts_status, text))
                return false;
        out->set_nts_status = true;
        snprintf(out->nts_status, sizeof out->nts_status, "%s", text);
        out->changed |= BUS_PROPERTY_NTS_STATUS;
        return true;
}

/* Appends "NAME (REASON)" of the failing source s to the list in buf (size bytes); a list too
 * long for buf ends in ", ..." instead of a name cut in half. */
static void policy_failing_append(const Policy *pol, char *buf, size_t size, size_t *n, const Source *s) {
        static const char more[] = ", ...";
        size_t l = strlen(buf);
        int k;

        (*n)++;
        if (endswith(buf, more))
                return;
        k = snprintf(buf + l, size - l, "%s%s (%s)", l > 0 ? ", " : "", pol->ctx.sources->name(s),
                     pol->ctx.sources->last_error(s));
        if (k < 0 || l + (size_t) k + strlen(more) >= size)
                (void) snprintf(buf + l, size - l, "%s", more);
}

/* The servers of the list in use that fail, in the order listed: the sources in use that fail
 * now (a pool's among them), and the servers that refuse service (out of the set for good, but
 * configured and not working). Writes "N of M NTS servers failing: NAME (REASON), ..." to buf,
 * "" when none fails; M counts the sources in use and those refusing servers. */
static const char *policy_failing(Policy *pol, const SourceSetDecision *d, char *buf, size_t size) {
        /* Room for the count before the list. */
        char list[sizeof pol->notified - 48] = "";
        size_t n = 0, n_refusing = 0;

        LIST_FOREACH(names, i, policy_list(pol)) {
                if (i->kind == SERVER_NAME_ONE && i->source && pol->ctx.sources->state(i->source) == SOURCE_FAILED &&
                    !source_set_find(&pol->set, i->source)) {
                        policy_failing_append(pol, list, sizeof list, &n, i->source);
                        n_refusing++;
                        continue;
                }
                for (size_t k = 0; k < pol->set.n_entries; k++) {
                        const SourceSetEntry *e = &pol->set.entries[k];

                        if (e->vacant || e->replaces || e->duplicate_of || e->standing != SOURCE_SET_FAILING)
                                continue;
                        if (e->source == i->source || (i->pool && pol->ctx.lists->pool_has_source(i->pool, e->source)))
                                policy_failing_append(pol, list, sizeof list, &n, e->source);
                }
        }

        buf[0] = '\0';
        if (n > 0)
                (void) snprintf(buf, size, "%zu of %zu NTS servers failing: %s", n, d->n_in_use + n_refusing, list);
        return buf;
}

/* The falsetickers of the set, with their offsets: "Falseticker: NAME (+3600.000000 s)", or
 * "Falsetickers: ..." for several; "" when there is none. */
static const char *policy_falsetickers(const Policy *pol, char *buf, size_t size) {
        size_t n = 0, l;

        buf[0] = '\0';
        for (size_t i = 0; i < pol->set.n_entries; i++)
                n += pol->set.entries[i].verdict == NTP_SELECT_FALSETICKER;
        if (n == 0)
                return buf;
        l = (size_t) MAX(snprintf(buf, size, "%s: ", n == 1 ? "Falseticker" : "Falsetickers"), 0);
        for (size_t i = 0, k = 0; i < pol->set.n_entries && l < size; i++) {
                const SourceSetEntry *e = &pol->set.entries[i];

                if (e->verdict != NTP_SELECT_FALSETICKER)
                        continue;
                l += (size_t) MAX(snprintf(buf + l, size - l, "%s%s (%+.6f s)", k++ > 0 ? ", " : "",
                                           pol->ctx.sources->name(e->source),
                                           (double) e->candidate.ntp.offset_nsec / NTP_NSEC_PER_SEC), 0);
        }
        return buf;
}

/* The sources in use whose delay is not trusted, for NTSStatus: "delay jumped: NAME (was
 * 0.021 s), NAME (above 3 s)"; "" when none. Not the delay itself, which changes with every
 * reply: NTSStatus changes when a source's judgement does. */
static const char *policy_delayed(Policy *pol, char *buf, size_t size) {
        size_t l = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < pol->set.n_entries && l < size; i++) {
                const SourceSetEntry *e = &pol->set.entries[i];
                const SourceSample *p = pol->ctx.sources->sample(e->source);
                char why[48];
                int k;

                if (!e->delayed || e->replaces || e->duplicate_of || !p)
                        continue;
                if (p->delay == NTP_FILTER_DELAY_JUMPED)
                        (void) snprintf(why, sizeof why, "was %.3f s", (double) p->delay_min_nsec / NTP_NSEC_PER_SEC);
                else
                        (void) snprintf(why, sizeof why, "above %.0f s",
                                        (double) NTP_FILTER_DELAY_MAX_NSEC / NTP_NSEC_PER_SEC);
                k = snprintf(buf + l, size - l, "%s%s (%s)", l > 0 ? ", " : "delay jumped: ",
                             pol->ctx.sources->name(e->source), why);
                if (k < 0)
                        break;
                l += (size_t) k;
        }
        return buf;
}

/* STATUS= says what format says. */
void policy_notify(PolicyDecision *out, const char *format, ...) {
        va_list ap;

        out->notify = true;
        va_start(ap, format);
        (void) vsnprintf(out->status, sizeof out->status, format, ap);
        va_end(ap);
}

/* ---- which source is selected ---- */

/* The selected source changes: stock's ServerName, ServerAddress and NTPMessage describe it,
 * and so do the NTS properties. While nothing is selected the clock is not steered, and
 * NTPMessage describes no server (the manager clears it). */
void policy_select(Policy *pol, Source *s, const SourceSetDecision *d, PolicyDecision *out) {
        if (pol->selected == s)
                return;

        pol->selected = s;
        out->select = true;
        out->changed |= BUS_PROPERTIES_SELECTED;
        pol->mode->selected(pol, s, d, out);
}

/* A set of several selects by agreement: NTPMessage takes the selected source's sample. */
static void policy_vote_selected(Policy *pol, Source *s, const SourceSetDecision *d, PolicyDecision *out) {
        out->record = s && pol->ctx.sources->sample(s);
        /* The same source selected again after the set lost its agreement for a while (a liar
         * at the edge of the honest intervals) is no news: the set's own line says that it
         * agrees again. */
        if (out->record) {
                log_full(s == pol->selected_logged ? LOG_DEBUG : LOG_INFO,
                         "Selected server %s (%zu of %zu NTS sources agree).", pol->ctx.sources->name(s),
                         d->n_current_agree, d->n_in_use);
                pol->selected_logged = s;
        }
}

/* ---- what the sources say together ---- */

static void policy_log_falseticker(const Policy *pol, const SourceSetEntry *e, const SourceSetDecision *d, int level) {
        const char *name = pol->ctx.sources->name(e->source);
        char offset[32];

        (void) snprintf(offset, sizeof offset, "%+.6f", (double) e->candidate.ntp.offset_nsec / NTP_NSEC_PER_SEC);
        log_struct(level, TIMESYNC_MESSAGE_NTS_FALSETICKER,
                   ((const char *const[]) { "NTS_SERVER", name, "OFFSET_SEC", offset, NULL }),
                   "NTS source %s is a falseticker: its offset %s s (+/- %.6f s) lies outside what %zu other "
                   "sources agree on (%+.6f s to %+.6f s); it is not used, and polled on.", name,
                   offset, (double) e->root_distance_nsec / NTP_NSEC_PER_SEC, d->select.n_agree,
                   (double) d->select.low_nsec / NTP_NSEC_PER_SEC, (double) d->select.high_nsec / NTP_NSEC_PER_SEC);
}

/* When a change of s's verdict was last logged above debug level (0: never). s is in the set,
 * which has at most NTP_SELECT_MAX sources: it has a slot, or one is free. */
static usec_t *policy_verdict_logged(Policy *pol, const Source *s) {
        size_t free_slot = SIZE_MAX;

        for (size_t i = 0; i < ELEMENTSOF(pol->verdict_logged); i++) {
                const Source *o = pol->verdict_logged[i].source;

                if (o == s)
                        return &pol->verdict_logged[i].usec;
                if (free_slot == SIZE_MAX && (!o || !source_set_find(&pol->set, o)))
                        free_slot = i;
        }
        assert(free_slot != SIZE_MAX);
        pol->verdict_logged[free_slot].source = s;
        pol->verdict_logged[free_slot].usec = 0;
        return &pol->verdict_logged[free_slot].usec;
}

/* A source joins the set: what was logged of it before does not count. */
void policy_verdict_logged_forget(Policy *pol, const Source *s) {
        for (size_t i = 0; i < ELEMENTSOF(pol->verdict_logged); i++)
                if (pol->verdict_logged[i].source == s)
                        pol->verdict_logged[i].source = NULL;
}

/* Falsetickers are logged once per change, and so is their return; a source whose verdict
 * flips at the edge of an interval says so at most once per POLICY_LOG_INTERVAL_USEC (the
 * rest at debug level). */
static void policy_log_verdicts(Policy *pol, const NTPSelectVerdict *before, const SourceSetDecision *d) {
        usec_t t = policy_now(pol);

        for (size_t i = 0; i < pol->set.n_entries; i++) {
                SourceSetEntry *e = &pol->set.entries[i];
                usec_t *logged;
                bool loud;

                if (e->verdict == before[i] ||
                    (e->verdict != NTP_SELECT_FALSETICKER && before[i] != NTP_SELECT_FALSETICKER))
                        continue;
                logged = policy_verdict_logged(pol, e->source);
                loud = *logged == 0 || t >= *logged + POLICY_LOG_INTERVAL_USEC;
                if (loud)
                        *logged = t;
                if (e->verdict == NTP_SELECT_FALSETICKER)
                        policy_log_falseticker(pol, e, d, loud ? LOG_WARNING : LOG_DEBUG);
                else if (e->verdict == NTP_SELECT_TRUECHIMER)
                        log_full(loud ? LOG_NOTICE : LOG_DEBUG, "NTS source %s agrees with the others again.",
                                 pol->ctx.sources->name(e->source));
        }
}

/* Whether the set was in the state key within POLICY_LOG_INTERVAL_MAX_USEC before t; marks it
 * as seen at t. */
static bool policy_state_seen(Policy *pol, const char *key, usec_t t) {
        size_t slot = 0;
        bool seen = false;

        for (size_t i = 0; i < ELEMENTSOF(pol->states_seen); i++) {
                if (streq(pol->states_seen[i].key, key)) {
                        seen = pol->states_seen[i].usec > 0 && t < pol->states_seen[i].usec + POLICY_LOG_INTERVAL_MAX_USEC;
                        slot = i;
                        break;
                }
                if (pol->states_seen[i].usec < pol->states_seen[slot].usec)
                        slot = i;
        }
        snprintf(pol->states_seen[slot].key, sizeof pol->states_seen[slot].key, "%s", key);
        pol->states_seen[slot].usec = t;
        return seen;
}

/* The log line of what the set says (text; key: its state), once per change of state:
 * disagreement at warning level, agreement at info. A set that flips between states it was in
 * lately (a liar at the edge of the honest intervals: "3 of 4 agree, 1 falseticker", "4 of 4
 * agree", "4 disagree") logs at debug level while the last line at its level is younger than
 * the quiet interval; after that the state it is in is logged once more, saying how many
 * changes were logged at debug level, also when it stopped flipping, and the quiet interval
 * doubles (from POLICY_LOG_INTERVAL_USEC up to POLICY_LOG_INTERVAL_MAX_USEC). A state not seen
 * within POLICY_LOG_INTERVAL_MAX_USEC is news, logged at once, and starts the quiet interval
 * over, as does a change after two quiet intervals without a line: one line per change of
 * state, fewer and fewer while it flips, and the last line at its level says where the set is
 * within an interval of its last change. */
static void policy_log_status(Policy *pol, const SourceSetDecision *d, const char *text, const char *key,
                               bool disagree) {
        usec_t t = policy_now(pol);
        int level = disagree ? LOG_WARNING :
                    d->select.outcome == NTP_SELECT_AGREED ? LOG_INFO :
                    d->n_pending > 0 ? LOG_DEBUG : LOG_NOTICE;
        bool changed = !streq(key, pol->status), seen, quiet;

        snprintf(pol->status, sizeof pol->status, "%s", key);
        seen = policy_state_seen(pol, key, t);
        if (!changed && (pol->changes_unlogged == 0 || streq(key, pol->status_logged)))
                return;
        /* Back where the last line left it, with nothing logged in between: no news. */
        quiet = level == LOG_DEBUG || (seen && pol->logged_usec > 0 && t < pol->logged_usec + pol->quiet_usec) ||
                (streq(key, pol->status_logged) && pol->changes_unlogged == 0);
        if (quiet) {
                if (changed) {
                        pol->changes_unlogged += level != LOG_DEBUG;
                        log_debug("%s.", text);
                }
                return;
        }
        pol->quiet_usec = !seen || t >= pol->logged_usec + 2 * pol->quiet_usec ? POLICY_LOG_INTERVAL_USEC :
                         pol->changes_unlogged > 0 ? MIN(2 * pol->quiet_usec, POLICY_LOG_INTERVAL_MAX_USEC) :
                         pol->quiet_usec;
        pol->logged_usec = t;
        snprintf(pol->status_logged, sizeof pol->status_logged, "%s", key);
        if (pol->changes_unlogged > 0)
                log_full(level, "%s (after %u changes back and forth logged at debug level).", text,
                         pol->changes_unlogged);
        else
                log_full(level, "%s.", text);
        pol->changes_unlogged = 0;
}

/* What the set says when none answers and each source that fails got keys but never an NTP
 * reply: TCP to the key exchange goes through, UDP to NTP does not. */
#define POLICY_UDP_BLOCKED "No NTS source answers: key exchanges work, no NTP reply (outgoing UDP blocked?)"

/* Every source of the set that fails never heard from its NTP server after its key exchange
 * worked (pol->ctx.sources->silent()), and one does. */
static bool policy_all_silent(const Policy *pol) {
        bool any = false;

        for (size_t i = 0; i < pol->set.n_entries; i++) {
                const SourceSetEntry *e = &pol->set.entries[i];

                if (e->vacant || e->replaces || e->duplicate_of || e->standing != SOURCE_SET_FAILING)
                        continue;
                if (!pol->ctx.sources->silent(e->source))
                        return false;
                any = true;
        }
        return any;
}

/* STATUS=, NTSStatus and the log say what the sources say together, once per change. While the
 * clock is left alone they say since when. */
static void policy_report(Policy *pol, const SourceSetDecision *d, PolicyDecision *out) {
        char text[sizeof pol->status], status[sizeof pol->notified], pool[256], since[256],
             failing[sizeof pol->notified], nts[sizeof pol->notified], conflict[256], key[sizeof pol->status],
             delayed[256], both[sizeof pol->notified], falsetickers[256];
        SourceSetDecision key_decision;
        bool disagree = source_set_disagree(d), changed;
        bool none_answers = d->select.outcome == NTP_SELECT_NO_CANDIDATES && d->n_pending == 0;
        bool silent = policy_all_silent(pol);
        const char *nts_status;
        PolicyStatusInput in;

        source_set_describe(&pol->set, d, text, sizeof text);
        out->nts_none = none_answers;
        /* None answers: what the administrator can do. Key exchanges that work with NTP that
         * does not is a firewall's doing, not the servers'. */
        if (none_answers && silent)
                (void) snprintf(text, sizeof text, "%s", POLICY_UDP_BLOCKED);
        else if (pol->fallback && none_answers)
                (void) snprintf(text, sizeof text, "%s", FALLBACK_NTS_UNREACHABLE);
        (void) policy_pool_failure(pol, pool, sizeof pool);

        if (!disagree)
                pol->alone_since_usec = 0;
        else if (pol->alone_since_usec == 0)
                pol->alone_since_usec = now(CLOCK_REALTIME);
        if (disagree) {
                char ts[FORMAT_TIMESTAMP_MAX];

                (void) snprintf(since, sizeof since, "%s since %s", text,
                                format_timestamp(ts, sizeof ts, pol->alone_since_usec));
        } else
                (void) snprintf(since, sizeof since, "%s", text);

        in = (PolicyStatusInput) {
                .disagree = disagree,
                .outcome = d->select.outcome,
                .n_pending = d->n_pending,
                .fallback = pol->fallback,
                .since = since,
                .pool_failure = pool,
                .last_failure = pol->last_failure,
                .failing = policy_failing(pol, d, failing, sizeof failing),
                .falsetickers = policy_falsetickers(pol, falsetickers, sizeof falsetickers),
                .conflict = policy_conflict(pol, conflict, sizeof conflict),
        };
        /* Delays held back say where to look when the clock is left alone. */
        if (!isempty(policy_delayed(pol, delayed, sizeof delayed))) {
                (void) snprintf(both, sizeof both, "%s%s%s", failing, isempty(failing) ? "" : "; ", delayed);
                in.failing = both;
        }
        nts_status = policy_nts_status(&in, nts, sizeof nts);
        changed = policy_set_nts_status(pol, nts_status, out);

        /* While the clock is left alone or none answers, STATUS= begins with NTSStatus, which
         * names the failing servers after the set's sentence. */
        (void) snprintf(status, sizeof status, "%s%s%s%s%s.", disagree || none_answers ? nts_status : since,
                        pol->selected ? "; selected " : "", pol->selected ? pol->ctx.sources->name(pol->selected) : "",
                        isempty(pool) ? "" : "; ", pool);

        /* STATUS= carries NTSStatus where it does not say the same: the manager appends it. */
        if (changed || !streq(status, pol->notified)) {
                snprintf(pol->notified, sizeof pol->notified, "%s", status);
                out->notify = true;
                snprintf(out->status, sizeof out->status, "%s", status);
        }
        /* The selected source's changes have a line of their own. The state is the sentence
         * without the spread, which moves by a millisecond from one sample to the next. */
        key_decision = *d;
        key_decision.select.spread_nsec = 0;
        source_set_describe(&pol->set, &key_decision, key, sizeof key);
        policy_log_status(pol, d, text, key, disagree);
}

/* NTSStatus says why NTS gives no time: the sources disagree, or too few agree or answer, or
 * none answers (then the last failure, as with one server); and why a pool gives nothing,
 * which only a change of configuration mends. While the others agree, it names the servers
 * that fail: the clock is steered, but by fewer than were configured; while the clock is left
 * alone, it names them after saying so. */
static const char *policy_nts_status_without_conflict(const PolicyStatusInput *in, char *buf, size_t size) {
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
const char *policy_nts_status(const PolicyStatusInput *in, char *buf, size_t size) {
        char rest[512];
        const char *r;

        assert(in);
        assert(buf);

        if (isempty(in->conflict))
                return policy_nts_status_without_conflict(in, buf, size);
        r = policy_nts_status_without_conflict(in, rest, sizeof rest);
        (void) snprintf(buf, size, "%s%s%s", r, isempty(r) ? "" : "; ", in->conflict);
        return buf;
}

const char *policy_failure_reason(const char *error, const char *ke_error, bool ke_logged) {
        if (ke_logged && !isempty(error) && streq_ptr(error, ke_error))
                return "key exchange failed";
        return strempty(error);
}

ClockAdjustment policy_adjustment(int64_t offset_nsec, int leap, int64_t max_error_nsec) {
        return (ClockAdjustment) {
                .offset_nsec = offset_nsec,
                .step = offset_nsec <= -NTP_STEP_THRESHOLD_NSEC || offset_nsec >= NTP_STEP_THRESHOLD_NSEC,
                .leap = leap,
                .max_error_nsec = max_error_nsec,
        };
}

int policy_leap(const SourceSet *set, size_t n_current_agree) {
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
 * policy_steered() does the rest. */
static void policy_steer(Policy *pol, const SourceSetDecision *d, PolicyDecision *out) {
        const SourceSetEntry *sel = &pol->set.entries[d->select.selected];
        Source *s = sel->source;

        out->steer = true;
        out->adjustment = policy_adjustment(d->select.offset_nsec, policy_leap(&pol->set, d->n_current_agree),
                                             sel->root_distance_nsec);
        out->poll_interval_usec = pol->ctx.sources->poll_interval(s);
        snprintf(out->server, sizeof out->server, "%s", pol->ctx.sources->name(s));
        pol->mode->steering(pol, d, out);
        out->steer_authenticated = pol->ctx.sources->sample(s) && pol->ctx.sources->sample(s)->authenticated;
        out->steer_bootstrap = d->bootstrap;
        out->steer_agree = d->n_current_agree;
}

static void policy_vote_steering(Policy *pol, const SourceSetDecision *d, PolicyDecision *out) {
        snprintf(out->agreement, sizeof out->agreement, ", %zu of %zu NTS sources agree", d->n_current_agree,
                 d->n_in_use);
}

static void policy_promote(Policy *pol, Source *spare, PolicyDecision *out);

void policy_steered(Policy *pol, const PolicyDecision *d, int r, PolicyDecision *next) {
        assert(pol);
        assert(d);
        assert(next);

        if (r < 0)
                goto promote;

        /* Bootstrap keys are good for this one step: each source with such keys repeats its key
         * exchange with every check, against the corrected clock. */
        if (d->steer_bootstrap) {
                pol->mode->bootstrapped(pol, d);
                for (size_t i = 0; i < pol->set.n_entries; i++)
                        if (pol->set.entries[i].candidate.bootstrap != NTS_CLIENT_BOOTSTRAP_NONE)
                                (void) pol->ctx.sources->sample_used(pol->set.entries[i].source);
        }
        source_set_steered(&pol->set);

        /* Every stored offset was measured against the clock before the step. In observe mode
         * the clock did not move (r == 0): the stored offsets stay true, and correcting them
         * would judge later samples against a clock that was never stepped. */
        if (d->adjustment.step && r > 0) {
                source_set_stepped(&pol->set, d->adjustment.offset_nsec);
                for (size_t i = 0; i < pol->set.n_entries; i++) {
                        pol->ctx.sources->clock_stepped(pol->set.entries[i].source, /* poll_now= */ false);
                        pol->ctx.sources->sample_stepped(pol->set.entries[i].source, d->adjustment.offset_nsec);
                }
        } else if (clock_backend_type(pol->ctx.clock) == CLOCK_BACKEND_KERNEL)
                source_set_slewed(&pol->set, d->adjustment.offset_nsec);

promote:
        if (d->promote)
                policy_promote(pol, d->promote, next);
        next->sources_changed = pol->mode->steer_changes_sources;
}

/* One server's client says so itself, as each source's does (policy_steered()). */
static void policy_vote_bootstrapped(Policy *pol, const PolicyDecision *d) {
        log_notice("Bootstrap: the clock took the time that %zu NTS sources agree on.", d->steer_agree);
}

/* A spare on probation agrees with the others: it takes the place of the silent source, which
 * stops (its name is a spare itself now, and can come back the same way). */
static void policy_promote(Policy *pol, Source *spare, PolicyDecision *out) {
        Source *silent = source_set_find(&pol->set, spare)->replaces;

        if (source_set_find(&pol->set, silent)->standing != SOURCE_SET_FAILING)
                return;

        log_notice("NTS server %s takes the place of %s, which does not answer: it agrees with the others.",
                   pol->ctx.sources->name(spare), pol->ctx.sources->name(silent));
        if (pol->selected == silent)
                policy_select(pol, NULL, NULL, out);
        source_set_promote(&pol->set, spare);
        pol->ctx.sources->stop(silent);
}

static void policy_try_spare(Policy *pol, Source *s);

static void policy_vote_judging(Policy *pol, SourceSetPolicy *p) {
        /* A source may become silent between its own failures (policy_silent()): each judgement
         * looks, so that the others' answers bound the wait, whatever its backoff. */
        for (size_t i = 0; i < pol->set.n_entries; i++)
                policy_try_spare(pol, pol->set.entries[i].source);
        p->min_agreeing = pol->ctx.config->nts_min_agreeing;
}

/* The set selects by agreement, and says what its sources say together. */
static void policy_vote_judged(Policy *pol, const SourceSetDecision *d, PolicyDecision *out) {
        policy_select(pol, d->select.selected < pol->set.n_entries ? pol->set.entries[d->select.selected].source : NULL,
                      d, out);
        policy_report(pol, d, out);
        out->sources_changed = true;
}

static void policy_judge(Policy *pol, PolicyDecision *out) {
        NTPSelectVerdict before[NTP_SELECT_MAX];
        struct timespec ts = {};
        SourceSetDecision d;
        int r;

        (void) clock_backend_now(pol->ctx.clock, &ts);
        SourceSetPolicy p = {
                .root_distance_max_nsec = (int64_t) MIN(pol->ctx.config->root_distance_max_usec, (usec_t) INT64_MAX / 1000) * 1000,
                .now_boottime = policy_now(pol),
                .now_realtime_nsec = (int64_t) ts.tv_sec * NTP_NSEC_PER_SEC + ts.tv_nsec,
                .backward_floor_nsec = pol->backward_floor_nsec,
        };

        pol->mode->judging(pol, &p);

        for (size_t i = 0; i < pol->set.n_entries; i++)
                before[i] = pol->set.entries[i].verdict;

        r = source_set_select(&pol->set, &p, &d);
        if (r < 0) {
                log_error_errno(r, "Failed to select among the %s: %m", pol->nts ? "NTS sources" : "time servers");
                return;
        }

        policy_log_verdicts(pol, before, &d);
        for (size_t i = 0; i < pol->set.n_entries; i++)
                pol->ctx.sources->set_unused(pol->set.entries[i].source,
                                             pol->set.entries[i].verdict == NTP_SELECT_FALSETICKER);
        pol->mode->judged(pol, &d, out);
        if (d.steer) {
                /* The spare takes its place after the step, as the others' samples are. */
                policy_steer(pol, &d, out);
                out->promote = d.qualified;
        } else if (d.qualified)
                policy_promote(pol, d.qualified, out);
}

/* ---- the set's life cycle ---- */

static bool policy_failed(Policy *pol, Source *s, PolicyDecision *out);

/* Adds s (of n) to the set and starts it; one that cannot start now backs off by itself and
 * counts as failing. The key-exchange host is n's: a pool's members share its name, and count
 * as one name for the bootstrap. */
static int policy_add_source(Policy *pol, ServerName *n, Source *s) {
        int r;

        r = source_set_add(&pol->set, s, n->host);
        if (r < 0)
                return log_error_errno(r, "Failed to add a source of %s to the NTS sources: %m", n->string);
        policy_verdict_logged_forget(pol, s);

        if (pol->ctx.sources->keep_trying(s) < 0) {
                snprintf(pol->last_failure, sizeof pol->last_failure, "%s: %s", pol->ctx.sources->name(s),
                         pol->ctx.sources->last_error(s));
                source_set_failed(&pol->set, s);
        }
        return 0;
}

static int policy_add(Policy *pol, ServerName *n) {
        int r;

        r = pol->ctx.sources->make(n, &pol->ctx);
        if (r < 0)
                return r;
        return policy_add_source(pol, n, n->source);
}

/* The set follows the sources of n's pool: those it retired leave, new ones join and start. */
static void policy_follow_pool(Policy *pol, ServerName *n, PolicyDecision *out) {
        for (size_t i = pol->set.n_entries; i-- > 0;) {
                Source *s = pol->set.entries[i].source;

                if (!pol->ctx.lists->pool_source_retired(n->pool, s))
                        continue;
                source_set_remove(&pol->set, s);
                if (pol->selected == s)
                        policy_select(pol, NULL, NULL, out);
        }
        for (size_t i = 0; i < pol->ctx.lists->pool_n_sources(n->pool); i++) {
                Source *s = pol->ctx.lists->pool_source(n->pool, i);

                if (!source_set_find(&pol->set, s))
                        (void) policy_add_source(pol, n, s);
        }
        out->sources_changed = true;
}

static int policy_add_pool(Policy *pol, ServerName *n, size_t quota, PolicyDecision *out) {
        int r;

        r = pol->ctx.lists->pool_make(n, &pol->ctx);
        if (r < 0)
                return r;
        pol->ctx.lists->pool_start(n->pool, quota);
        policy_follow_pool(pol, n, out);
        return 0;
}

/* ---- the set's life cycle, continued ---- */

static void policy_reset(Policy *pol, bool nts, bool fallback, int64_t backward_floor_nsec) {
        pol->running = true;
        pol->nts = nts;
        pol->mode = policy_wanted(pol, nts) ? &policy_vote_mode : &policy_walk_mode;
        pol->walk_name = NULL;
        pol->fallback = fallback;
        pol->backward_floor_nsec = backward_floor_nsec;
        pol->set = (SourceSet) { .selected = SIZE_MAX, .preferred = SIZE_MAX };
        memset(pol->verdict_logged, 0, sizeof pol->verdict_logged);
        pol->status[0] = pol->status_logged[0] = pol->notified[0] = pol->last_failure[0] = '\0';
        memset(pol->states_seen, 0, sizeof pol->states_seen);
        pol->alone_since_usec = pol->logged_usec = 0;
        pol->quiet_usec = POLICY_LOG_INTERVAL_USEC;
        pol->changes_unlogged = 0;
        pol->selected_logged = NULL;
}

void policy_start(Policy *pol, bool nts, bool fallback, int64_t backward_floor_nsec, PolicyDecision *out) {
        assert(pol);
        assert(out);

        policy_stop(pol, out);
        policy_reset(pol, nts, fallback, backward_floor_nsec);
        pol->mode->start(pol, out);
}

/* The first NTSMaxSources= usable entries of the NTS list in use, together. */
static void policy_vote_start(Policy *pol, PolicyDecision *out) {
        ServerName *used[NTP_SELECT_MAX];
        size_t quota[NTP_SELECT_MAX], n_used = 0, left, n = 0, n_pools = 0, n_sources = 0;
        bool more = true;

        /* The first NTSMaxSources= usable entries get a source each, in order, so that a server
         * listed beside a pool is always used; what is left goes to the pools among them, one
         * more each in turn. */
        LIST_FOREACH(names, i, policy_list(pol)) {
                if (n_used >= pol->ctx.config->nts_max_sources)
                        break;
                if (policy_name_usable(pol, i)) {
                        used[n_used] = i;
                        quota[n_used++] = 1;
                }
        }
        left = pol->ctx.config->nts_max_sources - n_used;
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
                        if (policy_add(pol, used[k]) >= 0)
                                n++;
                } else if (policy_add_pool(pol, used[k], quota[k], out) >= 0) {
                        n_pools++;
                        n_sources += quota[k];
                }

        if (n == 0 && n_pools == 0) {
                out->refused = true;
                return;
        }

        if (n_pools == 0 && n == 1)
                /* Several listed, all but one refused service (policy_name_usable()). */
                log_info("Using 1 NTS server, the only one listed that does not refuse service%s.",
                         pol->ctx.config->nts_min_agreeing > 1 ?
                         ": NTSMinAgreeingSources= asks for more sources that agree, so the clock is left alone" : "");
        else if (n_pools == 0)
                log_info("Using %zu NTS servers together: the clock follows only what a majority of them agree on "
                         "(%zu), and a server that does not answer still counts%s.", n, n / 2 + 1,
                         pol->ctx.config->nts_min_agreeing > n / 2 + 1 ? ", and at least NTSMinAgreeingSources= of them" : "");
        else
                log_info("Using up to %zu NTS sources together, %zu of them from %zu %s: the clock follows only what "
                         "a majority of those in use agree on, and a source that does not answer still counts%s.",
                         n + n_sources, n_sources, n_pools, n_pools == 1 ? "pool" : "pools",
                         pol->ctx.config->nts_min_agreeing > 1 ? ", and at least NTSMinAgreeingSources= of them" : "");
        if (pol->ctx.config->nts_min_agreeing > n + n_sources)
                log_warning("NTSMinAgreeingSources=%u can never be met: at most %zu NTS sources are in use "
                            "(NTSMaxSources=%u); the clock is left alone.", pol->ctx.config->nts_min_agreeing,
                            n + n_sources, pol->ctx.config->nts_max_sources);
        out->polling = true;
        policy_judge(pol, out);
}

void policy_stop(Policy *pol, PolicyDecision *out) {
        assert(pol);
        assert(out);

        if (!pol->running)
                return;

        for (size_t i = 0; i < pol->set.n_entries; i++)
                pol->ctx.sources->stop(pol->set.entries[i].source);
        for (ServerType t = 0; t < _SERVER_TYPE_MAX; t++)
                LIST_FOREACH(names, n, pol->ctx.servers[t])
                        if (n->pool)
                                pol->ctx.lists->pool_stop(n->pool);
        source_set_done(&pol->set);
        pol->running = false;
        pol->selected = NULL;
        pol->walk_name = NULL;
        out->stopped = true;
        out->select = out->record = false;
        pol->status[0] = pol->status_logged[0] = pol->notified[0] = '\0';
        pol->alone_since_usec = 0;
        /* NTSStatus said what the set of several said together (policy_report()): left
         * standing, one server after a reload would carry it in NTSStatus and in every STATUS=
         * until its first reply. That of a set of one says why its server failed: it stays. */
        if (pol->mode->clears_nts_status)
                (void) policy_set_nts_status(pol, "", out);
        out->changed |= BUS_PROPERTY_SERVER_NAME | BUS_PROPERTY_SERVER_ADDRESS |
                BUS_PROPERTY_NTS_AUTHENTICATED | BUS_PROPERTY_NTS_KE_SERVER | BUS_PROPERTY_NTS_AEAD |
                BUS_PROPERTY_NTS_COOKIES;
        out->sources_changed = true;
}

static bool policy_pool_started(const Policy *pol) {
        LIST_FOREACH(names, n, policy_list(pol))
                if (n->pool && pol->ctx.lists->pool_started(n->pool))
                        return true;
        return false;
}

/* A server that refuses service gives its place to the next one of the list not in use.
 * Returns true when the set started over instead. */
static bool policy_replace(Policy *pol, Source *s, PolicyDecision *out) {
        source_set_remove(&pol->set, s);
        if (pol->selected == s)
                policy_select(pol, NULL, NULL, out);

        LIST_FOREACH(names, n, policy_list(pol)) {
                /* A pool that is not in use has no quota to fill a place with. */
                if (n->kind != SERVER_NAME_ONE || !policy_name_usable(pol, n) ||
                    (n->source && source_set_find(&pol->set, n->source)))
                        continue;
                log_info("NTS server %s takes the place of %s.", n->string, pol->ctx.sources->name(s));
                (void) policy_add(pol, n);
                return false;
        }

        /* Nobody left in the set and no pool in use to bring someone: choose again from the
         * whole list, where a pool not used so far takes over, or else every server refuses.
         * Without this the manager would stay "polling" with nothing in progress. */
        if (pol->set.n_entries > 0 || policy_pool_started(pol))
                return false;
        policy_start(pol, pol->nts, pol->fallback, pol->backward_floor_nsec, out);
        return true;
}

/* The first server of the list that is neither in the set nor refusing service, and has not
 * failed since it was made (a spare that failed its probation is tried again only when no
 * other is left). NULL: none. */
static ServerName *policy_spare(Policy *pol) {
        ServerName *tried = NULL;

        LIST_FOREACH(names, n, policy_list(pol)) {
                if (n->kind != SERVER_NAME_ONE || !policy_name_usable(pol, n) ||
                    (n->source && source_set_find(&pol->set, n->source)))
                        continue;
                if (!n->source || pol->ctx.sources->failures(n->source) == 0)
                        return n;
                tried = tried ?: n;
        }
        return tried;
}

/* A source that stays silent (POLICY_SILENT_FAILURES failures since its last answer) is not
 * simply dropped: that would give the others more say. A spare is started on probation for it,
 * and takes its place only once it agrees with what a majority reached without it
 * (policy_judge()). */
static bool policy_silent(const Policy *pol, const SourceSetEntry *e) {
        usec_t t = policy_now(pol);

        if (e->replaces || e->standing != SOURCE_SET_FAILING)
                return false;
        /* A source that never answered has been silent since its start. */
        return e->silent >= POLICY_SILENT_FAILURES || e->answered == 0 ||
               t - MIN(t, e->answered) >= POLICY_SILENT_POLLS * pol->ctx.sources->poll_interval(e->source);
}

static void policy_try_spare(Policy *pol, Source *s) {
        SourceSetEntry *e = source_set_find(&pol->set, s);
        char since[64];
        ServerName *n;
        usec_t t;
        int r;

        if (!e || !policy_silent(pol, e) || source_set_spare_for(&pol->set, s) ||
            pol->ctx.sources->state(s) == SOURCE_FAILED)
                return;
        /* A pool's source is replaced by its pool (pool_source_event()). */
        n = pol->ctx.lists->find_source(pol->ctx.servers, s);
        if (n && n->pool)
                return;
        n = policy_spare(pol);
        if (!n)
                return;
        r = pol->ctx.sources->make(n, &pol->ctx);
        if (r >= 0)
                r = source_set_add_spare(&pol->set, n->source, n->host, s);
        if (r < 0) {
                log_warning_errno(r, "Failed to start the spare NTS server %s: %m", n->string);
                return;
        }
        policy_verdict_logged_forget(pol, n->source);
        t = policy_now(pol);
        (void) snprintf(since, sizeof since, e->answered > 0 ? "last answer %s ago" : "no answer since its start",
                        FORMAT_TIMESPAN(t - MIN(t, e->answered), USEC_PER_SEC));
        log_notice("NTS source %s does not answer (%u %s in a row, %s): trying %s in its place; it takes the "
                   "place once it agrees with the others.", pol->ctx.sources->name(s), e->silent,
                   e->silent == 1 ? "failure" : "failures", since, n->string);
        if (pol->ctx.sources->keep_trying(n->source) < 0)
                source_set_failed(&pol->set, n->source);
}

/* The silent source answers again: the spare on probation for it is not needed. */
static void policy_drop_spare(Policy *pol, Source *s) {
        Source *spare = source_set_spare_for(&pol->set, s);

        if (!spare)
                return;
        log_info("NTS source %s answers again; the spare %s is not needed.", pol->ctx.sources->name(s),
                 pol->ctx.sources->name(spare));
        source_set_remove(&pol->set, spare);
        pol->ctx.sources->stop(spare);
}

/* A spare whose probation failed leaves the set; the next failure of the silent source tries
 * another. */
static void policy_spare_failed(Policy *pol, Source *s, SourceSetEntry *e) {
        log_notice("Spare NTS server %s fails (%s) on probation for %s; it is not used.", pol->ctx.sources->name(s),
                   pol->ctx.sources->last_error(s), pol->ctx.sources->name(e->replaces));
        source_set_remove(&pol->set, s);
        pol->ctx.sources->stop(s);
}

/* Returns true when the set started over (nothing of the old one is left to judge). */
static bool policy_failed(Policy *pol, Source *s, PolicyDecision *out) {
        SourceSetEntry *e = source_set_find(&pol->set, s);
        const char *ke_error;
        bool ke_logged;
        ServerName *n;

        if (e->replaces) {
                policy_spare_failed(pol, s, e);
                return false;
        }

        snprintf(pol->last_failure, sizeof pol->last_failure, "%s: %s", pol->ctx.sources->name(s),
                 pol->ctx.sources->last_error(s));
        /* Once per change: a source that keeps failing says so in its own lines. */
        ke_error = pol->ctx.sources->ke_error(s, &ke_logged);
        if (e->standing != SOURCE_SET_FAILING)
                log_notice("NTS source %s fails (%s); %s.", pol->ctx.sources->name(s),
                           policy_failure_reason(pol->ctx.sources->last_error(s), ke_error, ke_logged),
                           pol->ctx.sources->state(s) == SOURCE_FAILED ? "it is not used any more" :
                           "it is tried again, and still counts as in use: its last sample stays in the vote");
        source_set_failed(&pol->set, s);
        /* A pool's source is replaced by its pool (pool_source_event()). */
        n = pol->ctx.lists->find_source(pol->ctx.servers, s);
        if (n && n->pool)
                return false;
        if (pol->ctx.sources->state(s) == SOURCE_FAILED)
                return policy_replace(pol, s, out);
        policy_try_spare(pol, s);
        return false;
}

/* Once per change: a source whose delay is not trusted is not used as time (an attacker may
 * hold its replies back to widen its interval around a liar's), and says why. */
static void policy_log_delay(const Policy *pol, Source *s) {
        const SourceSample *p = pol->ctx.sources->sample(s);
        const char *what = pol->ctx.sources->nts(s) ? "NTS source" : "Time server";

        if (p->delay == NTP_FILTER_DELAY_USUAL)
                log_notice("%s %s: its delay (%.3f s) is trusted again; its samples are used.", what,
                           pol->ctx.sources->name(s), (double) p->ntp.delay_nsec / NTP_NSEC_PER_SEC);
        else if (p->delay == NTP_FILTER_DELAY_JUMPED)
                log_warning("%s %s: its delay jumped to %.3f s (least of its recent ones %.3f s); its samples are not "
                            "used until it is back, or has lasted %u replies.", what, pol->ctx.sources->name(s),
                            (double) p->ntp.delay_nsec / NTP_NSEC_PER_SEC,
                            (double) p->delay_min_nsec / NTP_NSEC_PER_SEC, NTP_FILTER_SIZE);
        else
                log_warning("%s %s: its delay of %.3f s is above %.0f s; its samples are not used while it stays so.",
                            what, pol->ctx.sources->name(s), (double) p->ntp.delay_nsec / NTP_NSEC_PER_SEC,
                            (double) NTP_FILTER_DELAY_MAX_NSEC / NTP_NSEC_PER_SEC);
}

static void policy_sample(Policy *pol, Source *s, PolicyDecision *out) {
        const SourceSample *p = pol->ctx.sources->sample(s);
        char addr[SOCKET_ADDRESS_STRING_MAX];
        SourceSetSample x = {
                .header = p->header,
                .ntp = p->ntp,
                .boottime = p->boottime,
                .max_age = 2 * pol->ctx.sources->poll_interval(s) + POLICY_AGE_SLACK_USEC,
                .spike = p->spike,
                .delayed = p->delay != NTP_FILTER_DELAY_USUAL,
                .bootstrap = p->bootstrap,
        };
        bool delayed = source_set_find(&pol->set, s)->delayed;

        /* The first reply from a new address: stock's words, and whether it is authenticated
         * (whenever the clock follows plain NTP, the log and STATUS= say so). */
        if (p->first) {
                const char *auth = p->authenticated ? ", NTS authenticated" : ", plain NTP, not authenticated";

                (void) socket_address_to_string(pol->ctx.sources->address(s), addr);
                log_info("Contacted time server %s (%s)%s.", addr, pol->ctx.sources->name(s), auth);
                if (pol->mode->notifies_contact)
                        policy_notify(out, "Contacted time server %s (%s)%s.", addr, pol->ctx.sources->name(s), auth);
        }

        if (p->authenticated)
                out->nts_answered = s;
        source_set_sample(&pol->set, s, &x);
        if (x.delayed != delayed)
                policy_log_delay(pol, s);
        policy_drop_spare(pol, s);
        if (s == pol->selected)
                out->record = true;
}

/* A source of a pool: the pool may replace it (an SRV target that keeps failing). */
static void policy_pool_event(Policy *pol, Source *s, SourceEvent e, PolicyDecision *out) {
        ServerName *n = pol->ctx.lists->find_source(pol->ctx.servers, s);

        if (n && n->pool && pol->ctx.lists->pool_source_event(n->pool, s, e))
                policy_follow_pool(pol, n, out);
}

void policy_on_pool_event(Policy *pol, ServerName *n, PoolEvent e, PolicyDecision *out) {
        assert(pol);
        assert(out);

        if (!pol->running)
                return;
        policy_follow_pool(pol, n, out);
        policy_judge(pol, out);
}

void policy_on_event(Policy *pol, Source *s, SourceEvent e, PolicyDecision *out) {
        assert(pol);
        assert(out);

        /* A source that is not in the set (it ran before, its key exchange ran on): only its NTS
         * counters and state. */
        if (!source_set_find(&pol->set, s)) {
                out->nts_event = e >= SOURCE_EVENT_REFUSED;
                return;
        }

        /* One server, one vote: what s told of which server it is may make it, or another,
         * a duplicate (timesyncd-policy-vote.c). */
        if ((e == SOURCE_EVENT_ADDRESS || e == SOURCE_EVENT_NTS_KEYS) && policy_identify(pol, s))
                policy_judge(pol, out);

        if (pol->mode->on_event(pol, s, e, out))
                return;

        switch (e) {
        case SOURCE_EVENT_ADDRESS:
                /* NTSAuthenticated speaks of the server at this address: nothing is shown as
                 * authenticated until its next verified reply. */
                if (s == pol->selected) {
                        out->changed |= BUS_PROPERTY_SERVER_ADDRESS | BUS_PROPERTY_NTS_AUTHENTICATED;
                        out->new_address = true;
                }
                out->sources_changed = true;
                return;
        case SOURCE_EVENT_SAMPLE:
                policy_pool_event(pol, s, e, out);
                policy_sample(pol, s, out);
                policy_judge(pol, out);
                /* One signal per sample of the selected source, as stock. With one server
                 * NTPMessage says what each sample says, and Sources changes with its state. */
                if (s == pol->selected)
                        out->changed |= BUS_PROPERTY_NTP_MESSAGE | BUS_PROPERTY_POLL_INTERVAL |
                                BUS_PROPERTY_FREQUENCY | BUS_PROPERTY_NTS_AUTHENTICATED |
                                BUS_PROPERTY_NTS_COOKIES;
                return;
        case SOURCE_EVENT_FAILED:
                if (policy_failed(pol, s, out))
                        return;
                policy_pool_event(pol, s, e, out);
                break;
        default:
                /* A pool's slot that the pool has no member for (an authenticated answer of the
                 * pool, which no one on the path can forge) is no server, and is not counted. */
                if (e == SOURCE_EVENT_NTS_KEYS || e == SOURCE_EVENT_NTS_KE_FAILED)
                        source_set_vacant(&pol->set, s, pol->ctx.sources->ke_pool_exhausted(s));
                out->nts_event = true;
                /* What Sources shows of one server changes with its state, not with each
                 * verified reply or cookie. */
                out->sources_changed = pol->mode->nts_event_changes_sources(e);
                return;
        }
        policy_judge(pol, out);
}

void policy_clock_changed(Policy *pol, PolicyDecision *out) {
        assert(pol);
        assert(out);

        source_set_restart(&pol->set);
        for (size_t i = 0; i < pol->set.n_entries; i++)
                pol->ctx.sources->clock_stepped(pol->set.entries[i].source, /* poll_now= */ true);
        policy_judge(pol, out);
}

void policy_poll_limits_changed(Policy *pol) {
        for (size_t i = 0; i < pol->set.n_entries; i++)
                pol->ctx.sources->poll_limits_changed(pol->set.entries[i].source);
}

void policy_poll_interval_locked(Policy *pol, usec_t interval) {
        for (size_t i = 0; i < pol->set.n_entries; i++)
                pol->ctx.sources->poll_interval_locked(pol->set.entries[i].source, interval);
}

bool policy_uses_list(const Policy *pol, ServerType t) {
        if (!pol->running)
                return false;
        return pol->mode->uses_list(pol, t);
}

static bool policy_vote_uses_list(const Policy *pol, ServerType t) {
        return server_type_is_nts(t);
}

PolicyRun policy_running(const Policy *pol) {
        return pol->running ? pol->mode->run : POLICY_STOPPED;
}

bool policy_clock_may_be_ahead(const Policy *pol) {
        for (size_t i = 0; i < pol->set.n_entries; i++) {
                const SourceSetEntry *e = &pol->set.entries[i];

                if (e->vacant || e->replaces || e->duplicate_of)
                        continue;
                /* Not known yet: the question is asked again at the next failure. */
                if (e->standing == SOURCE_SET_PENDING)
                        return false;
                if (e->standing == SOURCE_SET_ANSWERING && e->candidate.bootstrap == NTS_CLIENT_BOOTSTRAP_NONE)
                        return false;
        }
        return pol->set.n_entries > 0;
}

bool policy_stalled(const Policy *pol) {
        bool pools = false;

        for (size_t i = 0; i < pol->set.n_entries; i++) {
                Source *s = pol->set.entries[i].source;

                if (pol->ctx.sources->state(s) == SOURCE_IDLE || pol->ctx.sources->stalled(s))
                        return true;
        }
        /* An SRV pool without sources waits for its lookup or its timer. */
        LIST_FOREACH(names, n, policy_list(pol))
                if (n->pool) {
                        if (pol->ctx.lists->pool_stalled(n->pool))
                                return true;
                        pools = true;
                }
        return pol->set.n_entries == 0 && !pools;
}

static bool policy_vote_on_event(Policy *pol, Source *s, SourceEvent e, PolicyDecision *out) {
        return false;
}

/* Every NTS event changes a verdict or a standing that Sources shows. */
static bool policy_vote_nts_event_changes_sources(SourceEvent e) {
        return true;
}

const PolicyMode policy_vote_mode = {
        .run = POLICY_SEVERAL,
        .start = policy_vote_start,
        .on_event = policy_vote_on_event,
        .selected = policy_vote_selected,
        .judging = policy_vote_judging,
        .judged = policy_vote_judged,
        .steering = policy_vote_steering,
        .bootstrapped = policy_vote_bootstrapped,
        .uses_list = policy_vote_uses_list,
        .nts_event_changes_sources = policy_vote_nts_event_changes_sources,
        /* The verdicts of several change with a step. */
        .steer_changes_sources = true,
        .clears_nts_status = true,
};
