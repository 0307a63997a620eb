/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "iovec-util.h"
#include "tests.h"
#include "timesyncd-nts-jar.h"

#define SERVER "ntp.example.org:4460"
#define NOW (UINT64_C(1800000000) * USEC_PER_SEC)

static char dir[] = "/tmp/test-nts-jar-XXXXXX";
static char path[sizeof dir + 16];

static void make_jar(NTSJar *j, size_t n_cookies) {
        *j = (NTSJar) {
                .aead = NTS_AEAD_AES_SIV_CMAC_256,
                .key_size = 32,
                .ke_realtime = NOW,
                .ntp_port = 123,
        };
        memset(j->c2s, 0xc2, 32);
        memset(j->s2c, 0x52, 32);
        j->ntp_server = strdup("192.0.2.1");
        ASSERT_TRUE(j->ntp_server);
        for (size_t i = 0; i < n_cookies; i++) {
                uint8_t c[100];
                memset(c, (int) i + 1, sizeof c);
                ASSERT_OK(nts_jar_add_cookie(j, &IOVEC_MAKE(c, sizeof c)));
        }
}

static void write_file(const char *text, mode_t mode) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        ASSERT_TRUE(fd >= 0);
        ASSERT_TRUE(write(fd, text, strlen(text)) == (ssize_t) strlen(text));
        ASSERT_OK(fchmod(fd, mode));
        close(fd);
}

static void test_cookies_are_spent_oldest_first(void) {
        NTSJar j;
        struct iovec c;

        make_jar(&j, 3);
        ASSERT_OK(nts_jar_pop_cookie(&j, &c));
        ASSERT_EQ(((uint8_t *) c.iov_base)[0], 1);
        iovec_done(&c);
        ASSERT_OK(nts_jar_pop_cookie(&j, &c));
        ASSERT_EQ(((uint8_t *) c.iov_base)[0], 2);
        iovec_done(&c);
        ASSERT_EQ(j.n_cookies, 1);
        nts_jar_done(&j);
}

static void test_full_jar_drops_the_oldest(void) {
        NTSJar j;
        struct iovec c;
        uint8_t extra[50] = { 0xee };

        make_jar(&j, NTS_MAX_COOKIES);
        ASSERT_OK(nts_jar_add_cookie(&j, &IOVEC_MAKE(extra, sizeof extra)));
        ASSERT_EQ(j.n_cookies, NTS_MAX_COOKIES);
        ASSERT_OK(nts_jar_pop_cookie(&j, &c));
        ASSERT_EQ(((uint8_t *) c.iov_base)[0], 2);
        iovec_done(&c);
        nts_jar_done(&j);
}

static void test_empty_jar_gives_nothing(void) {
        NTSJar j;
        struct iovec c;

        make_jar(&j, 0);
        ASSERT_FALSE(nts_jar_usable(&j));
        ASSERT_ERROR(nts_jar_pop_cookie(&j, &c), ENOENT);
        ASSERT_ERROR(nts_jar_add_cookie(&j, &IOVEC_MAKE("", 0)), EINVAL);
        nts_jar_done(&j);
}

static void test_save_and_load_round_trip_with_mode_0600(void) {
        NTSJar j, k;
        struct stat st;

        make_jar(&j, 5);
        ASSERT_OK(nts_jar_save(&j, SERVER, path));
        ASSERT_OK(stat(path, &st));
        ASSERT_EQ(st.st_mode & 0777, 0600);

        ASSERT_OK(nts_jar_load(path, SERVER, NOW + USEC_PER_HOUR, &k));
        ASSERT_EQ(k.aead, j.aead);
        ASSERT_EQ(k.key_size, 32);
        ASSERT_MEMEQ(k.c2s, j.c2s, 32);
        ASSERT_MEMEQ(k.s2c, j.s2c, 32);
        ASSERT_STREQ(k.ntp_server, "192.0.2.1");
        ASSERT_EQ(k.ntp_port, 123);
        ASSERT_EQ(k.n_cookies, 5);
        for (size_t i = 0; i < 5; i++)
                ASSERT_TRUE(iovec_equal(&k.cookies[i], &j.cookies[i]));
        nts_jar_done(&j);
        nts_jar_done(&k);
}

/* A temporary file left by a write that was cut short, even one linked to another file, is
 * replaced: the save succeeds and the other file keeps its content. */
static void test_leftover_temporary_file_is_replaced_not_written_through(void) {
        char tmp[sizeof path + 8], other[sizeof dir + 16], buf[16] = {};
        NTSJar j, k;
        int fd;

        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        snprintf(other, sizeof other, "%s/other", dir);
        fd = open(other, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        ASSERT_TRUE(fd >= 0);
        ASSERT_TRUE(write(fd, "keep", 4) == 4);
        close(fd);

        make_jar(&j, 3);
        for (int linked = 0; linked < 2; linked++) {
                (void) unlink(tmp);
                if (linked)
                        ASSERT_OK(link(other, tmp));
                else
                        ASSERT_OK(symlink(other, tmp));
                ASSERT_OK(nts_jar_save(&j, SERVER, path));
                ASSERT_TRUE(access(tmp, F_OK) < 0);
                fd = open(other, O_RDONLY | O_CLOEXEC);
                ASSERT_TRUE(fd >= 0);
                ASSERT_EQ(read(fd, buf, sizeof buf - 1), 4);
                close(fd);
                ASSERT_STREQ(buf, "keep");
                ASSERT_OK(nts_jar_load(path, SERVER, NOW, &k));
                ASSERT_EQ(k.n_cookies, 3);
                nts_jar_done(&k);
        }
        nts_jar_done(&j);
        ASSERT_OK(unlink(other));
}

static void test_file_of_another_server_is_refused(void) {
        NTSJar j, k;

        make_jar(&j, 2);
        ASSERT_OK(nts_jar_save(&j, SERVER, path));
        ASSERT_ERROR(nts_jar_load(path, "other.example.org", NOW, &k), EBADMSG);
        nts_jar_done(&j);
}

static void test_stale_or_future_file_is_refused(void) {
        NTSJar j, k;

        make_jar(&j, 2);
        ASSERT_OK(nts_jar_save(&j, SERVER, path));
        ASSERT_ERROR(nts_jar_load(path, SERVER, NOW + NTS_JAR_MAX_AGE_USEC + USEC_PER_SEC, &k), ESTALE);
        ASSERT_ERROR(nts_jar_load(path, SERVER, NOW - 2 * USEC_PER_DAY, &k), ESTALE);
        nts_jar_done(&j);
}

static void test_keys_expire_after_the_maximum_age_or_when_from_the_future(void) {
        NTSJar j;

        make_jar(&j, 2);
        ASSERT_FALSE(nts_jar_expired(&j, j.ke_realtime));
        ASSERT_FALSE(nts_jar_expired(&j, j.ke_realtime + NTS_JAR_MAX_AGE_USEC));
        ASSERT_TRUE(nts_jar_expired(&j, j.ke_realtime + NTS_JAR_MAX_AGE_USEC + 1));
        ASSERT_FALSE(nts_jar_expired(&j, j.ke_realtime - USEC_PER_DAY));
        ASSERT_TRUE(nts_jar_expired(&j, j.ke_realtime - USEC_PER_DAY - 1));
        nts_jar_done(&j);
}

static void test_readable_by_others_is_refused(void) {
        write_file("version=1\nserver=" SERVER "\naead=15\n", 0644);
        NTSJar k;
        ASSERT_ERROR(nts_jar_load(path, SERVER, NOW, &k), EPERM);
}

static void test_malformed_files_are_refused(void) {
        static const char *const bad[] = {
                "",
                "garbage",
                "version=2\nserver=" SERVER "\naead=15\n",
                "version=1\nserver=" SERVER "\naead=99\n",
                "version=1\nserver=" SERVER "\naead=15\nc2s=zz\ns2c=00\n",
                "version=1\nserver=" SERVER "\naead=15\nc2s=0011\ns2c=0011\n",       /* key too short */
                "version=1\nserver=" SERVER "\naead=15\nunknown=1\n",
                "version=1\nserver=" SERVER "\naead=15\nntp-port=0\n",
                "version=1\nserver=" SERVER "\naead=15\ncookie=abc\n",
        };
        NTSJar k;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                write_file(bad[i], 0600);
                ASSERT_ERROR(nts_jar_load(path, SERVER, NOW, &k), EBADMSG);
        }
}

static void test_missing_file_is_enoent(void) {
        NTSJar k;

        (void) unlink(path);
        ASSERT_ERROR(nts_jar_load(path, SERVER, NOW, &k), ENOENT);
}

int main(void) {
        static const TestCase cases[] = {
                TEST_CASE(test_cookies_are_spent_oldest_first),
                TEST_CASE(test_full_jar_drops_the_oldest),
                TEST_CASE(test_empty_jar_gives_nothing),
                TEST_CASE(test_save_and_load_round_trip_with_mode_0600),
                TEST_CASE(test_leftover_temporary_file_is_replaced_not_written_through),
                TEST_CASE(test_file_of_another_server_is_refused),
                TEST_CASE(test_stale_or_future_file_is_refused),
                TEST_CASE(test_keys_expire_after_the_maximum_age_or_when_from_the_future),
                TEST_CASE(test_readable_by_others_is_refused),
                TEST_CASE(test_malformed_files_are_refused),
                TEST_CASE(test_missing_file_is_enoent),
        };

        ASSERT_TRUE(mkdtemp(dir));
        snprintf(path, sizeof path, "%s/jar", dir);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                printf("/* %s */\n", cases[i].name);
                cases[i].func();
        }
        (void) unlink(path);
        (void) rmdir(dir);
        return EXIT_SUCCESS;
}
