/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The decisions of the policy over the sources in use that need no bus or time: what NTSStatus
 * says of the set, the leap second the set announces, which properties a decision names, when a
 * set of several is wanted, and how a set of one walks the server lists. */

#include "source-test-util.h"
#include "tests.h"
#include "timesyncd-bus-property.h"
#include "timesyncd-policy.h"

#define MSEC INT64_C(1000000)
#define SEC INT64_C(1000000000)

static void test_nts_status_says_why_nts_gives_no_time(void) {
        static const struct {
                const char *name;
                PolicyStatusInput in;
                const char *expected;
        } table[] = {
                { "disagreement wins over everything",
                  { .disagree = true, .outcome = NTP_SELECT_NO_MAJORITY, .since = "S since T",
                    .pool_failure = "pool: P", .last_failure = "a: F", .failing = "" },
                  "S since T" },
                { "left alone, and some fail: both",
                  { .disagree = true, .outcome = NTP_SELECT_TOO_FEW, .since = "S since T", .pool_failure = "",
                    .last_failure = "a: F", .failing = "1 of 3 NTS servers failing: a (F)" },
                  "S since T; 1 of 3 NTS servers failing: a (F)" },
                { "a failed pool lookup, when they do not disagree",
                  { .outcome = NTP_SELECT_AGREED, .since = "S", .pool_failure = "pool: P",
                    .last_failure = "a: F", .failing = "1 of 3 NTS servers failing: a (F)" },
                  "pool: P" },
                { "nothing answers, FallbackNTS=: what the administrator can do",
                  { .outcome = NTP_SELECT_NO_CANDIDATES, .fallback = true, .since = "No FallbackNTS=",
                    .pool_failure = "", .last_failure = "a: F", .failing = "" },
                  "No FallbackNTS=" },
                { "nothing answers: every server that fails, not only the last",
                  { .outcome = NTP_SELECT_NO_CANDIDATES, .since = "S", .pool_failure = "",
                    .last_failure = "b: F", .failing = "2 of 2 NTS servers failing: a (E), b (F)" },
                  "S; 2 of 2 NTS servers failing: a (E), b (F)" },
                { "nothing answers, FallbackNTS=: what to do, then who fails",
                  { .outcome = NTP_SELECT_NO_CANDIDATES, .fallback = true, .since = "No FallbackNTS=",
                    .pool_failure = "", .last_failure = "a: F", .failing = "1 of 1 NTS servers failing: a (F)" },
                  "No FallbackNTS=; 1 of 1 NTS servers failing: a (F)" },
                { "nothing answers: the last failure",
                  { .outcome = NTP_SELECT_NO_CANDIDATES, .since = "S", .pool_failure = "",
                    .last_failure = "a: F", .failing = "" },
                  "a: F" },
                { "nothing answers yet, some pending: nothing to say",
                  { .outcome = NTP_SELECT_NO_CANDIDATES, .n_pending = 1, .since = "S", .pool_failure = "",
                    .last_failure = "a: F", .failing = "" },
                  "" },
                { "nothing answers and nothing failed: nothing to say",
                  { .outcome = NTP_SELECT_NO_CANDIDATES, .since = "S", .pool_failure = "", .last_failure = "",
                    .failing = "" },
                  "" },
                { "agreement names the servers that fail",
                  { .outcome = NTP_SELECT_AGREED, .since = "S", .pool_failure = "", .last_failure = "a: F",
                    .failing = "1 of 3 NTS servers failing: a (F)" },
                  "1 of 3 NTS servers failing: a (F)" },
                { "agreement names a falseticker",
                  { .outcome = NTP_SELECT_AGREED, .since = "S", .pool_failure = "", .last_failure = "",
                    .failing = "", .falsetickers = "Falseticker: x (+3600.000000 s)" },
                  "Falseticker: x (+3600.000000 s)" },
                { "agreement names the servers that fail and the falseticker",
                  { .outcome = NTP_SELECT_AGREED, .since = "S", .pool_failure = "", .last_failure = "",
                    .failing = "1 of 3 NTS servers failing: a (F)", .falsetickers = "Falseticker: x (+1 s)" },
                  "1 of 3 NTS servers failing: a (F); Falseticker: x (+1 s)" },
                { "agreement, none failing",
                  { .outcome = NTP_SELECT_AGREED, .since = "S", .pool_failure = "", .last_failure = "",
                    .failing = "" },
                  "" },
                { "too few agree without disagreeing",
                  { .outcome = NTP_SELECT_TOO_FEW, .since = "S", .pool_failure = "", .last_failure = "a: F",
                    .failing = "" },
                  "" },
                { "a conflict of claims is said while they agree",
                  { .outcome = NTP_SELECT_AGREED, .since = "S", .pool_failure = "", .last_failure = "",
                    .failing = "", .conflict = "NTS sources b and a name one NTP address X" },
                  "NTS sources b and a name one NTP address X" },
                { "a conflict of claims is said after the rest",
                  { .disagree = true, .outcome = NTP_SELECT_TOO_FEW, .since = "S since T", .pool_failure = "",
                    .last_failure = "a: F", .failing = "1 of 3 NTS servers failing: a (F)",
                    .conflict = "C" },
                  "S since T; 1 of 3 NTS servers failing: a (F); C" },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                char buf[64];

                log_info("case: %s", table[i].name);
                ASSERT_STREQ(policy_nts_status(&table[i].in, buf, sizeof buf), table[i].expected);
        }
}

static void test_failure_reason_leaves_a_logged_key_exchange_error_to_its_line(void) {
        static const char cert[] = "TLS handshake with 127.0.0.1:4460 failed: certificate verification failed: "
                                   "certificate has expired: valid until 2021-01-01 00:00 UTC";
        static const struct {
                const char *name, *error, *ke_error;
                bool ke_logged;
                const char *expected;
        } table[] = {
                { "a key exchange that said why", cert, cert, true, "key exchange failed" },
                { "a key exchange error that was not logged (postponed)", "postponed: 16", "postponed: 16", false,
                  "postponed: 16" },
                { "no reply, after a key exchange failed before", "no reply", cert, true, "no reply" },
                { "a plain server", "no reply", NULL, false, "no reply" },
                { "no error", "", "", true, "" },
                { "no error at all", NULL, NULL, false, "" },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                log_info("case: %s", table[i].name);
                ASSERT_STREQ(policy_failure_reason(table[i].error, table[i].ke_error, table[i].ke_logged),
                             table[i].expected);
        }
}

static void set_entry(SourceSet *set, size_t i, NTPSelectVerdict v, bool current, int leap) {
        set->entries[i] = (SourceSetEntry) {
                .verdict = v,
                .current = current,
                .candidate.header.leap = leap,
        };
        set->n_entries = MAX(set->n_entries, i + 1);
}

static void test_leap_needs_more_than_half_of_the_current_agreeing_sources(void) {
        static const struct {
                const char *name;
                size_t n;
                struct { NTPSelectVerdict v; bool current; int leap; } e[4];
                size_t n_agree;
                int expected;
        } table[] = {
                { "one of one", 1, { { NTP_SELECT_TRUECHIMER, true, NTP_LEAP_PLUSSEC } }, 1, NTP_LEAP_PLUSSEC },
                { "two of three", 3,
                  { { NTP_SELECT_TRUECHIMER, true, NTP_LEAP_PLUSSEC }, { NTP_SELECT_TRUECHIMER, true, NTP_LEAP_PLUSSEC },
                    { NTP_SELECT_TRUECHIMER, true, NTP_LEAP_NONE } }, 3, NTP_LEAP_PLUSSEC },
                { "one of two is not a majority", 2,
                  { { NTP_SELECT_TRUECHIMER, true, NTP_LEAP_MINUSSEC }, { NTP_SELECT_TRUECHIMER, true, NTP_LEAP_NONE } },
                  2, NTP_LEAP_NONE },
                { "a falseticker's vote does not count", 3,
                  { { NTP_SELECT_FALSETICKER, true, NTP_LEAP_PLUSSEC }, { NTP_SELECT_TRUECHIMER, true, NTP_LEAP_PLUSSEC },
                    { NTP_SELECT_TRUECHIMER, true, NTP_LEAP_NONE } }, 2, NTP_LEAP_NONE },
                { "a stale truechimer's vote does not count", 3,
                  { { NTP_SELECT_TRUECHIMER, false, NTP_LEAP_PLUSSEC }, { NTP_SELECT_TRUECHIMER, true, NTP_LEAP_PLUSSEC },
                    { NTP_SELECT_TRUECHIMER, true, NTP_LEAP_NONE } }, 2, NTP_LEAP_NONE },
                { "an alarm is no leap", 1, { { NTP_SELECT_TRUECHIMER, true, NTP_LEAP_NOTINSYNC } }, 1, NTP_LEAP_NONE },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                SourceSet set = {};

                log_info("case: %s", table[i].name);
                for (size_t k = 0; k < table[i].n; k++)
                        set_entry(&set, k, table[i].e[k].v, table[i].e[k].current, table[i].e[k].leap);
                ASSERT_EQ(policy_leap(&set, table[i].n_agree), table[i].expected);
        }
}

static void test_property_bits_name_the_dbus_properties(void) {
        const char *names[_BUS_PROPERTY_MAX + 1];

        ASSERT_STREQ(bus_property_name(BUS_PROPERTY_SERVER_NAME), "ServerName");
        ASSERT_STREQ(bus_property_name(BUS_PROPERTY_NTS_STATUS), "NTSStatus");
        ASSERT_TRUE(bus_property_name(0) == NULL);
        ASSERT_TRUE(bus_property_name(BUS_PROPERTY_SERVER_NAME | BUS_PROPERTY_NTS_STATUS) == NULL);
        ASSERT_TRUE(bus_property_name(1U << _BUS_PROPERTY_MAX) == NULL);
        for (unsigned i = 0; i < _BUS_PROPERTY_MAX; i++)
                ASSERT_TRUE(bus_property_name(1U << i) != NULL);

        ASSERT_EQ(bus_property_names(0, names), 0U);
        ASSERT_TRUE(names[0] == NULL);
        ASSERT_EQ(bus_property_names(BUS_PROPERTY_NTS_STATUS | BUS_PROPERTY_SERVER_ADDRESS, names), 2U);
        ASSERT_STREQ(names[0], "ServerAddress");
        ASSERT_STREQ(names[1], "NTSStatus");
        ASSERT_TRUE(names[2] == NULL);
        ASSERT_EQ(bus_property_names(BUS_PROPERTIES_SELECTED, names), 8U);
}

static void test_set_is_wanted_for_two_servers_or_a_pool(void) {
        static const struct {
                const char *name;
                const char *servers[3];
                unsigned max_sources;
                bool nts_usable;
                bool expected;
        } table[] = {
                { "one server", { "a.example" }, 4, true, false },
                { "two servers", { "a.example", "b.example" }, 4, true, true },
                { "two servers, NTSMaxSources=1", { "a.example", "b.example" }, 1, true, false },
                { "a pool alone", { "pool:pool.example" }, 1, true, true },
                { "two servers, NTS not usable", { "a.example", "b.example" }, 4, false, false },
                { "no server", {}, 4, true, false },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                ServerName *servers[_SERVER_TYPE_MAX] = {};
                TimesyncConfig c = { .nts_max_sources = table[i].max_sources };
                Policy pol;

                log_info("case: %s", table[i].name);
                for (size_t k = 0; table[i].servers[k]; k++)
                        ASSERT_OK(server_name_new(&servers[SERVER_NTS], SERVER_NTS, table[i].servers[k], NULL));
                policy_init(&pol, &(PolicyContext) { .sources = &policy_source_ops, .lists = &policy_list_ops,
                                                     .config = &c, .servers = servers });
                ASSERT_EQ(policy_wanted(&pol, table[i].nts_usable), table[i].expected);
                ASSERT_FALSE(pol.running);
                ASSERT_TRUE(pol.selected == NULL);
                ASSERT_TRUE(policy_verdict(&pol, NULL) == NULL);
                ASSERT_FALSE(policy_clock_may_be_ahead(&pol));
                server_list_flush(&servers[SERVER_NTS]);
        }
}

static void test_runtime_list_comes_first(void) {
        ServerName *servers[_SERVER_TYPE_MAX] = {};
        TimesyncConfig c = { .nts_max_sources = 4 };
        Policy pol;

        ASSERT_OK(server_name_new(&servers[SERVER_NTS], SERVER_NTS, "a.example", NULL));
        ASSERT_OK(server_name_new(&servers[SERVER_NTS], SERVER_NTS, "b.example", NULL));
        ASSERT_OK(server_name_new(&servers[SERVER_NTS_RUNTIME], SERVER_NTS_RUNTIME, "c.example", NULL));
        policy_init(&pol, &(PolicyContext) { .sources = &policy_source_ops, .lists = &policy_list_ops,
                                             .config = &c, .servers = servers });
        /* One runtime server: one at a time, whatever NTS= says. */
        ASSERT_FALSE(policy_wanted(&pol, true));
        server_list_flush(&servers[SERVER_NTS_RUNTIME]);
        ASSERT_TRUE(policy_wanted(&pol, true));
        server_list_flush(&servers[SERVER_NTS]);
}

static void test_stop_of_a_set_that_does_not_run_decides_nothing(void) {
        ServerName *servers[_SERVER_TYPE_MAX] = {};
        TimesyncConfig c = { .nts_max_sources = 4 };
        PolicyDecision d = {}, none = {};
        Policy pol;

        policy_init(&pol, &(PolicyContext) { .sources = &policy_source_ops, .lists = &policy_list_ops,
                                             .config = &c, .servers = servers, .nts_status = "" });
        policy_stop(&pol, &d);
        ASSERT_MEMEQ(&d, &none, sizeof d);
}

/* A step from NTP_STEP_THRESHOLD_NSEC (0.4 s) on, either way; a slew below it. The leap
 * indicator and the error bound go along. */
static void test_offset_steps_or_slews(void) {
        static const struct {
                int64_t offset_nsec;
                bool step;
        } table[] = {
                { 0, false },
                { 1, false },
                { 399 * MSEC, false },
                { 400 * MSEC - 1, false },
                { 400 * MSEC, true },
                { -400 * MSEC + 1, false },
                { -400 * MSEC, true },
                { 3600 * SEC, true },
                { -86400 * SEC, true },
                { INT64_MAX, true },
                { INT64_MIN, true },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                ClockAdjustment a = policy_adjustment(table[i].offset_nsec, NTP_LEAP_MINUSSEC, 25 * MSEC);

                log_info("row %zu: %+" PRIi64 " ns", i, table[i].offset_nsec);
                ASSERT_EQ(a.step, table[i].step);
                ASSERT_EQ(a.offset_nsec, table[i].offset_nsec);
                ASSERT_EQ(a.leap, NTP_LEAP_MINUSSEC);
                ASSERT_EQ(a.max_error_nsec, 25 * MSEC);
        }
}

static void on_source(Source *s, SourceEvent e, void *userdata) {
}

typedef struct Walk {
        sd_event *event;
        ClockBackend *clock;
        SourceSettings settings;
        TimesyncConfig config;
        ServerName *servers[_SERVER_TYPE_MAX];
        Policy pol;
} Walk;

static void walk_init(Walk *w) {
        *w = (Walk) { .config = { .nts_max_sources = 4, .connection_retry_usec = 30 * USEC_PER_SEC } };
        ASSERT_OK(sd_event_new(&w->event));
        ASSERT_OK(clock_backend_new(CLOCK_BACKEND_FAKE, &w->clock));
        w->settings = test_source_settings(w->event, NULL);
        w->settings.clock = w->clock;
        policy_init(&w->pol, &(PolicyContext) { .sources = &policy_source_ops, .lists = &policy_list_ops,
                                                 .config = &w->config, .clock = w->clock, .servers = w->servers,
                                                 .nts_status = "", .source_settings = &w->settings,
                                                 .source_handler = on_source });
}

static void walk_done(Walk *w) {
        PolicyDecision d = {};

        policy_stop(&w->pol, &d);
        for (ServerType t = 0; t < _SERVER_TYPE_MAX; t++)
                server_list_flush(&w->servers[t]);
        clock_backend_free(w->clock);
        sd_event_unref(w->event);
}

/* Plain NTP is a set of one over stock's lists: the first server is selected from the start, a
 * failing one hands over to the next at once and leaves the set, the fallback list is not used
 * while NTP= names servers, and after a whole round the manager is asked to wait
 * ConnectionRetrySec=; the next start begins with the first again. */
static void test_set_of_one_walks_the_lists(void) {
        ServerName *a, *b;
        PolicyDecision d = {};
        Walk w;

        walk_init(&w);
        ASSERT_OK(server_name_new(&w.servers[SERVER_SYSTEM], SERVER_SYSTEM, "127.0.0.1:9", &a));
        ASSERT_OK(server_name_new(&w.servers[SERVER_SYSTEM], SERVER_SYSTEM, "127.0.0.2:9", &b));
        ASSERT_OK(server_name_new(&w.servers[SERVER_FALLBACK], SERVER_FALLBACK, "127.0.0.3:9", NULL));

        policy_start(&w.pol, /* nts= */ false, false, 0, &d);
        ASSERT_EQ(policy_running(&w.pol), POLICY_ONE);
        ASSERT_TRUE(d.select && d.polling && !d.wait && !d.idle);
        ASSERT_TRUE(w.pol.selected == a->source);
        ASSERT_TRUE(policy_uses_list(&w.pol, SERVER_SYSTEM));
        ASSERT_FALSE(policy_uses_list(&w.pol, SERVER_FALLBACK));

        d = (PolicyDecision) {};
        policy_on_event(&w.pol, a->source, SOURCE_EVENT_FAILED, &d);
        ASSERT_TRUE(d.select && d.polling && d.sources_changed && !d.wait);
        ASSERT_TRUE(w.pol.selected == b->source);
        ASSERT_EQ(source_state(a->source), SOURCE_IDLE);
        ASSERT_TRUE(policy_verdict(&w.pol, a->source) == NULL);

        d = (PolicyDecision) {};
        policy_on_event(&w.pol, b->source, SOURCE_EVENT_FAILED, &d);
        ASSERT_TRUE(d.wait);
        ASSERT_EQ(d.wait_until, 0U);
        ASSERT_FALSE(d.polling);
        ASSERT_TRUE(d.notify);
        ASSERT_STREQ(d.status, "No server answered, retrying.");
        ASSERT_TRUE(w.pol.selected == NULL);
        ASSERT_EQ(source_state(b->source), SOURCE_IDLE);

        d = (PolicyDecision) {};
        policy_start(&w.pol, false, false, 0, &d);
        ASSERT_TRUE(w.pol.selected == a->source);
        ASSERT_TRUE(d.polling);
        walk_done(&w);
}

/* Nothing configured at all: the set of one says so and asks the manager to idle. */
static void test_set_of_one_without_servers_idles(void) {
        PolicyDecision d = {};
        Walk w;

        walk_init(&w);
        policy_start(&w.pol, false, false, 0, &d);
        ASSERT_TRUE(w.pol.selected == NULL);
        ASSERT_STREQ(d.idle, "no usable server configured");
        ASSERT_STREQ(d.status, "Idle.");
        ASSERT_FALSE(d.polling || d.wait);
        walk_done(&w);
}

TEST_MAIN(TEST_CASE(test_nts_status_says_why_nts_gives_no_time),
          TEST_CASE(test_failure_reason_leaves_a_logged_key_exchange_error_to_its_line),
          TEST_CASE(test_leap_needs_more_than_half_of_the_current_agreeing_sources),
          TEST_CASE(test_property_bits_name_the_dbus_properties),
          TEST_CASE(test_set_is_wanted_for_two_servers_or_a_pool),
          TEST_CASE(test_runtime_list_comes_first),
          TEST_CASE(test_stop_of_a_set_that_does_not_run_decides_nothing),
          TEST_CASE(test_offset_steps_or_slews),
          TEST_CASE(test_set_of_one_walks_the_lists),
          TEST_CASE(test_set_of_one_without_servers_idles));
