/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The rules of an NTS client's state file (timesyncd-nts-client-state-file): a file is read
 * once, removed before any of its cookies may go, discarded when anything in it is wrong, and
 * written at a clean stop only when the keys may be kept. The files are real, in a private
 * directory; the keys are made up (their AEAD contexts come from the real libcrypto). */

#include <dirent.h>
#include <systemd/sd-event.h>
#include <unistd.h>

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
        FILE_VALID,             /* 3 cookies for the name the file is named after */
        FILE_STALE,             /* keys of 8 days ago */
        FILE_OTHER_SERVER,      /* a valid file of another server, under this one's name */
        FILE_GARBAGE,
} FileKind;

static void write_state(const char *path, const char *server, FileKind kind) {
        char reason[NTS_JAR_REASON_MAX];
        NTSJar j;

        if (kind == FILE_NONE)
                return;
        if (kind == FILE_GARBAGE) {
                _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

                ASSERT_TRUE(fd >= 0);
                ASSERT_EQ(write(fd, "not a jar\n", 10), 10);
                return;
        }
        test_jar_make(&j, 3, kind == FILE_STALE ? now(CLOCK_REALTIME) - 8 * USEC_PER_DAY : now(CLOCK_REALTIME));
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
                write_state(path, recorded, table[i].file);

                ASSERT_OK(nts_client_new(&settings, "nts.example", "nts.example", 0, handler, NULL, &c));
                if (table[i].state_name)
                        ASSERT_OK(nts_client_set_state_name(c, table[i].state_name));
                log_capture_start(&cap);
                nts_client_load(c);
                log = log_capture_stop(&cap);

                ASSERT_EQ(nts_client_state(c), table[i].state);
                ASSERT_EQ(nts_client_cookies(c), table[i].cookies);
                /* With a state directory, no file survives loading: its cookies are in memory
                 * only, or it was wrong. Without one, nothing is touched. */
                ASSERT_EQ(access(path, F_OK) >= 0, table[i].file != FILE_NONE && !table[i].state_dir);
                if (table[i].log)
                        ASSERT_CONTAINS(log, table[i].log);

                /* Read once: a file that appears later is not looked at by this client. */
                write_state(path, recorded, FILE_VALID);
                nts_client_load(c);
                ASSERT_EQ(nts_client_cookies(c), table[i].cookies);
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
                c->bootstrap = table[i].bootstrap;
                nts_client_free(c);
                ASSERT_EQ(access(path, F_OK) >= 0, table[i].saved);

                if (table[i].saved) {
                        /* The next start resumes with them. */
                        ASSERT_OK(nts_client_new(&settings, "nts.example", "nts.example", 0, handler, NULL, &c));
                        nts_client_load(c);
                        ASSERT_EQ(nts_client_state(c), NTS_CLIENT_READY);
                        ASSERT_EQ(nts_client_cookies(c), table[i].cookies);
                        ASSERT_TRUE(access(path, F_OK) < 0);
                        nts_client_free(c);
                }
                test_rm_rf(dir);
        }
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
        NTSClient *c;

        ASSERT_OK(sd_event_new(&e));
        settings = (NTSClientSettings) { .event = e, .state_dir = dir, .retry_usec = 30 * USEC_PER_SEC };
        path = state_path(dir, "nts.example");
        write_state(path, "nts.example", FILE_VALID);

        ASSERT_OK(nts_client_new(&settings, "nts.example", "nts.example", 0, handler, NULL, &c));
        ASSERT_STREQ(nts_client_ke_address(c), "nts.example:4460");
        ASSERT_EQ(nts_client_last_ke_realtime(c), (usec_t) 0);
        nts_client_load(c);
        ASSERT_EQ(nts_client_state(c), NTS_CLIENT_READY);
        ASSERT_STREQ(nts_client_ke_address(c), "nts.example:4460");
        ASSERT_TRUE(nts_client_last_ke_realtime(c) > 0);
        ASSERT_TRUE(nts_client_last_ke_realtime(c) <= now(CLOCK_REALTIME));
        nts_client_free(c);
        test_rm_rf(dir);
}

TEST_MAIN(TEST_CASE(test_a_state_file_is_used_once_and_removed_before_its_cookies_go),
          TEST_CASE(test_a_clean_stop_saves_only_keys_that_may_be_kept),
          TEST_CASE(test_a_name_too_long_for_a_file_keeps_no_state),
          TEST_CASE(test_resumed_keys_show_their_key_exchange))
