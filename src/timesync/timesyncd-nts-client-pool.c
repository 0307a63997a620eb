/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Key-exchange pools (docs/NTS.md, "Pools"): the clients of one pool run their key exchanges
 * one at a time, deny each other's members and the members turned down, and check each
 * answer before anything of it is used. */

#include "log.h"
#include "string-util.h"
#include "timesyncd-nts-client-internal.h"

int nts_client_pool_new(NTSClientPool **ret) {
        assert(ret);

        *ret = new0(NTSClientPool, 1);
        if (!*ret)
                return -ENOMEM;
        backoff_limit_init(&(*ret)->ke_limit, BACKOFF_LIMIT_DEFAULT, BACKOFF_LIMIT_PERIOD_USEC);
        return 0;
}

NTSClientPool *nts_client_pool_free(NTSClientPool *p) {
        if (!p)
                return NULL;

        assert(p->n_clients == 0);
        for (size_t i = 0; i < p->n_turned_down; i++)
                free(p->turned_down[i].name);
        return mfree(p);
}

int nts_client_join_pool(NTSClient *c, NTSClientPool *pool) {
        assert(c);
        assert(pool);
        assert(!c->pool);

        if (pool->n_clients >= ELEMENTSOF(pool->clients))
                return -E2BIG;
        pool->clients[pool->n_clients++] = c;
        c->pool = pool;
        return 0;
}

const char *nts_client_pool_member(const NTSClient *c) {
        return c && c->pool ? c->jar.ntp_server : NULL;
}

bool nts_client_pool_exhausted(const NTSClient *c) {
        return c && c->pool && c->pool_exhausted;
}

/* The pool's key exchanges run one at a time, so that each knows the members of the others
 * (their deny records) instead of racing for the same member: the first client that waits,
 * from index `from` on in the order they joined (so that none waits for ever), starts its. */
static void nts_client_pool_next(NTSClientPool *p, size_t from) {
        for (size_t k = 0; k < p->n_clients; k++) {
                NTSClient *w = p->clients[(from + k) % p->n_clients];

                if (w->state == NTS_CLIENT_POOL_WAIT) {
                        (void) nts_client_ke_begin(w);
                        return;
                }
        }
}

static size_t nts_client_pool_index(const NTSClient *c) {
        for (size_t i = 0; i < c->pool->n_clients; i++)
                if (c->pool->clients[i] == c)
                        return i;
        assert_not_reached();
}

/* c's key exchange with the pool ended (or could not start): the next one may run. */
void nts_client_pool_ke_ended(NTSClient *c) {
        if (!c->pool || c->pool->ke_running != c)
                return;
        c->pool->ke_running = NULL;
        nts_client_pool_next(c->pool, nts_client_pool_index(c) + 1);
}

void nts_client_leave_pool(NTSClient *c) {
        NTSClientPool *p = c->pool;
        size_t i;

        if (!p)
                return;

        i = nts_client_pool_index(c);
        memmove(p->clients + i, p->clients + i + 1, (p->n_clients - i - 1) * sizeof p->clients[0]);
        p->n_clients--;
        c->pool = NULL;
        if (p->ke_running == c) {
                p->ke_running = NULL;
                nts_client_pool_next(p, i);
        }
}

static void nts_client_pool_expire(NTSClientPool *p, usec_t t) {
        size_t k = 0;

        for (size_t i = 0; i < p->n_turned_down; i++)
                if (p->turned_down[i].until > t)
                        p->turned_down[k++] = p->turned_down[i];
                else
                        free(p->turned_down[i].name);
        p->n_turned_down = k;
}

/* Denies name to every client of the pool for NTS_POOL_TURNED_DOWN_USEC. */
static void nts_client_pool_turn_down(NTSClientPool *p, const char *name) {
        usec_t t = now(CLOCK_BOOTTIME);
        char *copy;

        nts_client_pool_expire(p, t);
        for (size_t i = 0; i < p->n_turned_down; i++)
                if (strcaseeq(p->turned_down[i].name, name)) {
                        p->turned_down[i].until = t + NTS_POOL_TURNED_DOWN_USEC;
                        return;
                }

        copy = strdup(name);
        if (!copy) {
                log_oom();
                return;
        }
        if (p->n_turned_down == ELEMENTSOF(p->turned_down)) {
                free(p->turned_down[0].name);
                memmove(p->turned_down, p->turned_down + 1, (p->n_turned_down - 1) * sizeof p->turned_down[0]);
                p->n_turned_down--;
        }
        p->turned_down[p->n_turned_down].name = copy;
        p->turned_down[p->n_turned_down++].until = t + NTS_POOL_TURNED_DOWN_USEC;
}

/* The members the other clients of the pool have keys for, with the address each polls. */
static size_t nts_client_pool_others(const NTSClient *c, NTS_PoolMember in_use[static NTS_CLIENT_POOL_MAX]) {
        size_t n = 0;

        for (size_t i = 0; i < c->pool->n_clients; i++) {
                const NTSClient *o = c->pool->clients[i];

                if (o != c && o->jar.ntp_server)
                        in_use[n++] = (NTS_PoolMember) { .name = o->jar.ntp_server, .address = o->member_address };
        }
        return n;
}

/* The NTP Server Deny records of c's next key exchange: the members of the others, then the
 * members turned down; names the records cannot carry are left out. */
size_t nts_client_pool_deny(NTSClient *c, char *deny[static NTS_KE_MAX_DENIED_SERVERS]) {
        NTS_PoolMember in_use[NTS_CLIENT_POOL_MAX];
        size_t n = 0, m;

        nts_client_pool_expire(c->pool, now(CLOCK_BOOTTIME));
        m = nts_client_pool_others(c, in_use);
        for (size_t i = 0; i < m && n < NTS_KE_MAX_DENIED_SERVERS; i++)
                if (!isempty(in_use[i].name) && strlen(in_use[i].name) <= NTS_MAX_SERVER_NAME_SIZE)
                        deny[n++] = (char *) in_use[i].name;
        for (size_t i = 0; i < c->pool->n_turned_down && n < NTS_KE_MAX_DENIED_SERVERS; i++)
                deny[n++] = c->pool->turned_down[i].name;
        return n;
}

/* What NTS_pool_check() says of member (NULL: the answer had no Server record), at address
 * (NULL: by name only), against the others' members and the names turned down. */
NTS_PoolVerdict nts_client_pool_judge(NTSClient *c, const char *member, const SocketAddress *address) {
        NTS_PoolMember in_use[NTS_CLIENT_POOL_MAX];
        char *denied[NTS_POOL_TURNED_DOWN_MAX];
        size_t n;

        nts_client_pool_expire(c->pool, now(CLOCK_BOOTTIME));
        n = nts_client_pool_others(c, in_use);
        for (size_t i = 0; i < c->pool->n_turned_down; i++)
                denied[i] = c->pool->turned_down[i].name;
        return NTS_pool_check(in_use, n, denied, c->pool->n_turned_down, member, address);
}

/* The pool named no member that c may take: it is asked again, up to NTS_POOL_MAX_FRUITLESS
 * answers in a row, and then the key exchange counts as failed (the pool has no other member
 * for c, or ignores the deny records), with its backoff. */
void nts_client_pool_fruitless(NTSClient *c, NTS_PoolVerdict v, const char *member) {
        char reason[512];

        if (v == NTS_POOL_NO_MEMBER) {
                c->bootstrap_attempt = NTS_CLIENT_BOOTSTRAP_NONE;
                c->pool_exhausted = true;
                nts_client_ke_failed(c, BACKOFF_KE_FAILED, "the server names no NTP server (no Server record) and serves another source "
                                     "of this pool itself: it is one server, not a pool");
                return;
        }

        if (++c->pool_fruitless < NTS_POOL_MAX_FRUITLESS) {
                log_info("Pool %s named %s, %s: asking it again.", c->server, member,
                         NTS_pool_verdict_to_string(v));
                (void) nts_client_ke_begin(c);
                return;
        }

        c->pool_fruitless = 0;
        c->pool_exhausted = true;
        c->bootstrap_attempt = NTS_CLIENT_BOOTSTRAP_NONE;
        snprintf(reason, sizeof reason, "the pool named only members in use or turned down (the last one: %s, %s): "
                 "it has no other for this source, or it ignores NTP Server Deny", member,
                 NTS_pool_verdict_to_string(v));
        nts_client_ke_failed(c, BACKOFF_KE_FAILED, reason);
}

int nts_client_pool_claim_address(NTSClient *c, const SocketAddress *a) {
        char member[NTS_MAX_SERVER_NAME_SIZE + 1];
        NTS_PoolVerdict v;

        assert(c);
        assert(a);

        /* Addresses are claimed for the keys in use: none while an exchange runs. */
        if (!c->pool || !c->jar.ntp_server || c->state != NTS_CLIENT_READY)
                return 0;

        v = nts_client_pool_judge(c, c->jar.ntp_server, a);
        if (v == NTS_POOL_NEW) {
                c->member_address = *a;
                c->pool_fruitless = 0;
                return 0;
        }

        /* Two sources on one server would count its time twice: the name is turned down, and the
         * pool asked for another member. */
        snprintf(member, sizeof member, "%s", c->jar.ntp_server);
        log_info("Pool member %s of %s is %s: turning it down.", member, c->server, NTS_pool_verdict_to_string(v));
        nts_client_forget_keys(c);
        nts_client_pool_turn_down(c->pool, member);
        nts_client_pool_fruitless(c, NTS_POOL_SAME_ADDRESS, member);
        return -EADDRINUSE;
}

bool nts_client_pool_member_failed(NTSClient *c, bool refused) {
        char member[NTS_MAX_SERVER_NAME_SIZE + 1];

        assert(c);

        if (!c->pool || !c->jar.ntp_server)
                return false;
        if (!refused && ++c->member_failures < NTS_POOL_MEMBER_MAX_FAILURES)
                return false;

        snprintf(member, sizeof member, "%s", c->jar.ntp_server);
        if (refused)
                log_notice("Pool member %s of %s refuses service: turning it down; the next key exchange with the "
                           "pool asks for another member.", member, c->server);
        else
                log_notice("Pool member %s of %s did not answer %u times in a row: turning it down; the next key "
                           "exchange with the pool asks for another member.", member, c->server, c->member_failures);
        c->member_failures = 0;
        nts_client_forget_keys(c);
        nts_client_pool_turn_down(c->pool, member);
        /* A backoff keeps its retry time, an exchange that runs goes on. */
        if (c->state == NTS_CLIENT_READY)
                nts_client_enter(c, NTS_CLIENT_IDLE);
        return true;
}
