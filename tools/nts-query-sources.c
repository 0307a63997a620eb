/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* nts-query, the sources of a pool: the targets of a DNSSEC-validated SRV pool (srv:NAME), or
 * the distinct members of a key-exchange pool (--sources=N), each checked as one server, and
 * counted by server with the daemon's own rule (source_identity_same()). */

#include <stdio.h>

#include "hostname-util.h"
#include "log.h"
#include "nts-query.h"
#include "string-util.h"

static bool query_is_source(const Query *q) {
        return !q->pool_checked || q->pool_verdict == NTS_POOL_NEW;
}

void sources_done(Sources *S) {
        free(S->srv_message);
        srv_answer_done(&S->srv);
        for (size_t i = 0; i < S->n_deny; i++)
                free(S->deny[i]);
        for (size_t i = 0; i < S->n_queries; i++) {
                query_done(S->queries[i]);
                free(S->queries[i]);
        }
}

#define sources_fail FAIL_WITH

static Query *sources_add_query(Sources *S, const char *host, uint16_t port) {
        Query *q;

        assert(S->n_queries < ELEMENTSOF(S->queries));

        q = new0(Query, 1);
        if (!q)
                return NULL;
        q->opts = S->opts;
        q->host = host;
        q->port = port;
        q->deny = S->deny;
        q->n_deny = S->n_deny;
        S->queries[S->n_queries++] = q;
        return q;
}

static const char *query_name(const Query *q) {
        return q->ke && q->ke->ntp_server ? q->ke->ntp_server : q->host;
}

/* What the daemon knows of a source once it polls it (timesyncd-policy-vote.c): the NTP
 * server's address, and from a key exchange that worked its server's address and certificate
 * key. ke_pool: the pool whose members these are, NULL for SRV targets. */
static void query_identify(Query *q, const void *ke_pool) {
        q->identity = (SourceIdentity) { .ke_pool = ke_pool };
        if (q->have_ntp_address)
                source_identity_set_ntp_address(&q->identity, &q->ntp_address);
        if (!q->ke || q->ke->error < 0)
                return;
        source_identity_set_ke_address(&q->identity, &q->ke->address);
        if (q->ke->tls.has_key_sha256)
                source_identity_set_key(&q->identity, q->ke->tls.key_sha256);
}

/* One server, one source, by the daemon's own rule (source_identity_same()): each source that
 * is the same server as an earlier one is tied to the first of its kind and counts with it. */
static void sources_find_twins(Sources *S) {
        for (size_t j = 0; j < S->n_queries; j++)
                if (query_is_source(S->queries[j]))
                        query_identify(S->queries[j], S->opts->srv ? NULL : S);

        for (size_t j = 0; j < S->n_queries; j++) {
                Query *b = S->queries[j];

                if (!query_is_source(b))
                        continue;
                for (size_t i = 0; i < j && !b->twin_of; i++) {
                        const Query *a = S->queries[i];
                        SourceSameness why;

                        if (!query_is_source(a) || a->twin_of)
                                continue;
                        why = source_identity_same(&a->identity, &b->identity);
                        if (why != SOURCE_DISTINCT) {
                                b->twin_of = a;
                                b->twin_why = why;
                        }
                }
        }
}

/* "same NTP address 192.0.2.1": why q is the same server as its twin. */
static const char *query_twin_reason(const Query *q, char buf[static SOURCE_IDENTITY_REASON_MAX]) {
        assert(q->twin_of);
        return source_identity_reason(&q->twin_of->identity, q->twin_why, buf);
}

/* The IP address q shares with its twin; NULL when they share a certificate key. */
static const char *query_twin_address(const Query *q, char buf[static IN_ADDR_TO_STRING_MAX]) {
        const SourceIdentity *id = &q->twin_of->identity;

        if (q->twin_why == SOURCE_SAME_NTP_ADDRESS)
                return in_addr_to_string(id->ntp_family, &id->ntp_address, buf, IN_ADDR_TO_STRING_MAX);
        if (q->twin_why == SOURCE_SAME_KE_ADDRESS)
                return in_addr_to_string(id->ke_family, &id->ke_address, buf, IN_ADDR_TO_STRING_MAX);
        return NULL;
}

/* The first verified exchange of a source; NULL without one. */
static const Exchange *query_first_verified(const Query *q) {
        for (size_t i = 0; i < q->n_exchanges; i++)
                if (exchange_verified(&q->exchanges[i]))
                        return &q->exchanges[i];
        return NULL;
}

/* Two verified sources that are one server disagree when the intervals their first verified
 * exchanges give (offset plus or minus root distance) lie further apart than the step
 * threshold of RFC 5905 (128 ms): one server cannot be right twice. Returns the difference of
 * the offsets then, else 0. */
#define TWIN_DISAGREEMENT_NSEC INT64_C(128000000)
static int64_t twin_disagreement_nsec(const Query *a, const Query *b) {
        const Exchange *x = query_first_verified(a), *y = query_first_verified(b);
        int64_t d, bound;

        if (!x || !y)
                return 0;
        d = y->result.sample.offset_nsec - x->result.sample.offset_nsec;
        bound = ntp_sample_root_distance_nsec(&x->result.sample, &x->result.header, 0) +
                ntp_sample_root_distance_nsec(&y->result.sample, &y->result.header, 0) + TWIN_DISAGREEMENT_NSEC;
        return d > bound || d < -bound ? d : 0;
}

/* With several sources, everything must be right: the first source that is not gives the
 * exit status. */
static QueryExit sources_result(Sources *S) {
        size_t n = 0;

        sources_find_twins(S);

        for (size_t i = 0; i < S->n_queries; i++) {
                const Query *q = S->queries[i];

                if (!query_is_source(q))
                        continue;
                n++;
                if (q->exit != QUERY_EXIT_VERIFIED)
                        return sources_fail(S, q->exit, "Source %zu (%s): %s", n, q->ke && q->ke->ntp_server ?
                                            q->ke->ntp_server : q->host, q->failure);
        }
        if (n == 0)
                return sources_fail(S, QUERY_EXIT_OTHER, "No source was checked");

        for (size_t i = 0; i < S->n_queries; i++) {
                const Query *q = S->queries[i];
                char why[SOURCE_IDENTITY_REASON_MAX];
                int64_t d;

                if (!query_is_source(q) || !q->twin_of)
                        continue;
                d = twin_disagreement_nsec(q->twin_of, q);
                if (d != 0)
                        return sources_fail(S, QUERY_EXIT_DISAGREE, "%s and %s are the same server (%s) and "
                                            "disagree by %+.3f s", query_name(q->twin_of), query_name(q),
                                            query_twin_reason(q, why), (double) d / 1e9);
        }
        S->exit = QUERY_EXIT_VERIFIED;
        return S->exit;
}

typedef struct SrvRun {
        sd_event *event;
        Sources *sources;
} SrvRun;

static void on_srv_lookup(SrvLookup *l, int error, const char *message, const SrvAnswer *answer, void *userdata) {
        SrvRun *run = userdata;
        Sources *S = run->sources;

        S->srv_looked_up = true;
        S->srv_error = error;
        if (error < 0)
                S->srv_message = strdup(message);
        else {
                S->srv_error = srv_answer_copy(answer, &S->srv);
                if (S->srv_error < 0)
                        S->srv_message = strdup("Cannot keep the SRV records: out of memory");
        }
        (void) sd_event_exit(run->event, 0);
}

static int on_srv_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        SrvRun *run = userdata;

        run->sources->srv_error = -ETIMEDOUT;
        run->sources->srv_message = strdup("systemd-resolved did not answer the SRV lookup in time");
        return sd_event_exit(run->event, 0);
}

/* The daemon's lookup (timesyncd-srv.c) on a loop of its own. */
static int srv_lookup_run(Sources *S) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        SrvLookup *l = NULL;
        SrvRun run = { .sources = S };
        int r;

        r = sd_event_new(&e);
        if (r < 0)
                return r;
        run.event = e;
        r = sd_bus_open_system(&bus);
        if (r < 0) {
                S->srv_error = -ENOTCONN;
                if (asprintf(&S->srv_message, "cannot connect to the system bus (%s); SRV pools need "
                             "systemd-resolved with DNSSEC=yes", strerror(-r)) < 0)
                        S->srv_message = NULL;
                return 0;
        }
        r = sd_bus_attach_event(bus, e, 0);
        if (r >= 0)
                r = sd_event_add_time_relative(e, NULL, CLOCK_MONOTONIC, S->opts->timeout, 0, on_srv_timeout, &run);
        if (r >= 0)
                r = srv_lookup_new(bus, S->opts->host, NULL, NULL, on_srv_lookup, &run, &l);
        if (r < 0)
                return r;
        r = sd_event_loop(e);
        srv_lookup_free(l);
        return r;
}

QueryExit sources_run_srv(Sources *S) {
        size_t n;
        int r;

        r = srv_lookup_run(S);
        if (r < 0)
                return sources_fail(S, QUERY_EXIT_OTHER, "Cannot run the SRV lookup: %s", strerror(-r));
        if (S->srv_error < 0)
                /* Not authenticated, or authenticated as false: DNSSEC says no. Everything
                 * else is a lookup that did not give records. */
                return sources_fail(S, IN_SET(S->srv_error, -ENOKEY, -EBADMSG) ? QUERY_EXIT_DNSSEC : QUERY_EXIT_RESOLVE,
                                    "SRV lookup of %s%s refused: %s", SRV_NTSKE_PREFIX, S->opts->host,
                                    strna(S->srv_message));

        n = MIN(S->srv.n_records, S->opts->sources > 0 ? S->opts->sources : (size_t) QUERY_SOURCES_MAX);
        for (size_t i = 0; i < n; i++) {
                /* The certificate is checked against the target's name, at the record's port. */
                Query *q = sources_add_query(S, S->srv.records[i].target, S->srv.records[i].port);

                if (!q)
                        return sources_fail(S, QUERY_EXIT_OTHER, "Out of memory");
                if (query_key_exchange(q) == QUERY_EXIT_VERIFIED)
                        (void) query_ntp(q);
        }
        return sources_result(S);
}

static int sources_deny(Sources *S, const char *name) {
        if (S->n_deny >= ELEMENTSOF(S->deny))
                return -E2BIG;
        S->deny[S->n_deny] = strdup(name);
        if (!S->deny[S->n_deny])
                return -ENOMEM;
        S->n_deny++;
        return 0;
}

/* Judges the answer of q, a key exchange that worked, as nts-pool.h says; resolves the member's
 * name unless the name alone shows it brings nothing new. */
static NTS_PoolVerdict pool_judge(Sources *S, Query *q, const NTS_PoolMember *in_use, size_t n_in_use) {
        NTS_PoolVerdict v;

        v = NTS_pool_check(in_use, n_in_use, S->deny, S->n_deny, q->ke->ntp_server, NULL);
        if (v == NTS_POOL_NEW && query_resolve_ntp_server(q) >= 0)
                v = NTS_pool_check(in_use, n_in_use, S->deny, S->n_deny, q->ke->ntp_server, &q->ntp_address);
        q->pool_checked = true;
        q->pool_verdict = v;
        return v;
}

/* Key exchanges with HOST until --sources= distinct members, each named in the deny list of
 * the next exchange; as the daemon will run its rounds. */
static QueryExit run_ke_pool(Sources *S) {
        NTS_PoolMember in_use[QUERY_SOURCES_MAX];
        size_t n_in_use = 0;
        unsigned fruitless = 0;
        int r;

        while (n_in_use < S->opts->sources) {
                Query *q;

                if (fruitless >= NTS_POOL_MAX_FRUITLESS) {
                        S->stop_reason = "the last answers named no new member: the pool has no other, or it "
                                         "ignores NTP Server Deny";
                        break;
                }
                if (S->n_queries >= ELEMENTSOF(S->queries)) {
                        S->stop_reason = "too many key exchanges";
                        break;
                }
                q = sources_add_query(S, S->opts->host, S->opts->port);
                if (!q)
                        return sources_fail(S, QUERY_EXIT_OTHER, "Out of memory");
                if (query_key_exchange(q) != QUERY_EXIT_VERIFIED) {
                        S->stop_reason = "a key exchange failed";
                        break;
                }

                switch (pool_judge(S, q, in_use, n_in_use)) {
                case NTS_POOL_NEW:
                        /* A member that fails is a source that failed: shown, denied, and
                         * no reason to stop unless the next one fails as well. */
                        (void) query_ntp(q);
                        fruitless = q->exit == QUERY_EXIT_VERIFIED ? 0 : fruitless + 1;
                        if (q->have_ntp_address)
                                in_use[n_in_use++] = (NTS_PoolMember) { .name = q->ke->ntp_server,
                                                                        .address = q->ntp_address };
                        /* Without a Server record there is nothing to deny: the next answer
                         * tells whether this is a pool at all. */
                        r = q->ke->ntp_server ? sources_deny(S, q->ke->ntp_server) : 0;
                        if (r == -ENOMEM)
                                return sources_fail(S, QUERY_EXIT_OTHER, "Out of memory");
                        break;
                case NTS_POOL_SAME_ADDRESS:
                        r = sources_deny(S, q->ke->ntp_server);
                        if (r == -ENOMEM)
                                return sources_fail(S, QUERY_EXIT_OTHER, "Out of memory");
                        fruitless++;
                        break;
                case NTS_POOL_DENIED_AGAIN:
                        fruitless++;
                        break;
                case NTS_POOL_NO_MEMBER:
                        S->stop_reason = "the server names no pool member (no Server record): it is one server";
                        return sources_result(S);
                default:
                        assert_not_reached();
                }
                if (S->n_deny == ELEMENTSOF(S->deny) && n_in_use < S->opts->sources) {
                        S->stop_reason = "the deny list is full";
                        break;
                }
        }
        return sources_result(S);
}

static const char *const pool_verdict_json[_NTS_POOL_VERDICT_MAX] = {
        [NTS_POOL_NEW] = "new",
        [NTS_POOL_DENIED_AGAIN] = "denied-again",
        [NTS_POOL_SAME_ADDRESS] = "same-address",
        [NTS_POOL_NO_MEMBER] = "no-member",
};

static void json_srv(JsonWriter *w, const Sources *S) {
        char name[sizeof(SRV_NTSKE_PREFIX) + HOSTNAME_MAX];

        snprintf(name, sizeof(name), SRV_NTSKE_PREFIX "%s", S->opts->host);
        json_begin_object(w, "srv");
        json_write_string(w, "name", name);
        json_write_bool(w, "authenticated", S->srv_looked_up && S->srv_error == 0);
        json_write_string(w, "error", S->srv_error < 0 ? strna(S->srv_message) : NULL);
        json_write_string(w, "errno", S->srv_error < 0 ? strerrorname_np(-S->srv_error) : NULL);
        if (S->srv_error == 0 && S->srv_looked_up)
                json_write_integer(w, "ttl", S->srv.ttl);
        else
                json_write_null(w, "ttl");
        json_begin_array(w, "records");
        for (size_t i = 0; i < S->srv.n_records; i++) {
                const SrvRecord *r = &S->srv.records[i];

                json_begin_object(w, NULL);
                json_write_integer(w, "priority", r->priority);
                json_write_integer(w, "weight", r->weight);
                json_write_integer(w, "port", r->port);
                json_write_string(w, "target", r->target);
                json_write_integer(w, "ttl", r->ttl);
                json_end_object(w);
        }
        json_end_array(w);
        json_end_object(w);
}

static void json_pool(JsonWriter *w, const Sources *S) {
        json_begin_object(w, "pool");
        json_begin_array(w, "key_exchanges");
        for (size_t i = 0; i < S->n_queries; i++) {
                const Query *q = S->queries[i];
                bool ok = q->ke && q->ke->error >= 0;

                json_begin_object(w, NULL);
                json_begin_array(w, "denied");
                for (size_t j = 0; j < q->n_deny; j++)
                        json_write_string(w, NULL, q->deny[j]);
                json_end_array(w);
                json_write_string(w, "member", ok ? q->ke->ntp_server : NULL);
                json_write_string(w, "verdict", q->pool_checked ? pool_verdict_json[q->pool_verdict] : NULL);
                json_write_string(w, "error", q->exit != QUERY_EXIT_VERIFIED ? q->failure : NULL);
                json_end_object(w);
        }
        json_end_array(w);
        json_begin_array(w, "members");
        for (size_t i = 0; i < S->n_queries; i++)
                if (query_is_source(S->queries[i]) && S->queries[i]->ke && S->queries[i]->ke->ntp_server)
                        json_write_string(w, NULL, S->queries[i]->ke->ntp_server);
        json_end_array(w);
        json_write_string(w, "stopped", S->stop_reason);
        json_end_object(w);
}

/* Servers, not names: a source that is the same server as an earlier one counts with it. */
static size_t sources_servers(const Sources *S) {
        size_t n = 0;

        for (size_t i = 0; i < S->n_queries; i++)
                n += query_is_source(S->queries[i]) && !S->queries[i]->twin_of;
        return n;
}

/* Servers whose every source was verified. */
static size_t sources_verified(const Sources *S) {
        size_t n = 0;

        for (size_t i = 0; i < S->n_queries; i++) {
                const Query *q = S->queries[i];
                bool ok;

                if (!query_is_source(q) || q->twin_of)
                        continue;
                ok = q->exit == QUERY_EXIT_VERIFIED;
                for (size_t j = i + 1; ok && j < S->n_queries; j++)
                        if (S->queries[j]->twin_of == q && S->queries[j]->exit != QUERY_EXIT_VERIFIED)
                                ok = false;
                n += ok;
        }
        return n;
}

static void sources_print_json(const Sources *S) {
        JsonWriter w = JSON_WRITER_INIT(stdout);

        json_begin_object(&w, NULL);
        json_write_string(&w, "mode", S->opts->srv ? "srv" : "pool");
        json_write_string(&w, "name", S->opts->host);
        if (S->opts->srv)
                json_write_null(&w, "port");
        else
                json_write_integer(&w, "port", S->opts->port);
        json_write_integer(&w, "exit_code", S->exit);
        json_write_string(&w, "status", query_exit_to_string(S->exit));
        json_write_string(&w, "error", S->exit == QUERY_EXIT_VERIFIED ? NULL : S->failure);
        json_write_integer(&w, "verified", (int64_t) sources_verified(S));

        if (S->opts->srv)
                json_srv(&w, S);
        else
                json_write_null(&w, "srv");
        if (!S->opts->srv)
                json_pool(&w, S);
        else
                json_write_null(&w, "pool");

        json_write_integer(&w, "servers", (int64_t) sources_servers(S));
        json_begin_array(&w, "same_server");
        for (size_t i = 0; i < S->n_queries; i++) {
                const Query *q = S->queries[i];
                char why[SOURCE_IDENTITY_REASON_MAX], a[IN_ADDR_TO_STRING_MAX];

                if (!query_is_source(q) || !q->twin_of)
                        continue;
                json_begin_object(&w, NULL);
                json_write_string(&w, "first", query_name(q->twin_of));
                json_write_string(&w, "second", query_name(q));
                json_write_string(&w, "address", query_twin_address(q, a));
                json_write_string(&w, "reason", query_twin_reason(q, why));
                json_end_object(&w);
        }
        json_end_array(&w);

        json_begin_array(&w, "sources");
        for (size_t i = 0; i < S->n_queries; i++)
                if (query_is_source(S->queries[i]))
                        query_json(&w, NULL, S->queries[i]);
        json_end_array(&w);
        json_end_object(&w);
}

static void print_srv_human(const Sources *S) {
        if (S->srv_error < 0) {
                printf("SRV lookup:         %s%s refused (%s)\n", SRV_NTSKE_PREFIX, S->opts->host,
                       strna(strerrorname_np(-S->srv_error)));
                printf("                    %s\n", strna(S->srv_message));
                return;
        }

        printf("SRV lookup:         %s%s, DNSSEC-authenticated, %zu target%s, TTL %" PRIu32 " s\n",
               SRV_NTSKE_PREFIX, S->opts->host, S->srv.n_records, S->srv.n_records == 1 ? "" : "s", S->srv.ttl);
        printf("SRV records:        in RFC 2782 order (by priority, weighted random within one)\n");
        for (size_t i = 0; i < S->srv.n_records; i++) {
                const SrvRecord *r = &S->srv.records[i];

                printf("  priority %5u weight %5u port %5u target %s (TTL %" PRIu32 " s)\n", r->priority,
                       r->weight, r->port, r->target, r->ttl);
        }
}

static void print_pool_human(const Sources *S) {
        printf("Key-exchange pool:  %s port %u, up to %u distinct member%s\n", S->opts->host, S->opts->port, S->opts->sources,
               S->opts->sources == 1 ? "" : "s");
        for (size_t i = 0; i < S->n_queries; i++) {
                const Query *q = S->queries[i];
                char label[48];

                snprintf(label, sizeof(label), "Key exchange %zu:", i + 1);
                printf("%-20s%zu denied, ", label, q->n_deny);
                if (!q->pool_checked)
                        printf("failed: %s\n", q->failure);
                else if (!q->ke->ntp_server)
                        printf("no Server record: %s\n", NTS_pool_verdict_to_string(q->pool_verdict));
                else
                        printf("member %s: %s\n", q->ke->ntp_server, NTS_pool_verdict_to_string(q->pool_verdict));
        }
}

void sources_print(const Sources *S) {
        size_t n = 0, total = 0;

        if (S->opts->srv)
                print_srv_human(S);
        else
                print_pool_human(S);

        for (size_t i = 0; i < S->n_queries; i++)
                total += query_is_source(S->queries[i]);

        for (size_t i = 0; i < S->n_queries; i++) {
                const Query *q = S->queries[i];

                if (!query_is_source(q))
                        continue;
                printf("\n--- Source %zu of %zu: %s ---\n", ++n, total,
                       q->ke && q->ke->ntp_server ? q->ke->ntp_server : q->host);
                query_print(q);
                if (q->exit != QUERY_EXIT_VERIFIED)
                        printf("Failed:             %s\n", q->failure);
        }

        printf("\n");
        if (S->stop_reason)
                printf("Stopped:            %s\n", S->stop_reason);
        for (size_t i = 0; i < S->n_queries; i++) {
                const Query *q = S->queries[i];
                char why[SOURCE_IDENTITY_REASON_MAX];

                if (query_is_source(q) && q->twin_of)
                        printf("Same server:        %s and %s are the same server (%s): they count once\n",
                               query_name(q->twin_of), query_name(q), query_twin_reason(q, why));
        }
        if (total > 0)
                printf("Sources:            %zu of %zu verified%s\n", sources_verified(S), sources_servers(S),
                       sources_servers(S) < total ? " (distinct servers)" : "");
}

static QueryExit sources_run(Sources *S) {
        return S->opts->srv ? sources_run_srv(S) : run_ke_pool(S);
}

/* nts-query srv:NAME, or --sources=N HOST[:KEPORT]: returns the exit status. */
int sources_main(const QueryOptions *o) {
        Sources S = { .opts = o };
        int r;

        (void) sources_run(&S);
        if (o->json)
                sources_print_json(&S);
        else
                sources_print(&S);
        fflush(stdout);
        if (S.exit != QUERY_EXIT_VERIFIED)
                log_error("%s", S.failure);
        r = S.exit;
        sources_done(&S);
        return r;
}
