/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "strv.h"
#include "test-util.h"
#include "timesyncd-conf.h"

typedef struct Loaded {
        TimesyncConfig config;
        char *log;
        int r;
} Loaded;

static void loaded_done(Loaded *l) {
        timesync_config_done(&l->config);
        l->log = mfree(l->log);
}

/* Writes the (relative path, contents) pairs under a fresh root, runs the standard search there
 * and removes the tree again. */
static Loaded load_tree(const char *const *files) {
        _cleanup_free_ char *root = test_tmpdir_new();
        Loaded l = {};
        LogCapture c;

        for (size_t i = 0; files && files[i]; i += 2)
                test_write_file(root, files[i], files[i + 1]);

        log_capture_start(&c);
        l.r = timesync_config_load(&l.config, root);
        l.log = log_capture_stop(&c);
        test_rm_rf(root);
        return l;
}

#define LOAD(...) load_tree((const char *const[]) { __VA_ARGS__, NULL })
#define MAIN "etc/systemd/timesyncd.conf"
#define ETC_D "etc/systemd/timesyncd.conf.d/"
#define RUN_D "run/systemd/timesyncd.conf.d/"
#define USR_D "usr/lib/systemd/timesyncd.conf.d/"

static void assert_strv(char **l, const char *const *expected) {
        if (!strv_equal(l, (char **) expected)) {
                fprintf(stderr, "got:");
                STRV_FOREACH(s, l)
                        fprintf(stderr, " \"%s\"", *s);
                fprintf(stderr, "\nexpected:");
                for (size_t i = 0; expected[i]; i++)
                        fprintf(stderr, " \"%s\"", expected[i]);
                fprintf(stderr, "\n");
                abort();
        }
}

#define ASSERT_SERVERS(l, ...)                                                                     \
        assert_strv((l), (const char *const[]) { __VA_ARGS__ __VA_OPT__(,) NULL })

static void assert_compiled_in_fallback(char **l) {
        _cleanup_strv_free_ char **expected = strv_split_whitespace(DEFAULT_FALLBACK_NTP);

        ASSERT_TRUE(expected);
        ASSERT_TRUE(strv_length(expected) > 0);
        assert_strv(l, (const char *const *) expected);
}

static void test_no_files_give_stock_defaults(void) {
        _cleanup_(loaded_done) Loaded l = load_tree(NULL);

        ASSERT_OK(l.r);
        ASSERT_TRUE(!l.config.ntp_servers);
        ASSERT_TRUE(!l.config.nts_servers);
        ASSERT_TRUE(!l.config.nts_trusted_certificates);
        assert_compiled_in_fallback(l.config.fallback_servers);
        ASSERT_TRUE(l.config.root_distance_max_usec == 5 * USEC_PER_SEC);
        ASSERT_TRUE(l.config.poll_interval_min_usec == 32 * USEC_PER_SEC);
        ASSERT_TRUE(l.config.poll_interval_max_usec == 2048 * USEC_PER_SEC);
        ASSERT_TRUE(l.config.connection_retry_usec == 30 * USEC_PER_SEC);
        ASSERT_TRUE(l.config.save_interval_usec == 60 * USEC_PER_SEC);
        ASSERT_STREQ(l.log, "");
}

static void test_default_fallback_list_is_the_debian_pool(void) {
        /* The meson option's default; a distribution may override it. */
        _cleanup_(loaded_done) Loaded l = load_tree(NULL);

        if (streq(DEFAULT_FALLBACK_NTP, "0.debian.pool.ntp.org 1.debian.pool.ntp.org "
                                        "2.debian.pool.ntp.org 3.debian.pool.ntp.org"))
                ASSERT_SERVERS(l.config.fallback_servers, "0.debian.pool.ntp.org",
                               "1.debian.pool.ntp.org", "2.debian.pool.ntp.org",
                               "3.debian.pool.ntp.org");
}

static void test_ntp_servers_are_appended_across_files_without_duplicates(void) {
        _cleanup_(loaded_done) Loaded l =
                LOAD(MAIN, "[Time]\nNTP=a.example b.example\nNTP=c.example a.example\n",
                     ETC_D "10-more.conf", "[Time]\nNTP=d.example:4460 b.example\n");

        ASSERT_OK(l.r);
        ASSERT_SERVERS(l.config.ntp_servers, "a.example", "b.example", "c.example",
                       "d.example:4460");
}

static void test_empty_ntp_assignment_resets_the_list(void) {
        _cleanup_(loaded_done) Loaded l =
                LOAD(MAIN, "[Time]\nNTP=a.example b.example\n",
                     USR_D "10-vendor.conf", "[Time]\nNTP=vendor.example\n",
                     ETC_D "20-admin.conf", "[Time]\nNTP=\nNTP=admin.example\n");

        ASSERT_SERVERS(l.config.ntp_servers, "admin.example");
}

static void test_empty_ntp_assignment_last_leaves_no_servers(void) {
        _cleanup_(loaded_done) Loaded l =
                LOAD(MAIN, "[Time]\nNTP=a.example\n", RUN_D "50-off.conf", "[Time]\nNTP=\n");

        ASSERT_SERVERS(l.config.ntp_servers);
}

static void test_fallback_ntp_replaces_the_compiled_in_list(void) {
        _cleanup_(loaded_done) Loaded l = LOAD(MAIN, "[Time]\nFallbackNTP=fb1.example 192.0.2.1\n");

        ASSERT_SERVERS(l.config.fallback_servers, "fb1.example", "192.0.2.1");
}

static void test_empty_fallback_ntp_alone_keeps_the_compiled_in_list(void) {
        /* systemd 252 behaviour (systemd issue #40621): emptying a list that was never set does not
         * count as setting it. */
        _cleanup_(loaded_done) Loaded l = LOAD(MAIN, "[Time]\nFallbackNTP=\n");

        assert_compiled_in_fallback(l.config.fallback_servers);
}

static void test_fallback_ntp_set_then_emptied_stays_empty(void) {
        _cleanup_(loaded_done) Loaded l = LOAD(MAIN, "[Time]\nFallbackNTP=fb.example\n",
                                               ETC_D "90-none.conf", "[Time]\nFallbackNTP=\n");

        ASSERT_SERVERS(l.config.fallback_servers);
}

static void test_invalid_server_names_are_warned_about_with_file_and_line_and_skipped(void) {
        _cleanup_(loaded_done) Loaded l =
                LOAD(MAIN, "[Time]\nNTP=good.example bad..name [::1]:4460 host:0 "
                           "fe80::1\nNTS=nts.example:99999 nts.example\n");

        ASSERT_OK(l.r);
        ASSERT_SERVERS(l.config.ntp_servers, "good.example", "[::1]:4460", "fe80::1");
        ASSERT_SERVERS(l.config.nts_servers, "nts.example");
        ASSERT_CONTAINS(l.log, "etc/systemd/timesyncd.conf:2: Invalid NTP server name or address, "
                               "ignoring: bad..name (not a host name or IPv4 address");
        ASSERT_CONTAINS(l.log, "etc/systemd/timesyncd.conf:2: Invalid NTP server name or address, "
                               "ignoring: host:0 (the port is not a number from 1 to 65535).");
        ASSERT_CONTAINS(l.log, "etc/systemd/timesyncd.conf:3: Invalid NTS server name or address, "
                               "ignoring: nts.example:99999 (the port is not a number from 1 to 65535); time "
                               "comes only from NTS servers, as with NTSRequired=yes.");
        /* An NTS list that lost a server fails closed; an NTP list does not. */
        ASSERT_STREQ(l.config.nts_fail_closed, "NTS= names an invalid server");
        ASSERT_TRUE(l.config.nts_required);
}

static void test_time_values_are_parsed_and_the_last_file_wins(void) {
        _cleanup_(loaded_done) Loaded l = LOAD(
                MAIN,
                "[Time]\nRootDistanceMaxSec=1min\nPollIntervalMinSec=64\nPollIntervalMaxSec=1h\n"
                "ConnectionRetrySec=10s\nSaveIntervalSec=infinity\n",
                USR_D "10-vendor.conf", "[Time]\nRootDistanceMaxSec=2\n",
                ETC_D "20-admin.conf", "[Time]\nRootDistanceMaxSec=3s 500ms\n");

        ASSERT_OK(l.r);
        ASSERT_TRUE(l.config.root_distance_max_usec == 3500 * USEC_PER_MSEC);
        ASSERT_TRUE(l.config.poll_interval_min_usec == 64 * USEC_PER_SEC);
        ASSERT_TRUE(l.config.poll_interval_max_usec == USEC_PER_HOUR);
        ASSERT_TRUE(l.config.connection_retry_usec == 10 * USEC_PER_SEC);
        ASSERT_TRUE(l.config.save_interval_usec == USEC_INFINITY);
        ASSERT_STREQ(l.log, "");
}

static void test_bad_time_value_is_warned_about_and_the_rest_applies(void) {
        _cleanup_(loaded_done) Loaded l =
                LOAD(MAIN, "[Time]\nPollIntervalMinSec=64\n", ETC_D "10-typo.conf",
                     "[Time]\nPollIntervalMinSec=5 minutes please\nSaveIntervalSec=2min\n");

        ASSERT_OK(l.r);
        ASSERT_CONTAINS(l.log, "timesyncd.conf.d/10-typo.conf:2: Invalid time span \"5 minutes please\" "
                               "for PollIntervalMinSec=, keeping 1min 4s.");
        ASSERT_TRUE(l.config.poll_interval_min_usec == 64 * USEC_PER_SEC);
        ASSERT_TRUE(l.config.save_interval_usec == 2 * USEC_PER_MINUTE);
}

static void test_poll_interval_min_below_16s_falls_back_to_the_default(void) {
        _cleanup_(loaded_done) Loaded l = LOAD(MAIN, "[Time]\nPollIntervalMinSec=15s\n");

        ASSERT_CONTAINS(l.log, "timesyncd.conf:2: PollIntervalMinSec=15s is below 16s, using the default 32s.");
        ASSERT_TRUE(l.config.poll_interval_min_usec == 32 * USEC_PER_SEC);
}

static void test_out_of_range_value_after_a_valid_one_gives_the_default_like_stock(void) {
        /* Stock checks the last value once every file is read: an earlier valid one does not
         * come back. */
        _cleanup_(loaded_done) Loaded l = LOAD(MAIN, "[Time]\nPollIntervalMinSec=64\nConnectionRetrySec=5\n",
                                               ETC_D "10-low.conf",
                                               "[Time]\nPollIntervalMinSec=2\nConnectionRetrySec=1ms\n");

        ASSERT_TRUE(l.config.poll_interval_min_usec == 32 * USEC_PER_SEC);
        ASSERT_TRUE(l.config.connection_retry_usec == 30 * USEC_PER_SEC);
}

static void test_valid_value_after_an_out_of_range_one_wins_like_stock(void) {
        _cleanup_(loaded_done) Loaded l = LOAD(MAIN, "[Time]\nPollIntervalMinSec=2\n", ETC_D "10-fix.conf",
                                               "[Time]\nPollIntervalMinSec=64\n");

        ASSERT_TRUE(l.config.poll_interval_min_usec == 64 * USEC_PER_SEC);
}

/* Issue 15, item 10: the values a user mistyped, each named with its file, line, key and value
 * (an empty one too), and what stays in effect. */
static void test_invalid_time_values_name_file_line_key_and_value(void) {
        _cleanup_(loaded_done) Loaded l =
                LOAD(MAIN, "[Time]\nSaveIntervalSec=2min\n", ETC_D "50-typos.conf",
                     "[Time]\nPollIntervalMinSec=5x\nConnectionRetrySec=junk\nRootDistanceMaxSec=\n"
                     "SaveIntervalSec=\nKeyExchangeTimeoutSec=10 s e c\n");

        ASSERT_OK(l.r);
        ASSERT_CONTAINS(l.log, "timesyncd.conf.d/50-typos.conf:2: Invalid time span \"5x\" for "
                               "PollIntervalMinSec=, keeping 32s.");
        ASSERT_CONTAINS(l.log, "timesyncd.conf.d/50-typos.conf:3: Invalid time span \"junk\" for "
                               "ConnectionRetrySec=, keeping 30s.");
        ASSERT_CONTAINS(l.log, "timesyncd.conf.d/50-typos.conf:4: Invalid time span \"\" for "
                               "RootDistanceMaxSec=, keeping 5s.");
        ASSERT_CONTAINS(l.log, "timesyncd.conf.d/50-typos.conf:5: Invalid time span \"\" for "
                               "SaveIntervalSec=, keeping 2min.");
        ASSERT_CONTAINS(l.log, "timesyncd.conf.d/50-typos.conf:6: Invalid time span \"10 s e c\" for "
                               "KeyExchangeTimeoutSec=, keeping 10s.");
        ASSERT_TRUE(l.config.save_interval_usec == 2 * USEC_PER_MINUTE);
}

static void test_poll_interval_max_below_min_is_raised_like_stock(void) {
        _cleanup_(loaded_done) Loaded l =
                LOAD(MAIN, "[Time]\nPollIntervalMinSec=128\nPollIntervalMaxSec=100\n");

        /* Stock keeps the minimum and raises the maximum to MAX(2048s, 32 * minimum). */
        ASSERT_CONTAINS(l.log, "PollIntervalMaxSec=1min 40s is smaller than PollIntervalMinSec=2min 8s, "
                               "using 1h 8min 16s.");
        ASSERT_TRUE(l.config.poll_interval_min_usec == 128 * USEC_PER_SEC);
        ASSERT_TRUE(l.config.poll_interval_max_usec == 4096 * USEC_PER_SEC);
}

static void test_poll_interval_max_below_small_min_becomes_2048s(void) {
        _cleanup_(loaded_done) Loaded l =
                LOAD(MAIN, "[Time]\nPollIntervalMinSec=20\nPollIntervalMaxSec=16\n");

        ASSERT_TRUE(l.config.poll_interval_min_usec == 20 * USEC_PER_SEC);
        ASSERT_TRUE(l.config.poll_interval_max_usec == 2048 * USEC_PER_SEC);
}

static void test_infinite_poll_interval_min_does_not_overflow(void) {
        _cleanup_(loaded_done) Loaded l = LOAD(MAIN, "[Time]\nPollIntervalMinSec=infinity\n");

        ASSERT_TRUE(l.config.poll_interval_min_usec == USEC_INFINITY);
        ASSERT_TRUE(l.config.poll_interval_max_usec == USEC_INFINITY);
}

static void test_connection_retry_below_1s_falls_back_to_the_default(void) {
        _cleanup_(loaded_done) Loaded l = LOAD(MAIN, "[Time]\nConnectionRetrySec=500ms\n");

        ASSERT_CONTAINS(l.log, "timesyncd.conf:2: ConnectionRetrySec=500ms is below 1s, using the default 30s.");
        ASSERT_TRUE(l.config.connection_retry_usec == 30 * USEC_PER_SEC);
}

static void test_nts_servers_and_trusted_certificates(void) {
        _cleanup_(loaded_done) Loaded l =
                LOAD(MAIN,
                     "[Time]\nNTS=time.cloudflare.com "
                     "nts.netnod.se:4460\nNTSTrustedCertificates=/etc/ssl/ntp-ca.pem\n",
                     ETC_D "10-test.conf",
                     "[Time]\nNTS=\nNTS=[::1]:4460\nNTSTrustedCertificates=relative.pem\n");

        ASSERT_SERVERS(l.config.nts_servers, "[::1]:4460");
        ASSERT_STREQ(l.config.nts_trusted_certificates, "/etc/ssl/ntp-ca.pem");
        ASSERT_CONTAINS(l.log, "10-test.conf:4: NTSTrustedCertificates=relative.pem is not an absolute path: "
                               "keeping the one before, and time comes only from NTS servers");
        ASSERT_STREQ(l.config.nts_fail_closed, "NTSTrustedCertificates= is not an absolute path");
}

static void test_refused_trusted_certificates_alone_are_invalid_not_the_system_store(void) {
        _cleanup_(loaded_done) Loaded l = LOAD(MAIN, "[Time]\nNTSTrustedCertificates=ca.pem\n");

        ASSERT_TRUE(!l.config.nts_trusted_certificates);
        ASSERT_TRUE(l.config.nts_trusted_certificates_invalid);
}

static void test_refused_trusted_certificates_after_a_valid_path_keep_it(void) {
        _cleanup_(loaded_done) Loaded l = LOAD(MAIN, "[Time]\nNTSTrustedCertificates=/etc/ca.pem\n"
                                                     "NTSTrustedCertificates=ca.pem\n");

        ASSERT_STREQ(l.config.nts_trusted_certificates, "/etc/ca.pem");
        ASSERT_FALSE(l.config.nts_trusted_certificates_invalid);
}

static void test_empty_trusted_certificates_after_a_refused_one_mean_the_system_store(void) {
        _cleanup_(loaded_done) Loaded l = LOAD(MAIN, "[Time]\nNTSTrustedCertificates=ca.pem\n",
                                               ETC_D "90-system.conf", "[Time]\nNTSTrustedCertificates=\n");

        ASSERT_TRUE(!l.config.nts_trusted_certificates);
        ASSERT_FALSE(l.config.nts_trusted_certificates_invalid);
}

static void test_secure_servers_and_nts_are_one_list_in_the_order_read(void) {
        /* SecureServers= is the upstream patch set's name for NTS=. */
        _cleanup_(loaded_done) Loaded l =
                LOAD(MAIN, "[Time]\nNTS=a.example\nSecureServers=b.example a.example\n",
                     ETC_D "10-more.conf", "[Time]\nSecureServers=c.example\nNTS=d.example:4461\n");

        ASSERT_SERVERS(l.config.nts_servers, "a.example", "b.example", "c.example", "d.example:4461");
        ASSERT_TRUE(l.config.nts_set);
        ASSERT_STREQ(l.log, "");
}

static void test_servers_is_stocks_old_name_for_ntp(void) {
        /* Stock systemd-timesyncd reads Servers= as NTP=; a configuration written for it keeps
         * its servers (and gets no "Unknown key" warning). */
        _cleanup_(loaded_done) Loaded l =
                LOAD(MAIN, "[Time]\nServers=a.example\nNTP=b.example\n",
                     ETC_D "10-more.conf", "[Time]\nServers=c.example\n");
        _cleanup_(loaded_done) Loaded e =
                LOAD(MAIN, "[Time]\nNTP=a.example\n", ETC_D "10-reset.conf", "[Time]\nServers=\n");

        ASSERT_SERVERS(l.config.ntp_servers, "a.example", "b.example", "c.example");
        ASSERT_SERVERS(l.config.nts_servers);
        ASSERT_STREQ(l.log, "");
        ASSERT_SERVERS(e.config.ntp_servers);
}

static void test_empty_secure_servers_empties_the_nts_list(void) {
        _cleanup_(loaded_done) Loaded l = LOAD(MAIN, "[Time]\nNTS=a.example\n", ETC_D "10-reset.conf",
                                               "[Time]\nSecureServers=\nSecureServers=b.example\n");

        ASSERT_SERVERS(l.config.nts_servers, "b.example");
}

static void test_secure_servers_with_only_invalid_names_still_counts_as_set(void) {
        _cleanup_(loaded_done) Loaded l = LOAD(MAIN, "[Time]\nSecureServers=bad_name!x\n");

        ASSERT_SERVERS(l.config.nts_servers);
        ASSERT_TRUE(l.config.nts_set);
        ASSERT_CONTAINS(l.log, "timesyncd.conf:2: Invalid NTS server name or address, ignoring: bad_name!x");
}

static void test_key_exchange_timeout_defaults_to_10s_and_is_read(void) {
        _cleanup_(loaded_done) Loaded d = load_tree(NULL);
        _cleanup_(loaded_done) Loaded l = LOAD(MAIN, "[Time]\nKeyExchangeTimeoutSec=32\n");
        _cleanup_(loaded_done) Loaded one = LOAD(MAIN, "[Time]\nKeyExchangeTimeoutSec=1s\n");
        _cleanup_(loaded_done) Loaded hour = LOAD(MAIN, "[Time]\nKeyExchangeTimeoutSec=1h\n");

        ASSERT_TRUE(d.config.nts_ke_timeout_usec == 10 * USEC_PER_SEC);
        ASSERT_TRUE(l.config.nts_ke_timeout_usec == 32 * USEC_PER_SEC);
        ASSERT_TRUE(one.config.nts_ke_timeout_usec == USEC_PER_SEC);
        ASSERT_TRUE(hour.config.nts_ke_timeout_usec == USEC_PER_HOUR);
        ASSERT_STREQ(l.log, "");
}

static void test_key_exchange_timeout_outside_1s_to_1h_gives_the_default(void) {
        _cleanup_(loaded_done) Loaded low = LOAD(MAIN, "[Time]\nKeyExchangeTimeoutSec=500ms\n");
        _cleanup_(loaded_done) Loaded high = LOAD(MAIN, "[Time]\nKeyExchangeTimeoutSec=2h\n");
        _cleanup_(loaded_done) Loaded inf = LOAD(MAIN, "[Time]\nKeyExchangeTimeoutSec=infinity\n");

        ASSERT_TRUE(low.config.nts_ke_timeout_usec == 10 * USEC_PER_SEC);
        ASSERT_CONTAINS(low.log, "timesyncd.conf:2: KeyExchangeTimeoutSec=500ms is below 1s, using the default 10s.");
        ASSERT_TRUE(high.config.nts_ke_timeout_usec == 10 * USEC_PER_SEC);
        ASSERT_CONTAINS(high.log, "timesyncd.conf:2: KeyExchangeTimeoutSec=2h is above 1h, using the default 10s.");
        ASSERT_TRUE(inf.config.nts_ke_timeout_usec == 10 * USEC_PER_SEC);
        ASSERT_CONTAINS(inf.log, "KeyExchangeTimeoutSec=infinity is above 1h, using the default 10s.");
}

static void test_nts_sources_default_to_four_and_a_majority(void) {
        _cleanup_(loaded_done) Loaded d = load_tree(NULL);
        _cleanup_(loaded_done) Loaded l = LOAD(MAIN, "[Time]\nNTSMaxSources=7\nNTSMinAgreeingSources=3\n");
        _cleanup_(loaded_done) Loaded reset = LOAD(MAIN, "[Time]\nNTSMinAgreeingSources=3\n",
                                                   ETC_D "90-reset.conf", "[Time]\nNTSMinAgreeingSources=\n");

        ASSERT_TRUE(d.config.nts_max_sources == 4);
        ASSERT_TRUE(d.config.nts_min_agreeing == 0);
        ASSERT_TRUE(l.config.nts_max_sources == 7);
        ASSERT_TRUE(l.config.nts_min_agreeing == 3);
        ASSERT_STREQ(l.log, "");
        ASSERT_TRUE(reset.config.nts_min_agreeing == 0);
}

static void test_nts_sources_out_of_range_keep_the_value_before(void) {
        _cleanup_(loaded_done) Loaded l = LOAD(MAIN, "[Time]\nNTSMaxSources=2\nNTSMaxSources=0\nNTSMaxSources=17\n"
                                                     "NTSMaxSources=\n");

        ASSERT_TRUE(l.config.nts_max_sources == 2);
        ASSERT_CONTAINS(l.log, "timesyncd.conf:3: NTSMaxSources=0 is not a number from 1 to 16, keeping 2.");
        ASSERT_CONTAINS(l.log, "timesyncd.conf:4: NTSMaxSources=17 is not a number from 1 to 16, keeping 2.");
        ASSERT_CONTAINS(l.log, "timesyncd.conf:5: NTSMaxSources= is not a number from 1 to 16, keeping 2.");
        ASSERT_FALSE(l.config.nts_required);
}

static void test_refused_min_agreeing_sources_make_every_source_agree_and_fail_closed(void) {
        _cleanup_(loaded_done) Loaded l = LOAD(MAIN, "[Time]\nNTS=a.example b.example c.example\n"
                                                     "NTSMinAgreeingSources=-1\nNTSMinAgreeingSources=3x\n");
        _cleanup_(loaded_done) Loaded none = LOAD(MAIN, "[Time]\nNTSMaxSources=2\nNTSMinAgreeingSources=x\n");
        _cleanup_(loaded_done) Loaded fixed = LOAD(MAIN, "[Time]\nNTSMinAgreeingSources=x\n",
                                                   ETC_D "90-fix.conf", "[Time]\nNTSMinAgreeingSources=2\n");

        /* Three servers in use: all three, whatever the typo meant (at most as strict). */
        ASSERT_TRUE(l.config.nts_min_agreeing == 3);
        ASSERT_TRUE(l.config.nts_required);
        ASSERT_STREQ(l.config.nts_fail_closed, "NTSMinAgreeingSources=-1 is not a number");
        ASSERT_CONTAINS(l.log, "timesyncd.conf:3: NTSMinAgreeingSources=-1 is not a number from 1 to 16 or empty: "
                               "every NTS source in use must agree, and time comes only from NTS servers, as "
                               "with NTSRequired=yes.");
        ASSERT_CONTAINS(l.log, "timesyncd.conf:4: NTSMinAgreeingSources=3x is not a number");
        /* No list in use: NTSMaxSources=. */
        ASSERT_TRUE(none.config.nts_min_agreeing == 2);
        /* A valid value read after it decides how many, but NTS-only stays. */
        ASSERT_TRUE(fixed.config.nts_min_agreeing == 2);
        ASSERT_TRUE(fixed.config.nts_required);
}

static void test_nts_required_is_no_by_default(void) {
        _cleanup_(loaded_done) Loaded l = load_tree(NULL);

        ASSERT_FALSE(l.config.nts_required);
}

static void test_nts_required_from_a_vendor_dropin_and_an_admin_override(void) {
        _cleanup_(loaded_done) Loaded vendor = LOAD(USR_D "50-nts-required.conf", "[Time]\nNTSRequired=yes\n");
        _cleanup_(loaded_done) Loaded off = LOAD(USR_D "50-nts-required.conf", "[Time]\nNTSRequired=yes\n",
                                                 ETC_D "60-off.conf", "[Time]\nNTSRequired=no\n");
        _cleanup_(loaded_done) Loaded typo = LOAD(USR_D "50-nts-required.conf", "[Time]\nNTSRequired=yes\n",
                                                  ETC_D "60-typo.conf", "[Time]\nNTSServers=a.example\n");

        ASSERT_TRUE(vendor.config.nts_required);
        ASSERT_FALSE(vendor.config.nts_set);
        ASSERT_FALSE(off.config.nts_required);
        /* NTSRequired= still holds, and the typo is an error that names the key it resembles. */
        ASSERT_TRUE(typo.config.nts_required);
        ASSERT_SERVERS(typo.config.nts_servers);
        ASSERT_CONTAINS(typo.log, "60-typo.conf:2: Unknown key name 'NTSServers' in section 'Time' looks like an "
                                  "NTS setting (did you mean NTS=?)");
}

static void test_nts_with_only_invalid_names_still_counts_as_set(void) {
        _cleanup_(loaded_done) Loaded l = LOAD(MAIN, "[Time]\nNTS=bad_name!x a..b\nNTP=192.0.2.1\n");

        ASSERT_SERVERS(l.config.nts_servers);
        ASSERT_TRUE(l.config.nts_set);
}

static void test_empty_nts_assignment_unsets_it(void) {
        _cleanup_(loaded_done) Loaded l = LOAD(MAIN, "[Time]\nNTS=bad_name!x\n",
                                               ETC_D "90-none.conf", "[Time]\nNTS=\n");

        ASSERT_SERVERS(l.config.nts_servers);
        ASSERT_FALSE(l.config.nts_set);
}

static void test_no_nts_assignment_is_not_set(void) {
        _cleanup_(loaded_done) Loaded l = LOAD(MAIN, "[Time]\nNTP=192.0.2.1\n");

        ASSERT_FALSE(l.config.nts_set);
}

static void test_unknown_keys_and_sections_are_warned_about(void) {
        _cleanup_(loaded_done) Loaded l = LOAD(
                MAIN,
                "[Time]\nFoo=1\nntp=x.example\n[Network]\nNTP=y.example\n[Time]\nNTP=z.example\n");

        ASSERT_CONTAINS(l.log,
                        "timesyncd.conf:2: Unknown key name 'Foo' in section 'Time', ignoring.");
        ASSERT_CONTAINS(l.log,
                        "timesyncd.conf:3: Unknown key name 'ntp' in section 'Time', ignoring.");
        ASSERT_CONTAINS(l.log, "timesyncd.conf:4: Unknown section 'Network'. Ignoring.");
        ASSERT_SERVERS(l.config.ntp_servers, "z.example");
}

static void test_broken_dropin_keeps_earlier_values_and_still_validates(void) {
        _cleanup_(loaded_done) Loaded l =
                LOAD(MAIN, "[Time]\nNTP=a.example\n", ETC_D "10-broken.conf",
                     "[Time]\nPollIntervalMinSec=1\n[Time\n", ETC_D "20-never.conf",
                     "[Time]\nNTP=never.example\n");

        ASSERT_ERROR(l.r, EBADMSG);
        ASSERT_SERVERS(l.config.ntp_servers, "a.example");
        ASSERT_TRUE(l.config.poll_interval_min_usec == 32 * USEC_PER_SEC);
        assert_compiled_in_fallback(l.config.fallback_servers);
}

static void test_explicit_file_is_the_only_one_read(void) {
        _cleanup_free_ char *root = test_tmpdir_new();
        _cleanup_free_ char *path = NULL;
        TimesyncConfig c;

        path = test_write_file_bytes(root, "custom.conf", "[Time]\nNTP=only.example\n",
                                     strlen("[Time]\nNTP=only.example\n"));
        test_write_file(root, "custom.conf.d/10-x.conf", "[Time]\nNTP=dropin.example\n");

        ASSERT_OK(timesync_config_load_file(&c, path));
        ASSERT_SERVERS(c.ntp_servers, "only.example");
        assert_compiled_in_fallback(c.fallback_servers);
        timesync_config_done(&c);
        test_rm_rf(root);
}

static void test_missing_explicit_file_is_enoent_with_defaults(void) {
        TimesyncConfig c;
        LogCapture cap;

        log_capture_start(&cap);
        int r = timesync_config_load_file(&c, "/nonexistent/timesyncd-test.conf");
        _cleanup_free_ char *out = log_capture_stop(&cap);

        ASSERT_ERROR(r, ENOENT);
        ASSERT_CONTAINS(out, "/nonexistent/timesyncd-test.conf");
        ASSERT_TRUE(c.poll_interval_max_usec == 2048 * USEC_PER_SEC);
        assert_compiled_in_fallback(c.fallback_servers);
        timesync_config_done(&c);
}

static void test_servers_extend_without_file_warns_plainly(void) {
        _cleanup_strv_free_ char **l = NULL;
        LogCapture c;

        log_capture_start(&c);
        ASSERT_OK(timesync_config_servers_extend(&l, "  a.example\tb..example  a.example ", "NTP", NULL, 0));
        _cleanup_free_ char *out = log_capture_stop(&c);

        ASSERT_SERVERS(l, "a.example");
        ASSERT_STREQ(out, "Invalid NTP server name or address, ignoring: b..example (not a host name or IPv4 "
                          "address (letters, digits, '-' and '.', labels of 1 to 63)).\n");
}

static void assert_compiled_in_fallback_nts(char **l) {
        _cleanup_strv_free_ char **expected = strv_split_whitespace(DEFAULT_FALLBACK_NTS);

        ASSERT_TRUE(expected);
        assert_strv(l, (const char *const *) expected);
}

static void test_fallback_nts_defaults_to_the_compiled_in_list(void) {
        _cleanup_(loaded_done) Loaded l = load_tree(NULL);

        assert_compiled_in_fallback_nts(l.config.fallback_nts_servers);
        ASSERT_TRUE(!l.config.fallback_nts_set);
}

static void test_default_fallback_nts_list_has_four_operators(void) {
        /* The meson option's default: four operators, none of which decides the time alone. */
        if (streq(DEFAULT_FALLBACK_NTS, "time.cloudflare.com nts.netnod.se ptbtime1.ptb.de ntppool1.time.nl")) {
                _cleanup_(loaded_done) Loaded l = load_tree(NULL);

                ASSERT_SERVERS(l.config.fallback_nts_servers, "time.cloudflare.com", "nts.netnod.se",
                               "ptbtime1.ptb.de", "ntppool1.time.nl");
        }
}

static void test_fallback_nts_replaces_the_compiled_in_list(void) {
        _cleanup_(loaded_done) Loaded l =
                LOAD(MAIN, "[Time]\nFallbackNTS=a.example pool:p.example:4461 srv:s.example\n");

        ASSERT_OK(l.r);
        ASSERT_SERVERS(l.config.fallback_nts_servers, "a.example", "pool:p.example:4461", "srv:s.example");
}

static void test_empty_fallback_nts_in_a_dropin_turns_it_off(void) {
        /* Unlike FallbackNTP=: an empty assignment is the way to get stock's behaviour. */
        _cleanup_(loaded_done) Loaded l = LOAD(ETC_D "50-stock.conf", "[Time]\nFallbackNTS=\n");

        ASSERT_SERVERS(l.config.fallback_nts_servers);
        ASSERT_TRUE(l.config.fallback_nts_set);
        assert_compiled_in_fallback(l.config.fallback_servers);
}

static void test_fallback_nts_is_used_only_where_nothing_else_names_a_server(void) {
        static const struct {
                const char *conf;
                bool used;
        } cases[] = {
                { "[Time]\nFallbackNTS=a.example\n", true },
                { "[Time]\nFallbackNTS=a.example\nNTS=b.example\n", false },
                /* NTS= named a server, if not a valid one: NTS is wanted, never the fallback. */
                { "[Time]\nFallbackNTS=a.example\nNTS=bad_name!x\n", false },
                { "[Time]\nFallbackNTS=a.example\nNTP=192.0.2.1\n", false },
                { "[Time]\nFallbackNTS=a.example\nNTSRequired=yes\n", false },
                { "[Time]\nFallbackNTS=\n", false },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(loaded_done) Loaded l = LOAD(MAIN, cases[i].conf);

                ASSERT_TRUE(timesync_config_uses_fallback_nts(&l.config) == cases[i].used);
        }
}

static void test_fallback_nts_changes_compare_unequal(void) {
        _cleanup_(loaded_done) Loaded a = load_tree(NULL);
        _cleanup_(loaded_done) Loaded b = LOAD(MAIN, "[Time]\nFallbackNTS=other.example\n");

        ASSERT_TRUE(!timesync_config_servers_equal(&a.config, &b.config));
}

static void test_nts_looking_unknown_keys_are_recognized(void) {
        static const struct {
                const char *key, *resembles;
        } cases[] = {
                { "NTSServers", "NTS" },
                { "ntsservers", "NTS" },
                { "NTSRequire", "NTSRequired" },
                { "NTSRequred", "NTSRequired" },
                { "SecureServer", "SecureServers" },
                { "SecureTime", "SecureServers" },
                { "NST", "NTS" },
                { "NTSS", "NTS" },
                { "FallbackNTSServers", "FallbackNTS" },
                { "FallbackNST", "FallbackNTS" },
                { "KeyExchangeTimoutSec", "KeyExchangeTimeoutSec" },
                { "NTSMaxSource", "NTSMaxSources" },
                { "NTSTrustedCertificate", "NTSTrustedCertificates" },
        };
        static const char *const not_nts[] = { "Foo", "NTPServers", "Servers", "PollIntervalMin",
                                               "FallbackNTPServers", "RootDistanceMax", "N" };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *got = timesync_config_nts_key_resembled(cases[i].key);

                if (!streq_ptr(got, cases[i].resembles)) {
                        fprintf(stderr, "%s: got %s, expected %s\n", cases[i].key, got ? got : "(none)",
                                cases[i].resembles);
                        abort();
                }
        }
        for (size_t i = 0; i < ELEMENTSOF(not_nts); i++)
                if (timesync_config_nts_key_resembled(not_nts[i])) {
                        fprintf(stderr, "%s looks like an NTS key\n", not_nts[i]);
                        abort();
                }
}

static void test_nts_looking_unknown_key_turns_nts_required_on_with_a_hint(void) {
        _cleanup_(loaded_done) Loaded l =
                LOAD(MAIN, "[Time]\nNTSServers=localhost:4460\nFallbackNTP=192.0.2.1\n");

        ASSERT_OK(l.r);
        ASSERT_TRUE(l.config.nts_required);
        ASSERT_TRUE(!l.config.nts_set);
        ASSERT_STREQ(l.config.nts_fail_closed, "Unknown key NTSServers= (did you mean NTS=?)");
        ASSERT_CONTAINS(l.log, "timesyncd.conf:2: Unknown key name 'NTSServers' in section 'Time' looks like an "
                               "NTS setting (did you mean NTS=?)");
}

static void test_nts_looking_unknown_key_wins_over_a_later_nts_required_no(void) {
        _cleanup_(loaded_done) Loaded l = LOAD(MAIN, "[Time]\nSecureServer=a.example\n",
                                               ETC_D "90-off.conf", "[Time]\nNTSRequired=no\n");

        ASSERT_TRUE(l.config.nts_required);
        ASSERT_STREQ(l.config.nts_fail_closed, "Unknown key SecureServer= (did you mean SecureServers=?)");
}

static void test_other_unknown_keys_stay_warnings(void) {
        _cleanup_(loaded_done) Loaded l = LOAD(MAIN, "[Time]\nPollIntervalMin=64\n");

        ASSERT_TRUE(!l.config.nts_required);
        ASSERT_TRUE(!l.config.nts_fail_closed);
        ASSERT_CONTAINS(l.log, "Unknown key name 'PollIntervalMin' in section 'Time', ignoring.");
}

static void test_mistyped_nts_booleans_fail_closed(void) {
        _cleanup_(loaded_done) Loaded l = LOAD(MAIN, "[Time]\nNTSRequired=ture\nNTP=192.0.2.1\n");
        _cleanup_(loaded_done) Loaded b = LOAD(MAIN, "[Time]\nNTS=a.example\nNTSBootstrap=nope\n");

        ASSERT_TRUE(l.config.nts_required);
        ASSERT_STREQ(l.config.nts_fail_closed, "NTSRequired=ture is not a boolean");
        ASSERT_CONTAINS(l.log, "timesyncd.conf:2: NTSRequired=ture is not a boolean (yes or no): using yes, and time "
                               "comes only from NTS servers, as with NTSRequired=yes.");
        ASSERT_FALSE(timesync_config_uses_fallback_nts(&l.config));
        /* The bootstrap is the weaker reading: off. */
        ASSERT_FALSE(b.config.nts_bootstrap);
        ASSERT_CONTAINS(b.log, "NTSBootstrap=nope is not a boolean (yes or no): using no");
}

static void test_invalid_fallback_nts_entry_never_leaves_fallback_ntp_in_use(void) {
        _cleanup_(loaded_done) Loaded l = LOAD(MAIN, "[Time]\nFallbackNTS=nts://time.example\nFallbackNTP=192.0.2.1\n");

        ASSERT_SERVERS(l.config.fallback_nts_servers);
        ASSERT_TRUE(l.config.nts_required);
        ASSERT_STREQ(l.config.nts_fail_closed, "FallbackNTS= names an invalid server");
        ASSERT_CONTAINS(l.log, "timesyncd.conf:2: Invalid NTS server name or address, ignoring: nts://time.example (a "
                               "URL: give the host name alone, without a scheme such as nts://)");
}

static void test_nts_keys_of_a_dropin_with_a_mistyped_section_fail_closed(void) {
        _cleanup_(loaded_done) Loaded l =
                LOAD(MAIN, "[Time]\nNTS=a.example\n", ETC_D "50-ca.conf", "[time]\nNTSTrustedCertificates=/etc/ca.pem\n");
        _cleanup_(loaded_done) Loaded none = LOAD(ETC_D "50-nts.conf", "NTS=a.example\n");
        _cleanup_(loaded_done) Loaded plain = LOAD(ETC_D "50-ntp.conf", "[time]\nNTP=192.0.2.1\n");

        ASSERT_TRUE(l.config.nts_required);
        ASSERT_STREQ(l.config.nts_fail_closed, "NTSTrustedCertificates= in section [time], not [Time]");
        /* The lost CA does not widen the trust to the system's store. */
        ASSERT_TRUE(l.config.nts_trusted_certificates_invalid);
        ASSERT_CONTAINS(l.log, "50-ca.conf:1: Unknown section 'time' (section names are case-sensitive: did you mean "
                               "[Time]?). Ignoring.");
        ASSERT_CONTAINS(l.log, "50-ca.conf:2: NTS setting NTSTrustedCertificates= is in section [time], not in [Time], "
                               "and ignored: time comes only from NTS servers, as with NTSRequired=yes.");
        ASSERT_CONTAINS(l.log, "50-ca.conf: none of its 1 assignment is in section [Time]: the whole file is ignored.");
        ASSERT_STREQ(none.config.nts_fail_closed, "NTS= outside section [Time]");
        ASSERT_FALSE(none.config.nts_trusted_certificates_invalid);
        ASSERT_CONTAINS(none.log, "50-nts.conf:1: NTS setting NTS= is outside any section, not in [Time]");
        /* Plain NTP lost is said, and not more. */
        ASSERT_FALSE(plain.config.nts_required);
        ASSERT_CONTAINS(plain.log, "50-ntp.conf: none of its 1 assignment is in section [Time]");
}

static void test_mistyped_trusted_certificates_key_does_not_widen_the_trust(void) {
        _cleanup_(loaded_done) Loaded l = LOAD(MAIN, "[Time]\nNTS=a.example\nNTSTrustedCertificate=/etc/ca.pem\n");
        _cleanup_(loaded_done) Loaded kept = LOAD(MAIN, "[Time]\nNTSTrustedCertificates=/etc/ca.pem\n"
                                                        "NTSTrustedCertificate=/etc/other.pem\n");

        ASSERT_TRUE(l.config.nts_trusted_certificates_invalid);
        ASSERT_FALSE(kept.config.nts_trusted_certificates_invalid);
        ASSERT_STREQ(kept.config.nts_trusted_certificates, "/etc/ca.pem");
}

/* timesync_config_check() on a configuration loaded from files: its errors and log. */
static unsigned check_tree(const char *const *files, char **ret_log) {
        _cleanup_(loaded_done) Loaded l = load_tree(files);
        LogCapture c;
        unsigned errors;

        log_capture_start(&c);
        errors = timesync_config_check(&l.config);
        *ret_log = log_capture_stop(&c);
        return errors;
}

#define CHECK(log, ...) check_tree((const char *const[]) { __VA_ARGS__, NULL }, (log))

static void test_check_says_what_settings_mean_together(void) {
        _cleanup_free_ char *above = NULL, *more = NULL, *two = NULL, *all = NULL, *fallback = NULL, *ca = NULL,
                            *fine = NULL, *one = NULL, *pool = NULL, *single = NULL, *one_at_a_time = NULL,
                            *pool_min = NULL;

        ASSERT_EQ(CHECK(&above, MAIN, "[Time]\nNTS=a.example b.example c.example\nNTSMaxSources=2\n"
                                      "NTSMinAgreeingSources=3\n"), 1U);
        ASSERT_CONTAINS(above, "NTSMinAgreeingSources=3 is above NTSMaxSources=2: it can never be met, and the clock "
                               "would never be set.");
        ASSERT_EQ(CHECK(&more, MAIN, "[Time]\nNTS=a.example b.example\nNTSMinAgreeingSources=3\n"), 1U);
        ASSERT_CONTAINS(more, "NTSMinAgreeingSources=3 is more than the 2 NTS servers of NTS= used together: it can "
                              "never be met");
        /* The README's old example: both must agree. */
        ASSERT_EQ(CHECK(&two, MAIN, "[Time]\nNTS=time.cloudflare.com nts.netnod.se:4460\n"), 0U);
        ASSERT_CONTAINS(two, "NTS= names 2 NTS servers, used together: both must agree, so one that fails or cannot "
                             "be reached stops synchronization. Name three or more to survive one failure.");
        ASSERT_EQ(CHECK(&all, MAIN, "[Time]\nNTS=a.example b.example c.example\nNTSMinAgreeingSources=3\n"), 0U);
        ASSERT_CONTAINS(all, "NTS= names 3 NTS servers, used together, and NTSMinAgreeingSources=3: all must agree");
        ASSERT_EQ(CHECK(&fallback, MAIN, "[Time]\nFallbackNTP=internal-ntp.example\nFallbackNTS=a.example b.example "
                                         "c.example\n"), 0U);
        ASSERT_CONTAINS(fallback, "FallbackNTP=internal-ntp.example is not used: FallbackNTS= takes its place where "
                                  "nothing else names a server (NTS servers only). An empty \"FallbackNTS=\" line "
                                  "uses FallbackNTP= instead.");
        ASSERT_EQ(CHECK(&ca, MAIN, "[Time]\nNTS=a.example b.example c.example\n"
                                   "NTSTrustedCertificates=/nonexistent/ca.pem\n"), 1U);
        ASSERT_CONTAINS(ca, "NTSTrustedCertificates=/nonexistent/ca.pem: No such file or directory: every NTS key "
                            "exchange would fail.");
        /* Nothing to say: three servers, one at a time, pools, the defaults. */
        ASSERT_EQ(CHECK(&fine, MAIN, "[Time]\nNTS=a.example b.example c.example\n"), 0U);
        ASSERT_STREQ(fine, "");
        ASSERT_EQ(CHECK(&one, MAIN, "[Time]\nNTS=a.example b.example\nNTSMaxSources=1\n"), 0U);
        ASSERT_STREQ(one, "");
        ASSERT_EQ(CHECK(&pool, MAIN, "[Time]\nNTS=pool:p.example b.example\n"), 0U);
        ASSERT_STREQ(pool, "");
        /* One server at a time is its own majority: NTSMinAgreeingSources= does not apply. */
        ASSERT_EQ(CHECK(&single, MAIN, "[Time]\nNTS=a.example\nNTSMinAgreeingSources=3\n"), 0U);
        ASSERT_STREQ(single, "");
        ASSERT_EQ(CHECK(&one_at_a_time, MAIN, "[Time]\nNTS=a.example b.example\nNTSMaxSources=1\n"
                                              "NTSMinAgreeingSources=3\n"), 0U);
        ASSERT_STREQ(one_at_a_time, "");
        /* A pool with NTSMaxSources=1 is still a set. */
        ASSERT_EQ(CHECK(&pool_min, MAIN, "[Time]\nNTS=pool:p.example\nNTSMaxSources=1\nNTSMinAgreeingSources=2\n"), 1U);
        ASSERT_CONTAINS(pool_min, "NTSMinAgreeingSources=2 is above NTSMaxSources=1");
}

static void test_check_is_quiet_on_the_defaults(void) {
        _cleanup_(loaded_done) Loaded l = load_tree(NULL);
        LogCapture c;

        log_capture_start(&c);
        ASSERT_EQ(timesync_config_check(&l.config), 0U);
        _cleanup_free_ char *out = log_capture_stop(&c);
        ASSERT_STREQ(out, "");
}

TEST_MAIN(TEST_CASE(test_no_files_give_stock_defaults),
          TEST_CASE(test_default_fallback_list_is_the_debian_pool),
          TEST_CASE(test_ntp_servers_are_appended_across_files_without_duplicates),
          TEST_CASE(test_empty_ntp_assignment_resets_the_list),
          TEST_CASE(test_empty_ntp_assignment_last_leaves_no_servers),
          TEST_CASE(test_fallback_ntp_replaces_the_compiled_in_list),
          TEST_CASE(test_empty_fallback_ntp_alone_keeps_the_compiled_in_list),
          TEST_CASE(test_fallback_ntp_set_then_emptied_stays_empty),
          TEST_CASE(test_invalid_server_names_are_warned_about_with_file_and_line_and_skipped),
          TEST_CASE(test_time_values_are_parsed_and_the_last_file_wins),
          TEST_CASE(test_bad_time_value_is_warned_about_and_the_rest_applies),
          TEST_CASE(test_poll_interval_min_below_16s_falls_back_to_the_default),
          TEST_CASE(test_out_of_range_value_after_a_valid_one_gives_the_default_like_stock),
          TEST_CASE(test_valid_value_after_an_out_of_range_one_wins_like_stock),
          TEST_CASE(test_invalid_time_values_name_file_line_key_and_value),
          TEST_CASE(test_poll_interval_max_below_min_is_raised_like_stock),
          TEST_CASE(test_poll_interval_max_below_small_min_becomes_2048s),
          TEST_CASE(test_infinite_poll_interval_min_does_not_overflow),
          TEST_CASE(test_connection_retry_below_1s_falls_back_to_the_default),
          TEST_CASE(test_nts_servers_and_trusted_certificates),
          TEST_CASE(test_refused_trusted_certificates_alone_are_invalid_not_the_system_store),
          TEST_CASE(test_refused_trusted_certificates_after_a_valid_path_keep_it),
          TEST_CASE(test_empty_trusted_certificates_after_a_refused_one_mean_the_system_store),
          TEST_CASE(test_secure_servers_and_nts_are_one_list_in_the_order_read),
          TEST_CASE(test_servers_is_stocks_old_name_for_ntp),
          TEST_CASE(test_empty_secure_servers_empties_the_nts_list),
          TEST_CASE(test_secure_servers_with_only_invalid_names_still_counts_as_set),
          TEST_CASE(test_key_exchange_timeout_defaults_to_10s_and_is_read),
          TEST_CASE(test_key_exchange_timeout_outside_1s_to_1h_gives_the_default),
          TEST_CASE(test_nts_sources_default_to_four_and_a_majority),
          TEST_CASE(test_nts_sources_out_of_range_keep_the_value_before),
          TEST_CASE(test_refused_min_agreeing_sources_make_every_source_agree_and_fail_closed),
          TEST_CASE(test_nts_required_is_no_by_default),
          TEST_CASE(test_nts_required_from_a_vendor_dropin_and_an_admin_override),
          TEST_CASE(test_nts_with_only_invalid_names_still_counts_as_set),
          TEST_CASE(test_empty_nts_assignment_unsets_it),
          TEST_CASE(test_no_nts_assignment_is_not_set),
          TEST_CASE(test_unknown_keys_and_sections_are_warned_about),
          TEST_CASE(test_broken_dropin_keeps_earlier_values_and_still_validates),
          TEST_CASE(test_explicit_file_is_the_only_one_read),
          TEST_CASE(test_missing_explicit_file_is_enoent_with_defaults),
          TEST_CASE(test_servers_extend_without_file_warns_plainly),
          TEST_CASE(test_fallback_nts_defaults_to_the_compiled_in_list),
          TEST_CASE(test_default_fallback_nts_list_has_four_operators),
          TEST_CASE(test_fallback_nts_replaces_the_compiled_in_list),
          TEST_CASE(test_empty_fallback_nts_in_a_dropin_turns_it_off),
          TEST_CASE(test_fallback_nts_is_used_only_where_nothing_else_names_a_server),
          TEST_CASE(test_fallback_nts_changes_compare_unequal),
          TEST_CASE(test_nts_looking_unknown_keys_are_recognized),
          TEST_CASE(test_nts_looking_unknown_key_turns_nts_required_on_with_a_hint),
          TEST_CASE(test_nts_looking_unknown_key_wins_over_a_later_nts_required_no),
          TEST_CASE(test_other_unknown_keys_stay_warnings),
          TEST_CASE(test_mistyped_nts_booleans_fail_closed),
          TEST_CASE(test_invalid_fallback_nts_entry_never_leaves_fallback_ntp_in_use),
          TEST_CASE(test_nts_keys_of_a_dropin_with_a_mistyped_section_fail_closed),
          TEST_CASE(test_mistyped_trusted_certificates_key_does_not_widen_the_trust),
          TEST_CASE(test_check_says_what_settings_mean_together),
          TEST_CASE(test_check_is_quiet_on_the_defaults));
