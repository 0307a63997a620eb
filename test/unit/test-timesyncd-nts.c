/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The NTS glue's decisions: when time comes from NTS only, what NTSStatus and STATUS= say
 * without a server or when every server refuses, and the bootstrap policy. */

#include "tests.h"
#include "timesyncd-nts.h"

#define SEC INT64_C(1000000000)

static void test_nts_enabled_by_servers_invalid_names_or_required(void) {
        ServerName *servers[_SERVER_TYPE_MAX] = {};
        TimesyncConfig c = {};

        ASSERT_FALSE(nts_enabled(servers, &c));
        ASSERT_FALSE(nts_servers_named(servers, &c));
        c.nts_required = true;
        ASSERT_TRUE(nts_enabled(servers, &c));
        ASSERT_FALSE(nts_servers_named(servers, &c));
        c = (TimesyncConfig) { .nts_set = true };
        ASSERT_TRUE(nts_enabled(servers, &c));
        ASSERT_TRUE(nts_servers_named(servers, &c));
        c = (TimesyncConfig) {};
        ASSERT_OK(server_name_new(&servers[SERVER_NTS_RUNTIME], SERVER_NTS_RUNTIME, "a.example", NULL));
        ASSERT_TRUE(nts_enabled(servers, &c));
        server_list_flush(&servers[SERVER_NTS_RUNTIME]);
        /* A plain NTP server does not make NTS. */
        ASSERT_OK(server_name_new(&servers[SERVER_SYSTEM], SERVER_SYSTEM, "a.example", NULL));
        ASSERT_FALSE(nts_enabled(servers, &c));
        server_list_flush(&servers[SERVER_SYSTEM]);
}

static void test_missing_says_why_once(void) {
        static const struct {
                const char *name;
                bool nts_set, required;
                const char *fail_closed;
                bool reported;
                bool set_status;
                const char *status, *notify;
        } table[] = {
                { "NTS= names no valid server: every time", true, false, NULL, true, true,
                  "NTS= names no valid server", "No valid NTS server configured." },
                { "NTSRequired=yes, first time", false, true, NULL, false, true,
                  "NTSRequired=yes but no NTS server is configured",
                  "NTSRequired=yes but no NTS server is configured." },
                { "NTSRequired=yes, said already", false, true, NULL, true, false, NULL, NULL },
                { "an unknown key", false, false, "Unknown key SecureServers", false, true,
                  "Unknown key SecureServers: no NTS server", "Unknown key SecureServers: no NTS server, not synchronizing." },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                TimesyncConfig c = {
                        .nts_set = table[i].nts_set,
                        .nts_required = table[i].required,
                        .nts_fail_closed = (char *) table[i].fail_closed,
                };
                NTSDecision d = {};

                log_info("case: %s", table[i].name);
                nts_missing(&c, table[i].reported, &d);
                ASSERT_EQ(d.set_status, table[i].set_status);
                ASSERT_EQ(d.notify, table[i].set_status);
                if (!table[i].set_status) {
                        ASSERT_EQ(d.changed, 0U);
                        continue;
                }
                ASSERT_STREQ(d.status, table[i].status);
                ASSERT_STREQ(d.notify_text, table[i].notify);
                ASSERT_EQ(d.changed, (unsigned) BUS_PROPERTY_NTS_STATUS);
        }
}

static void test_refused_changes_nts_status_once(void) {
        NTSDecision d = {}, again = {};

        nts_refused("", &d);
        ASSERT_TRUE(d.set_status);
        ASSERT_STREQ(d.status, "Every NTS server refuses service (kiss code DENY or RSTR)");
        ASSERT_STREQ(d.notify_text, "Every NTS server refuses service (kiss code DENY or RSTR).");
        ASSERT_EQ(d.changed, (unsigned) BUS_PROPERTY_NTS_STATUS);

        /* Already said: STATUS= again, no signal. */
        nts_refused(d.status, &again);
        ASSERT_FALSE(again.set_status);
        ASSERT_TRUE(again.notify);
        ASSERT_EQ(again.changed, 0U);
}

static void test_bootstrap_policy(void) {
        /* A floor at 1000 s; the clock reads it plus the time since boot: it was set to the
         * floor early in boot and ran freely since, the evidence that it is behind. */
        const ClockFloor floor = { .nsec = 1000 * SEC, .source = "clock file" };
        const NTSBootstrapInput behind = {
                .enabled = true,
                .kernel_state_known = true,
                .clock_readable = true,
                .realtime_nsec = 1005 * SEC,
                .boottime_nsec = 5 * SEC,
                .floor = &floor,
        };
        static const struct {
                const char *name;
                NTSClientBootstrap direction;
                unsigned which;                 /* what differs from behind: 1 several, 2 !ahead, 4 !enabled, 8 synchronized,
                                                 * 16 kernel synchronized, 32 kernel unknown,
                                                 * 64 unreadable, 128 far past the floor */
                bool allowed;
                const char *short_reason;       /* NULL: none */
        } table[] = {
                { "forward, the clock reads its floor", NTS_CLIENT_BOOTSTRAP_FORWARD, 0, true, NULL },
                { "forward, NTSBootstrap=no", NTS_CLIENT_BOOTSTRAP_FORWARD, 4, false, "NTSBootstrap=no" },
                { "forward, synchronized since start", NTS_CLIENT_BOOTSTRAP_FORWARD, 8, false,
                  "the clock was synchronized since the daemon started" },
                { "forward, the kernel says synchronized", NTS_CLIENT_BOOTSTRAP_FORWARD, 16, false,
                  "the kernel does not report the clock unsynchronized" },
                { "forward, the kernel cannot be asked", NTS_CLIENT_BOOTSTRAP_FORWARD, 32, false,
                  "the kernel does not report the clock unsynchronized" },
                { "forward, the clock cannot be read", NTS_CLIENT_BOOTSTRAP_FORWARD, 64, false,
                  "the clock cannot be read" },
                { "forward, the clock is far past its floor", NTS_CLIENT_BOOTSTRAP_FORWARD, 128, false,
                  "the clock is not known to be behind" },
                { "backward, one source: not asked", NTS_CLIENT_BOOTSTRAP_BACKWARD, 0, false, NULL },
                { "backward, several, another source's certificate is valid", NTS_CLIENT_BOOTSTRAP_BACKWARD, 
                  1 | 2, false, NULL },
                { "backward, several, the clock may be ahead", NTS_CLIENT_BOOTSTRAP_BACKWARD, 1, true, NULL },
                { "backward, several, far past the floor: the agreement decides", NTS_CLIENT_BOOTSTRAP_BACKWARD,
                  1 | 128, true, NULL },
                { "backward, several, NTSBootstrap=no", NTS_CLIENT_BOOTSTRAP_BACKWARD, 1 | 4, false,
                  "NTSBootstrap=no" },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                NTSBootstrapInput in = behind;
                const char *short_reason = "unset";
                char why[256] = "";
                unsigned w = table[i].which;
                bool allowed;

                log_info("case: %s", table[i].name);
                in.several = w & 1;
                in.clock_may_be_ahead = !(w & 2);
                in.enabled = !(w & 4);
                in.synchronized = w & 8;
                in.kernel_synchronized = w & 16;
                in.kernel_state_known = !(w & 32);
                in.clock_readable = !(w & 64);
                if (w & 128)
                        in.realtime_nsec = 100000 * SEC;

                allowed = nts_bootstrap_decide(&in, table[i].direction, why, sizeof why, &short_reason);
                ASSERT_EQ(allowed, table[i].allowed);
                if (!allowed && table[i].short_reason)
                        ASSERT_STREQ(short_reason, table[i].short_reason);
                if (!allowed && !table[i].short_reason)
                        ASSERT_TRUE(short_reason == NULL);
                if (allowed || table[i].short_reason)
                        ASSERT_FALSE(isempty(why));
        }
}

TEST_MAIN(TEST_CASE(test_nts_enabled_by_servers_invalid_names_or_required),
          TEST_CASE(test_missing_says_why_once),
          TEST_CASE(test_refused_changes_nts_status_once),
          TEST_CASE(test_bootstrap_policy));
