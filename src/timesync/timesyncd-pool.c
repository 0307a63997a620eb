/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <inttypes.h>
#include <stdio.h>

#include "log.h"
#include "nts-definitions.h"
#include "string-util.h"
#include "timesyncd-backoff.h"
#include "timesyncd-nts-client.h"
#include "timesyncd-pool.h"
#include "timesyncd-srv.h"

/* SRV records are looked up again when their TTL ends, but not sooner than this after the last
 * lookup (a TTL of 0, or sources that keep failing, would ask resolved at every turn) and not
 * later than this (a TTL may be years). */
#define POOL_SRV_TTL_MIN_USEC (10 * USEC_PER_SEC)
#define POOL_SRV_TTL_MAX_USEC (1 * USEC_PER_DAY)
/* A target whose source failed this many times in a row (no sample in between; a source fails
 * after a round of requests to every address, or a failed key exchange) is replaced by the next
 * target, if there is one, and passed over for POOL_SRV_BAD_USEC; one that refuses service at
 * once. Two, as for a key-exchange pool's member: one lost reply is no reason to move. */
#define POOL_SRV_MAX_FAILURES 2
#define POOL_SRV_BAD_USEC (1 * USEC_PER_HOUR)
/* Sources retired between two turns of the loop: each was a member (at most
 * NTS_CLIENT_POOL_MAX), and at most one per source report and one round per lookup or start
 * come in one turn. */
#define POOL_RETIRED_MAX (4 * NTS_CLIENT_POOL_MAX)
/* A key-exchange pool that named no member beyond those in use (a server that is no pool, or a
 * pool smaller than its share of NTSMaxSources=) gets no key exchanges for its empty places
 * until then, a random time in [1 h, 1.5 h) later (a fleet that started together does not
 * come back together): then one place asks again. The cap (16 an hour) would otherwise let the
 * empty places ask it all day long for what it said it does not have. */
#define POOL_KE_SHORT_RETRY_USEC (1 * USEC_PER_HOUR)
/* ... once this many key exchanges in a row (each up to NTS_POOL_MAX_FRUITLESS answers) found no
 * member a slot may take, with no slot getting a new member in between: one such round can be
 * an unlucky draw of a pool that picks at random, or one that ignores the deny records. */
#define POOL_KE_EXHAUSTED_MAX 3U

typedef struct PoolMember {
        Source *source;
        char *target;                   /* SRV: the record's target; NULL: a key-exchange slot */
        uint16_t port;
        unsigned slot;                  /* a key-exchange slot's number (its state file), from 1 */
        unsigned failures;              /* in a row, without a sample in between */
        bool sampled;                   /* a key-exchange slot: its member answered */
} PoolMember;

struct Pool {
        const PoolSettings *settings;
        ServerNameKind kind;
        char *entry;                    /* as configured */
        char *host;                     /* the pool's name */
        uint16_t port;
        source_handler_t source_handler;
        void *source_userdata;
        pool_handler_t handler;
        void *userdata;

        bool started;
        size_t wanted;
        PoolMember members[NTS_CLIENT_POOL_MAX];
        size_t n_members;
        Source *retired[POOL_RETIRED_MAX];      /* stopped; freed by event_prune */
        size_t n_retired;
        sd_event_source *event_prune;

        NTSClientPool *ke_pool;         /* pool:SERVER */
        bool ke_short;                  /* it named no member beyond those in use: places left
                                         * empty, until event_ke_retry */
        bool ke_short_logged;           /* ... said once per such streak */
        unsigned ke_exhausted;          /* slots' key exchanges in a row that found no member
                                         * (nts_client_pool_exhausted()) */
        Source *ke_probe;               /* the place event_ke_retry added to ask again */
        sd_event_source *event_ke_retry;

        /* srv:NAME */
        SrvLookup *lookup;
        SrvAnswer answer;               /* the targets of the last lookup, in order; none after a
                                         * failed one */
        usec_t looked_up;               /* CLOCK_BOOTTIME of the last answer */
        usec_t asked;                   /* ... and of the last lookup sent, answered or not */
        usec_t answer_until;            /* ... and when to look again */
        sd_event_source *event_lookup;  /* the next lookup */
        BackoffLadder ladder;           /* failed lookups in a row */
        struct {
                char *target;
                uint16_t port;
                usec_t until;           /* CLOCK_BOOTTIME */
        } bad[NTS_CLIENT_POOL_MAX];     /* targets that failed lately */
        size_t n_bad;
        char last_error[768];
        char logged_error[768];         /* the last error logged: each once */
        SrvAnswer logged;               /* the records last logged at info level, sorted */
};

/* ---- sources ---- */

/* Arms the timer es (CLOCK_BOOTTIME) to fire once at at; what names it in the error. */
static void pool_arm(Pool *p, sd_event_source *es, usec_t at, const char *what) {
        int r;

        r = sd_event_source_set_time(es, at);
        if (r >= 0)
                r = sd_event_source_set_enabled(es, SD_EVENT_ONESHOT);
        if (r < 0)
                log_error_errno(r, "Failed to arm the next %s of %s: %m", what, p->entry);
}

static PoolMember *pool_member_of(Pool *p, const Source *s) {
        for (size_t i = 0; i < p->n_members; i++)
                if (p->members[i].source == s)
                        return &p->members[i];
        return NULL;
}

static int pool_on_prune(sd_event_source *es, void *userdata) {
        Pool *p = userdata;

        for (size_t i = 0; i < p->n_retired; i++)
                source_free(p->retired[i]);
        p->n_retired = 0;
        return 0;
}

/* Stops member i's source and frees it on a later turn of the loop: the owner may be inside one
 * of its reports. */
static void pool_retire(Pool *p, size_t i) {
        PoolMember *m = &p->members[i];

        assert(i < p->n_members);
        assert(p->n_retired < ELEMENTSOF(p->retired));

        source_stop(m->source);
        if (m->source == p->ke_probe)
                p->ke_probe = NULL;
        p->retired[p->n_retired++] = m->source;
        (void) sd_event_source_set_enabled(p->event_prune, SD_EVENT_ONESHOT);

        free(m->target);
        memmove(m, m + 1, (p->n_members - i - 1) * sizeof *m);
        p->n_members--;
}

/* One NTS source of the pool: name for the logs, its NTS-KE server at host and port, its own
 * state file (state_name), and for a key-exchange pool the shared NTSClientPool. */
static int pool_add_member(Pool *p, const char *name, const char *host, uint16_t port, const char *state_name) {
        _cleanup_(source_freep) Source *s = NULL;
        _cleanup_free_ char *target = NULL;
        int r;

        assert(p->n_members < ELEMENTSOF(p->members));

        if (p->kind == SERVER_NAME_SRV) {
                target = strdup(host);
                if (!target)
                        return -ENOMEM;
        }

        r = source_new(p->settings->source, name, host, port, /* nts= */ true, p->source_handler,
                       p->source_userdata, &s);
        if (r < 0)
                return r;
        r = source_set_pool(s, state_name, p->ke_pool);
        if (r < 0)
                return r;

        p->members[p->n_members++] = (PoolMember) {
                .source = TAKE_PTR(s),
                .target = TAKE_PTR(target),
                .port = port,
        };
        return 0;
}

/* ---- key-exchange pools ---- */

/* The smallest slot number no source of the pool has. */
static unsigned pool_ke_free_slot(const Pool *p) {
        for (unsigned k = 1;; k++) {
                bool taken = false;

                for (size_t i = 0; i < p->n_members && !taken; i++)
                        taken = p->members[i].slot == k;
                if (!taken)
                        return k;
        }
}

/* One more slot, with its own state file: "pool:NAME#1", "pool:NAME#2", ... A restart resumes
 * each slot with the member and cookies it had, without a key exchange. */
static int pool_ke_add_slot(Pool *p) {
        _cleanup_free_ char *state = NULL;
        unsigned slot = pool_ke_free_slot(p);
        int r;

        if (asprintf(&state, "%s#%u", p->entry, slot) < 0)
                return log_oom();
        r = pool_add_member(p, p->entry, p->host, p->port, state);
        if (r < 0)
                return log_error_errno(r, "Failed to add a source of %s: %m", p->entry);
        p->members[p->n_members - 1].slot = slot;
        return 0;
}

/* n slots: the last ones go, new ones come. */
static void pool_ke_fill(Pool *p, size_t n) {
        while (p->n_members > n)
                pool_retire(p, p->n_members - 1);
        while (p->n_members < n)
                if (pool_ke_add_slot(p) < 0)
                        return;
}

static bool pool_ke_has_member(const PoolMember *m) {
        return nts_client_pool_member(source_nts(m->source));
}

static void pool_ke_arm_retry(Pool *p) {
        pool_arm(p, p->event_ke_retry, now(CLOCK_BOOTTIME) + POOL_KE_SHORT_RETRY_USEC +
                 backoff_random(NULL) % (POOL_KE_SHORT_RETRY_USEC / 2), "key exchange for the empty places");
}

/* A slot's key exchange found no member it may take (nts_client_pool_exhausted()) while others
 * have one: the pool has no more. The slots without a member leave, and the pool is asked
 * again only by one slot after POOL_KE_SHORT_RETRY_USEC. True when slots left. */
static bool pool_ke_short(Pool *p, const Source *s) {
        size_t with = 0, without;
        bool probe = s == p->ke_probe;
        char why[256];

        for (size_t i = 0; i < p->n_members; i++)
                with += pool_ke_has_member(&p->members[i]);
        /* None in use: the slot keeps asking on its own ladder (the members may come back). */
        if (with == 0)
                return false;

        /* Before s leaves with the others. */
        snprintf(why, sizeof why, "%s", source_last_error(s));
        without = p->n_members - with;
        for (size_t i = p->n_members; i-- > 0;)
                if (!pool_ke_has_member(&p->members[i]))
                        pool_retire(p, i);
        p->ke_probe = NULL;
        p->ke_short = true;
        /* The slot that asks again after the wait leaves at its first such answer. */
        p->ke_exhausted = POOL_KE_EXHAUSTED_MAX - 1;
        pool_ke_arm_retry(p);

        if (p->ke_short_logged || probe)
                log_debug("Pool %s still names no member beyond the %zu in use; asking it again in an hour or so.",
                          p->entry, with);
        else
                log_notice("Pool %s names no member beyond the %zu in use (%s): leaving %zu of its %zu places empty; "
                           "asking it for more in an hour or so, not before.", p->entry, with, why,
                           without, p->wanted);
        p->ke_short_logged = true;
        return without > 0;
}

/* Key exchanges for the empty places: one place asks the pool again. */
static int pool_on_ke_retry(sd_event_source *es, uint64_t usec, void *userdata) {
        Pool *p = userdata;

        if (!p->started || !p->ke_short || p->n_members >= p->wanted)
                return 0;
        if (pool_ke_add_slot(p) < 0) {
                pool_ke_arm_retry(p);
                return 0;
        }
        p->ke_probe = p->members[p->n_members - 1].source;
        log_debug("Pool %s: asking it again for a member beyond the %zu in use.", p->entry, p->n_members - 1);
        p->handler(p, POOL_EVENT_CHANGED, p->userdata);
        return 0;
}

/* What a slot reported: its failures may say the pool has no more members; a sample of a new
 * member says it has (and when it comes from the slot that asked again, all places are filled
 * again). True when slots left or came. */
static bool pool_ke_source_event(Pool *p, PoolMember *m, SourceEvent e) {
        if (e == SOURCE_EVENT_SAMPLE) {
                if (!m->sampled) {
                        m->sampled = true;
                        p->ke_exhausted = 0;
                }
                if (!p->ke_short || m->source != p->ke_probe)
                        return false;
                p->ke_probe = NULL;
                p->ke_short = p->ke_short_logged = false;
                (void) sd_event_source_set_enabled(p->event_ke_retry, SD_EVENT_OFF);
                log_info("Pool %s named a new member: filling its %zu places again.", p->entry, p->wanted);
                pool_ke_fill(p, p->wanted);
                return true;
        }
        if (e != SOURCE_EVENT_FAILED || pool_ke_has_member(m))
                return false;
        m->sampled = false;
        if (!nts_client_pool_exhausted(source_nts(m->source)))
                return false;
        p->ke_exhausted = MIN(p->ke_exhausted + 1, POOL_KE_EXHAUSTED_MAX);
        if (p->ke_exhausted < POOL_KE_EXHAUSTED_MAX) {
                log_debug("Pool %s named no member for a place, %u time(s) in a row.", p->entry, p->ke_exhausted);
                return false;
        }
        return pool_ke_short(p, m->source);
}

/* ---- SRV pools ---- */

static void pool_bad_expire(Pool *p, usec_t t) {
        size_t k = 0;

        for (size_t i = 0; i < p->n_bad; i++)
                if (p->bad[i].until > t)
                        p->bad[k++] = p->bad[i];
                else
                        free(p->bad[i].target);
        p->n_bad = k;
}

static bool pool_target_bad(const Pool *p, const char *target, uint16_t port) {
        for (size_t i = 0; i < p->n_bad; i++)
                if (p->bad[i].port == port && streq(p->bad[i].target, target))
                        return true;
        return false;
}

static void pool_mark_bad(Pool *p, const char *target, uint16_t port) {
        usec_t t = now(CLOCK_BOOTTIME);
        char *copy;

        pool_bad_expire(p, t);
        if (pool_target_bad(p, target, port))
                return;
        if (p->n_bad == ELEMENTSOF(p->bad)) {
                free(p->bad[0].target);
                memmove(p->bad, p->bad + 1, (p->n_bad - 1) * sizeof p->bad[0]);
                p->n_bad--;
        }
        copy = strdup(target);
        if (!copy) {
                log_oom();
                return;
        }
        p->bad[p->n_bad].target = copy;
        p->bad[p->n_bad].port = port;
        p->bad[p->n_bad++].until = t + POOL_SRV_BAD_USEC;
}

static PoolMember *pool_member_of_target(Pool *p, const SrvRecord *r) {
        for (size_t i = 0; i < p->n_members; i++)
                if (p->members[i].port == r->port && streq(p->members[i].target, r->target))
                        return &p->members[i];
        return NULL;
}

/* A target as a server name: "target", or "target:port" unless the port is NTS-KE's. */
static int pool_target_name(const SrvRecord *r, char **ret) {
        if (r->port == NTS_KE_PORT)
                return (*ret = strdup(r->target)) ? 0 : -ENOMEM;
        return asprintf(ret, "%s:%u", r->target, r->port) < 0 ? -ENOMEM : 0;
}

static int pool_srv_add(Pool *p, const SrvRecord *r) {
        _cleanup_free_ char *name = NULL, *state = NULL;

        if (pool_target_name(r, &name) < 0 || asprintf(&state, "%s#%s:%u", p->entry, r->target, r->port) < 0)
                return -ENOMEM;
        return pool_add_member(p, name, r->target, r->port, state);
}

static void pool_srv_retire(Pool *p, size_t i) {
        log_debug("SRV pool %s: no longer using %s.", p->entry, source_name(p->members[i].source));
        pool_retire(p, i);
}

/* The sources follow the targets of the last answer (srv_pick()): a source whose target is
 * still listed and did not fail is kept, whatever the new draw says; only empty places and
 * those of failed targets are filled, in the answer's order; a failed one stays while nothing
 * better can take its place. A target no longer listed goes. Without an answer (the last
 * lookup failed) the sources stay, and none comes from records whose TTL has ended. True when
 * sources changed. */
static bool pool_srv_sync(Pool *p) {
        _cleanup_free_ SrvPick *picks = NULL;
        bool changed = false;

        if (p->answer.n_records == 0) {
                for (; p->n_members > p->wanted; changed = true)
                        pool_srv_retire(p, p->n_members - 1);
                return changed;
        }

        picks = new(SrvPick, p->answer.n_records);
        if (!picks) {
                log_oom();
                return false;
        }
        pool_bad_expire(p, now(CLOCK_BOOTTIME));
        for (size_t i = 0; i < p->answer.n_records; i++) {
                const SrvRecord *r = &p->answer.records[i];

                picks[i] = (SrvPick) {
                        .in_use = pool_member_of_target(p, r),
                        .failed = pool_target_bad(p, r->target, r->port),
                };
        }
        (void) srv_pick(picks, p->answer.n_records, p->wanted);

        for (size_t i = p->n_members; i-- > 0;) {
                bool keep = false;

                for (size_t k = 0; k < p->answer.n_records && !keep; k++)
                        keep = picks[k].use && pool_member_of_target(p, &p->answer.records[k]) == &p->members[i];
                if (!keep) {
                        pool_srv_retire(p, i);
                        changed = true;
                }
        }
        for (size_t k = 0; k < p->answer.n_records; k++) {
                int r;

                if (!picks[k].use || picks[k].in_use)
                        continue;
                r = pool_srv_add(p, &p->answer.records[k]);
                if (r < 0) {
                        log_error_errno(r, "Failed to add a source for %s of %s: %m", p->answer.records[k].target,
                                        p->entry);
                        break;
                }
                changed = true;
        }
        return changed;
}

static void pool_arm_lookup(Pool *p, usec_t at) {
        pool_arm(p, p->event_lookup, at, "SRV lookup");
}

/* The records at info level when they change (as a set: each lookup draws a new order, and a
 * cache counts the TTL down), else at debug level. The list is sorted and ends in "... and N
 * more" where a log line would end (2 KiB): never cut inside a record. */
static void pool_log_targets(Pool *p) {
        SrvAnswer sorted = {};
        char list[1536];

        if (srv_answer_copy(&p->answer, &sorted) < 0) {
                log_oom();
                return;
        }
        srv_answer_sort(&sorted);
        if (srv_answer_same(&sorted, &p->logged)) {
                log_debug("SRV pool %s: the same %zu %s, DNSSEC-authenticated, TTL %" PRIu32 " s.", p->entry,
                          sorted.n_records, sorted.n_records == 1 ? "target" : "targets", p->answer.ttl);
                srv_answer_done(&sorted);
                return;
        }
        srv_answer_describe(&sorted, list, sizeof list);
        log_info("SRV pool %s: %zu %s, DNSSEC-authenticated, TTL %" PRIu32 " s: %s.", p->entry, sorted.n_records,
                 sorted.n_records == 1 ? "target" : "targets", p->answer.ttl, list);
        srv_answer_done(&p->logged);
        p->logged = sorted;
}

/* No new target comes from the entry: no fallback, and nothing from records whose TTL has
 * ended; the sources it has stay (they were found in an authenticated answer, and each key
 * exchange checks its target's certificate), so a resolver that is away for a while does not
 * take working sources away. The next lookup after a jittered wait that grows with the time
 * spent failing (timesyncd-backoff, as key exchanges). Each reason is logged once. */
static void pool_lookup_failed(Pool *p, const char *message) {
        usec_t t = now(CLOCK_BOOTTIME), wait;

        if (p->n_members > 0)
                snprintf(p->last_error, sizeof p->last_error,
                         "its sources in use are kept, but looking its SRV records up again fails: %s", message);
        else
                snprintf(p->last_error, sizeof p->last_error, "not used: %s", message);
        wait = backoff_ke_failed(&p->ladder, BACKOFF_KE_FAILED, t, p->settings->source->retry_usec,
                                 BACKOFF_KE_MAX_USEC, backoff_random, NULL);
        if (streq(p->logged_error, p->last_error))
                log_debug("SRV pool %s: its lookup still fails, for the same reason. Looking it up again in %s.",
                          p->entry, FORMAT_TIMESPAN(wait, USEC_PER_SEC));
        else if (p->n_members > 0)
                log_warning("SRV pool %s: looking its records up again fails: %s. Its %zu %s in use %s kept; "
                            "looking it up again in %s.", p->entry, message, p->n_members,
                            p->n_members == 1 ? "source" : "sources", p->n_members == 1 ? "is" : "are",
                            FORMAT_TIMESPAN(wait, USEC_PER_SEC));
        else
                log_error("SRV pool %s is not used: %s. Looking it up again in %s.", p->entry, message,
                          FORMAT_TIMESPAN(wait, USEC_PER_SEC));
        snprintf(p->logged_error, sizeof p->logged_error, "%s", p->last_error);

        srv_answer_done(&p->answer);
        p->answer_until = 0;
        (void) pool_srv_sync(p);
        pool_arm_lookup(p, t + wait);
        p->handler(p, POOL_EVENT_FAILED, p->userdata);
}

static void pool_on_srv(SrvLookup *l, int error, const char *message, const SrvAnswer *answer, void *userdata) {
        Pool *p = userdata;
        usec_t t = now(CLOCK_BOOTTIME);
        SrvAnswer copy = {};

        p->lookup = srv_lookup_free(l);

        if (error < 0) {
                pool_lookup_failed(p, message);
                return;
        }
        if (srv_answer_copy(answer, &copy) < 0) {
                pool_lookup_failed(p, "out of memory");
                return;
        }

        srv_answer_done(&p->answer);
        p->answer = copy;
        p->looked_up = t;
        p->answer_until = t + CLAMP((usec_t) copy.ttl * USEC_PER_SEC, POOL_SRV_TTL_MIN_USEC, POOL_SRV_TTL_MAX_USEC);
        backoff_ke_done(&p->ladder);
        if (!isempty(p->last_error))
                log_notice("SRV pool %s can be used again.", p->entry);
        p->last_error[0] = p->logged_error[0] = '\0';
        pool_log_targets(p);

        pool_arm_lookup(p, p->answer_until);
        (void) pool_srv_sync(p);
        p->handler(p, POOL_EVENT_CHANGED, p->userdata);
}

static int pool_on_lookup_timer(sd_event_source *es, uint64_t usec, void *userdata) {
        Pool *p = userdata;
        sd_bus *bus = *p->settings->bus;
        char message[256];
        int r;

        if (p->lookup)
                return 0;
        if (!bus) {
                pool_lookup_failed(p, "there is no system bus, so systemd-resolved cannot be asked; SRV pools need "
                                   "systemd-resolved with DNSSEC=yes");
                return 0;
        }

        log_debug("Looking up the SRV records of %s.", p->entry);
        p->asked = now(CLOCK_BOOTTIME);
        r = srv_lookup_new(bus, p->host, srv_random_uniform, NULL, pool_on_srv, p, &p->lookup);
        if (r < 0) {
                snprintf(message, sizeof message, "cannot ask systemd-resolved for its SRV records: %s", strerror(-r));
                pool_lookup_failed(p, message);
        }
        return 0;
}

/* ---- life cycle ---- */

int pool_new(const PoolSettings *settings, ServerNameKind kind, const char *entry, const char *host, uint16_t port,
             source_handler_t source_handler, void *source_userdata, pool_handler_t handler, void *userdata,
             Pool **ret) {
        _cleanup_(pool_freep) Pool *p = NULL;
        int r;

        assert(settings);
        assert(kind == SERVER_NAME_KE_POOL || kind == SERVER_NAME_SRV);
        assert(entry);
        assert(host);
        assert(source_handler);
        assert(handler);
        assert(ret);

        p = new0(Pool, 1);
        if (!p)
                return -ENOMEM;

        p->settings = settings;
        p->kind = kind;
        p->port = port;
        p->source_handler = source_handler;
        p->source_userdata = source_userdata;
        p->handler = handler;
        p->userdata = userdata;
        p->entry = strdup(entry);
        p->host = strdup(host);
        if (!p->entry || !p->host)
                return -ENOMEM;

        r = sd_event_add_defer(settings->source->event, &p->event_prune, pool_on_prune, p);
        if (r >= 0)
                r = sd_event_source_set_enabled(p->event_prune, SD_EVENT_OFF);
        if (r < 0)
                return r;

        if (kind == SERVER_NAME_KE_POOL) {
                r = nts_client_pool_new(&p->ke_pool);
                if (r >= 0)
                        r = sd_event_add_time(settings->source->event, &p->event_ke_retry, CLOCK_BOOTTIME, 0, 0,
                                              pool_on_ke_retry, p);
                if (r >= 0)
                        r = sd_event_source_set_enabled(p->event_ke_retry, SD_EVENT_OFF);
        } else {
                r = sd_event_add_time(settings->source->event, &p->event_lookup, CLOCK_BOOTTIME, 0, 0,
                                      pool_on_lookup_timer, p);
                if (r >= 0)
                        r = sd_event_source_set_enabled(p->event_lookup, SD_EVENT_OFF);
        }
        if (r < 0)
                return r;

        *ret = TAKE_PTR(p);
        return 0;
}

Pool *pool_free(Pool *p) {
        if (!p)
                return NULL;

        for (size_t i = 0; i < p->n_members; i++) {
                source_free(p->members[i].source);
                free(p->members[i].target);
        }
        (void) pool_on_prune(NULL, p);
        /* Its clients have left it with their sources. */
        nts_client_pool_free(p->ke_pool);

        p->event_prune = sd_event_source_disable_unref(p->event_prune);
        p->event_lookup = sd_event_source_disable_unref(p->event_lookup);
        p->event_ke_retry = sd_event_source_disable_unref(p->event_ke_retry);
        srv_lookup_free(p->lookup);
        srv_answer_done(&p->answer);
        for (size_t i = 0; i < p->n_bad; i++)
                free(p->bad[i].target);
        srv_answer_done(&p->logged);
        free(p->entry);
        free(p->host);
        return mfree(p);
}

void pool_start(Pool *p, size_t n) {
        bool valid;

        assert(p);
        assert(n > 0);

        p->started = true;
        p->wanted = MIN(n, (size_t) NTS_CLIENT_POOL_MAX);

        if (p->kind == SERVER_NAME_KE_POOL) {
                /* A pool that has no more members keeps its empty places empty until its
                 * retry. */
                if (!p->ke_short) {
                        pool_ke_fill(p, p->wanted);
                        return;
                }
                pool_ke_fill(p, CLAMP(p->n_members, (size_t) 1, p->wanted));
                if (sd_event_source_get_enabled(p->event_ke_retry, NULL) <= 0)
                        pool_ke_arm_retry(p);
                return;
        }

        valid = p->answer.n_records > 0 && now(CLOCK_BOOTTIME) < p->answer_until;
        /* Without an answer, the sources kept from before a failed lookup. */
        if (valid || p->answer.n_records == 0)
                (void) pool_srv_sync(p);
        if (!valid && !p->lookup)
                /* From the loop: a lookup that fails at once reports, and not from in here. */
                pool_arm_lookup(p, 0);
}

void pool_stop(Pool *p) {
        assert(p);

        p->started = false;
        for (size_t i = 0; i < p->n_members; i++)
                source_stop(p->members[i].source);
        p->lookup = srv_lookup_free(p->lookup);
        if (p->event_lookup)
                (void) sd_event_source_set_enabled(p->event_lookup, SD_EVENT_OFF);
        if (p->event_ke_retry)
                (void) sd_event_source_set_enabled(p->event_ke_retry, SD_EVENT_OFF);
}

bool pool_source_event(Pool *p, Source *s, SourceEvent e) {
        PoolMember *m = pool_member_of(p, s);
        usec_t t = now(CLOCK_BOOTTIME);
        const char *name;
        size_t spare = 0;

        if (!m)
                return false;
        /* A key-exchange pool's slot replaces its member itself (its NTS client); the pool
         * only sees whether it has more members. */
        if (p->kind == SERVER_NAME_KE_POOL)
                return pool_ke_source_event(p, m, e);
        if (e == SOURCE_EVENT_SAMPLE) {
                m->failures = 0;
                return false;
        }
        if (e != SOURCE_EVENT_FAILED)
                return false;

        m->failures = source_state(s) == SOURCE_FAILED ? POOL_SRV_MAX_FAILURES : m->failures + 1;
        if (m->failures < POOL_SRV_MAX_FAILURES)
                return false;
        m->failures = 0;

        name = source_name(s);
        pool_mark_bad(p, m->target, m->port);
        for (size_t i = 0; i < p->answer.n_records; i++)
                if (!pool_target_bad(p, p->answer.records[i].target, p->answer.records[i].port) &&
                    !pool_member_of_target(p, &p->answer.records[i]))
                        spare++;
        log_notice("SRV pool %s: %s failed %u times in a row (%s); %s%s.", p->entry, name,
                   (unsigned) POOL_SRV_MAX_FAILURES, source_last_error(s),
                   spare > 0 ? "the next target takes its place" : "no other target can take its place",
                   p->answer.n_records > 0 ? ", and the records are looked up again" : "");

        /* Look again, soon but not sooner than POOL_SRV_TTL_MIN_USEC after the last lookup. */
        if (p->answer_until > MAX(t, p->looked_up + POOL_SRV_TTL_MIN_USEC)) {
                p->answer_until = MAX(t, p->looked_up + POOL_SRV_TTL_MIN_USEC);
                pool_arm_lookup(p, p->answer_until);
        }
        return pool_srv_sync(p);
}

void pool_clock_changed(Pool *p) {
        usec_t t, at;

        assert(p);

        /* Only a failed lookup may have failed because of the clock: DNSSEC signatures that
         * looked expired or not yet valid to resolved against a clock far off. */
        if (!p->started || p->kind != SERVER_NAME_SRV || p->lookup || isempty(p->last_error))
                return;

        t = now(CLOCK_BOOTTIME);
        at = MAX(t, p->asked + POOL_SRV_TTL_MIN_USEC);
        log_info("SRV pool %s: the system clock changed; looking its records up again%s (DNSSEC signatures "
                 "that did not verify against the clock before may verify now).", p->entry,
                 at > t ? " in a few seconds" : " now");
        pool_arm_lookup(p, at);
}

/* ---- views ---- */

size_t pool_n_sources(const Pool *p) {
        return p->n_members;
}

Source *pool_source(const Pool *p, size_t i) {
        assert(i < p->n_members);
        return p->members[i].source;
}

bool pool_source_retired(const Pool *p, const Source *s) {
        for (size_t i = 0; i < p->n_retired; i++)
                if (p->retired[i] == s)
                        return true;
        return false;
}

bool pool_has_source(const Pool *p, const Source *s) {
        return pool_member_of((Pool *) p, s) || pool_source_retired(p, s);
}

const char *pool_entry(const Pool *p) {
        return p->entry;
}

const char *pool_last_error(const Pool *p) {
        return p->last_error;
}

bool pool_started(const Pool *p) {
        return p->started;
}

bool pool_stalled(const Pool *p) {
        return p->started && p->n_members == 0 && !p->lookup &&
                (!p->event_lookup || sd_event_source_get_enabled(p->event_lookup, NULL) <= 0);
}
