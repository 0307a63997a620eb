/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The decisions of the several-sources policy that need no source, bus or time: what NTSStatus
 * says of the set, the leap second the set announces, which properties a decision names, and
 * when the set is wanted at all. */

#include "tests.h"
#include "timesyncd-bus-property.h"
#include "timesyncd-several.h"

static void test_nts_status_says_why_nts_gives_no_time(void) {
        static const struct {
                const char *name;
                SeveralStatusInput in;
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
                { "agreement, none failing",
                  { .outcome = NTP_SELECT_AGREED, .since = "S", .pool_failure = "", .last_failure = "",
                    .failing = "" },
                  "" },
                { "too few agree without disagreeing",
                  { .outcome = NTP_SELECT_TOO_FEW, .since = "S", .pool_failure = "", .last_failure = "a: F",
                    .failing = "" },
                  "" },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                char buf[64];

                log_info("case: %s", table[i].name);
                ASSERT_STREQ(several_nts_status(&table[i].in, buf, sizeof buf), table[i].expected);
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
                ASSERT_STREQ(several_failure_reason(table[i].error, table[i].ke_error, table[i].ke_logged),
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
                ASSERT_EQ(several_leap(&set, table[i].n_agree), table[i].expected);
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
                Several sv;

                log_info("case: %s", table[i].name);
                for (size_t k = 0; table[i].servers[k]; k++)
                        ASSERT_OK(server_name_new(&servers[SERVER_NTS], SERVER_NTS, table[i].servers[k], NULL));
                several_init(&sv, &(SeveralContext) { .config = &c, .servers = servers });
                ASSERT_EQ(several_wanted(&sv, table[i].nts_usable), table[i].expected);
                ASSERT_FALSE(sv.running);
                ASSERT_TRUE(sv.selected == NULL);
                ASSERT_TRUE(several_verdict(&sv, NULL) == NULL);
                ASSERT_FALSE(several_clock_may_be_ahead(&sv));
                server_list_flush(&servers[SERVER_NTS]);
        }
}

static void test_runtime_list_comes_first(void) {
        ServerName *servers[_SERVER_TYPE_MAX] = {};
        TimesyncConfig c = { .nts_max_sources = 4 };
        Several sv;

        ASSERT_OK(server_name_new(&servers[SERVER_NTS], SERVER_NTS, "a.example", NULL));
        ASSERT_OK(server_name_new(&servers[SERVER_NTS], SERVER_NTS, "b.example", NULL));
        ASSERT_OK(server_name_new(&servers[SERVER_NTS_RUNTIME], SERVER_NTS_RUNTIME, "c.example", NULL));
        several_init(&sv, &(SeveralContext) { .config = &c, .servers = servers });
        /* One runtime server: one at a time, whatever NTS= says. */
        ASSERT_FALSE(several_wanted(&sv, true));
        server_list_flush(&servers[SERVER_NTS_RUNTIME]);
        ASSERT_TRUE(several_wanted(&sv, true));
        server_list_flush(&servers[SERVER_NTS]);
}

static void test_stop_of_a_set_that_does_not_run_decides_nothing(void) {
        ServerName *servers[_SERVER_TYPE_MAX] = {};
        TimesyncConfig c = { .nts_max_sources = 4 };
        SeveralDecision d = {}, none = {};
        Several sv;

        several_init(&sv, &(SeveralContext) { .config = &c, .servers = servers, .nts_status = "" });
        several_stop(&sv, &d);
        ASSERT_MEMEQ(&d, &none, sizeof d);
}

TEST_MAIN(TEST_CASE(test_nts_status_says_why_nts_gives_no_time),
          TEST_CASE(test_failure_reason_leaves_a_logged_key_exchange_error_to_its_line),
          TEST_CASE(test_leap_needs_more_than_half_of_the_current_agreeing_sources),
          TEST_CASE(test_property_bits_name_the_dbus_properties),
          TEST_CASE(test_set_is_wanted_for_two_servers_or_a_pool),
          TEST_CASE(test_runtime_list_comes_first),
          TEST_CASE(test_stop_of_a_set_that_does_not_run_decides_nothing));
