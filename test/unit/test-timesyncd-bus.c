/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The D-Bus surface of the manager (timesyncd-bus.c, timesyncd-bus-property.c) on a socket
 * pair: what each property says for a given Manager state, which arguments the methods and
 * the writable properties refuse and with which error, the signals that leave out properties
 * whose value did not change, and the property bits' names. The manager runs with the fake
 * clock of observe mode and is never started: no source, no network. */

#include <limits.h>
#include <unistd.h>

#include "bus-test-util.h"
#include "nts-client-test-util.h"
#include "string-util.h"
#include "test-util.h"
#include "tests.h"
#include "timesyncd-bus-property.h"
#include "timesyncd-bus.h"
#include "timesyncd-manager.h"

static void append(char *buf, size_t size, const char *a, const char *b, const char *c) {
        size_t l = strlen(buf);

        ASSERT_TRUE((size_t) snprintf(buf + l, size - l, "%s%s%s", a, b, c) < size - l);
}

/* A value as text: basic types as numbers, booleans as true and false, strings in quotes,
 * arrays in [], structures in (), dictionary entries in {}, elements separated by ','. */
static void render(sd_bus_message *msg, char *buf, size_t size) {
        const char *contents;
        char type;

        while (sd_bus_message_peek_type(msg, &type, &contents) > 0) {
                char item[256] = "";
                union {
                        const char *s;
                        int b;
                        uint8_t y;
                        int32_t i;
                        uint32_t u;
                        int64_t x;
                        uint64_t t;
                } v;

                if (!isempty(buf))
                        append(buf, size, ",", "", "");

                if (IN_SET(type, SD_BUS_TYPE_ARRAY, SD_BUS_TYPE_STRUCT, SD_BUS_TYPE_DICT_ENTRY, SD_BUS_TYPE_VARIANT)) {
                        static const char *const open[128] = { ['a'] = "[", ['r'] = "(", ['e'] = "{", ['v'] = "" };
                        static const char *const close[128] = { ['a'] = "]", ['r'] = ")", ['e'] = "}", ['v'] = "" };

                        ASSERT_OK(sd_bus_message_enter_container(msg, type, contents));
                        render(msg, item, sizeof item);
                        ASSERT_OK(sd_bus_message_exit_container(msg));
                        append(buf, size, open[(int) type], item, close[(int) type]);
                        continue;
                }

                ASSERT_TRUE(strchr("sbyiuxt", type));
                ASSERT_OK(sd_bus_message_read_basic(msg, type, &v));
                if (type == SD_BUS_TYPE_STRING)
                        snprintf(item, sizeof item, "\"%s\"", v.s);
                else if (type == SD_BUS_TYPE_BOOLEAN)
                        snprintf(item, sizeof item, "%s", v.b ? "true" : "false");
                else if (type == SD_BUS_TYPE_INT32 || type == SD_BUS_TYPE_INT64)
                        snprintf(item, sizeof item, "%" PRIi64, type == SD_BUS_TYPE_INT32 ? (int64_t) v.i : v.x);
                else
                        snprintf(item, sizeof item, "%" PRIu64,
                                 type == SD_BUS_TYPE_BYTE ? v.y : type == SD_BUS_TYPE_UINT32 ? v.u : v.t);
                append(buf, size, item, "", "");
        }
}

static sd_bus_message *call(BusPair *p, const char *path, const char *interface, const char *method,
                            const char *types, ...) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = NULL;
        sd_bus_message *reply = NULL;
        va_list ap;

        ASSERT_OK(sd_bus_message_new_method_call(p->client, &msg, NULL, path, interface, method));
        va_start(ap, types);
        ASSERT_OK(sd_bus_message_appendv(msg, types, ap));
        va_end(ap);
        ASSERT_OK(sd_bus_call_async(p->client, NULL, msg, bus_pair_on_reply, &reply, 0));
        bus_pair_run_until(p, (void **) &reply);
        return reply;
}

/* The property's value as render() writes it. */
static void get(BusPair *p, const char *interface, const char *name, char *buf, size_t size) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;

        reply = call(p, streq(interface, BUS_TEST_INTERFACE) ? BUS_TEST_PATH : "/org/freedesktop/LogControl1",
                     "org.freedesktop.DBus.Properties", "Get", "ss", interface, name);
        if (sd_bus_message_is_method_error(reply, NULL)) {
                fprintf(stderr, "Get %s: %s\n", name, sd_bus_message_get_error(reply)->message);
                abort();
        }
        buf[0] = '\0';
        render(reply, buf, size);
}

static void set_message(Manager *m) {
        m->ntpmsg = (NTPMessage) {
                .header = {
                        .leap = NTP_LEAP_PLUSSEC,
                        .version = 4,
                        .mode = NTP_MODE_SERVER,
                        .stratum = 2,
                        .precision = -20,
                        /* 1/4 s and 1/16 s in NTP short format */
                        .root_delay = ntp_short_from_nsec(250000000),
                        .root_dispersion = ntp_short_from_nsec(62500000),
                        .refid = { 'G', 'P', 'S', 0 },
                },
                .origin_nsec = INT64_C(1000000000000),
                .receive_nsec = INT64_C(1000000001000),
                .transmit_nsec = INT64_C(1000000002000),
                /* before 1970: shown as 0, never as a huge unsigned number */
                .destination_nsec = -5,
                .spike = true,
                .packet_count = 7,
                .jitter_nsec = 3000,
        };
}

static void set_nothing(Manager *m) {}

static void set_server(Manager *m) {
        ASSERT_OK(server_name_new(&m->servers[SERVER_SYSTEM], SERVER_SYSTEM, "ntp.example", &m->current));
}

static void set_nts_status(Manager *m) {
        strcpy(m->nts_status, "every NTS server refuses service");
}

static void set_counters(Manager *m) {
        m->nts_ke_failures = 3;
        m->nts_last_ke_realtime = 1700000000 * USEC_PER_SEC;
        m->poll_interval_usec = 64 * USEC_PER_SEC;
        m->config.poll_interval_min_usec = 32 * USEC_PER_SEC;
        m->config.root_distance_max_usec = 5 * USEC_PER_SEC;
}

/* Authenticated, but no sample counted: not shown as authenticated. */
static void set_authenticated_without_sample(Manager *m) {
        m->ntpmsg_authenticated = true;
}

static void set_authenticated(Manager *m) {
        m->ntpmsg_authenticated = true;
        m->ntpmsg.packet_count = 1;
}

static void set_runtime_and_required(Manager *m) {
        ASSERT_OK(server_name_new(&m->servers[SERVER_RUNTIME], SERVER_RUNTIME, "a.example", NULL));
        ASSERT_OK(server_name_new(&m->servers[SERVER_RUNTIME], SERVER_RUNTIME, "192.0.2.1:124", NULL));
        ASSERT_OK(server_name_new(&m->servers[SERVER_NTS_RUNTIME], SERVER_NTS_RUNTIME, "nts.example", NULL));
        m->config.nts_required = true;
}

/* FallbackNTS= in the NTS list: NTS= (SystemNTSServers) is empty then. */
static void set_nts_fallback(Manager *m) {
        ASSERT_OK(server_name_new(&m->servers[SERVER_NTS], SERVER_NTS, "fallback.example", NULL));
        m->nts_fallback = true;
}

static void set_nts_system(Manager *m) {
        ASSERT_OK(server_name_new(&m->servers[SERVER_NTS], SERVER_NTS, "nts1.example", NULL));
}

static void test_properties_for_a_manager_state(void) {
        static const struct {
                const char *name;
                void (*setup)(Manager *m);
                const char *property, *value;
        } table[] = {
                { "nothing selected", set_nothing, "ServerName", "\"\"" },
                { "nothing selected", set_nothing, "ServerAddress", "(0,[])" },
                { "nothing selected", set_nothing, "NTSKeyExchangeServer", "\"\"" },
                { "nothing selected", set_nothing, "NTSAEAD", "\"\"" },
                { "nothing selected", set_nothing, "NTSCookies", "0" },
                { "nothing selected", set_nothing, "NTSStatus", "\"\"" },
                { "nothing selected", set_nothing, "NTS", "false" },
                { "nothing selected", set_nothing, "NTSAuthenticated", "false" },
                { "nothing selected", set_nothing, "NTPMessage", "(0,0,0,0,0,0,0,[0,0,0,0],0,0,0,0,false,0,0)" },
                { "nothing selected", set_nothing, "RuntimeNTPServers", "[]" },
                { "nothing selected", set_nothing, "RefusedReplies", "[]" },
                { "nothing selected", set_nothing, "Sources", "[]" },
                { "a server", set_server, "ServerName", "\"ntp.example\"" },
                { "a server without source", set_server, "ServerAddress", "(0,[])" },
                { "a server without source", set_server, "NTSCookies", "0" },
                { "a server", set_server, "SystemNTPServers", "[\"ntp.example\"]" },
                { "NTSStatus", set_nts_status, "NTSStatus", "\"every NTS server refuses service\"" },
                { "counters", set_counters, "NTSKeyExchangeFailures", "3" },
                { "counters", set_counters, "NTSLastKeyExchangeTimestamp", "1700000000000000" },
                { "counters", set_counters, "PollIntervalUSec", "64000000" },
                { "counters", set_counters, "PollIntervalMinUSec", "32000000" },
                { "counters", set_counters, "RootDistanceMaxUSec", "5000000" },
                { "a sample", set_message, "NTPMessage",
                  "(1,4,4,2,-20,250000,62500,[71,80,83,0],1000000000,1000000001,1000000002,0,true,7,3)" },
                { "authenticated, no sample", set_authenticated_without_sample, "NTSAuthenticated", "false" },
                { "authenticated, no sample", set_authenticated_without_sample, "SecureTime", "false" },
                { "authenticated", set_authenticated, "NTSAuthenticated", "true" },
                { "authenticated", set_authenticated, "SecureTime", "true" },
                { "runtime lists", set_runtime_and_required, "RuntimeNTPServers", "[\"a.example\",\"192.0.2.1:124\"]" },
                { "runtime lists", set_runtime_and_required, "RuntimeNTSServers", "[\"nts.example\"]" },
                { "runtime lists", set_runtime_and_required, "NTS", "true" },
                { "NTS=", set_nts_system, "SystemNTSServers", "[\"nts1.example\"]" },
                { "NTS=", set_nts_system, "NTSKeyExchangeServers", "[\"nts1.example\"]" },
                { "NTS=", set_nts_system, "NTS", "true" },
                { "FallbackNTS= in use", set_nts_fallback, "SystemNTSServers", "[]" },
                { "FallbackNTS= in use", set_nts_fallback, "NTSKeyExchangeServers", "[]" },
                /* The fake clock answers from memory: frequency 0 until an adjustment. */
                { "frequency unknown", set_nothing, "Frequency", "0" },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_(manager_freep) Manager *m = test_manager_new();
                char value[1024];
                BusPair p;

                fprintf(stderr, "# row %zu: %s: %s\n", i, table[i].name, table[i].property);
                table[i].setup(m);
                bus_pair_start(&p, m);
                get(&p, BUS_TEST_INTERFACE, table[i].property, value, sizeof value);
                ASSERT_STREQ(value, table[i].value);
                bus_pair_stop(&p);
        }
}

static void test_methods_refuse_bad_arguments(void) {
        static const struct {
                const char *name;
                const char *interface, *method;
                const char *argument;
                const char *error;      /* NULL: accepted */
        } table[] = {
                { "NTP: a space", BUS_TEST_INTERFACE, "SetRuntimeNTPServers", "bad name", SD_BUS_ERROR_INVALID_ARGS },
                { "NTP: port 0", BUS_TEST_INTERFACE, "SetRuntimeNTPServers", "localhost:0", SD_BUS_ERROR_INVALID_ARGS },
                { "NTP: empty", BUS_TEST_INTERFACE, "SetRuntimeNTPServers", "", SD_BUS_ERROR_INVALID_ARGS },
                { "NTP: double dot", BUS_TEST_INTERFACE, "SetRuntimeNTPServers", "a..b", SD_BUS_ERROR_INVALID_ARGS },
                /* The spellings of NTS lists are not NTP server names. */
                { "NTP: an NTS pool", BUS_TEST_INTERFACE, "SetRuntimeNTPServers", "pool:nts.example",
                  SD_BUS_ERROR_INVALID_ARGS },
                { "NTP: an SRV name", BUS_TEST_INTERFACE, "SetRuntimeNTPServers", "srv:example.org",
                  SD_BUS_ERROR_INVALID_ARGS },
                { "NTS: an SRV name with a port", BUS_TEST_INTERFACE, "SetRuntimeNTSServers", "srv:example.org:123",
                  SD_BUS_ERROR_INVALID_ARGS },
                { "NTS: a space", BUS_TEST_INTERFACE, "SetRuntimeNTSServers", "bad name", SD_BUS_ERROR_INVALID_ARGS },
                { "NTS: port 0", BUS_TEST_INTERFACE, "SetRuntimeNTSServers", "nts.example:0",
                  SD_BUS_ERROR_INVALID_ARGS },
                { "NTS: leading dash", BUS_TEST_INTERFACE, "SetRuntimeNTSServers", "-nts.example",
                  SD_BUS_ERROR_INVALID_ARGS },
                /* Refused before the caller is asked who it is: the same for root and others. */
                { "NTP: the second of two", BUS_TEST_INTERFACE, "SetRuntimeNTPServers", NULL,
                  SD_BUS_ERROR_INVALID_ARGS },
                /* The method exists with its stock signature. */
                { "NTP: wrong signature", BUS_TEST_INTERFACE, "SetRuntimeNTPServers", "-s", SD_BUS_ERROR_INVALID_ARGS },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_(manager_freep) Manager *m = test_manager_new();
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                char value[256];
                BusPair p;

                fprintf(stderr, "# row %zu: %s\n", i, table[i].name);
                bus_pair_start(&p, m);
                if (!table[i].argument)
                        reply = call(&p, BUS_TEST_PATH, table[i].interface, table[i].method, "as", 2, "192.0.2.1",
                                     "a..b");
                else if (streq(table[i].argument, "-s"))
                        reply = call(&p, BUS_TEST_PATH, table[i].interface, table[i].method, "s", "192.0.2.1");
                else
                        reply = call(&p, BUS_TEST_PATH, table[i].interface, table[i].method, "as", 1,
                                     table[i].argument);
                ASSERT_TRUE(sd_bus_message_is_method_error(reply, table[i].error));
                /* Nothing was set. */
                get(&p, BUS_TEST_INTERFACE, "RuntimeNTPServers", value, sizeof value);
                ASSERT_STREQ(value, "[]");
                get(&p, BUS_TEST_INTERFACE, "RuntimeNTSServers", value, sizeof value);
                ASSERT_STREQ(value, "[]");
                ASSERT_TRUE(m->servers[SERVER_RUNTIME] == NULL && m->servers[SERVER_NTS_RUNTIME] == NULL);
                bus_pair_stop(&p);
        }
}

/* Valid names (an NTS list's spellings too): root sets them at once (and the lists' properties are signalled); anyone else
 * needs polkit, which a peer connection has not: refused as access denied. The manager is
 * offline, so setting servers starts no source. */
static void test_runtime_servers_set_by_root_only_without_polkit(void) {
        _cleanup_(manager_freep) Manager *m = test_manager_new();
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ char *changed = NULL;
        char value[256];
        BusPair p;

        bus_pair_start(&p, m);
        reply = call(&p, BUS_TEST_PATH, BUS_TEST_INTERFACE, "SetRuntimeNTSServers", "as", 3, "nts.example",
                     "192.0.2.1:4461", "pool:nts.example");
        get(&p, BUS_TEST_INTERFACE, "RuntimeNTSServers", value, sizeof value);
        changed = bus_pair_take_changed(&p);
        if (geteuid() == 0) {
                ASSERT_FALSE(sd_bus_message_is_method_error(reply, NULL));
                ASSERT_STREQ(value, "[\"nts.example\",\"192.0.2.1:4461\",\"pool:nts.example\"]");
                ASSERT_STREQ(changed, "RuntimeNTSServers NTS");
                ASSERT_EQ(m->state, MANAGER_OFFLINE);
        } else {
                ASSERT_TRUE(sd_bus_message_is_method_error(reply, SD_BUS_ERROR_ACCESS_DENIED));
                ASSERT_STREQ(value, "[]");
                ASSERT_STREQ(changed, "");
        }
        bus_pair_stop(&p);
}

static void on_source(Source *s, SourceEvent e, void *userdata) {
}

/* LastError and LastErrorTimestamp of the one source of the Sources property. */
static void source_error(BusPair *p, char *error, size_t size, usec_t *ret_time) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        unsigned found = 0;
        const char *key;

        reply = call(p, BUS_TEST_PATH, "org.freedesktop.DBus.Properties", "Get", "ss", BUS_TEST_INTERFACE, "Sources");
        ASSERT_FALSE(sd_bus_message_is_method_error(reply, NULL));
        ASSERT_OK(sd_bus_message_enter_container(reply, 'v', "aa{sv}"));
        ASSERT_OK(sd_bus_message_enter_container(reply, 'a', "a{sv}"));
        ASSERT_OK(sd_bus_message_enter_container(reply, 'a', "{sv}"));
        while (sd_bus_message_enter_container(reply, 'e', "sv") > 0) {
                const char *v;

                ASSERT_OK(sd_bus_message_read(reply, "s", &key));
                if (streq(key, "LastError")) {
                        ASSERT_OK(sd_bus_message_read(reply, "v", "s", &v));
                        snprintf(error, size, "%s", v);
                        found++;
                } else if (streq(key, "LastErrorTimestamp")) {
                        ASSERT_OK(sd_bus_message_read(reply, "v", "t", ret_time));
                        found++;
                } else
                        ASSERT_OK(sd_bus_message_skip(reply, "v"));
                ASSERT_OK(sd_bus_message_exit_container(reply));
        }
        ASSERT_EQ(found, 2u);
}

/* RetrySources, after a fix: a source that backs off (an NTS server whose key exchanges cannot
 * start: NTSTrustedCertificates= was refused) tries again at once, its NTS client's backoff
 * ends, and a selection that waits for its retry timer starts over now. Root may; anyone else
 * needs polkit, which a peer connection has not. The Sources property says when the last
 * error came. */
static void test_retry_sources_ends_every_backoff_now(void) {
        _cleanup_(manager_freep) Manager *m = test_manager_new();
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        char error[256];
        uint32_t retried = UINT32_MAX;
        usec_t before, retry_at = 0, error_time = 0;
        ServerName *n;
        Source *s;
        BusPair p;

        m->nts_settings = (NTSClientSettings) {
                .event = m->event,
                .clock = m->clock,
                .trusted_certificates_invalid = true,
                .retry_usec = 30 * USEC_PER_SEC,
        };
        m->source_settings = (SourceSettings) {
                .event = m->event,
                .clock = m->clock,
                .poll_interval_min_usec = 32 * USEC_PER_SEC,
                .poll_interval_max_usec = 2048 * USEC_PER_SEC,
                .retry_usec = 30 * USEC_PER_SEC,
                .nts = &m->nts_settings,
        };
        ASSERT_OK(server_name_new(&m->servers[SERVER_NTS_RUNTIME], SERVER_NTS_RUNTIME, "nts.example", &n));
        ASSERT_OK(server_name_source(n, &m->source_settings, on_source, NULL));
        s = n->source;
        before = now(CLOCK_REALTIME);
        ASSERT_ERROR(source_keep_trying(s), EAGAIN);
        ASSERT_EQ(source_state(s), SOURCE_BACKING_OFF);
        ASSERT_TRUE(nts_client_backing_off(source_nts(s)));
        ASSERT_EQ(test_nts_report(source_nts(s)).ke_failures, 1u);
        /* Every server failed: the selection waits an hour. */
        m->state = MANAGER_WAITING;
        ASSERT_OK(sd_event_source_set_time(m->event_retry, now(CLOCK_BOOTTIME) + USEC_PER_HOUR));
        ASSERT_OK(sd_event_source_set_enabled(m->event_retry, SD_EVENT_ONESHOT));

        bus_pair_start(&p, m);
        source_error(&p, error, sizeof error, &error_time);
        ASSERT_CONTAINS(error, "NTSTrustedCertificates= has no valid value");
        ASSERT_TRUE(error_time >= before && error_time <= now(CLOCK_REALTIME));

        reply = call(&p, BUS_TEST_PATH, BUS_TEST_INTERFACE, "RetrySources", "");
        if (geteuid() != 0) {
                ASSERT_TRUE(sd_bus_message_is_method_error(reply, SD_BUS_ERROR_ACCESS_DENIED));
                ASSERT_TRUE(nts_client_backing_off(source_nts(s)));
                bus_pair_stop(&p);
                return;
        }
        ASSERT_FALSE(sd_bus_message_is_method_error(reply, NULL));
        ASSERT_OK(sd_bus_message_read(reply, "u", &retried));
        ASSERT_EQ(retried, 1u);
        ASSERT_OK(sd_event_source_get_time(m->event_retry, &retry_at));
        ASSERT_TRUE(retry_at <= now(CLOCK_BOOTTIME));

        /* The source tried again at once (and failed again, its key exchange still cannot
         * start), not after the 30 s of its backoff. */
        for (unsigned i = 0; test_nts_report(source_nts(s)).ke_failures < 2; i++) {
                ASSERT_TRUE(i < 100);
                /* The retry timer starts a set that is not there: keep it from running. */
                ASSERT_OK(sd_event_source_set_enabled(m->event_retry, SD_EVENT_OFF));
                ASSERT_OK(sd_event_run(m->event, 10 * USEC_PER_MSEC));
        }
        ASSERT_EQ(source_state(s), SOURCE_BACKING_OFF);
        bus_pair_stop(&p);
}

static void test_log_control_refuses_unknown_level_and_target(void) {
        static const struct {
                const char *property, *value;
                const char *error;
        } table[] = {
                { "LogLevel", "loud", SD_BUS_ERROR_INVALID_ARGS },
                { "LogLevel", "", SD_BUS_ERROR_INVALID_ARGS },
                { "LogTarget", "nowhere", SD_BUS_ERROR_INVALID_ARGS },
                { "LogLevel", "debug", NULL },
                { "LogTarget", "console", NULL },
        };
        _cleanup_(manager_freep) Manager *m = test_manager_new();
        int saved_level = log_get_max_level();
        LogTarget saved_target = log_get_target();
        BusPair p;

        bus_pair_start(&p, m);
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                char before[64], after[64], expected[80];

                fprintf(stderr, "# row %zu: %s=%s\n", i, table[i].property, table[i].value);
                get(&p, "org.freedesktop.LogControl1", table[i].property, before, sizeof before);
                reply = call(&p, "/org/freedesktop/LogControl1", "org.freedesktop.DBus.Properties", "Set", "ssv",
                             "org.freedesktop.LogControl1", table[i].property, "s", table[i].value);
                get(&p, "org.freedesktop.LogControl1", table[i].property, after, sizeof after);
                if (table[i].error) {
                        ASSERT_TRUE(sd_bus_message_is_method_error(reply, table[i].error));
                        ASSERT_STREQ(after, before);
                } else {
                        ASSERT_FALSE(sd_bus_message_is_method_error(reply, NULL));
                        snprintf(expected, sizeof expected, "\"%s\"", table[i].value);
                        ASSERT_STREQ(after, expected);
                }
        }
        bus_pair_stop(&p);
        log_set_max_level(saved_level);
        log_set_target(saved_target);
}

/* PollIntervalUSec, Frequency, NTSAuthenticated and NTSCookies stay the same over most polls:
 * signalled when their value changed since the last signal, and always the first time; the
 * others every time they are named. NTSAuthenticated brings SecureTime along. */
static void test_signals_leave_out_unchanged_values(void) {
        static const struct {
                const char *name;
                usec_t poll_interval_usec;
                bool authenticated;
                const char *const emit[4];
                const char *signalled;
        } table[] = {
                { "first time", 32, false, { "PollIntervalUSec", "NTSAuthenticated", "NTSCookies" },
                  "PollIntervalUSec NTSAuthenticated SecureTime NTSCookies" },
                { "unchanged", 32, false, { "PollIntervalUSec", "NTSAuthenticated", "NTSCookies" }, "" },
                { "unchanged, with one always sent", 32, false, { "PollIntervalUSec", "ServerName" }, "ServerName" },
                { "poll interval changed", 64, false, { "PollIntervalUSec", "NTSAuthenticated" }, "PollIntervalUSec" },
                { "authenticated", 64, true, { "PollIntervalUSec", "NTSAuthenticated" },
                  "NTSAuthenticated SecureTime" },
                { "again", 64, true, { "NTSAuthenticated", "NTSCookies" }, "" },
                { "NTSStatus every time", 64, true, { "NTSStatus" }, "NTSStatus" },
                { "NTSStatus every time", 64, true, { "NTSStatus" }, "NTSStatus" },
                { "first Frequency", 64, true, { "Frequency" }, "Frequency" },
                { "same Frequency", 64, true, { "Frequency" }, "" },
        };
        _cleanup_(manager_freep) Manager *m = test_manager_new();
        BusPair p;

        bus_pair_start(&p, m);
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_free_ char *changed = NULL;

                fprintf(stderr, "# row %zu: %s\n", i, table[i].name);
                m->poll_interval_usec = table[i].poll_interval_usec * USEC_PER_SEC;
                m->ntpmsg_authenticated = table[i].authenticated;
                m->ntpmsg.packet_count = 1;
                ASSERT_OK(manager_bus_emit_changed_strv(m, table[i].emit));
                changed = bus_pair_take_changed(&p);
                ASSERT_STREQ(changed, table[i].signalled);
        }
        bus_pair_stop(&p);
}

/* Without a connection that announced the state, nothing is sent. */
static void test_no_signal_before_connected(void) {
        _cleanup_(manager_freep) Manager *m = test_manager_new();
        _cleanup_free_ char *changed = NULL;
        BusPair p;

        bus_pair_start(&p, m);
        m->bus->connected = false;
        ASSERT_OK(manager_bus_emit_changed(m, "ServerName", "NTSStatus", NULL));
        changed = bus_pair_take_changed(&p);
        ASSERT_STREQ(changed, "");
        ASSERT_EQ(p.n_signals, 0u);
        bus_pair_stop(&p);
}

static void test_property_bits_and_names(void) {
        static const struct {
                unsigned bit;
                const char *name;
        } table[] = {
                { BUS_PROPERTY_SERVER_NAME, "ServerName" },
                { BUS_PROPERTY_SERVER_ADDRESS, "ServerAddress" },
                { BUS_PROPERTY_NTP_MESSAGE, "NTPMessage" },
                { BUS_PROPERTY_POLL_INTERVAL, "PollIntervalUSec" },
                { BUS_PROPERTY_FREQUENCY, "Frequency" },
                { BUS_PROPERTY_NTS_AUTHENTICATED, "NTSAuthenticated" },
                { BUS_PROPERTY_NTS_KE_SERVER, "NTSKeyExchangeServer" },
                { BUS_PROPERTY_NTS_AEAD, "NTSAEAD" },
                { BUS_PROPERTY_NTS_COOKIES, "NTSCookies" },
                { BUS_PROPERTY_NTS_KE_FAILURES, "NTSKeyExchangeFailures" },
                { BUS_PROPERTY_NTS_LAST_KE, "NTSLastKeyExchangeTimestamp" },
                { BUS_PROPERTY_NTS_STATUS, "NTSStatus" },
                /* Not one bit: no name. */
                { 0, NULL },
                { BUS_PROPERTY_SERVER_NAME | BUS_PROPERTY_NTS_STATUS, NULL },
                { 1U << _BUS_PROPERTY_MAX, NULL },
                { UINT_MAX, NULL },
        };
        static const struct {
                unsigned mask;
                const char *names;
        } masks[] = {
                { 0, "" },
                { BUS_PROPERTY_NTS_STATUS | BUS_PROPERTY_SERVER_NAME, "ServerName NTSStatus" },
                { BUS_PROPERTIES_SELECTED,
                  "ServerName ServerAddress NTPMessage PollIntervalUSec NTSAuthenticated NTSKeyExchangeServer NTSAEAD "
                  "NTSCookies" },
                /* Bits above the last property are not names. */
                { (1U << _BUS_PROPERTY_MAX) | BUS_PROPERTY_FREQUENCY, "Frequency" },
        };
        _cleanup_(manager_freep) Manager *m = test_manager_new();
        BusPair p;

        bus_pair_start(&p, m);
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                char value[1024];

                fprintf(stderr, "# row %zu: %#x\n", i, table[i].bit);
                if (!table[i].name) {
                        ASSERT_TRUE(bus_property_name(table[i].bit) == NULL);
                        continue;
                }
                ASSERT_STREQ(bus_property_name(table[i].bit), table[i].name);
                /* Each name is a property of the interface. */
                get(&p, BUS_TEST_INTERFACE, table[i].name, value, sizeof value);
        }
        bus_pair_stop(&p);

        for (size_t i = 0; i < ELEMENTSOF(masks); i++) {
                const char *names[_BUS_PROPERTY_MAX + 1];
                _cleanup_free_ char *joined = NULL;
                unsigned n;

                fprintf(stderr, "# mask %zu: %#x\n", i, masks[i].mask);
                n = bus_property_names(masks[i].mask, names);
                ASSERT_TRUE(names[n] == NULL);
                joined = test_join(names);
                ASSERT_STREQ(joined, masks[i].names);
        }
}

TEST_MAIN(TEST_CASE(test_properties_for_a_manager_state),
          TEST_CASE(test_methods_refuse_bad_arguments),
          TEST_CASE(test_runtime_servers_set_by_root_only_without_polkit),
          TEST_CASE(test_retry_sources_ends_every_backoff_now),
          TEST_CASE(test_log_control_refuses_unknown_level_and_target),
          TEST_CASE(test_signals_leave_out_unchanged_values),
          TEST_CASE(test_no_signal_before_connected),
          TEST_CASE(test_property_bits_and_names));
