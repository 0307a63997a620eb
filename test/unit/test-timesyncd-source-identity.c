/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <string.h>

#include "tests.h"
#include "timesyncd-source-identity.h"
#include "timesyncd-source-set.h"

#define MSEC INT64_C(1000000)
#define SEC INT64_C(1000000000)
#define NOW (1000 * USEC_PER_SEC)

/* ---- the comparison, table-driven ---- */

/* One side of a comparison as text: "" fields are not known. */
typedef struct Side {
        const char *ntp;                /* "127.0.0.1", "[::1]" style is not needed: bare literals */
        uint16_t ntp_port;
        const char *ke;
        uint16_t ke_port;
        int key;                        /* 0: not known; else the key's first byte */
        int pool;                       /* 0: no key-exchange pool; else which one */
} Side;

static int pools[3];

static SourceIdentity identity_of(const Side *s) {
        SourceIdentity id = {};
        SocketAddress a;
        uint8_t key[SOURCE_IDENTITY_KEY_SIZE] = {};

        if (s->ntp) {
                ASSERT_OK(socket_address_from_string(s->ntp, s->ntp_port ?: 123, &a));
                source_identity_set_ntp_address(&id, &a);
        }
        if (s->ke) {
                ASSERT_OK(socket_address_from_string(s->ke, s->ke_port ?: 4460, &a));
                source_identity_set_ke_address(&id, &a);
        }
        if (s->key) {
                memset(key, 0x5a, sizeof key);
                key[0] = (uint8_t) s->key;
                source_identity_set_key(&id, key);
        }
        id.ke_pool = s->pool ? &pools[s->pool] : NULL;
        return id;
}

static void test_same_server(void) {
        static const struct {
                const char *what;
                Side a, b;
                SourceSameness expected;
                bool conflict;          /* one NTP address, not one server */
                const char *reason;     /* of a, for the expected sameness */
        } cases[] = {
                { "nothing known", {}, {}, SOURCE_DISTINCT, false, "different servers" },
                { "one side unknown", { .ntp = "192.0.2.1" }, {}, SOURCE_DISTINCT, false, NULL },
                /* The NTP address is what a key-exchange server claims: alone it proves nothing. */
                { "one NTP address, nothing else known", { .ntp = "192.0.2.1" }, { .ntp = "192.0.2.1" },
                  SOURCE_DISTINCT, true, NULL },
                { "one NTP address on two ports", { .ntp = "192.0.2.1", .ntp_port = 123 },
                  { .ntp = "192.0.2.1", .ntp_port = 1123 }, SOURCE_DISTINCT, true, NULL },
                { "IPv4 and its mapped IPv6 form", { .ntp = "192.0.2.1" }, { .ntp = "::ffff:192.0.2.1" },
                  SOURCE_DISTINCT, true, NULL },
                { "IPv6", { .ntp = "2001:db8::1" }, { .ntp = "2001:db8::1", .ntp_port = 4123 },
                  SOURCE_DISTINCT, true, NULL },
                { "two addresses", { .ntp = "192.0.2.1" }, { .ntp = "192.0.2.2" }, SOURCE_DISTINCT, false, NULL },
                { "a name and its address", { .ntp = "192.0.2.1", .ke = "192.0.2.1", .key = 1 },
                  { .ntp = "192.0.2.1", .ke = "192.0.2.1", .key = 1 }, SOURCE_SAME_KE_ADDRESS, false,
                  "same key-exchange address 192.0.2.1" },
                { "mapped IPv6 key-exchange address", { .ke = "192.0.2.3" }, { .ke = "::ffff:192.0.2.3" },
                  SOURCE_SAME_KE_ADDRESS, false, "same key-exchange address 192.0.2.3" },
                { "one key exchange server, two NTP servers", { .ntp = "192.0.2.1", .ke = "192.0.2.3" },
                  { .ntp = "192.0.2.2", .ke = "192.0.2.3", .ke_port = 4461 }, SOURCE_SAME_KE_ADDRESS, false,
                  "same key-exchange address 192.0.2.3" },
                { "one certificate key on two machines", { .ntp = "192.0.2.1", .ke = "192.0.2.1", .key = 1 },
                  { .ntp = "192.0.2.2", .ke = "192.0.2.2", .key = 1 }, SOURCE_SAME_KEY, false,
                  "same certificate key, SHA-256 015a5a5a5a5a5a5a..." },
                { "two keys", { .ntp = "192.0.2.1", .ke = "192.0.2.1", .key = 1 },
                  { .ntp = "192.0.2.2", .ke = "192.0.2.2", .key = 2 }, SOURCE_DISTINCT, false, NULL },
                /* Issue 33: S's key exchange names t1's NTP address (any port). */
                { "a key-exchange server naming another's NTP address",
                  { .ntp = "192.0.2.1", .ke = "192.0.2.1", .key = 1 },
                  { .ntp = "192.0.2.1", .ntp_port = 4123, .ke = "198.51.100.7", .key = 2 }, SOURCE_DISTINCT, true,
                  NULL },
                { "two key-exchange servers naming a third address",
                  { .ntp = "203.0.113.5", .ke = "192.0.2.1", .key = 1 },
                  { .ntp = "203.0.113.5", .ke = "198.51.100.7", .key = 2 }, SOURCE_DISTINCT, true, NULL },
                { "a pool member naming a server's NTP address",
                  { .ntp = "192.0.2.1", .ke = "192.0.2.1", .key = 1 },
                  { .ntp = "192.0.2.1", .ke = "192.0.2.9", .key = 9, .pool = 1 }, SOURCE_DISTINCT, true, NULL },
                { "members of one key-exchange pool", { .ntp = "192.0.2.1", .ke = "192.0.2.9", .key = 9, .pool = 1 },
                  { .ntp = "192.0.2.2", .ke = "192.0.2.9", .key = 9, .pool = 1 }, SOURCE_DISTINCT, false, NULL },
                { "one pool member on two ports", { .ntp = "192.0.2.1", .ntp_port = 123, .ke = "192.0.2.9", .pool = 1 },
                  { .ntp = "192.0.2.1", .ntp_port = 1123, .ke = "192.0.2.9", .pool = 1 }, SOURCE_SAME_NTP_ADDRESS,
                  false, "same NTP address 192.0.2.1" },
                { "two pools on one key-exchange server", { .ntp = "192.0.2.1", .ke = "192.0.2.9", .pool = 1 },
                  { .ntp = "192.0.2.2", .ke = "192.0.2.9", .pool = 2 }, SOURCE_SAME_KE_ADDRESS, false, NULL },
                { "a pool and a server on its key-exchange server", { .ntp = "192.0.2.1", .ke = "192.0.2.9", .pool = 1 },
                  { .ntp = "192.0.2.2", .ke = "192.0.2.9" }, SOURCE_SAME_KE_ADDRESS, false, NULL },
                /* The loopback is this machine: its servers are told apart by port, keys are not
                 * compared. */
                { "loopback, two ports, one key",
                  { .ntp = "127.0.0.1", .ntp_port = 123, .ke = "127.0.0.1", .ke_port = 1, .key = 1 },
                  { .ntp = "127.0.0.1", .ntp_port = 124, .ke = "127.0.0.1", .ke_port = 2, .key = 1 },
                  SOURCE_DISTINCT, false, NULL },
                { "loopback, twins by name",
                  { .ntp = "127.0.0.1", .ntp_port = 123, .ke = "127.0.0.1", .ke_port = 4460 },
                  { .ntp = "127.0.0.1", .ntp_port = 123, .ke = "127.0.0.1", .ke_port = 4460 },
                  SOURCE_SAME_KE_ADDRESS, false, "same key-exchange address 127.0.0.1" },
                { "loopback, a key-exchange server naming another's NTP port",
                  { .ntp = "127.0.0.1", .ntp_port = 123, .ke = "127.0.0.1", .ke_port = 1 },
                  { .ntp = "127.0.0.1", .ntp_port = 123, .ke = "127.0.0.1", .ke_port = 2 },
                  SOURCE_DISTINCT, true, NULL },
                { "loopback, one NTP address on two ports",
                  { .ntp = "127.0.0.1", .ntp_port = 123, .ke = "127.0.0.1", .ke_port = 1 },
                  { .ntp = "127.0.0.1", .ntp_port = 124, .ke = "127.0.0.1", .ke_port = 2 },
                  SOURCE_DISTINCT, false, NULL },
                { "loopback, one key-exchange port", { .ke = "::1", .ke_port = 4460 },
                  { .ke = "::1", .ke_port = 4460 }, SOURCE_SAME_KE_ADDRESS, false, NULL },
                { "loopback and elsewhere, one key", { .ntp = "127.0.0.1", .ke = "127.0.0.1", .key = 1 },
                  { .ntp = "192.0.2.2", .ke = "192.0.2.2", .key = 1 }, SOURCE_SAME_KEY, false, NULL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                SourceIdentity a = identity_of(&cases[i].a), b = identity_of(&cases[i].b);
                char buf[SOURCE_IDENTITY_REASON_MAX];

                printf("  %s\n", cases[i].what);
                ASSERT_EQ(source_identity_same(&a, &b), cases[i].expected);
                ASSERT_EQ(source_identity_same(&b, &a), cases[i].expected);
                ASSERT_EQ(source_identity_conflict(&a, &b), cases[i].conflict);
                ASSERT_EQ(source_identity_conflict(&b, &a), cases[i].conflict);
                if (cases[i].reason)
                        ASSERT_STREQ(source_identity_reason(&a, cases[i].expected, buf), cases[i].reason);
        }
}

static void test_known(void) {
        SourceIdentity id = {};
        uint8_t key[SOURCE_IDENTITY_KEY_SIZE] = { 1 };

        ASSERT_FALSE(source_identity_known(&id));
        source_identity_set_key(&id, key);
        ASSERT_TRUE(source_identity_known(&id));
        source_identity_set_key(&id, NULL);
        ASSERT_FALSE(source_identity_known(&id));
        source_identity_set_ntp_address(&id, NULL);
        ASSERT_FALSE(source_identity_known(&id));
}

/* ---- the set: a duplicate is neither a candidate nor counted ---- */

static int sources[NTP_SELECT_MAX];
#define SRC(i) ((void *) &sources[i])

static SourceSetDecision judge(SourceSet *set) {
        SourceSetPolicy p = {
                .root_distance_max_nsec = 5 * SEC,
                .now_boottime = NOW,
                .now_realtime_nsec = INT64_C(1800000000) * SEC,
                .backward_floor_nsec = INT64_C(1700000000) * SEC,
        };
        SourceSetDecision d;

        ASSERT_OK(source_set_select(set, &p, &d));
        return d;
}

static SourceSetSample sample(int64_t offset, NTSClientBootstrap bootstrap) {
        return (SourceSetSample) {
                .header = {
                        .leap = NTP_LEAP_NONE,
                        .stratum = 1,
                        .precision = -30,
                        .root_dispersion = ntp_short_from_nsec(MSEC / 2),
                },
                .ntp = { .offset_nsec = offset, .delay_nsec = MSEC },
                .boottime = NOW,
                .max_age = 64 * USEC_PER_SEC,
                .bootstrap = bootstrap,
        };
}

/* A server that runs its own key exchange: its NTP address is its key-exchange address. */
static void identify(SourceSet *set, size_t i, const char *ntp) {
        SourceIdentity id = identity_of(&(Side) { .ntp = ntp, .ke = ntp });

        (void) source_set_identify(set, SRC(i), &id);
}

/* NTS="liar liar-alias honest": two sources, which disagree. */
static void test_liar_listed_twice_beside_an_honest_server(void) {
        SourceSet set = { .selected = SIZE_MAX, .preferred = SIZE_MAX };
        SourceSetSample liar = sample(3600 * SEC, NTS_CLIENT_BOOTSTRAP_NONE), honest = sample(0, NTS_CLIENT_BOOTSTRAP_NONE);
        SourceIdentity other_port, same_port;
        SourceSetDecision d;
        char buf[256];

        ASSERT_OK(source_set_add(&set, SRC(0), "localhost"));
        ASSERT_OK(source_set_add(&set, SRC(1), "127.0.0.1"));
        ASSERT_OK(source_set_add(&set, SRC(2), "honest.example"));

        identify(&set, 0, "192.0.2.1");
        ASSERT_FALSE(set.entries[1].duplicate_of);
        /* Learning the second one's address marks it, not the first. */
        other_port = identity_of(&(Side) { .ntp = "192.0.2.1", .ntp_port = 1123, .ke = "192.0.2.1" });
        ASSERT_TRUE(source_set_identify(&set, SRC(1), &other_port));
        ASSERT_TRUE(set.entries[1].duplicate_of == SRC(0));
        ASSERT_EQ(set.entries[1].duplicate_why, SOURCE_SAME_KE_ADDRESS);
        ASSERT_FALSE(set.entries[0].duplicate_of);
        /* Nothing new: no change reported. */
        same_port = identity_of(&(Side) { .ntp = "192.0.2.1", .ke = "192.0.2.1" });
        ASSERT_FALSE(source_set_identify(&set, SRC(1), &same_port));
        identify(&set, 2, "192.0.2.2");
        ASSERT_EQ(judge(&set).n_in_use, 2u);

        source_set_sample(&set, SRC(0), &liar);
        source_set_sample(&set, SRC(1), &liar);
        source_set_sample(&set, SRC(2), &honest);
        d = judge(&set);
        ASSERT_EQ(d.n_in_use, 2u);
        ASSERT_FALSE(d.select.outcome == NTP_SELECT_AGREED);
        ASSERT_FALSE(d.steer);
        ASSERT_STREQ(source_set_verdict_string(&set, 1), "duplicate");
        source_set_describe(&set, &d, buf, sizeof buf);
        ASSERT_STREQ(buf, "2 NTS sources disagree by 3600 s; clock left alone");

        /* Without the merge the liar had two votes of three. */
        identify(&set, 1, "192.0.2.3");
        ASSERT_FALSE(set.entries[1].duplicate_of);
        d = judge(&set);
        ASSERT_TRUE(d.select.outcome == NTP_SELECT_AGREED);
        ASSERT_EQ(d.select.offset_nsec > 3000 * SEC, true);
        source_set_done(&set);
}

/* A duplicate does not count while pending either, and counts again when its twin goes. */
static void test_duplicate_pending_and_its_twin_removed(void) {
        SourceSet set = { .selected = SIZE_MAX, .preferred = SIZE_MAX };
        SourceSetSample s = sample(0, NTS_CLIENT_BOOTSTRAP_NONE);
        SourceSetDecision d;

        ASSERT_OK(source_set_add(&set, SRC(0), "a.example"));
        ASSERT_OK(source_set_add(&set, SRC(1), "b.example"));
        ASSERT_OK(source_set_add(&set, SRC(2), "c.example"));
        identify(&set, 0, "192.0.2.1");
        identify(&set, 1, "192.0.2.1");
        identify(&set, 2, "192.0.2.1");
        ASSERT_TRUE(set.entries[1].duplicate_of == SRC(0));
        ASSERT_TRUE(set.entries[2].duplicate_of == SRC(0));

        source_set_sample(&set, SRC(0), &s);
        d = judge(&set);
        ASSERT_EQ(d.n_in_use, 1u);
        ASSERT_EQ(d.n_pending, 0u);
        ASSERT_TRUE(d.steer);

        source_set_remove(&set, SRC(0));
        ASSERT_FALSE(set.entries[0].duplicate_of);
        ASSERT_TRUE(set.entries[1].duplicate_of == SRC(1));
        ASSERT_EQ(judge(&set).n_in_use, 1u);
        source_set_done(&set);
}

/* The bootstrap from a liar listed twice beside an honest server that is still pending: one
 * server of two in use is no majority. */
static void test_no_bootstrap_from_a_duplicate(void) {
        SourceSet set = { .selected = SIZE_MAX, .preferred = SIZE_MAX };
        SourceSetSample s = sample(365 * 86400 * SEC, NTS_CLIENT_BOOTSTRAP_FORWARD);
        SourceSetDecision d;

        ASSERT_OK(source_set_add(&set, SRC(0), "localhost"));
        ASSERT_OK(source_set_add(&set, SRC(1), "127.0.0.1"));
        ASSERT_OK(source_set_add(&set, SRC(2), "honest.example"));
        source_set_failed(&set, SRC(2));
        source_set_sample(&set, SRC(0), &s);
        source_set_sample(&set, SRC(1), &s);

        /* Not known to be one server: two names agree, a majority of three. */
        d = judge(&set);
        ASSERT_TRUE(d.steer);

        identify(&set, 0, "192.0.2.1");
        identify(&set, 1, "192.0.2.1");
        d = judge(&set);
        ASSERT_FALSE(d.steer);
        source_set_done(&set);
}

TEST_MAIN(TEST_CASE(test_same_server),
          TEST_CASE(test_known),
          TEST_CASE(test_liar_listed_twice_beside_an_honest_server),
          TEST_CASE(test_duplicate_pending_and_its_twin_removed),
          TEST_CASE(test_no_bootstrap_from_a_duplicate));
