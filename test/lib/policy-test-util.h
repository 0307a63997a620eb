/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Fake sources for the policy (PolicySourceOps, timesyncd-policy.h), and fake server lists and
 * pools over them (PolicyListOps), so that a unit test drives policy_on_event() for a set of
 * several, or the walk of a set of one, as the manager does, without sockets, lookups, key
 * exchanges or an event loop. A fake is a server of the test's world: which server it is (its NTP address,
 * its key-exchange address and certificate key, all derived from `server`, or the NTP address
 * of the server it claims), its state and its last sample, which the test sets before it
 * reports an event; what the policy asks of it (start, stop, unused, ...) is counted. The
 * policy runs on a fake clock and a fake CLOCK_BOOTTIME (fake_boottime_usec, which the test
 * moves on), so that one seed gives one run, and on the NTS lists of the fixture;
 * PolicyContext.userdata is the fixture, which makes a name's fake the first time the policy
 * uses the name. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tests.h"
#include "timesyncd-clock.h"
#include "timesyncd-policy.h"

#define FAKE_MSEC INT64_C(1000000)
#define FAKE_SEC INT64_C(1000000000)
#define FAKE_POLL_USEC (64 * USEC_PER_SEC)
#define FAKE_NAMES_MAX 24
#define FAKE_POOLS_MAX 2
#define FAKE_POOL_MEMBERS_MAX 4

typedef struct FakeSource {
        char name[64];
        int server;                     /* which server answers: twins share one */
        int claims;                     /* the server whose NTP address its key exchange names; -1 */
        bool liar;                      /* the test's truth, for its checks */
        SourceState state;
        SocketAddress address;
        bool has_address;
        SourceSample sample;
        bool has_sample;
        char last_error[64];
        unsigned failures;
        bool silent;                    /* never answered after a key exchange */
        usec_t retry_after;             /* its NTS client backs off until then (fake CLOCK_BOOTTIME) */
        int start_error;                /* what start() returns (-EAGAIN: its key exchange cannot start) */
        usec_t start_backoff_usec;      /* ... and its client backs off this long from then on */
        bool unused;                    /* what the policy said last (set_unused) */
        bool told_address;              /* the test reported SOURCE_EVENT_ADDRESS since its start */
        unsigned starts, stops, samples_used;
} FakeSource;

/* CLOCK_BOOTTIME as the policy and the fakes' samples see it. */
static usec_t fake_boottime_usec;

static usec_t fake_now_boottime(void) {
        return fake_boottime_usec;
}

static inline FakeSource *fake_of(const Source *s) {
        return (FakeSource *) s;
}

static inline Source *fake_source(FakeSource *f) {
        return (Source *) f;
}

/* A pool of the NTS list (pool:NAME): the servers it hands out, in order, as the set asks for
 * them; a member it retired is replaced by the next one. */
typedef struct FakePool {
        ServerName *name;
        FakeSource members[FAKE_POOL_MEMBERS_MAX];
        size_t n_members;               /* the servers it knows */
        size_t n_handed;                /* ... of which it handed out the first ones */
        bool retired[FAKE_POOL_MEMBERS_MAX];
        bool started;
        char last_error[64];
} FakePool;

static inline FakePool *fake_pool_of(const Pool *p) {
        return (FakePool *) p;
}

/* The NTS list, the fakes of its names (by position; a pool's in its FakePool), the policy, and
 * what the manager shows. */
typedef struct PolicyFixture {
        ServerName *servers[_SERVER_TYPE_MAX];
        FakeSource fakes[FAKE_NAMES_MAX];
        size_t n_names;
        FakePool pools[FAKE_POOLS_MAX];
        size_t n_pools;
        TimesyncConfig config;
        ClockBackend *clock;
        char nts_status[512];
        Policy pol;
        unsigned makes;
} PolicyFixture;

/* 192.0.2.N+1 for NTP, 198.51.100.N+1 for the key exchange. */
static inline void fake_ntp_address(int server, SocketAddress *ret) {
        char ip[32];

        (void) snprintf(ip, sizeof ip, "192.0.2.%d", server + 1);
        ASSERT_OK(socket_address_from_string(ip, 123, ret));
}

static int fake_make(ServerName *n, const PolicyContext *ctx) {
        PolicyFixture *fx = ctx->userdata;
        size_t i = 0;

        if (n->source)
                return 0;
        LIST_FOREACH(names, k, fx->servers[SERVER_NTS]) {
                if (k == n)
                        break;
                i++;
        }
        ASSERT_TRUE(i < fx->n_names);
        n->source = fake_source(&fx->fakes[i]);
        fx->makes++;
        return 0;
}

static const char *fake_name(const Source *s) {
        return fake_of(s)->name;
}

static SourceState fake_state(const Source *s) {
        return fake_of(s)->state;
}

static const SocketAddress *fake_address(const Source *s) {
        return fake_of(s)->has_address ? &fake_of(s)->address : NULL;
}

static const SourceSample *fake_sample(const Source *s) {
        return fake_of(s)->has_sample ? &fake_of(s)->sample : NULL;
}

static usec_t fake_poll_interval(const Source *s) {
        return FAKE_POLL_USEC;
}

static const char *fake_last_error(const Source *s) {
        return fake_of(s)->last_error;
}

static bool fake_silent(const Source *s) {
        return fake_of(s)->silent;
}

static unsigned fake_failures(const Source *s) {
        return fake_of(s)->failures;
}

static bool fake_stalled(const Source *s) {
        return false;
}

static bool fake_nts(const Source *s) {
        return true;
}

static const char *fake_ke_error(const Source *s, bool *ret_logged) {
        *ret_logged = false;
        return "";
}

static bool fake_ke_pool_exhausted(const Source *s) {
        return false;
}

/* Its NTP address (or the one it claims), the key-exchange server and key of its server. */
static void fake_identify(const Source *s, SourceIdentity *id) {
        const FakeSource *f = fake_of(s);
        SocketAddress ke;
        uint8_t key[32];
        char ip[32];

        if (f->has_address)
                source_identity_set_ntp_address(id, &f->address);
        (void) snprintf(ip, sizeof ip, "198.51.100.%d", f->server + 1);
        ASSERT_OK(socket_address_from_string(ip, 4460, &ke));
        source_identity_set_ke_address(id, &ke);
        memset(key, f->server + 1, sizeof key);
        source_identity_set_key(id, key);
}

static int fake_start(Source *s) {
        FakeSource *f = fake_of(s);

        f->starts++;
        if (f->start_backoff_usec > 0)
                f->retry_after = fake_boottime_usec + f->start_backoff_usec;
        if (f->start_error < 0)
                return f->start_error;
        f->state = SOURCE_POLL_WAIT;
        /* Its first request after a start tells its address again. */
        f->told_address = false;
        return 0;
}

static void fake_stop(Source *s) {
        FakeSource *f = fake_of(s);

        f->stops++;
        if (f->state != SOURCE_FAILED)
                f->state = SOURCE_IDLE;
}

static bool fake_sample_used(Source *s) {
        fake_of(s)->samples_used++;
        return false;
}

static void fake_clock_stepped(Source *s, bool poll_now) {
}

static void fake_sample_stepped(Source *s, int64_t step_nsec) {
}

static void fake_poll_limits_changed(Source *s) {
}

static void fake_poll_interval_locked(Source *s, usec_t interval) {
}

static void fake_set_unused(Source *s, bool unused) {
        fake_of(s)->unused = unused;
}

static const PolicySourceOps fake_source_ops = {
        .make = fake_make,
        .name = fake_name,
        .state = fake_state,
        .address = fake_address,
        .sample = fake_sample,
        .poll_interval = fake_poll_interval,
        .last_error = fake_last_error,
        .silent = fake_silent,
        .failures = fake_failures,
        .stalled = fake_stalled,
        .nts = fake_nts,
        .ke_error = fake_ke_error,
        .ke_pool_exhausted = fake_ke_pool_exhausted,
        .identify = fake_identify,
        .start = fake_start,
        .keep_trying = fake_start,
        .stop = fake_stop,
        .sample_used = fake_sample_used,
        .clock_stepped = fake_clock_stepped,
        .sample_stepped = fake_sample_stepped,
        .poll_limits_changed = fake_poll_limits_changed,
        .poll_interval_locked = fake_poll_interval_locked,
        .set_unused = fake_set_unused,
};

static bool fake_backing_off(const FakeSource *f) {
        return f->retry_after > fake_boottime_usec;
}

static bool fake_usable(const ServerName *n) {
        return !n->source || (fake_of(n->source)->state != SOURCE_FAILED && !fake_backing_off(fake_of(n->source)));
}

/* Stock's order within the NTS lists or the plain ones (the fallback list left out): the usable
 * names after current, then from the first again. */
static ServerName *fake_next(ServerName *const *lists, const ServerName *current, bool nts, bool *ret_wrapped) {
        static const ServerType nts_order[] = { SERVER_NTS_RUNTIME, SERVER_NTS };
        static const ServerType ntp_order[] = { SERVER_RUNTIME, SERVER_SYSTEM, SERVER_LINK };
        const ServerType *order = nts ? nts_order : ntp_order;
        size_t n_order = nts ? ELEMENTSOF(nts_order) : ELEMENTSOF(ntp_order);
        bool past = !current;

        *ret_wrapped = false;
        for (unsigned round = 0; round < 2; round++) {
                for (size_t i = 0; i < n_order; i++)
                        LIST_FOREACH(names, n, lists[order[i]]) {
                                if (past && fake_usable(n))
                                        return n;
                                past = past || n == current;
                        }
                if (!current)
                        break;
                *ret_wrapped = past = true;
        }
        return NULL;
}

static bool fake_all_refuse(ServerName *const *lists) {
        bool any = false;

        LIST_FOREACH(names, n, lists[SERVER_NTS]) {
                if (!n->source || fake_of(n->source)->state != SOURCE_FAILED)
                        return false;
                any = true;
        }
        return any;
}

static usec_t fake_earliest_retry(ServerName *const *lists) {
        usec_t earliest = 0;

        LIST_FOREACH(names, n, lists[SERVER_NTS])
                if (n->source && fake_backing_off(fake_of(n->source)) &&
                    (earliest == 0 || fake_of(n->source)->retry_after < earliest))
                        earliest = fake_of(n->source)->retry_after;
        return earliest;
}

/* Where s is among the members p handed out (retired or not); -1: not p's. */
static ssize_t fake_pool_index(const Pool *p, const Source *s) {
        const FakePool *fp = fake_pool_of(p);

        for (size_t i = 0; i < fp->n_handed; i++)
                if ((const Source *) &fp->members[i] == s)
                        return (ssize_t) i;
        return -1;
}

static bool fake_pool_has_source(const Pool *p, const Source *s) {
        return fake_pool_index(p, s) >= 0;
}

static ServerName *fake_find_source(ServerName *const *lists, const Source *s) {
        for (ServerType t = 0; t < _SERVER_TYPE_MAX; t++)
                LIST_FOREACH(names, n, lists[t])
                        if (n->source == s || (n->pool && fake_pool_has_source(n->pool, s)))
                                return n;
        return NULL;
}

static int fake_pool_make(ServerName *n, const PolicyContext *ctx) {
        PolicyFixture *fx = ctx->userdata;

        if (n->pool)
                return 0;
        for (size_t i = 0; i < fx->n_pools; i++)
                if (fx->pools[i].name == n) {
                        n->pool = (Pool *) &fx->pools[i];
                        return 0;
                }
        ASSERT_TRUE(false);
        return -ENOENT;
}

/* Hands out quota members (those it has), as a pool whose lookup is done. */
static void fake_pool_start(Pool *p, size_t quota) {
        FakePool *fp = fake_pool_of(p);

        fp->started = true;
        fp->n_handed = MAX(fp->n_handed, MIN(quota, fp->n_members));
}

static void fake_pool_stop(Pool *p) {
        fake_pool_of(p)->started = false;
}

static bool fake_pool_started(const Pool *p) {
        return fake_pool_of(p)->started;
}

static bool fake_pool_stalled(const Pool *p) {
        return false;
}

static const char *fake_pool_last_error(const Pool *p) {
        return fake_pool_of(p)->last_error;
}

/* Its members in use: handed out and not retired. */
static FakeSource *fake_pool_member(const FakePool *fp, size_t k) {
        for (size_t i = 0; i < fp->n_handed; i++)
                if (!fp->retired[i] && k-- == 0)
                        return (FakeSource *) &fp->members[i];
        return NULL;
}

static size_t fake_pool_n_sources(const Pool *p) {
        size_t n = 0;

        while (fake_pool_member(fake_pool_of(p), n))
                n++;
        return n;
}

static Source *fake_pool_source(const Pool *p, size_t i) {
        FakeSource *f = fake_pool_member(fake_pool_of(p), i);

        ASSERT_TRUE(f);
        return fake_source(f);
}

static bool fake_pool_source_retired(const Pool *p, const Source *s) {
        ssize_t i = fake_pool_index(p, s);

        return i >= 0 && fake_pool_of(p)->retired[i];
}

/* A member that refuses service is retired, and the next server the pool knows takes its
 * place; returns whether the members changed. */
static bool fake_pool_source_event(Pool *p, Source *s, SourceEvent e) {
        FakePool *fp = fake_pool_of(p);
        ssize_t i = fake_pool_index(p, s);

        if (e != SOURCE_EVENT_FAILED || fake_of(s)->state != SOURCE_FAILED || i < 0 || fp->retired[i])
                return false;
        fp->retired[i] = true;
        if (fp->n_handed < fp->n_members)
                fp->n_handed++;
        return true;
}

static const PolicyListOps fake_list_ops = {
        .next = fake_next,
        .usable = fake_usable,
        .all_refuse = fake_all_refuse,
        .earliest_retry = fake_earliest_retry,
        .find_source = fake_find_source,
        .pool_make = fake_pool_make,
        .pool_start = fake_pool_start,
        .pool_stop = fake_pool_stop,
        .pool_started = fake_pool_started,
        .pool_stalled = fake_pool_stalled,
        .pool_last_error = fake_pool_last_error,
        .pool_n_sources = fake_pool_n_sources,
        .pool_source = fake_pool_source,
        .pool_has_source = fake_pool_has_source,
        .pool_source_retired = fake_pool_source_retired,
        .pool_source_event = fake_pool_source_event,
};

static inline void policy_fixture_init(PolicyFixture *fx, unsigned max_sources, unsigned min_agreeing) {
        *fx = (PolicyFixture) {
                .config = {
                        .nts_max_sources = max_sources,
                        .nts_min_agreeing = min_agreeing,
                        .root_distance_max_usec = 5 * USEC_PER_SEC,
                        .connection_retry_usec = 30 * USEC_PER_SEC,
                },
        };
        ASSERT_OK(clock_backend_new(CLOCK_BACKEND_FAKE, &fx->clock));
        fake_boottime_usec = 1000 * USEC_PER_SEC;
        policy_init(&fx->pol, &(PolicyContext) {
                .sources = &fake_source_ops,
                .lists = &fake_list_ops,
                .config = &fx->config,
                .clock = fx->clock,
                .servers = fx->servers,
                .nts_status = fx->nts_status,
                .userdata = fx,
                .now_boottime = fake_now_boottime,
        });
}

/* Lists a name in NTS= for server (claims: the server whose NTP address it names, or -1); its
 * fake, made when the policy first uses it. Returns its index. */
static inline size_t policy_fixture_name(PolicyFixture *fx, int server, int claims, bool liar) {
        size_t i = fx->n_names++;
        FakeSource *f = &fx->fakes[i];
        char string[32];

        ASSERT_TRUE(i < FAKE_NAMES_MAX);
        (void) snprintf(string, sizeof string, "s%zu.example", i);
        ASSERT_OK(server_name_new(&fx->servers[SERVER_NTS], SERVER_NTS, string, NULL));
        *f = (FakeSource) { .server = server, .claims = claims, .liar = liar };
        (void) snprintf(f->name, sizeof f->name, "%s", string);
        fake_ntp_address(claims >= 0 ? claims : server, &f->address);
        f->has_address = true;
        return i;
}

/* Lists a pool in NTS= (pool:pN.example) that knows n_members servers, from first_server on,
 * each its own (fake_pool_source_event() says when it hands out the next). Returns its index. */
static inline size_t policy_fixture_pool(PolicyFixture *fx, size_t n_members, int first_server) {
        size_t i = fx->n_pools++;
        FakePool *fp = &fx->pools[i];
        char string[32];

        ASSERT_TRUE(i < FAKE_POOLS_MAX);
        ASSERT_TRUE(n_members <= FAKE_POOL_MEMBERS_MAX);
        /* Its place in the list: fake_make() counts the names by position. */
        fx->n_names++;
        (void) snprintf(string, sizeof string, "pool:p%zu.example", i);
        *fp = (FakePool) { .n_members = n_members };
        ASSERT_OK(server_name_new(&fx->servers[SERVER_NTS], SERVER_NTS, string, &fp->name));
        for (size_t k = 0; k < n_members; k++) {
                FakeSource *f = &fp->members[k];

                *f = (FakeSource) { .server = first_server + (int) k, .claims = -1 };
                (void) snprintf(f->name, sizeof f->name, "p%zu.example#%zu", i, k);
                fake_ntp_address(f->server, &f->address);
                f->has_address = true;
        }
        return i;
}

/* The fakes are the fixture's: the names must not free them. */
static inline void policy_fixture_done(PolicyFixture *fx) {
        PolicyDecision d = {};

        policy_stop(&fx->pol, &d);
        LIST_FOREACH(names, n, fx->servers[SERVER_NTS]) {
                n->source = NULL;
                n->pool = NULL;
        }
        server_list_flush(&fx->servers[SERVER_NTS]);
        clock_backend_free(fx->clock);
}

/* What the manager keeps of a decision that the policy reads back: NTSStatus. */
static inline void policy_fixture_keep(PolicyFixture *fx, const PolicyDecision *d) {
        if (d->set_nts_status)
                (void) snprintf(fx->nts_status, sizeof fx->nts_status, "%s", d->nts_status);
}

/* A sample of f, offset_nsec from our clock, now; delayed: its delay jumped. */
static inline void fake_answer(FakeSource *f, int64_t offset_nsec, bool delayed) {
        f->sample = (SourceSample) {
                .header = {
                        .leap = NTP_LEAP_NONE,
                        .stratum = 1,
                        .precision = -20,
                        .root_dispersion = ntp_short_from_nsec(FAKE_MSEC),
                },
                .ntp = { .offset_nsec = offset_nsec, .delay_nsec = 20 * FAKE_MSEC },
                .delay = delayed ? NTP_FILTER_DELAY_JUMPED : NTP_FILTER_DELAY_USUAL,
                .delay_min_nsec = delayed ? 20 * FAKE_MSEC : -1,
                .authenticated = true,
                .boottime = fake_boottime_usec,
        };
        f->has_sample = true;
        f->state = SOURCE_POLL_WAIT;
}

/* f gave up for now (no reply), or for good (refused: kiss code DENY). */
static inline void fake_fail(FakeSource *f, bool refused) {
        f->failures++;
        f->state = refused ? SOURCE_FAILED : SOURCE_BACKING_OFF;
        (void) snprintf(f->last_error, sizeof f->last_error, "%s", refused ? "refused service" : "no reply");
}
