/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "string-util.h"
#include "timesyncd-bus.h"
#include "timesyncd-manager.h"
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
 * intervals) is logged at its level at most this often; the other changes at debug level. */
#define SEVERAL_LOG_INTERVAL_USEC (5 * USEC_PER_MINUTE)

/* A source that failed this often since its last answer stays silent: a spare listed beyond
 * NTSMaxSources= is tried on probation in its place. */
#define SEVERAL_SILENT_FAILURES 3U

/* The NTS list in use: the runtime one while it names servers (runtime servers come first, as
 * in stock), else NTS=. */
static ServerName *several_list(Manager *m) {
        return m->servers[SERVER_NTS_RUNTIME] ?: m->servers[SERVER_NTS];
}

/* A server that refused service (kiss code DENY or RSTR) is out for good; one that backs off
 * stays and tries again by itself. */
static bool several_name_usable(const ServerName *n) {
        return !n->source || source_state(n->source) != SOURCE_FAILED;
}

bool manager_several_wanted(Manager *m) {
        bool pools = false;
        size_t n = 0;

        if (!manager_nts_enabled(m) || m->nts_unavailable)
                return false;
        LIST_FOREACH(names, i, several_list(m)) {
                n++;
                pools = pools || i->kind != SERVER_NAME_ONE;
        }
        /* A pool brings its sources here, also one alone with NTSMaxSources=1. */
        return pools || (n >= 2 && m->config.nts_max_sources >= 2);
}

/* The first pool entry of the list in use whose lookup failed, as "ENTRY: REASON", for
 * NTSStatus and STATUS=; "" when there is none. */
static const char *several_pool_failure(Manager *m, char *buf, size_t size) {
        buf[0] = '\0';
        LIST_FOREACH(names, n, several_list(m))
                if (n->pool && !isempty(pool_last_error(n->pool))) {
                        snprintf(buf, size, "%s: %s", n->string, pool_last_error(n->pool));
                        break;
                }
        return buf;
}

const char *manager_several_verdict(Manager *m, const Source *s) {
        SourceSetEntry *e = m->several ? source_set_find(&m->set, s) : NULL;

        return e ? source_set_verdict_string(&m->set, (size_t) (e - m->set.entries)) : NULL;
}

/* Returns true when NTSStatus changed. */
static bool several_set_nts_status(Manager *m, const char *text) {
        if (streq(m->nts_status, text))
                return false;
        snprintf(m->nts_status, sizeof m->nts_status, "%s", text);
        (void) manager_bus_emit_changed(m, "NTSStatus", NULL);
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
static const char *several_failing(Manager *m, const SourceSetDecision *d, char *buf, size_t size) {
        /* Room for the count before the list. */
        char list[sizeof m->nts_status - 48] = "";
        size_t n = 0, n_refusing = 0;

        LIST_FOREACH(names, i, several_list(m)) {
                if (i->kind == SERVER_NAME_ONE && i->source && source_state(i->source) == SOURCE_FAILED &&
                    !source_set_find(&m->set, i->source)) {
                        several_failing_append(list, sizeof list, &n, i->source);
                        n_refusing++;
                        continue;
                }
                for (size_t k = 0; k < m->set.n_entries; k++) {
                        const SourceSetEntry *e = &m->set.entries[k];

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

/* ---- which source is selected ---- */

/* The selected source changes: stock's ServerName, ServerAddress and NTPMessage describe it,
 * and so do the NTS properties. */
static void several_select(Manager *m, Source *s, const SourceSetDecision *d) {
        if (m->selected == s)
                return;

        m->selected = s;
        m->current = s ? manager_server_of(m, s) : NULL;
        m->ntpmsg_authenticated = false;
        /* While nothing is selected the clock is not steered: NTPMessage, from which
         * timedatectl shows an offset, describes no server. */
        if (!s)
                m->ntpmsg = (NTPMessage) {};
        if (s && source_sample(s)) {
                manager_record_message(m, source_sample(s));
                m->poll_interval_usec = source_poll_interval(s);
                log_info("Selected server %s (%zu of %zu NTS sources agree).", source_name(s), d->n_current_agree,
                         d->n_in_use);
        }
        (void) manager_bus_emit_changed(m, "ServerName", "ServerAddress", "NTPMessage", "PollIntervalUSec",
                                        "NTSAuthenticated", "NTSKeyExchangeServer", "NTSAEAD", "NTSCookies", NULL);
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

/* Falsetickers are logged once per change, and so is their return; a source whose verdict
 * flips at the edge of an interval says so at most once per SEVERAL_LOG_INTERVAL_USEC (the
 * rest at debug level). */
static void several_log_verdicts(Manager *m, const NTPSelectVerdict *before, const SourceSetDecision *d) {
        usec_t t = now(CLOCK_BOOTTIME);

        for (size_t i = 0; i < m->set.n_entries; i++) {
                SourceSetEntry *e = &m->set.entries[i];
                bool loud;

                if (e->verdict == before[i] ||
                    (e->verdict != NTP_SELECT_FALSETICKER && before[i] != NTP_SELECT_FALSETICKER))
                        continue;
                loud = e->logged_usec == 0 || t >= e->logged_usec + SEVERAL_LOG_INTERVAL_USEC;
                if (loud)
                        e->logged_usec = t;
                if (e->verdict == NTP_SELECT_FALSETICKER)
                        several_log_falseticker(e, d, loud ? LOG_WARNING : LOG_DEBUG);
                else if (e->verdict == NTP_SELECT_TRUECHIMER)
                        log_full(loud ? LOG_NOTICE : LOG_DEBUG, "NTS source %s agrees with the others again.",
                                 source_name(e->source));
        }
}

/* The log line of a change of what the set says: disagreement at warning level, agreement at
 * info. A set that flips back and forth between two states (a liar at the edge of the honest
 * intervals) logs a return to the state before the last one at debug level while the last line
 * at its level is younger than SEVERAL_LOG_INTERVAL_USEC, and the next line says how many were
 * so logged: one line per change of state, not one per flip. */
static void several_log_status(Manager *m, const SourceSetDecision *d, const char *text, bool disagree) {
        usec_t t = now(CLOCK_BOOTTIME);
        int level = disagree ? LOG_WARNING :
                    d->select.outcome == NTP_SELECT_AGREED ? LOG_INFO :
                    d->n_pending > 0 ? LOG_DEBUG : LOG_NOTICE;
        bool flip = streq(text, m->set_status_before) && m->set_logged_usec > 0 &&
                    t < m->set_logged_usec + SEVERAL_LOG_INTERVAL_USEC;

        snprintf(m->set_status_before, sizeof m->set_status_before, "%s", m->set_status);
        snprintf(m->set_status, sizeof m->set_status, "%s", text);
        if (flip || level == LOG_DEBUG) {
                m->set_changes_unlogged += flip;
                log_debug("%s.", text);
                return;
        }
        m->set_logged_usec = t;
        if (m->set_changes_unlogged > 0)
                log_full(level, "%s (after %u changes back and forth logged at debug level).", text,
                         m->set_changes_unlogged);
        else
                log_full(level, "%s.", text);
        m->set_changes_unlogged = 0;
}

/* STATUS=, NTSStatus and the log say what the sources say together, once per change. While the
 * clock is left alone they say since when. */
static void several_report(Manager *m, const SourceSetDecision *d) {
        char text[sizeof m->set_status], status[sizeof m->set_notified], pool[256], since[256],
             failing[sizeof m->nts_status];
        bool disagree = source_set_disagree(d), changed;

        source_set_describe(&m->set, d, text, sizeof text);
        /* The compiled-in servers, none of which answers: what the administrator can do. */
        if (m->nts_fallback && d->select.outcome == NTP_SELECT_NO_CANDIDATES && d->n_pending == 0)
                (void) snprintf(text, sizeof text, "%s", MANAGER_FALLBACK_NTS_UNREACHABLE);
        (void) several_pool_failure(m, pool, sizeof pool);

        if (!disagree)
                m->set_alone_since_usec = 0;
        else if (m->set_alone_since_usec == 0)
                m->set_alone_since_usec = now(CLOCK_REALTIME);
        if (disagree) {
                char ts[FORMAT_TIMESTAMP_MAX];

                (void) snprintf(since, sizeof since, "%s since %s", text,
                                format_timestamp(ts, sizeof ts, m->set_alone_since_usec));
        } else
                (void) snprintf(since, sizeof since, "%s", text);

        (void) snprintf(status, sizeof status, "%s%s%s%s%s.", since, m->selected ? "; selected " : "",
                        m->selected ? source_name(m->selected) : "", isempty(pool) ? "" : "; ", pool);

        /* NTSStatus says why NTS gives no time: the sources disagree, or too few agree or
         * answer, or none answers (then the last failure, as with one server); and why a pool
         * gives nothing, which only a change of configuration mends. While the others agree, it
         * names the servers that fail: the clock is steered, but by fewer than were configured.
         * STATUS= carries NTSStatus where it does not say the same (manager_notify_status()). */
        if (disagree)
                changed = several_set_nts_status(m, since);
        else if (!isempty(pool))
                changed = several_set_nts_status(m, pool);
        else if (d->select.outcome == NTP_SELECT_NO_CANDIDATES && d->n_pending == 0 && m->nts_fallback)
                changed = several_set_nts_status(m, text);
        else if (d->select.outcome == NTP_SELECT_NO_CANDIDATES && d->n_pending == 0 && m->set_last_failure[0])
                changed = several_set_nts_status(m, m->set_last_failure);
        else if (d->select.outcome == NTP_SELECT_AGREED)
                changed = several_set_nts_status(m, several_failing(m, d, failing, sizeof failing));
        else
                changed = several_set_nts_status(m, "");

        if (changed || !streq(status, m->set_notified)) {
                snprintf(m->set_notified, sizeof m->set_notified, "%s", status);
                manager_notify_status(m, "%s", status);
        }
        /* The selected source's changes have a line of their own. */
        if (!streq(text, m->set_status))
                several_log_status(m, d, text, disagree);
}

/* The leap second that more than half of the agreeing sources that answer now announce, else
 * none: one server alone cannot insert one. */
static int several_leap(Manager *m, const SourceSetDecision *d) {
        unsigned votes[4] = {};

        for (size_t i = 0; i < m->set.n_entries; i++)
                if (m->set.entries[i].verdict == NTP_SELECT_TRUECHIMER && m->set.entries[i].current)
                        votes[m->set.entries[i].candidate.header.leap & 3]++;
        for (int l = NTP_LEAP_PLUSSEC; l <= NTP_LEAP_MINUSSEC; l++)
                if (2 * votes[l] > d->n_current_agree)
                        return l;
        return NTP_LEAP_NONE;
}

/* The clock follows the combined offset of the agreeing sources. */
static void several_steer(Manager *m, const SourceSetDecision *d) {
        const SourceSetEntry *sel = &m->set.entries[d->select.selected];
        Source *s = sel->source;
        ClockAdjustment a = {
                .offset_nsec = d->select.offset_nsec,
                .step = llabs(d->select.offset_nsec) >= NTP_STEP_THRESHOLD_NSEC,
                .leap = several_leap(m, d),
                .poll_log2 = manager_poll_log2(source_poll_interval(s)),
                .max_error_nsec = sel->root_distance_nsec,
        };
        char agreement[64];
        int r;

        snprintf(agreement, sizeof agreement, ", %zu of %zu NTS sources agree", d->n_current_agree, d->n_in_use);
        r = manager_clock_follow(m, &a, source_name(s), true, agreement);
        if (r < 0)
                return;

        /* Bootstrap keys are good for this one step: each source with such keys repeats its key
         * exchange with every check, against the corrected clock. */
        if (d->bootstrap) {
                log_notice("Bootstrap: the clock took the time that %zu NTS sources agree on.", d->n_current_agree);
                for (size_t i = 0; i < m->set.n_entries; i++)
                        if (m->set.entries[i].candidate.bootstrap != NTS_CLIENT_BOOTSTRAP_NONE)
                                (void) source_sample_used(m->set.entries[i].source);
        }
        source_set_steered(&m->set);

        /* Every stored offset was measured against the clock before the step. In observe mode
         * the clock did not move (r == 0): the stored offsets stay true, and correcting them
         * would judge later samples against a clock that was never stepped. */
        if (a.step && r > 0) {
                source_set_stepped(&m->set, a.offset_nsec);
                for (size_t i = 0; i < m->set.n_entries; i++)
                        source_clock_stepped(m->set.entries[i].source, /* poll_now= */ false);
        } else if (clock_backend_type(m->clock) == CLOCK_BACKEND_KERNEL)
                source_set_slewed(&m->set, a.offset_nsec);
}

/* A spare on probation agrees with the others: it takes the place of the silent source, which
 * stops (its name is a spare itself now, and can come back the same way). */
static void several_promote(Manager *m, Source *spare) {
        Source *silent = source_set_find(&m->set, spare)->replaces;

        if (source_set_find(&m->set, silent)->standing != SOURCE_SET_FAILING)
                return;

        log_notice("NTS server %s takes the place of %s, which does not answer: it agrees with the others.",
                   source_name(spare), source_name(silent));
        if (m->selected == silent)
                several_select(m, NULL, NULL);
        source_set_promote(&m->set, spare);
        source_stop(silent);
}

static void several_judge(Manager *m) {
        NTPSelectVerdict before[NTP_SELECT_MAX];
        struct timespec ts = {};
        SourceSetDecision d;
        int r;

        (void) clock_backend_now(m->clock, &ts);
        SourceSetPolicy p = {
                .min_agreeing = m->config.nts_min_agreeing,
                .root_distance_max_nsec = (int64_t) MIN(m->config.root_distance_max_usec, (usec_t) INT64_MAX / 1000) * 1000,
                .now_boottime = now(CLOCK_BOOTTIME),
                .now_realtime_nsec = (int64_t) ts.tv_sec * NTP_NSEC_PER_SEC + ts.tv_nsec,
                .backward_floor_nsec = m->backward_floor_nsec,
        };

        for (size_t i = 0; i < m->set.n_entries; i++)
                before[i] = m->set.entries[i].verdict;

        r = source_set_select(&m->set, &p, &d);
        if (r < 0) {
                log_error_errno(r, "Failed to select among the NTS sources: %m");
                return;
        }

        several_log_verdicts(m, before, &d);
        several_select(m, d.select.selected < m->set.n_entries ? m->set.entries[d.select.selected].source : NULL, &d);
        several_report(m, &d);
        if (d.steer)
                several_steer(m, &d);
        if (d.qualified)
                several_promote(m, d.qualified);
        manager_bus_sources_changed(m);
}

/* ---- the set's life cycle ---- */

static bool several_failed(Manager *m, Source *s);

/* Adds s (of n) to the set and starts it; one that cannot start now backs off by itself and
 * counts as failing. The key-exchange host is n's: a pool's members share its name, and count
 * as one name for the bootstrap. */
static int several_add_source(Manager *m, ServerName *n, Source *s) {
        int r;

        r = source_set_add(&m->set, s, n->host);
        if (r < 0)
                return log_error_errno(r, "Failed to add a source of %s to the NTS sources: %m", n->string);

        if (source_keep_trying(s) < 0) {
                snprintf(m->set_last_failure, sizeof m->set_last_failure, "%s: %s", source_name(s),
                         source_last_error(s));
                source_set_failed(&m->set, s);
        }
        return 0;
}

static int several_add(Manager *m, ServerName *n) {
        int r;

        r = manager_source_of(m, n);
        if (r < 0)
                return r;
        return several_add_source(m, n, n->source);
}

/* The set follows the sources of n's pool: those it retired leave, new ones join and start. */
static void several_follow_pool(Manager *m, ServerName *n) {
        for (size_t i = m->set.n_entries; i-- > 0;) {
                Source *s = m->set.entries[i].source;

                if (!pool_source_retired(n->pool, s))
                        continue;
                source_set_remove(&m->set, s);
                if (m->selected == s)
                        several_select(m, NULL, NULL);
        }
        for (size_t i = 0; i < pool_n_sources(n->pool); i++) {
                Source *s = pool_source(n->pool, i);

                if (!source_set_find(&m->set, s))
                        (void) several_add_source(m, n, s);
        }
        manager_bus_sources_changed(m);
}

static int several_add_pool(Manager *m, ServerName *n, size_t quota) {
        int r;

        r = manager_pool_of(m, n);
        if (r < 0)
                return r;
        pool_start(n->pool, quota);
        several_follow_pool(m, n);
        return 0;
}

void manager_several_start(Manager *m) {
        ServerName *used[NTP_SELECT_MAX];
        size_t quota[NTP_SELECT_MAX], n_used = 0, left, n = 0, n_pools = 0, n_sources = 0;
        bool more = true;

        manager_several_stop(m);
        m->several = true;
        m->set = (SourceSet) { .selected = SIZE_MAX, .preferred = SIZE_MAX };
        m->set_status[0] = m->set_status_before[0] = m->set_notified[0] = m->set_last_failure[0] = '\0';
        m->set_alone_since_usec = m->set_logged_usec = 0;
        m->set_changes_unlogged = 0;

        /* The first NTSMaxSources= usable entries get a source each, in order, so that a server
         * listed beside a pool is always used; what is left goes to the pools among them, one
         * more each in turn. */
        LIST_FOREACH(names, i, several_list(m)) {
                if (n_used >= m->config.nts_max_sources)
                        break;
                if (several_name_usable(i)) {
                        used[n_used] = i;
                        quota[n_used++] = 1;
                }
        }
        left = m->config.nts_max_sources - n_used;
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
                        if (several_add(m, used[k]) >= 0)
                                n++;
                } else if (several_add_pool(m, used[k], quota[k]) >= 0) {
                        n_pools++;
                        n_sources += quota[k];
                }

        if (n == 0 && n_pools == 0) {
                manager_nts_enter_refused(m);
                return;
        }

        if (n_pools == 0 && n == 1)
                /* Several listed, all but one refused service (several_name_usable()). */
                log_info("Using 1 NTS server, the only one listed that does not refuse service%s.",
                         m->config.nts_min_agreeing > 1 ?
                         ": NTSMinAgreeingSources= asks for more sources that agree, so the clock is left alone" : "");
        else if (n_pools == 0)
                log_info("Using %zu NTS servers together: the clock follows only what a majority of them agree on "
                         "(%zu), and a server that does not answer still counts%s.", n, n / 2 + 1,
                         m->config.nts_min_agreeing > n / 2 + 1 ? ", and at least NTSMinAgreeingSources= of them" : "");
        else
                log_info("Using up to %zu NTS sources together, %zu of them from %zu %s: the clock follows only what "
                         "a majority of those in use agree on, and a source that does not answer still counts%s.",
                         n + n_sources, n_sources, n_pools, n_pools == 1 ? "pool" : "pools",
                         m->config.nts_min_agreeing > 1 ? ", and at least NTSMinAgreeingSources= of them" : "");
        if (m->config.nts_min_agreeing > n + n_sources)
                log_warning("NTSMinAgreeingSources=%u can never be met: at most %zu NTS sources are in use "
                            "(NTSMaxSources=%u); the clock is left alone.", m->config.nts_min_agreeing,
                            n + n_sources, m->config.nts_max_sources);
        manager_enter(m, MANAGER_POLLING, NULL);
        several_judge(m);
}

void manager_several_stop(Manager *m) {
        if (!m->several)
                return;

        for (size_t i = 0; i < m->set.n_entries; i++)
                source_stop(m->set.entries[i].source);
        for (ServerType t = 0; t < _SERVER_TYPE_MAX; t++)
                LIST_FOREACH(names, n, m->servers[t])
                        if (n->pool)
                                pool_stop(n->pool);
        source_set_done(&m->set);
        m->several = false;
        m->selected = NULL;
        m->current = NULL;
        m->ntpmsg_authenticated = false;
        m->set_status[0] = m->set_status_before[0] = m->set_notified[0] = '\0';
        m->set_alone_since_usec = 0;
        /* NTSStatus said what the set said together (several_report()): left standing, one server
         * after a reload would carry it in NTSStatus and in every STATUS= until its first reply. */
        several_set_nts_status(m, "");
        (void) manager_bus_emit_changed(m, "ServerName", "ServerAddress", "NTSAuthenticated", "NTSKeyExchangeServer",
                                        "NTSAEAD", "NTSCookies", NULL);
        manager_bus_sources_changed(m);
}

static bool several_pool_started(Manager *m) {
        LIST_FOREACH(names, n, several_list(m))
                if (n->pool && pool_started(n->pool))
                        return true;
        return false;
}

/* A server that refuses service gives its place to the next one of the list not in use.
 * Returns true when the set started over instead. */
static bool several_replace(Manager *m, Source *s) {
        source_set_remove(&m->set, s);
        if (m->selected == s)
                several_select(m, NULL, NULL);

        LIST_FOREACH(names, n, several_list(m)) {
                /* A pool that is not in use has no quota to fill a place with. */
                if (n->kind != SERVER_NAME_ONE || !several_name_usable(n) ||
                    (n->source && source_set_find(&m->set, n->source)))
                        continue;
                log_info("NTS server %s takes the place of %s.", n->string, source_name(s));
                (void) several_add(m, n);
                return false;
        }

        /* Nobody left in the set and no pool in use to bring someone: choose again from the
         * whole list, where a pool not used so far takes over, or else every server refuses.
         * Without this the manager would stay "polling" with nothing in progress. */
        if (m->set.n_entries > 0 || several_pool_started(m))
                return false;
        manager_several_start(m);
        return true;
}

/* The first server of the list that is neither in the set nor refusing service, and has not
 * failed since it was made (a spare that failed its probation is tried again only when no
 * other is left). NULL: none. */
static ServerName *several_spare(Manager *m) {
        ServerName *tried = NULL;

        LIST_FOREACH(names, n, several_list(m)) {
                if (n->kind != SERVER_NAME_ONE || !several_name_usable(n) ||
                    (n->source && source_set_find(&m->set, n->source)))
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
static void several_try_spare(Manager *m, Source *s) {
        SourceSetEntry *e = source_set_find(&m->set, s);
        ServerName *n;
        int r;

        if (!e || e->replaces || e->silent < SEVERAL_SILENT_FAILURES || source_set_spare_for(&m->set, s))
                return;
        n = several_spare(m);
        if (!n)
                return;
        r = manager_source_of(m, n);
        if (r >= 0)
                r = source_set_add_spare(&m->set, n->source, n->host, s);
        if (r < 0) {
                log_warning_errno(r, "Failed to start the spare NTS server %s: %m", n->string);
                return;
        }
        log_notice("NTS source %s does not answer (%u failures in a row): trying %s in its place; it takes the "
                   "place once it agrees with the others.", source_name(s), e->silent, n->string);
        if (source_keep_trying(n->source) < 0)
                source_set_failed(&m->set, n->source);
}

/* The silent source answers again: the spare on probation for it is not needed. */
static void several_drop_spare(Manager *m, Source *s) {
        Source *spare = source_set_spare_for(&m->set, s);

        if (!spare)
                return;
        log_info("NTS source %s answers again; the spare %s is not needed.", source_name(s), source_name(spare));
        source_set_remove(&m->set, spare);
        source_stop(spare);
}

/* A spare whose probation failed leaves the set; the next failure of the silent source tries
 * another. */
static void several_spare_failed(Manager *m, Source *s, SourceSetEntry *e) {
        log_notice("Spare NTS server %s fails (%s) on probation for %s; it is not used.", source_name(s),
                   source_last_error(s), source_name(e->replaces));
        source_set_remove(&m->set, s);
        source_stop(s);
}

/* Returns true when the set started over (nothing of the old one is left to judge). */
static bool several_failed(Manager *m, Source *s) {
        SourceSetEntry *e = source_set_find(&m->set, s);
        ServerName *n;

        if (e->replaces) {
                several_spare_failed(m, s, e);
                return false;
        }

        snprintf(m->set_last_failure, sizeof m->set_last_failure, "%s: %s", source_name(s), source_last_error(s));
        /* Once per change: a source that keeps failing says so in its own lines. */
        if (e->standing != SOURCE_SET_FAILING)
                log_notice("NTS source %s fails (%s); %s.", source_name(s), source_last_error(s),
                           source_state(s) == SOURCE_FAILED ? "it is not used any more" :
                           "it is tried again, and still counts as in use: its last sample stays in the vote");
        source_set_failed(&m->set, s);
        /* A pool's source is replaced by its pool (pool_source_event()). */
        n = manager_server_of(m, s);
        if (n && n->pool)
                return false;
        if (source_state(s) == SOURCE_FAILED)
                return several_replace(m, s);
        several_try_spare(m, s);
        return false;
}

static void several_sample(Manager *m, Source *s) {
        const SourceSample *p = source_sample(s);
        char addr[SOCKET_ADDRESS_STRING_MAX];
        SourceSetSample x = {
                .header = p->header,
                .ntp = p->ntp,
                .boottime = p->boottime,
                .max_age = 2 * source_poll_interval(s) + SEVERAL_AGE_SLACK_USEC,
                .spike = p->spike,
                .bootstrap = p->bootstrap,
        };

        if (p->first)
                log_info("Contacted time server %s (%s)%s.", socket_address_to_string(source_address(s), addr),
                         source_name(s), p->authenticated ? ", NTS authenticated" : "");

        source_set_sample(&m->set, s, &x);
        several_drop_spare(m, s);
        if (s == m->selected) {
                manager_record_message(m, p);
                m->poll_interval_usec = source_poll_interval(s);
        }
}

/* A source of a pool: the pool may replace it (an SRV target that keeps failing). */
static void several_pool_event(Manager *m, Source *s, SourceEvent e) {
        ServerName *n = manager_server_of(m, s);

        if (n && n->pool && pool_source_event(n->pool, s, e))
                several_follow_pool(m, n);
}

void manager_several_on_pool_event(Manager *m, ServerName *n, PoolEvent e) {
        if (!m->several)
                return;
        several_follow_pool(m, n);
        several_judge(m);
}

void manager_several_on_event(Manager *m, Source *s, SourceEvent e) {
        /* A source that is not in the set (it ran before, its key exchange ran on): only its NTS
         * counters and state. */
        if (!source_set_find(&m->set, s)) {
                if (e >= SOURCE_EVENT_REFUSED)
                        manager_nts_changed(m, s, e);
                return;
        }

        /* One server, one vote: what s told of which server it is may make it, or another,
         * a duplicate (timesyncd-several-vote.c). */
        if ((e == SOURCE_EVENT_ADDRESS || e == SOURCE_EVENT_NTS_KEYS) && manager_several_identify(m, s))
                several_judge(m);

        switch (e) {
        case SOURCE_EVENT_ADDRESS:
                if (s == m->selected)
                        (void) manager_bus_emit_changed(m, "ServerAddress", NULL);
                manager_bus_sources_changed(m);
                return;
        case SOURCE_EVENT_SAMPLE:
                several_pool_event(m, s, e);
                several_sample(m, s);
                several_judge(m);
                /* One signal per sample of the selected source, as with one server. */
                if (s == m->selected)
                        (void) manager_bus_emit_changed(m, "NTPMessage", "PollIntervalUSec", "Frequency",
                                                        "NTSAuthenticated", "NTSCookies", NULL);
                return;
        case SOURCE_EVENT_FAILED:
                if (several_failed(m, s))
                        return;
                several_pool_event(m, s, e);
                break;
        default:
                /* A pool's slot that the pool has no member for (an authenticated answer of the
                 * pool, which no one on the path can forge) is no server, and is not counted. */
                if (e == SOURCE_EVENT_NTS_KEYS || e == SOURCE_EVENT_NTS_KE_FAILED)
                        source_set_vacant(&m->set, s, nts_client_pool_exhausted(source_nts(s)));
                manager_nts_changed(m, s, e);
                manager_bus_sources_changed(m);
                return;
        }
        several_judge(m);
}

void manager_several_clock_changed(Manager *m) {
        source_set_restart(&m->set);
        for (size_t i = 0; i < m->set.n_entries; i++)
                source_clock_stepped(m->set.entries[i].source, /* poll_now= */ true);
        several_judge(m);
}

void manager_several_poll_limits_changed(Manager *m) {
        for (size_t i = 0; i < m->set.n_entries; i++)
                source_poll_limits_changed(m->set.entries[i].source);
        if (m->selected)
                m->poll_interval_usec = source_poll_interval(m->selected);
}

bool manager_several_clock_may_be_ahead(Manager *m) {
        for (size_t i = 0; i < m->set.n_entries; i++) {
                const SourceSetEntry *e = &m->set.entries[i];

                if (e->vacant || e->replaces || e->duplicate_of)
                        continue;
                /* Not known yet: the question is asked again at the next failure. */
                if (e->standing == SOURCE_SET_PENDING)
                        return false;
                if (e->standing == SOURCE_SET_ANSWERING && e->candidate.bootstrap == NTS_CLIENT_BOOTSTRAP_NONE)
                        return false;
        }
        return m->set.n_entries > 0;
}

bool manager_several_stalled(Manager *m) {
        bool pools = false;

        for (size_t i = 0; i < m->set.n_entries; i++) {
                Source *s = m->set.entries[i].source;

                if (source_state(s) == SOURCE_IDLE || source_stalled(s))
                        return true;
        }
        /* An SRV pool without sources waits for its lookup or its timer. */
        LIST_FOREACH(names, n, several_list(m))
                if (n->pool) {
                        if (pool_stalled(n->pool))
                                return true;
                        pools = true;
                }
        return m->set.n_entries == 0 && !pools;
}
