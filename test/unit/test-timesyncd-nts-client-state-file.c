/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The rules of an NTS client's state file (timesyncd-nts-client-state-file): a file is read
 * once, removed before any of its cookies may go, discarded when anything in it is wrong, and
 * written at a clean stop only when the keys may be kept. The files are real, in a private
 * directory; the keys are made up (their AEAD contexts come from the real libcrypto). */

#include <dirent.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "nts-client-test-util.h"
#include "nts-jar-test-util.h"
#include "test-util.h"
#include "tests.h"
#include "timesyncd-nts-client-internal.h"

static void handler(NTSClient *c, NTSClientEvent e, void *userdata) {
}

/* dir/the file name of the state of server. */
static char *state_path(const char *dir, const char *server) {
        _cleanup_free_ char *name = NULL;
        char *p;

        ASSERT_OK(nts_jar_file_name(server, &name));
        p = strjoin(dir, "/", name);
        ASSERT_TRUE(p);
        return p;
}

typedef enum FileKind {
        FILE_NONE,
        FILE_VALID,             /* 3 cookies for the name the file is named after, bound to the
                                 * client's settings of now */
        FILE_STALE,             /* keys of 8 days ago */
        FILE_OTHER_SERVER,      /* a valid file of another server, under this one's name */
        FILE_GARBAGE,
        FILE_OTHER_TRUST,       /* keys from a key exchange that trusted other certificates */
        FILE_OTHER_KE,          /* ... that sent another request (port, AEAD offer) */
        FILE_UNBOUND,           /* a file of an earlier version: no binding */
} FileKind;

static void write_text(const char *path, const char *text) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(write(fd, text, strlen(text)), (ssize_t) strlen(text));
}

/* Removes the line "key=..." of text. */
static void remove_line(char *text, const char *key) {
        _cleanup_free_ char *needle = strjoin("\n", key, "=");
        char *l = strstr(text, needle), *eol;

        ASSERT_TRUE(l);
        eol = strchr(l + 1, '\n');
        ASSERT_TRUE(eol);
        memmove(l, eol, strlen(eol) + 1);
}

/* A state file of kind for server, as c would have written it (c: whose binding it gets). */
static void write_state(NTSClient *c, const char *path, const char *server, FileKind kind) {
        char reason[NTS_JAR_REASON_MAX];
        NTSJar j;

        if (kind == FILE_NONE)
                return;
        if (kind == FILE_GARBAGE) {
                write_text(path, "not a jar\n");
                return;
        }
        test_jar_make(&j, 3, kind == FILE_STALE ? now(CLOCK_REALTIME) - 8 * USEC_PER_DAY : now(CLOCK_REALTIME));
        ASSERT_OK(nts_client_binding(c, &j.binding));
        if (kind == FILE_OTHER_TRUST)
                j.binding.trust_sha256[0] ^= 1;
        if (kind == FILE_OTHER_KE)
                j.binding.ke_sha256[31] ^= 0x80;
        if (kind == FILE_UNBOUND) {
                _cleanup_free_ char *text = NULL;

                ASSERT_OK(nts_jar_to_string(&j, server, &text));
                /* Without the lines of the binding, as an earlier version wrote it. */
                remove_line(text, "trust-sha256");
                remove_line(text, "ke-sha256");
                write_text(path, text);
                nts_jar_done(&j);
                return;
        }
        ASSERT_OK(nts_jar_save(&j, kind == FILE_OTHER_SERVER ? "other.example" : server, path, reason,
                               sizeof reason));
        nts_jar_done(&j);
}

static void test_a_state_file_is_used_once_and_removed_before_its_cookies_go(void) {
        static const struct {
                const char *name;
                bool state_dir;
                const char *state_name;         /* NULL: the server's name */
                FileKind file;
                NTSClientState state;
                size_t cookies;
                const char *log;
        } table[] = {
                { "a valid file: its cookies, and it is gone", true, NULL, FILE_VALID, NTS_CLIENT_READY, 3,
                  "Resuming NTS with nts.example: 3 cookies" },
                { "the file of a pool slot is named by the slot", true, "pool.example#2", FILE_VALID,
                  NTS_CLIENT_READY, 3, "Resuming NTS" },
                { "no file: a key exchange", true, NULL, FILE_NONE, NTS_CLIENT_IDLE, 0, NULL },
                { "keys older than 7 days: discarded", true, NULL, FILE_STALE, NTS_CLIENT_IDLE, 0,
                  "Discarding NTS state file" },
                { "another server's file: discarded", true, NULL, FILE_OTHER_SERVER, NTS_CLIENT_IDLE, 0,
                  "Discarding NTS state file" },
                { "a malformed file: discarded", true, NULL, FILE_GARBAGE, NTS_CLIENT_IDLE, 0,
                  "Discarding NTS state file" },
                { "no state directory: not looked for", false, NULL, FILE_VALID, NTS_CLIENT_IDLE, 0, NULL },
                /* Keys obtained under a trust narrowed since would keep a server whose certificate
                 * no longer verifies for up to 7 days. */
                { "keys of another trust: discarded", true, NULL, FILE_OTHER_TRUST, NTS_CLIENT_IDLE, 0,
                  "Not resuming NTS with nts.example from " },
                { "keys of another request: discarded", true, NULL, FILE_OTHER_KE, NTS_CLIENT_IDLE, 0,
                  "key exchange settings (server name, port or AEAD offer) changed since the cookies were "
                  "obtained; running a new key exchange" },
                /* Fail closed: their trust is unknown. */
                { "keys without a binding: discarded", true, NULL, FILE_UNBOUND, NTS_CLIENT_IDLE, 0,
                  "not bound to the trust and key exchange settings it was made under" },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_(sd_event_unrefp) sd_event *e = NULL;
                _cleanup_free_ char *dir = test_tmpdir_new(), *path = NULL, *log = NULL;
                const char *recorded = table[i].state_name ?: "nts.example";
                NTSClientSettings settings;
                NTSClient *c;
                LogCapture cap;

                log_info("case: %s", table[i].name);
                ASSERT_OK(sd_event_new(&e));
                settings = (NTSClientSettings) {
                        .event = e,
                        .state_dir = table[i].state_dir ? dir : NULL,
                        .retry_usec = 30 * USEC_PER_SEC,
                };
                path = state_path(dir, recorded);

                ASSERT_OK(nts_client_new(&settings, "nts.example", "nts.example", 0, handler, NULL, &c));
                if (table[i].state_name)
                        ASSERT_OK(nts_client_set_state_name(c, table[i].state_name));
                write_state(c, path, recorded, table[i].file);
                log_capture_start(&cap);
                nts_client_load(c);
                log = log_capture_stop(&cap);

                ASSERT_EQ(nts_client_state(c), table[i].state);
                ASSERT_EQ(test_nts_report(c).cookies, table[i].cookies);
                /* With a state directory, no file survives loading: its cookies are in memory
                 * only, or it was wrong. Without one, nothing is touched. */
                ASSERT_EQ(access(path, F_OK) >= 0, table[i].file != FILE_NONE && !table[i].state_dir);
                if (table[i].log)
                        ASSERT_CONTAINS(log, table[i].log);

                /* Read once: a file that appears later is not looked at by this client. */
                write_state(c, path, recorded, FILE_VALID);
                nts_client_load(c);
                ASSERT_EQ(test_nts_report(c).cookies, table[i].cookies);
                ASSERT_TRUE(access(path, F_OK) >= 0);
                ASSERT_OK(unlink(path));

                /* A clean stop writes the cookies back (and only then). */
                nts_client_free(c);
                ASSERT_EQ(access(path, F_OK) >= 0, table[i].cookies > 0);
                test_rm_rf(dir);
        }
}

static void test_a_clean_stop_saves_only_keys_that_may_be_kept(void) {
        static const struct {
                const char *name;
                size_t cookies;
                NTSClientBootstrap bootstrap;
                bool saved;
        } table[] = {
                { "keys with cookies", 2, NTS_CLIENT_BOOTSTRAP_NONE, true },
                { "keys without cookies: nothing to resume with", 0, NTS_CLIENT_BOOTSTRAP_NONE, false },
                { "bootstrap keys, forward: good for one step only", 2, NTS_CLIENT_BOOTSTRAP_FORWARD, false },
                { "bootstrap keys, backward", 2, NTS_CLIENT_BOOTSTRAP_BACKWARD, false },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_(sd_event_unrefp) sd_event *e = NULL;
                _cleanup_free_ char *dir = test_tmpdir_new(), *path = NULL;
                NTSClientSettings settings;
                NTSClient *c;

                log_info("case: %s", table[i].name);
                ASSERT_OK(sd_event_new(&e));
                settings = (NTSClientSettings) {
                        .event = e,
                        .state_dir = dir,
                        .retry_usec = 30 * USEC_PER_SEC,
                };
                path = state_path(dir, "nts.example");

                ASSERT_OK(nts_client_new(&settings, "nts.example", "nts.example", 0, handler, NULL, &c));
                nts_client_load(c);
                test_jar_make(&c->jar, table[i].cookies, now(CLOCK_REALTIME));
                ASSERT_OK(nts_client_binding(c, &c->jar.binding));
                c->bootstrap = table[i].bootstrap;
                nts_client_free(c);
                ASSERT_EQ(access(path, F_OK) >= 0, table[i].saved);

                if (table[i].saved) {
                        /* The next start resumes with them. */
                        ASSERT_OK(nts_client_new(&settings, "nts.example", "nts.example", 0, handler, NULL, &c));
                        nts_client_load(c);
                        ASSERT_EQ(nts_client_state(c), NTS_CLIENT_READY);
                        ASSERT_EQ(test_nts_report(c).cookies, table[i].cookies);
                        ASSERT_TRUE(access(path, F_OK) < 0);
                        nts_client_free(c);
                }
                test_rm_rf(dir);
        }
}

/* NTSTrustedCertificates= narrowed while the daemon was stopped, or between a stop and a start
 * of a server's source (a reload that selects again): keys got under the trust of then are not
 * resumed when the file it names changed, when another file is named, or when none is (the
 * system's store); they are when nothing changed. */
static void test_keys_are_resumed_only_under_the_trust_they_were_obtained_under(void) {
        static const struct {
                const char *name;
                const char *ca_then, *ca_now;   /* the file named; NULL: the system's store */
                const char *content_now;        /* what the file of then holds now */
                bool resumed;
        } table[] = {
                { "the same file, unchanged", "ca.pem", "ca.pem", "CA one\n", true },
                { "the file narrowed", "ca.pem", "ca.pem", "CA two\n", false },
                { "the file removed", "ca.pem", "ca.pem", NULL, false },
                { "another file named", "ca.pem", "other.pem", "CA one\n", false },
                { "the system's store instead", "ca.pem", NULL, "CA one\n", false },
                { "a file instead of the system's store", NULL, "ca.pem", "CA one\n", false },
                { "the system's store, unchanged", NULL, NULL, "CA one\n", true },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_(sd_event_unrefp) sd_event *e = NULL;
                _cleanup_free_ char *dir = test_tmpdir_new(), *path = NULL, *log = NULL, *then = NULL,
                                    *now_path = NULL;
                NTSClientSettings settings;
                NTSClient *c;
                LogCapture cap;

                log_info("case: %s", table[i].name);
                ASSERT_OK(sd_event_new(&e));
                test_write_file(dir, "ca.pem", "CA one\n");
                test_write_file(dir, "other.pem", "CA one\n");
                then = table[i].ca_then ? strjoin(dir, "/", table[i].ca_then) : NULL;
                now_path = table[i].ca_now ? strjoin(dir, "/", table[i].ca_now) : NULL;
                settings = (NTSClientSettings) {
                        .event = e,
                        .state_dir = dir,
                        .trusted_certificates = then,
                        .retry_usec = 30 * USEC_PER_SEC,
                };
                path = state_path(dir, "nts.example");

                /* A run that got keys under the trust of then, and stopped. */
                ASSERT_OK(nts_client_new(&settings, "nts.example", "nts.example", 0, handler, NULL, &c));
                nts_client_load(c);
                test_jar_make(&c->jar, 3, now(CLOCK_REALTIME));
                ASSERT_OK(nts_client_binding(c, &c->jar.binding));
                nts_client_free(c);
                ASSERT_OK(access(path, F_OK));

                /* The trust changes, and the next run starts. */
                if (table[i].content_now)
                        test_write_file(dir, "ca.pem", table[i].content_now);
                else
                        ASSERT_OK(unlink(then));
                settings.trusted_certificates = now_path;
                ASSERT_OK(nts_client_new(&settings, "nts.example", "nts.example", 0, handler, NULL, &c));
                log_capture_start(&cap);
                nts_client_load(c);
                log = log_capture_stop(&cap);

                ASSERT_EQ(nts_client_state(c), table[i].resumed ? NTS_CLIENT_READY : NTS_CLIENT_IDLE);
                ASSERT_EQ(test_nts_report(c).cookies, table[i].resumed ? 3u : 0u);
                /* Resumed or not, the file is gone: its keys are in memory only, or nowhere. */
                ASSERT_TRUE(access(path, F_OK) < 0);
                if (table[i].resumed)
                        ASSERT_CONTAINS(log, "Resuming NTS with nts.example: 3 cookies");
                else
                        ASSERT_CONTAINS(log, "trust settings changed since the cookies were obtained; running a "
                                        "new key exchange.");
                /* The keys in memory are as current as the file was. */
                ASSERT_TRUE(nts_client_binding_current(c));
                nts_client_free(c);
                test_rm_rf(dir);
        }
}

/* While the daemon runs, a reload asks whether the keys in use are still bound to what is
 * trusted: not once the file named changed. */
static void test_keys_in_use_are_not_current_after_the_trust_changed(void) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_free_ char *dir = test_tmpdir_new(), *ca = NULL;
        NTSClientSettings settings;
        NTSClient *c;

        ASSERT_OK(sd_event_new(&e));
        test_write_file(dir, "ca.pem", "CA one\n");
        ca = strjoin(dir, "/ca.pem");
        settings = (NTSClientSettings) {
                .event = e,
                .trusted_certificates = ca,
                .retry_usec = 30 * USEC_PER_SEC,
        };
        ASSERT_OK(nts_client_new(&settings, "nts.example", "nts.example", 0, handler, NULL, &c));
        nts_client_load(c);
        /* No keys: nothing to be bound. */
        ASSERT_TRUE(nts_client_binding_current(c));

        test_jar_make(&c->jar, 3, now(CLOCK_REALTIME));
        ASSERT_OK(nts_client_binding(c, &c->jar.binding));
        ASSERT_OK(nts_client_make_contexts(c));
        ASSERT_TRUE(nts_client_binding_current(c));

        test_write_file(dir, "ca.pem", "CA one\nCA two\n");
        ASSERT_FALSE(nts_client_binding_current(c));
        test_write_file(dir, "ca.pem", "CA one\n");
        ASSERT_TRUE(nts_client_binding_current(c));
        settings.trusted_certificates = NULL;
        ASSERT_FALSE(nts_client_binding_current(c));

        nts_client_free(c);
        test_rm_rf(dir);
}

static void test_a_name_too_long_for_a_file_keeps_no_state(void) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_free_ char *dir = test_tmpdir_new(), *log = NULL, *name = NULL;
        NTSClientSettings settings;
        NTSClient *c;
        LogCapture cap;
        DIR *d;
        size_t n = 0;

        ASSERT_OK(sd_event_new(&e));
        settings = (NTSClientSettings) {
                .event = e,
                .state_dir = dir,
        };
        /* "nts-NAME.jar" would be longer than NAME_MAX. */
        name = strjoin("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.",
                       "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb.",
                       "ccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc.",
                       "ddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd.example");
        ASSERT_TRUE(name);
        ASSERT_OK(nts_client_new(&settings, name, name, 0, handler, NULL, &c));
        log_capture_start(&cap);
        nts_client_load(c);
        log = log_capture_stop(&cap);
        ASSERT_CONTAINS(log, "are not kept across restarts");
        test_jar_make(&c->jar, 2, now(CLOCK_REALTIME));
        nts_client_free(c);

        /* Nothing was written. */
        d = opendir(dir);
        ASSERT_TRUE(d);
        for (struct dirent *de; (de = readdir(d));)
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        n++;
        closedir(d);
        ASSERT_EQ(n, 0u);
        test_rm_rf(dir);
}

/* What D-Bus shows of a client whose keys came from the state file (after a reload or a restart):
 * where its key exchanges go, with the port, and when the key exchange of its keys was. */
static void test_resumed_keys_show_their_key_exchange(void) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_free_ char *dir = test_tmpdir_new(), *path = NULL;
        NTSClientSettings settings;
        NTSClientReport report;
        NTSClient *c;

        ASSERT_OK(sd_event_new(&e));
        settings = (NTSClientSettings) { .event = e, .state_dir = dir, .retry_usec = 30 * USEC_PER_SEC };
        path = state_path(dir, "nts.example");

        ASSERT_OK(nts_client_new(&settings, "nts.example", "nts.example", 0, handler, NULL, &c));
        write_state(c, path, "nts.example", FILE_VALID);
        nts_client_get_report(c, &report);
        ASSERT_STREQ(report.ke_address, "nts.example:4460");
        ASSERT_EQ(report.last_ke_realtime, (usec_t) 0);
        nts_client_load(c);
        ASSERT_EQ(nts_client_state(c), NTS_CLIENT_READY);
        nts_client_get_report(c, &report);
        ASSERT_STREQ(report.ke_address, "nts.example:4460");
        ASSERT_TRUE(report.last_ke_realtime > 0);
        ASSERT_TRUE(report.last_ke_realtime <= now(CLOCK_REALTIME));
        nts_client_free(c);
        test_rm_rf(dir);
}

TEST_MAIN(TEST_CASE(test_a_state_file_is_used_once_and_removed_before_its_cookies_go),
          TEST_CASE(test_a_clean_stop_saves_only_keys_that_may_be_kept),
          TEST_CASE(test_keys_are_resumed_only_under_the_trust_they_were_obtained_under),
          TEST_CASE(test_keys_in_use_are_not_current_after_the_trust_changed),
          TEST_CASE(test_a_name_too_long_for_a_file_keeps_no_state),
          TEST_CASE(test_resumed_keys_show_their_key_exchange))
