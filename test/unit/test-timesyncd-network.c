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

typedef struct Reports {
        char said[256];                 /* the events so far: "offline servers=a,b online" */
        int servers_result;             /* what the handler answers to LINK_SERVERS */
} Reports;

static void reports_add(Reports *r, const char *word, const char *separator) {
        size_t n = strlen(r->said);

        ASSERT_TRUE(snprintf(r->said + n, sizeof r->said - n, "%s%s", separator, word) < (int) (sizeof r->said - n));
}

static int on_network_event(NetworkWatch *w, NetworkEvent event, char **servers, void *userdata) {
        Reports *r = userdata;

        if (event != NETWORK_EVENT_LINK_SERVERS) {
                reports_add(r, event == NETWORK_EVENT_ONLINE ? "online" : "offline", r->said[0] ? " " : "");
                return 0;
        }
        reports_add(r, "servers=", r->said[0] ? " " : "");
        STRV_FOREACH(i, servers)
                reports_add(r, *i, i == servers ? "" : ",");
        return r->servers_result;
}

/* What was reported since the last call, to be freed; "" for nothing. */
static char *reports_take(Reports *r) {
        char *s = strdup(r->said);

        ASSERT_TRUE(s);
        r->said[0] = '\0';
        return s;
}

/* Runs the loop until something is reported (bounded). */
static char *reports_wait(sd_event *e, Reports *r) {
        usec_t deadline = now(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC;

        while (!r->said[0]) {
                ASSERT_TRUE(now(CLOCK_MONOTONIC) < deadline);
                ASSERT_OK(sd_event_run(e, 100 * USEC_PER_MSEC));
        }
        return reports_take(r);
}

/* networkd's way of writing its file: a new file renamed over the old one. */
static void write_state(const char *root, const char *text) {
        _cleanup_free_ char *tmp = strjoin(root, "/netif/.state"), *path = strjoin(root, "/netif/state");

        test_write_file(root, "netif/.state", text);
        ASSERT_TRUE(rename(tmp, path) == 0);
}

static void test_watch_reports_offline_servers_online_in_order(void) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_free_ char *root = test_tmpdir_new(), *dir = strjoin(root, "/netif"), *said = NULL;
        NetworkWatch *w = NULL;
        Reports r = {};

        ASSERT_OK(sd_event_new(&e));
        test_write_file(root, "netif/state", "CARRIER_STATE=no-carrier\nNTP=192.0.2.1 ntp.example.org\n");
        ASSERT_OK(network_watch_new(e, dir, on_network_event, &r, &w));
        said = reports_take(&r);
        ASSERT_STREQ(said, "");         /* nothing before the owner asks */

        ASSERT_OK(network_watch_update(w));
        free(said);
        said = reports_take(&r);
        ASSERT_STREQ(said, "offline servers=192.0.2.1,ntp.example.org");

        write_state(root, "CARRIER_STATE=carrier\nNTP=192.0.2.2\n");
        free(said);
        said = reports_wait(e, &r);
        ASSERT_STREQ(said, "servers=192.0.2.2 online");

        network_watch_free(w);
        test_rm_rf(root);
}

/* networkd started after us: the parent is watched until the state directory appears. */
static void test_watch_waits_for_the_directory(void) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_free_ char *root = test_tmpdir_new(), *dir = strjoin(root, "/netif"), *said = NULL;
        NetworkWatch *w = NULL;
        Reports r = {};

        ASSERT_OK(sd_event_new(&e));
        ASSERT_OK(network_watch_new(e, dir, on_network_event, &r, &w));
        ASSERT_OK(network_watch_update(w));
        said = reports_take(&r);
        ASSERT_STREQ(said, "servers= online");  /* no networkd: online, no link servers */

        ASSERT_TRUE(mkdir(dir, 0755) == 0);
        free(said);
        said = reports_wait(e, &r);
        ASSERT_STREQ(said, "servers= online");

        write_state(root, "ADDRESS_STATE=off\n");
        free(said);
        said = reports_wait(e, &r);
        ASSERT_STREQ(said, "offline servers=");

        network_watch_free(w);
        test_rm_rf(root);
}

/* A state that cannot be read says nothing: online before any good read, then nothing. */
static void test_unreadable_state_counts_as_online_once(void) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_free_ char *root = test_tmpdir_new(), *dir = strjoin(root, "/netif"), *said = NULL;
        NetworkWatch *w = NULL;
        Reports r = {};

        ASSERT_OK(sd_event_new(&e));
        test_mkdir_parents(root, "netif/state/x");      /* a directory where the file should be */
        ASSERT_OK(network_watch_new(e, dir, on_network_event, &r, &w));
        ASSERT_OK(network_watch_update(w));
        said = reports_take(&r);
        ASSERT_STREQ(said, "online");
        ASSERT_OK(network_watch_update(w));
        free(said);
        said = reports_take(&r);
        ASSERT_STREQ(said, "");

        network_watch_free(w);
        test_rm_rf(root);
}

/* The owner's failure to take the link servers ends the update before "online". */
static void test_failed_link_servers_end_the_update(void) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_free_ char *root = test_tmpdir_new(), *dir = strjoin(root, "/netif"), *said = NULL;
        NetworkWatch *w = NULL;
        Reports r = { .servers_result = -ENOMEM };

        ASSERT_OK(sd_event_new(&e));
        test_write_file(root, "netif/state", "NTP=192.0.2.1\n");
        ASSERT_OK(network_watch_new(e, dir, on_network_event, &r, &w));
        ASSERT_ERROR(network_watch_update(w), ENOMEM);
        said = reports_take(&r);
        ASSERT_STREQ(said, "servers=192.0.2.1");

        network_watch_free(w);
        test_rm_rf(root);
}

TEST_MAIN(TEST_CASE(test_routable_state_with_servers_is_online),
          TEST_CASE(test_no_carrier_is_offline),
          TEST_CASE(test_missing_state_file_means_online_without_servers),
          TEST_CASE(test_garbage_is_survived),
          TEST_CASE(test_watch_reports_offline_servers_online_in_order),
          TEST_CASE(test_watch_waits_for_the_directory),
          TEST_CASE(test_unreadable_state_counts_as_online_once),
          TEST_CASE(test_failed_link_servers_end_the_update));
