/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdio.h>
#include <sys/stat.h>

#include "strv.h"
#include "test-util.h"
#include "time-util.h"
#include "tests.h"
#include "timesyncd-network.h"

static void test_routable_state_with_servers_is_online(void) {
        NetworkState s;

        ASSERT_OK(network_state_parse("# comment\nOPER_STATE=routable\nCARRIER_STATE=carrier\n"
                                      "ADDRESS_STATE=routable\nNTP=192.0.2.1 ntp.example.org\n", &s));
        ASSERT_TRUE(s.online);
        ASSERT_EQ(strv_length(s.ntp_servers), 2);
        ASSERT_STREQ(s.ntp_servers[0], "192.0.2.1");
        ASSERT_STREQ(s.ntp_servers[1], "ntp.example.org");
        network_state_done(&s);
}

static void test_no_carrier_is_offline(void) {
        NetworkState s;

        ASSERT_OK(network_state_parse("CARRIER_STATE=no-carrier\nADDRESS_STATE=off\n", &s));
        ASSERT_FALSE(s.online);
        ASSERT_EQ(strv_length(s.ntp_servers), 0);
        network_state_done(&s);
}

static void test_missing_state_file_means_online_without_servers(void) {
        NetworkState s;

        ASSERT_OK(network_state_read("/nonexistent-timesyncd-test", &s));
        ASSERT_TRUE(s.online);
        ASSERT_TRUE(!s.ntp_servers);
}

static void test_garbage_is_survived(void) {
        NetworkState s;

        ASSERT_OK(network_state_parse("=\n==\nNTP\nNTP=\n\n\x01\x02=\xff", &s));
        ASSERT_TRUE(s.online);
        ASSERT_EQ(strv_length(s.ntp_servers), 0);
        network_state_done(&s);
}

/* ---- the watch: what it reports through its one callback ---- */

/* A watch on a state directory of its own, and what it reported so far. */
typedef struct Fixture {
        sd_event *event;
        char *root, *dir;               /* dir: root/netif, created by the test or not */
        NetworkWatch *watch;
        char said[256];                 /* the reports: "offline servers=a,b online" */
        int servers_result;             /* what the handler answers to LINK_SERVERS */
} Fixture;

static void fixture_say(Fixture *f, const char *word, const char *separator) {
        size_t n = strlen(f->said);

        ASSERT_TRUE(snprintf(f->said + n, sizeof f->said - n, "%s%s", separator, word) < (int) (sizeof f->said - n));
}

static int on_network_event(NetworkWatch *w, NetworkEvent event, char **servers, void *userdata) {
        Fixture *f = userdata;

        ASSERT_TRUE(w == f->watch);
        if (event != NETWORK_EVENT_LINK_SERVERS) {
                fixture_say(f, event == NETWORK_EVENT_ONLINE ? "online" : "offline", f->said[0] ? " " : "");
                return 0;
        }
        fixture_say(f, "servers=", f->said[0] ? " " : "");
        STRV_FOREACH(i, servers)
                fixture_say(f, *i, i == servers ? "" : ",");
        return f->servers_result;
}

/* state: the state file to write first (NULL: none, and no state directory). */
static void fixture_start(Fixture *f, const char *state) {
        f->root = test_tmpdir_new();
        f->dir = strjoin(f->root, "/netif");
        ASSERT_TRUE(f->dir);
        if (state)
                test_write_file(f->root, "netif/state", state);
        ASSERT_OK(sd_event_new(&f->event));
        ASSERT_OK(network_watch_new(f->event, f->dir, on_network_event, f, &f->watch));
}

static void fixture_done(Fixture *f) {
        network_watch_free(f->watch);
        sd_event_unref(f->event);
        test_rm_rf(f->root);
        free(f->dir);
        free(f->root);
}

/* What was reported since the last check is expected. */
static void fixture_expect(Fixture *f, const char *expected) {
        ASSERT_STREQ(f->said, expected);
        f->said[0] = '\0';
}

/* The same, once the loop has reported something (bounded). */
static void fixture_wait_expect(Fixture *f, const char *expected) {
        usec_t deadline = now(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC;

        while (!f->said[0]) {
                ASSERT_TRUE(now(CLOCK_MONOTONIC) < deadline);
                ASSERT_OK(sd_event_run(f->event, 100 * USEC_PER_MSEC));
        }
        fixture_expect(f, expected);
}

/* networkd's way of writing its file: a new file renamed over the old one. */
static void fixture_write_state(Fixture *f, const char *text) {
        _cleanup_free_ char *tmp = strjoin(f->dir, "/.state"), *path = strjoin(f->dir, "/state");

        test_write_file(f->root, "netif/.state", text);
        ASSERT_TRUE(rename(tmp, path) == 0);
}

static void test_watch_reports_offline_servers_online_in_order(void) {
        Fixture f = {};

        fixture_start(&f, "CARRIER_STATE=no-carrier\nNTP=192.0.2.1 ntp.example.org\n");
        fixture_expect(&f, "");         /* nothing before the owner asks */
        ASSERT_OK(network_watch_update(f.watch));
        fixture_expect(&f, "offline servers=192.0.2.1,ntp.example.org");

        fixture_write_state(&f, "CARRIER_STATE=carrier\nNTP=192.0.2.2\n");
        fixture_wait_expect(&f, "servers=192.0.2.2 online");
        fixture_done(&f);
}

/* networkd started after us: the parent is watched until the state directory appears. */
static void test_watch_waits_for_the_directory(void) {
        Fixture f = {};

        fixture_start(&f, NULL);
        ASSERT_OK(network_watch_update(f.watch));
        fixture_expect(&f, "servers= online");  /* no networkd: online, no link servers */

        ASSERT_TRUE(mkdir(f.dir, 0755) == 0);
        fixture_wait_expect(&f, "servers= online");
        fixture_write_state(&f, "ADDRESS_STATE=off\n");
        fixture_wait_expect(&f, "offline servers=");
        fixture_done(&f);
}

/* A state that cannot be read says nothing: online before any good read, then nothing. */
static void test_unreadable_state_counts_as_online_once(void) {
        Fixture f = {};

        fixture_start(&f, NULL);
        test_mkdir_parents(f.root, "netif/state/x");    /* a directory where the file should be */
        ASSERT_OK(network_watch_update(f.watch));
        fixture_expect(&f, "online");
        ASSERT_OK(network_watch_update(f.watch));
        fixture_expect(&f, "");
        fixture_done(&f);
}

/* The owner's failure to take the link servers ends the update before "online". */
static void test_failed_link_servers_end_the_update(void) {
        Fixture f = { .servers_result = -ENOMEM };

        fixture_start(&f, "NTP=192.0.2.1\n");
        ASSERT_ERROR(network_watch_update(f.watch), ENOMEM);
        fixture_expect(&f, "servers=192.0.2.1");
        fixture_done(&f);
}

TEST_MAIN(TEST_CASE(test_routable_state_with_servers_is_online),
          TEST_CASE(test_no_carrier_is_offline),
          TEST_CASE(test_missing_state_file_means_online_without_servers),
          TEST_CASE(test_garbage_is_survived),
          TEST_CASE(test_watch_reports_offline_servers_online_in_order),
          TEST_CASE(test_watch_waits_for_the_directory),
          TEST_CASE(test_unreadable_state_counts_as_online_once),
          TEST_CASE(test_failed_link_servers_end_the_update));
