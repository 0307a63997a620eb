/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* A set of one (docs/ARCHITECTURE.md, "Several sources"): plain NTP, one NTS server, or
 * NTSMaxSources=1. There is no majority for a silence to shift (the server in use always has
 * all the say, as with stock), so the set walks the server lists one server at a time, in
 * stock's order: a failing server hands over to the next usable one at once, every server
 * tried once means a wait of ConnectionRetrySec=, and with nothing usable the set idles. Its
 * one server is selected from the start, and what STATUS= and NTSStatus say is that server's
 * own. The policy (timesyncd-policy.c) calls it through policy_walk_mode where a set of one
 * differs from a set of several. */

#include <errno.h>
#include <stdio.h>

#include "log.h"
#include "timesyncd-nts.h"
#include "timesyncd-policy-internal.h"

/* The set's one server becomes n (NULL: none): the one before stops and leaves the set (its
 * source stays with its name, and so do its NTS keys). n's source exists. */
static void policy_walk_use(Policy *pol, ServerName *n, PolicyDecision *out) {
        Source *old = pol->selected;

        if (old && (!n || old != n->source)) {
                pol->ctx.sources->stop(old);
                source_set_remove(&pol->set, old);
        }
        pol->walk_name = n;
        policy_select(pol, n ? n->source : NULL, NULL, out);
}

/* Makes n the set's one server and starts its source. Returns 0 when it runs, -EAGAIN when its
 * NTS client backs off (n is not usable now: try the next one), another negative errno when it
 * cannot start (out of memory or descriptors: wait and try again). */
static int policy_walk_try(Policy *pol, ServerName *n, PolicyDecision *out) {
        int r;

        r = pol->ctx.sources->make(n, &pol->ctx);
        if (r < 0)
                return r;
        policy_walk_use(pol, n, out);
        if (!source_set_find(&pol->set, n->source)) {
                r = source_set_add(&pol->set, n->source, n->host);
                if (r < 0)
                        return r;
                policy_verdict_logged_forget(pol, n->source);
        }
        r = pol->ctx.sources->start(n->source);
        if (r < 0)
                return r;
        out->polling = true;
        return 0;
}

/* No server usable: every NTS server refuses service or backs off, or no plain one is. */
static void policy_walk_none(Policy *pol, PolicyDecision *out) {
        policy_walk_use(pol, NULL, out);
        if (pol->nts && pol->ctx.lists->all_refuse(pol->ctx.servers)) {
                out->refused = true;
                return;
        }
        if (pol->nts) {
                /* Every NTS server backs off after failed key exchanges: look again when the
                 * first may try again. */
                policy_notify(out, "%s", pol->fallback ? FALLBACK_NTS_UNREACHABLE ". Retrying." :
                               "No NTS server usable, retrying.");
                out->nts_none = true;
                out->wait = true;
                out->wait_until = pol->ctx.lists->earliest_retry(pol->ctx.servers);
                return;
        }
        log_debug("No usable server configured.");
        policy_notify(out, "Idle.");
        out->idle = "no usable server configured";
}

/* Moves on to the next usable server after the one tried last, in stock's order (with NTS in
 * the NTS lists only). Every server tried once: a wait of ConnectionRetrySec= first. */
static void policy_walk_next(Policy *pol, PolicyDecision *out) {
        bool wrapped;
        int r;

        for (;;) {
                ServerName *n = pol->ctx.lists->next(pol->ctx.servers, pol->walk_name, pol->nts, &wrapped);

                if (!n) {
                        policy_walk_none(pol, out);
                        return;
                }
                if (wrapped && !pol->walked_round) {
                        pol->walked_round = true;
                        policy_walk_use(pol, NULL, out);
                        log_debug("Tried every server, waiting %s before trying again.",
                                  FORMAT_TIMESPAN(pol->ctx.config->connection_retry_usec, USEC_PER_SEC));
                        policy_notify(out, "No server answered, retrying.");
                        out->nts_none = pol->nts;
                        out->wait = true;
                        return;
                }
                pol->walked_round = false;

                /* -EAGAIN: backing off now (a key exchange could not even start), so no longer
                 * usable, and the walk moves past it. */
                r = policy_walk_try(pol, n, out);
                if (r != -EAGAIN || pol->ctx.lists->usable(n))
                        break;
        }
        if (r < 0)
                /* Out of descriptors or memory: try again later rather than stop for good. */
                out->wait = true;
}

/* What the one server reports that a set of several handles otherwise: stock's STATUS=, and
 * on failure the next server. Returns true when e was handled. */
static bool policy_walk_event(Policy *pol, Source *s, SourceEvent e, PolicyDecision *out) {
        char addr[SOCKET_ADDRESS_STRING_MAX];

        switch (e) {
        case SOURCE_EVENT_ADDRESS:
                if (!pol->ctx.sources->address(s))
                        return false;
                (void) socket_address_to_string(pol->ctx.sources->address(s), addr);
                log_debug("Connecting to time server %s (%s).", addr, pol->ctx.sources->name(s));
                policy_notify(out, "Connecting to time server %s (%s).", addr, pol->ctx.sources->name(s));
                return false;
        case SOURCE_EVENT_FAILED:
                /* A failed key exchange said why in NTSStatus already; a server that never
                 * answered after one did not. */
                if (pol->ctx.sources->silent(s)) {
                        char text[sizeof pol->last_failure];

                        (void) snprintf(text, sizeof text, "%s: %s", pol->ctx.sources->name(s),
                                        pol->ctx.sources->last_error(s));
                        (void) policy_set_nts_status(pol, text, out);
                }
                /* The next one takes over while this one backs off. */
                pol->ctx.sources->stop(s);
                policy_walk_next(pol, out);
                out->sources_changed = true;
                return true;
        default:
                return false;
        }
}

static void policy_walk_start(Policy *pol, PolicyDecision *out) {
        policy_walk_next(pol, out);
}

/* A set of one selects its server from the start, before it answers: there is nothing to
 * choose between, and ServerName shows whom the daemon talks to (as stock). */
static void policy_walk_selected(Policy *pol, Source *s, const SourceSetDecision *d, PolicyDecision *out) {
        if (s)
                log_debug("Selected server %s.", pol->ctx.sources->name(s));
}

/* NTSMinAgreeingSources= is about several servers: one alone is its majority. */
static void policy_walk_judging(Policy *pol, SourceSetPolicy *p) {
        p->min_agreeing = 0;
        p->one_server = true;
}

/* A set of one keeps its server selected, and what it says is that server's own: STATUS= and
 * NTSStatus follow its events (policy_walk_event(), nts_source_event()). */
static void policy_walk_judged(Policy *pol, const SourceSetDecision *d, PolicyDecision *out) {
}

static void policy_walk_steering(Policy *pol, const SourceSetDecision *d, PolicyDecision *out) {
}

/* One server's client says so itself. */
static void policy_walk_bootstrapped(Policy *pol, const PolicyDecision *d) {
}

static bool policy_walk_uses_list(const Policy *pol, ServerType t) {
        return pol->walk_name && pol->walk_name->type == t;
}

/* What Sources shows of one server changes with its state, not with each verified reply or
 * cookie. */
static bool policy_walk_nts_event_changes_sources(SourceEvent e) {
        return e != SOURCE_EVENT_NTS_VERIFIED && e != SOURCE_EVENT_NTS_COOKIES;
}

const PolicyMode policy_walk_mode = {
        .run = POLICY_ONE,
        .start = policy_walk_start,
        .on_event = policy_walk_event,
        .selected = policy_walk_selected,
        .judging = policy_walk_judging,
        .judged = policy_walk_judged,
        .steering = policy_walk_steering,
        .bootstrapped = policy_walk_bootstrapped,
        .uses_list = policy_walk_uses_list,
        .nts_event_changes_sources = policy_walk_nts_event_changes_sources,
        /* One server's state does not change with a step. */
        .steer_changes_sources = false,
        /* NTSStatus says why its server failed: it stays. */
        .clears_nts_status = false,
        .notifies_contact = true,
};
