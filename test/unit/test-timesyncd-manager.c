/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* What the manager does with the decisions of the modules below it (timesyncd-policy.h,
 * timesyncd-nts.h): which of its fields change and which properties it announces; the clock
 * adjustment it makes of a sample (step or slew); the PLL's poll exponent. The manager runs in
 * observe mode with the fake clock and is never started: no source, no network; its D-Bus
 * objects are on a socket pair whose client collects the signals. */

#include "bus-test-util.h"
#include "test-util.h"
#include "tests.h"
#include "timesyncd-filter.h"
#include "timesyncd-manager-internal.h"

#define MSEC INT64_C(1000000)
#define SEC INT64_C(1000000000)

static void test_poll_log2(void) {
        static const struct {
                usec_t interval;
                int log2;
        } table[] = {
                { 0, 0 },
                { USEC_PER_SEC, 0 },
                { 2 * USEC_PER_SEC - 1, 0 },
                { 2 * USEC_PER_SEC, 1 },
                { 32 * USEC_PER_SEC, 5 },
                { 63 * USEC_PER_SEC, 5 },
                { 64 * USEC_PER_SEC, 6 },
                { 2048 * USEC_PER_SEC, 11 },
                { 2049 * USEC_PER_SEC, 11 },
                { ((usec_t) 1 << 20) * USEC_PER_SEC, 20 },
                { ((usec_t) 1 << 40) * USEC_PER_SEC, 30 },
                { USEC_INFINITY, 30 },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                fprintf(stderr, "# row %zu: %" PRIu64 " us\n", i, table[i].interval);
                ASSERT_EQ(manager_poll_log2(table[i].interval), table[i].log2);
        }
}

static void test_nts_decision_applied(void) {
        static const struct {
                const char *name;
                NTSDecision d;
                const char *status;             /* NTSStatus after */
                unsigned ke_failures;
                usec_t last_ke;
                bool notified;
                const char *signalled;
        } table[] = {
                { "nothing", {}, "before", 2, 100, false, "" },
                { "status", { .set_status = true, .status = "after", .changed = BUS_PROPERTY_NTS_STATUS },
                  "after", 2, 100, false, "NTSStatus" },
                { "status cleared", { .set_status = true, .changed = BUS_PROPERTY_NTS_STATUS },
                  "", 2, 100, false, "NTSStatus" },
                /* The text is not the flag: without set_status NTSStatus stays. */
                { "text without flag", { .status = "after" }, "before", 2, 100, false, "" },
                { "a failed key exchange", { .ke_failed = true, .changed = BUS_PROPERTY_NTS_KE_FAILURES },
                  "before", 3, 100, false, "NTSKeyExchangeFailures" },
                { "a key exchange", { .ke_done = true, .ke_realtime = 500, .changed = BUS_PROPERTY_NTS_LAST_KE },
                  "before", 2, 500, false, "NTSLastKeyExchangeTimestamp" },
                { "a time without the flag", { .ke_realtime = 500 }, "before", 2, 100, false, "" },
                { "STATUS=", { .notify = true, .notify_text = "Why." }, "before", 2, 100, true, "" },
                { "several properties in bit order",
                  { .changed = BUS_PROPERTY_NTS_STATUS | BUS_PROPERTY_NTS_COOKIES | BUS_PROPERTY_SERVER_NAME },
                  "before", 2, 100, false, "ServerName NTSCookies NTSStatus" },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_(manager_freep) Manager *m = test_manager_new();
                _cleanup_free_ char *signalled = NULL;
                BusPair p;

                fprintf(stderr, "# row %zu: %s\n", i, table[i].name);
                bus_pair_start(&p, m);
                strcpy(m->nts_status, "before");
                m->nts_ke_failures = 2;
                m->nts_last_ke_realtime = 100;

                manager_nts_apply(m, &table[i].d);
                signalled = bus_pair_take_changed(&p);
                ASSERT_STREQ(m->nts_status, table[i].status);
                ASSERT_EQ(m->nts_ke_failures, table[i].ke_failures);
                ASSERT_EQ(m->nts_last_ke_realtime, table[i].last_ke);
                ASSERT_EQ(m->status_notified, table[i].notified);
                ASSERT_STREQ(signalled, table[i].signalled);
                bus_pair_stop(&p);
        }
}

typedef enum Clock {
        CLOCK_UNTOUCHED,
        CLOCK_STEPPED,
        CLOCK_SLEWED,
} Clock;

/* The manager before each row: a server selected whose sample is shown as authenticated,
 * offline (no timer of its own to fire while the loop delivers the signals), NTSStatus "before";
 * the set of several sources is empty, nothing selected in it. */
static void test_several_decision_applied(void) {
        static const struct {
                const char *name;
                PolicyDecision d;
                bool current;                   /* a server is still selected */
                bool authenticated;             /* NTSAuthenticated's field */
                bool message;                   /* NTPMessage still shows the sample */
                const char *status;             /* NTSStatus */
                bool notified;
                ManagerState state;
                Clock clock;
                bool synchronized;
                const char *signalled;
        } table[] = {
                { "nothing", {}, true, true, true, "before", false, MANAGER_OFFLINE, CLOCK_UNTOUCHED, false, "" },
                { "stopped", { .stopped = true }, false, false, true, "before", false, MANAGER_OFFLINE,
                  CLOCK_UNTOUCHED, false, "" },
                /* Nothing selected in the set: nothing steers, and NTPMessage describes no server. */
                { "selected none", { .select = true, .changed = BUS_PROPERTIES_SELECTED }, false, false, false,
                  "before", false, MANAGER_OFFLINE, CLOCK_UNTOUCHED, false,
                  "ServerName ServerAddress NTPMessage PollIntervalUSec NTSAuthenticated SecureTime "
                  "NTSKeyExchangeServer NTSAEAD NTSCookies" },
                /* No selected source, no sample to record: what is shown stays. */
                { "record without a selection", { .record = true }, true, true, true, "before", false,
                  MANAGER_OFFLINE, CLOCK_UNTOUCHED, false, "" },
                { "NTSStatus", { .set_nts_status = true, .nts_status = "after", .changed = BUS_PROPERTY_NTS_STATUS },
                  true, true, true, "after", false, MANAGER_OFFLINE, CLOCK_UNTOUCHED, false, "NTSStatus" },
                { "NTSStatus text without the flag", { .nts_status = "after" }, true, true, true, "before", false,
                  MANAGER_OFFLINE, CLOCK_UNTOUCHED, false, "" },
                { "STATUS=", { .notify = true, .status = "Three agree." }, true, true, true, "before", true,
                  MANAGER_OFFLINE, CLOCK_UNTOUCHED, false, "" },
                { "polling", { .polling = true }, true, true, true, "before", false, MANAGER_POLLING,
                  CLOCK_UNTOUCHED, false, "" },
                /* Every server refuses: said in NTSStatus and STATUS=, and the manager idles. */
                { "refused", { .refused = true }, true, true, true,
                  "Every NTS server refuses service (kiss code DENY or RSTR)", true, MANAGER_IDLE, CLOCK_UNTOUCHED,
                  false, "NTSStatus" },
                { "Sources", { .sources_changed = true }, true, true, true, "before", false, MANAGER_OFFLINE,
                  CLOCK_UNTOUCHED, false, "Sources" },
                /* A set of one found nothing to poll: the manager waits, or idles for the reason
                 * given. */
                { "wait", { .wait = true }, true, true, true, "before", false, MANAGER_WAITING, CLOCK_UNTOUCHED,
                  false, "" },
                { "idle", { .notify = true, .status = "Idle.", .idle = "no usable server configured" }, true, true,
                  true, "before", true, MANAGER_IDLE, CLOCK_UNTOUCHED, false, "" },
                /* The clock does what the decision says: the set decided step or slew. The
                 * result goes back to the set, whose answer announces Sources. */
                { "steer: step", { .steer = true, .adjustment = { .offset_nsec = 2 * SEC, .step = true },
                                   .server = "a.example", .changed = BUS_PROPERTY_FREQUENCY },
                  true, true, true, "before", false, MANAGER_OFFLINE, CLOCK_STEPPED, true, "Frequency Sources" },
                { "steer: slew", { .steer = true, .adjustment = { .offset_nsec = 2 * MSEC },
                                   .server = "a.example" },
                  true, true, true, "before", false, MANAGER_OFFLINE, CLOCK_SLEWED, true, "Sources" },
                { "steer: a slew of a large offset", { .steer = true, .adjustment = { .offset_nsec = 2 * SEC },
                                                       .server = "a.example" },
                  true, true, true, "before", false, MANAGER_OFFLINE, CLOCK_SLEWED, true, "Sources" },
                /* In its order: the selection goes, then the set polls and steers. */
                { "all at once", { .select = true, .polling = true, .set_nts_status = true, .nts_status = "",
                                   .steer = true, .adjustment = { .offset_nsec = -3 * SEC, .step = true },
                                   .server = "b.example", .changed = BUS_PROPERTY_NTS_STATUS },
                  false, false, false, "", false, MANAGER_POLLING, CLOCK_STEPPED, true, "NTSStatus Sources" },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_(manager_freep) Manager *m = test_manager_new();
                _cleanup_free_ char *signalled = NULL;
                int64_t offset;
                BusPair p;

                fprintf(stderr, "# row %zu: %s\n", i, table[i].name);
                ASSERT_OK(server_name_new(&m->servers[SERVER_NTS], SERVER_NTS, "a.example", &m->current));
                m->ntpmsg = (NTPMessage) { .header.stratum = 2, .packet_count = 5 };
                m->ntpmsg_authenticated = true;
                strcpy(m->nts_status, "before");
                /* A wait is for longer than the row's loop runs. */
                m->config.connection_retry_usec = USEC_PER_HOUR;
                offset = clock_backend_fake_offset(m->clock);
                bus_pair_start(&p, m);

                manager_policy_apply(m, &table[i].d);
                signalled = bus_pair_take_changed(&p);

                ASSERT_EQ(!!m->current, table[i].current);
                ASSERT_EQ(m->ntpmsg_authenticated, table[i].authenticated);
                ASSERT_EQ(m->ntpmsg.packet_count, table[i].message ? 5u : 0u);
                ASSERT_STREQ(m->nts_status, table[i].status);
                ASSERT_EQ(m->status_notified, table[i].notified);
                ASSERT_EQ(m->state, table[i].state);
                if (table[i].state == MANAGER_IDLE)
                        ASSERT_STREQ(m->idle_reason, table[i].d.idle ?: "every NTS server refuses service");
                if (table[i].state == MANAGER_WAITING)
                        ASSERT_TRUE(sd_event_source_get_enabled(m->event_retry, NULL) > 0);
                ASSERT_EQ(clock_backend_fake_steps(m->clock), table[i].clock == CLOCK_STEPPED);
                ASSERT_EQ(clock_backend_fake_slews(m->clock), table[i].clock == CLOCK_SLEWED);
                ASSERT_EQ(clock_backend_fake_offset(m->clock) - offset,
                          table[i].clock == CLOCK_STEPPED ? table[i].d.adjustment.offset_nsec : 0);
                ASSERT_EQ(m->synchronized, table[i].synchronized);
                ASSERT_EQ(m->source_settings.synchronized, table[i].synchronized);
                ASSERT_EQ(m->frequency_known, table[i].clock != CLOCK_UNTOUCHED);
                ASSERT_STREQ(signalled, table[i].signalled);
                bus_pair_stop(&p);
        }
}

/* A wait is armed on CLOCK_BOOTTIME until the time the decision names (a backing-off NTS
 * client's draw), or for ConnectionRetrySec= from the clock's now when it names none or one
 * that has passed. */
static void test_wait_arms_the_retry_timer(void) {
        _cleanup_(manager_freep) Manager *m = test_manager_new();
        usec_t before, after, at;

        m->config.connection_retry_usec = USEC_PER_HOUR;

        before = now(CLOCK_BOOTTIME);
        manager_policy_apply(m, &(PolicyDecision) { .wait = true, .wait_until = before + 2 * USEC_PER_HOUR });
        ASSERT_EQ(m->state, MANAGER_WAITING);
        ASSERT_OK(sd_event_source_get_time(m->event_retry, &at));
        ASSERT_EQ(at, before + 2 * USEC_PER_HOUR);

        for (int k = 0; k < 2; k++) {
                before = now(CLOCK_BOOTTIME);
                manager_policy_apply(m, &(PolicyDecision) { .wait = true, .wait_until = k == 0 ? 0 : before - 1 });
                after = now(CLOCK_BOOTTIME);
                ASSERT_OK(sd_event_source_get_time(m->event_retry, &at));
                ASSERT_TRUE(at >= before + USEC_PER_HOUR && at <= after + USEC_PER_HOUR);
                ASSERT_TRUE(sd_event_source_get_enabled(m->event_retry, NULL) > 0);
        }

        manager_policy_apply(m, &(PolicyDecision) { .polling = true });
        ASSERT_EQ(m->state, MANAGER_POLLING);
        ASSERT_TRUE(sd_event_source_get_enabled(m->event_retry, NULL) == 0);
}

/* Once synchronized, a step is rare and what an attacker wants: it is logged as a warning
 * with its size and the server; the first synchronization is not. */
static void test_step_after_synchronization_is_warned(void) {
        static const struct {
                const char *name;
                bool synchronized, step, authenticated;
                const char *logged, *not_logged;
        } table[] = {
                { "first step", false, true, false, "Initial clock synchronization to a.example (offset +2.000000 s, "
                  "plain NTP, not authenticated", "after the first synchronization" },
                /* Whether the time came over NTS is the sample's, as the decision carries it. */
                { "first step, NTS", false, true, true, "Initial clock synchronization to a.example (offset "
                  "+2.000000 s, NTS authenticated", "not authenticated" },
                { "later step", true, true, false, "Stepped the clock by +2.000000 s after the first synchronization, "
                                            "following a.example", "Initial clock synchronization" },
                { "later slew", true, false, false, "", "after the first synchronization" },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_(manager_freep) Manager *m = test_manager_new();
                PolicyDecision d = {
                        .steer = true,
                        .adjustment = { .offset_nsec = 2 * SEC, .step = table[i].step },
                        .server = "a.example",
                        .steer_authenticated = table[i].authenticated,
                };
                _cleanup_free_ char *log = NULL;
                LogCapture c;

                fprintf(stderr, "# row %zu: %s\n", i, table[i].name);
                m->synchronized = table[i].synchronized;
                log_capture_start(&c);
                manager_policy_apply(m, &d);
                log = log_capture_stop(&c);
                ASSERT_CONTAINS(log, table[i].logged);
                ASSERT_NOT_CONTAINS(log, table[i].not_logged);
                ASSERT_TRUE(m->synchronized);
        }
}

TEST_MAIN(TEST_CASE(test_poll_log2),
          TEST_CASE(test_nts_decision_applied),
          TEST_CASE(test_several_decision_applied),
          TEST_CASE(test_wait_arms_the_retry_timer),
          TEST_CASE(test_step_after_synchronization_is_warned));
