/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "iovec-util.h"
#include "nts-jar-test-util.h"
#include "test-util.h"
#include "tests.h"
#include "timesyncd-nts-jar.h"

#define SERVER "ntp.example.org:4460"
#define NOW (UINT64_C(1800000000) * USEC_PER_SEC)

static char dir[] = "/tmp/test-nts-jar-XXXXXX";
static char path[sizeof dir + 16];

static void make_jar(NTSJar *j, size_t n_cookies) {
        test_jar_make(j, n_cookies, NOW);
}

/* A new file each time: owned by us, whatever was there before. */
static void write_file(const char *text, mode_t mode) {
        int fd;

        (void) unlink(path);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
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
        ASSERT_OK(nts_jar_save(&j, SERVER, path, NULL, 0));
        ASSERT_OK(stat(path, &st));
        ASSERT_EQ(st.st_mode & 0777, 0600);

        ASSERT_OK(nts_jar_load(path, SERVER, NOW + USEC_PER_HOUR, &k, NULL, 0));
        ASSERT_EQ(k.aead, j.aead);
        ASSERT_EQ(k.key_size, 32);
        ASSERT_MEMEQ(k.c2s, j.c2s, 32);
        ASSERT_MEMEQ(k.s2c, j.s2c, 32);
        ASSERT_STREQ(k.ntp_server, "192.0.2.1");
        ASSERT_EQ(k.ntp_port, 123);
        ASSERT_EQ(k.n_cookies, 5);
        for (size_t i = 0; i < 5; i++)
                ASSERT_TRUE(iovec_equal(&k.cookies[i], &j.cookies[i]));
        ASSERT_TRUE(socket_address_equal(&k.ke_peer, &j.ke_peer));
        ASSERT_TRUE(k.has_ke_key);
        ASSERT_MEMEQ(k.ke_key_sha256, j.ke_key_sha256, sizeof j.ke_key_sha256);
        nts_jar_done(&j);
        nts_jar_done(&k);
}

/* Which server the keys came from survives a restart, for one server, one vote: an IPv6
 * address with its port, and a file without it (no key hash: the TLS layer had none) reads
 * back as unknown, not as some address. */
static void test_key_exchange_peer_round_trip(void) {
        static const struct {
                const char *address;
                uint16_t port;
                bool key;
        } table[] = {
                { "2001:db8::7", 4460, true },
                { "192.0.2.4", 1, false },
                { NULL, 0, true },
                { NULL, 0, false },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_free_ char *text = NULL;
                NTSJar j, k;

                make_jar(&j, 1);
                j.ke_peer = (SocketAddress) {};
                if (table[i].address)
                        ASSERT_OK(socket_address_from_string(table[i].address, table[i].port, &j.ke_peer));
                j.has_ke_key = table[i].key;
                ASSERT_OK(nts_jar_to_string(&j, SERVER, &text));
                ASSERT_EQ(!!strstr(text, "\nke-address="), !!table[i].address);
                ASSERT_EQ(!!strstr(text, "\nke-port="), !!table[i].address);
                ASSERT_EQ(!!strstr(text, "\nke-key-sha256="), table[i].key);

                ASSERT_OK(nts_jar_from_string(text, SERVER, &k, NULL, 0));
                if (table[i].address) {
                        ASSERT_TRUE(socket_address_equal(&k.ke_peer, &j.ke_peer));
                        ASSERT_EQ(socket_address_port(&k.ke_peer), table[i].port);
                } else
                        ASSERT_EQ(k.ke_peer.sa.ss_family, AF_UNSPEC);
                ASSERT_EQ(k.has_ke_key, table[i].key);
                if (table[i].key)
                        ASSERT_MEMEQ(k.ke_key_sha256, j.ke_key_sha256, sizeof j.ke_key_sha256);
                nts_jar_done(&j);
                nts_jar_done(&k);
        }
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
                ASSERT_OK(nts_jar_save(&j, SERVER, path, NULL, 0));
                ASSERT_TRUE(access(tmp, F_OK) < 0);
                fd = open(other, O_RDONLY | O_CLOEXEC);
                ASSERT_TRUE(fd >= 0);
                ASSERT_EQ(read(fd, buf, sizeof buf - 1), 4);
                close(fd);
                ASSERT_STREQ(buf, "keep");
                ASSERT_OK(nts_jar_load(path, SERVER, NOW, &k, NULL, 0));
                ASSERT_EQ(k.n_cookies, 3);
                nts_jar_done(&k);
        }
        nts_jar_done(&j);
        ASSERT_OK(unlink(other));
}

static void test_file_of_another_server_is_refused(void) {
        NTSJar j, k;

        make_jar(&j, 2);
        ASSERT_OK(nts_jar_save(&j, SERVER, path, NULL, 0));
        ASSERT_ERROR(nts_jar_load(path, "other.example.org", NOW, &k, NULL, 0), EBADMSG);
        nts_jar_done(&j);
}

static void test_stale_or_future_file_is_refused(void) {
        NTSJar j, k;

        make_jar(&j, 2);
        ASSERT_OK(nts_jar_save(&j, SERVER, path, NULL, 0));
        ASSERT_ERROR(nts_jar_load(path, SERVER, NOW + NTS_JAR_MAX_AGE_USEC + USEC_PER_SEC, &k, NULL, 0), ESTALE);
        ASSERT_ERROR(nts_jar_load(path, SERVER, NOW - 2 * USEC_PER_DAY, &k, NULL, 0), ESTALE);
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

/* Loads path expecting err, and a reason that contains want. */
static void assert_refused(int err, const char *want) {
        char reason[NTS_JAR_REASON_MAX] = "";
        NTSJar k;

        ASSERT_ERROR(nts_jar_load(path, SERVER, NOW, &k, reason, sizeof reason), err);
        if (!strstr(reason, want)) {
                fprintf(stderr, "reason \"%s\" does not say \"%s\"\n", reason, want);
                abort();
        }
}

static void test_readable_by_others_is_refused_naming_the_mode(void) {
        write_file("version=1\nserver=" SERVER "\naead=15\n", 0644);
        assert_refused(EPERM, "mode 0644, expected 0600");
        write_file("version=1\nserver=" SERVER "\naead=15\n", 0640);
        assert_refused(EPERM, "mode 0640, expected 0600");
}

/* Each refusal before the content is read says what is wrong with the file. */
static void test_refusals_say_what_is_wrong_with_the_file(void) {
        char big[70 * 1024];
        NTSJar j;

        (void) unlink(path);
        ASSERT_OK(mkdir(path, 0700));
        assert_refused(EBADMSG, "not a regular file but a directory");
        ASSERT_OK(rmdir(path));

        /* Opening a FIFO for reading would wait for a writer: it must be refused at once. */
        ASSERT_OK(mkfifo(path, 0600));
        assert_refused(EBADMSG, "not a regular file but a FIFO");
        ASSERT_OK(unlink(path));

        ASSERT_OK(symlink("/etc/passwd", path));
        assert_refused(EBADMSG, "a symbolic link");
        ASSERT_OK(unlink(path));

        memset(big, '#', sizeof big - 1);
        big[sizeof big - 1] = '\0';
        write_file(big, 0600);
        assert_refused(EBADMSG, "bytes, more than a state file ever has");

        write_file("version=1\n", 0600);
        ASSERT_OK(truncate(path, 100));  /* NUL bytes after the text */
        assert_refused(EBADMSG, "contains a NUL byte");

        /* Another owner: only root can make one. */
        if (geteuid() == 0) {
                make_jar(&j, 2);
                ASSERT_OK(nts_jar_save(&j, SERVER, path, NULL, 0));
                nts_jar_done(&j);
                ASSERT_OK(chown(path, 65534, 65534));
                assert_refused(EPERM, "owned by uid 65534, expected uid 0 (the daemon's)");
        }
}

/* A valid file's text with the line starting with key replaced by line (NULL: removed). */
static char *text_with(const char *key, const char *line) {
        _cleanup_free_ char *text = NULL;
        char *out, *p;
        NTSJar j;

        make_jar(&j, 2);
        ASSERT_OK(nts_jar_to_string(&j, SERVER, &text));
        nts_jar_done(&j);

        out = malloc(strlen(text) + (line ? strlen(line) : 0) + 2);
        ASSERT_TRUE(out);
        p = out;
        for (char *l = text, *eol; *l; l = eol + 1) {
                eol = strchr(l, '\n');
                ASSERT_TRUE(eol);
                if (strncmp(l, key, strlen(key)) == 0 && l[strlen(key)] == '=') {
                        if (line)
                                p = stpcpy(stpcpy(p, line), "\n");
                } else
                        p = stpncpy(p, l, (size_t) (eol - l + 1));
        }
        *p = '\0';
        return out;
}

/* A valid file with the line of key replaced by line (NULL: removed) is refused with a reason
 * that contains want. */
typedef struct Flaw {
        const char *key, *line, *want;
} Flaw;

static void assert_flaws_refused(const Flaw *flaws, size_t n) {
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *text = text_with(flaws[i].key, flaws[i].line);
                char reason[NTS_JAR_REASON_MAX] = "";
                NTSJar k;

                ASSERT_ERROR(nts_jar_from_string(text, SERVER, &k, reason, sizeof reason), EBADMSG);
                if (!strstr(reason, flaws[i].want)) {
                        fprintf(stderr, "text:\n%s\nreason \"%s\" does not say \"%s\"\n", text, reason,
                                flaws[i].want);
                        abort();
                }
        }
}

/* Numbers are decimal digits and nothing else ("15junk" was read as 15 by sscanf), and the
 * reason names the key. */
static void test_numbers_are_parsed_strictly_and_the_key_is_named(void) {
        static const Flaw bad[] = {
                { "aead", "aead=15junk", "aead=15junk is not a decimal number" },
                { "aead", "aead=+15", "aead=+15 is not a decimal number" },
                { "aead", "aead= 15", "aead= 15 is not a decimal number" },
                { "aead", "aead=-1", "aead=-1 is not a decimal number" },
                { "aead", "aead=0x0f", "aead=0x0f is not a decimal number" },
                { "aead", "aead=", "aead= is not a decimal number" },
                { "aead", "aead=4294967311", "aead=4294967311 is out of range" },  /* 15 modulo 2^32 */
                { "aead", "aead=99", "aead=99 is not an algorithm this build knows" },
                { "ntp-port", "ntp-port=123x", "ntp-port=123x is not a decimal number" },
                { "ntp-port", "ntp-port=65536", "ntp-port=65536 is out of range" },
                { "ntp-port", "ntp-port=0", "ntp-port=0 is not a port" },
                { "ke-realtime", "ke-realtime=1800000000000000s", "ke-realtime=1800000000000000s is not a decimal number" },
                { "ke-realtime", "ke-realtime=1e15", "ke-realtime=1e15 is not a decimal number" },
                { "ke-realtime", "ke-realtime=18446744073709551616", "ke-realtime=18446744073709551616 is out of range" },
                { "version", "version=1.0", "version=1.0, only 1 is known" },
        };

        assert_flaws_refused(bad, ELEMENTSOF(bad));
}

static void test_every_other_flaw_is_named(void) {
        static const Flaw bad[] = {
                { "aead", "aead=15\naead=15", "aead is given twice" },
                { "c2s", "c2s=zz", "c2s is not a key" },
                { "s2c", "s2c=0011", "keys of 32 and 2 bytes, aead=15 needs 32" },
                { "ke-realtime", NULL, "no ke-realtime line" },
                { "server", NULL, "no server line" },
                { "server", "server=other.example.org", "written for server other.example.org" },
                { "ntp-server", "ntp-server=", "ntp-server is empty" },
                { "cookie", "cookie=abc", "cookie on line 15 is not 1 to" },
                { "version", "version", "line 2 is not key=value" },
                { "version", "colour=blue", "unknown key 'colour' on line 2" },
                /* Never resolved: a literal address, and its port with it. */
                { "ke-address", "ke-address=ntp.example.org", "ke-address=ntp.example.org is not an IPv4 or IPv6 address" },
                { "ke-address", "ke-address=192.0.2.4:4460", "ke-address=192.0.2.4:4460 is not an IPv4 or IPv6 address" },
                { "ke-address", "ke-address=", "ke-address= is not an IPv4 or IPv6 address" },
                { "ke-address", NULL, "ke-port without ke-address" },
                { "ke-port", NULL, "ke-address without ke-port" },
                { "ke-port", "ke-port=0", "ke-port=0 is not a port" },
                { "ke-port", "ke-port=65536", "ke-port=65536 is out of range" },
                { "ke-port", "ke-port=44x", "ke-port=44x is not a decimal number" },
                { "ke-key-sha256", "ke-key-sha256=5a5a", "ke-key-sha256 is not 32 bytes in hex" },
                { "ke-key-sha256", "ke-key-sha256=5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a",
                  "ke-key-sha256 is not 32 bytes in hex" },
                { "ke-key-sha256", "ke-key-sha256=zz5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a",
                  "ke-key-sha256 is not 32 bytes in hex" },
                { "ke-key-sha256", "ke-key-sha256=5a\nke-key-sha256=5a", "ke-key-sha256 is not 32 bytes in hex" },
                { "ke-port", "ke-port=4460\nke-port=4460", "ke-port is given twice" },
                { "trust-sha256", "trust-sha256=00", "trust-sha256 is not 32 bytes in hex" },
                { "ke-sha256", "ke-sha256=", "ke-sha256 is not 32 bytes in hex" },
                { "ke-sha256", "ke-sha256=00\nke-sha256=00", "ke-sha256 is not 32 bytes in hex" },
        };

        assert_flaws_refused(bad, ELEMENTSOF(bad));
}

/* The binding (what the key exchange trusted, what shaped its request) survives a restart, and
 * says which of the two changed. */
static void test_binding_round_trips_and_a_mismatch_names_what_changed(void) {
        _cleanup_free_ char *text = NULL;
        NTSJarBinding now;
        NTSJar j, k;

        make_jar(&j, 1);
        memset(j.binding.trust_sha256, 0x11, sizeof j.binding.trust_sha256);
        memset(j.binding.ke_sha256, 0x22, sizeof j.binding.ke_sha256);
        ASSERT_OK(nts_jar_to_string(&j, SERVER, &text));
        ASSERT_CONTAINS(text, "\ntrust-sha256=1111111111111111111111111111111111111111111111111111111111111111\n");
        ASSERT_CONTAINS(text, "\nke-sha256=2222222222222222222222222222222222222222222222222222222222222222\n");
        ASSERT_OK(nts_jar_from_string(text, SERVER, &k, NULL, 0));
        ASSERT_MEMEQ(&k.binding, &j.binding, sizeof j.binding);

        now = j.binding;
        ASSERT_TRUE(!nts_jar_binding_mismatch(&k, &now));
        now.ke_sha256[31] ^= 1;
        ASSERT_STREQ(nts_jar_binding_mismatch(&k, &now), "key exchange settings (server name, port or AEAD offer) "
                     "changed since the cookies were obtained");
        now.trust_sha256[0] ^= 1;
        ASSERT_STREQ(nts_jar_binding_mismatch(&k, &now), "trust settings changed since the cookies were obtained");
        now.ke_sha256[31] ^= 1;
        ASSERT_STREQ(nts_jar_binding_mismatch(&k, &now), "trust settings changed since the cookies were obtained");
        nts_jar_done(&j);
        nts_jar_done(&k);
}

/* Fail closed: a file of an earlier version, without the binding, is not used (its keys may
 * come from a trust narrowed since), and the reason says so. */
static void test_a_file_without_its_binding_is_refused(void) {
        static const char *const keys[] = { "trust-sha256", "ke-sha256" };

        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                _cleanup_free_ char *text = text_with(keys[i], NULL);
                char reason[NTS_JAR_REASON_MAX] = "";
                NTSJar k;

                ASSERT_ERROR(nts_jar_from_string(text, SERVER, &k, reason, sizeof reason), ENOKEY);
                ASSERT_CONTAINS(reason, keys[i]);
                ASSERT_CONTAINS(reason, "not bound to the trust and key exchange settings it was made under");

                write_file(text, 0600);
                reason[0] = '\0';
                ASSERT_ERROR(nts_jar_load(path, SERVER, NOW, &k, reason, sizeof reason), ENOKEY);
                ASSERT_CONTAINS(reason, "(a file of an earlier version)");
        }
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
                ASSERT_ERROR(nts_jar_load(path, SERVER, NOW, &k, NULL, 0), EBADMSG);
        }
}

/* A leftover temporary file that cannot be removed fails the write, and the reason says so. */
static void test_write_failure_names_the_step(void) {
        char tmp[sizeof path + 8], inner[sizeof tmp + 8], reason[NTS_JAR_REASON_MAX] = "";
        NTSJar j;

        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        snprintf(inner, sizeof inner, "%s/x", tmp);
        (void) unlink(tmp);
        ASSERT_OK(mkdir(tmp, 0700));
        ASSERT_OK(mkdir(inner, 0700));

        make_jar(&j, 2);
        ASSERT_ERROR(nts_jar_save(&j, SERVER, path, reason, sizeof reason), EISDIR);
        ASSERT_TRUE(strstr(reason, "cannot remove the leftover "));
        ASSERT_TRUE(strstr(reason, ".tmp: Is a directory"));
        nts_jar_done(&j);
        ASSERT_OK(rmdir(inner));
        ASSERT_OK(rmdir(tmp));
}

/* Undoes nts_jar_file_name(): what makes the mapping injective. */
static char *file_name_decode(const char *name) {
        size_t n = strlen(name);
        char *out, *p;

        ASSERT_TRUE(n >= 8 && strncmp(name, "nts-", 4) == 0 && streq(name + n - 4, ".jar"));
        out = p = malloc(n);
        ASSERT_TRUE(out);
        for (const char *c = name + 4; c < name + n - 4; c++)
                if (*c == '_')
                        *p++ = ':';
                else if (*c == '%') {
                        unsigned v;
                        ASSERT_EQ(sscanf(c + 1, "%2X", &v), 1);
                        *p++ = (char) v;
                        c += 2;
                } else {
                        ASSERT_TRUE(strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-", *c));
                        *p++ = *c;
                }
        *p = '\0';
        return out;
}

static void assert_file_name_round_trip(const char *server) {
        _cleanup_free_ char *name = NULL, *back = NULL;

        ASSERT_OK(nts_jar_file_name(server, &name));
        back = file_name_decode(name);
        ASSERT_STREQ(back, server);
}

/* Under the old mapping every character outside [A-Za-z0-9.-] became '_': "a:1" and "a_1"
 * shared a file, and so did "[::1]" and "_::1_". Today the validator refuses '_' and no two
 * valid names collided, but the mapping now is injective on any string. */
static void test_server_names_never_share_a_state_file(void) {
        static const char *const pairs[][2] = {
                { "ntp.test:4460", "ntp.test_4460" },
                { "[::1]", "_::1_" },
                { "[::1]:4460", "_::1_:4460" },
                { "a%3A1", "a:1" },
                { "a%3a1", "a%3A1" },
        };
        static const char alphabet[] = "[]:_%.a1-\x7f\xff/ ";
        char random_name[12];

        for (size_t i = 0; i < ELEMENTSOF(pairs); i++) {
                _cleanup_free_ char *a = NULL, *b = NULL;

                ASSERT_OK(nts_jar_file_name(pairs[i][0], &a));
                ASSERT_OK(nts_jar_file_name(pairs[i][1], &b));
                ASSERT_FALSE(streq(a, b));
                assert_file_name_round_trip(pairs[i][0]);
                assert_file_name_round_trip(pairs[i][1]);
        }
        {
                _cleanup_free_ char *a = NULL, *b = NULL;
                ASSERT_OK(nts_jar_legacy_file_name("ntp.test:4460", &a));
                ASSERT_OK(nts_jar_legacy_file_name("ntp.test_4460", &b));
                ASSERT_STREQ(a, b);  /* the collision the old mapping had */
        }

        /* Any bytes: the name decodes back to the server. */
        srand(15);
        for (unsigned n = 0; n < 20000; n++) {
                size_t len = 1 + (size_t) rand() % (sizeof random_name - 1);
                for (size_t i = 0; i < len; i++)
                        random_name[i] = alphabet[(size_t) rand() % (sizeof alphabet - 1)];
                random_name[len] = '\0';
                assert_file_name_round_trip(random_name);
        }
}

/* Names without brackets keep the file name they had: nothing to migrate for them. */
static void test_file_names_are_unchanged_except_for_bracketed_addresses(void) {
        static const char *const same[] = {
                "localhost:4460", "ntp.example.org", "192.0.2.1:123", "2001:db8::1", "time.cloudflare.com",
        };

        for (size_t i = 0; i < ELEMENTSOF(same); i++) {
                _cleanup_free_ char *a = NULL, *b = NULL;
                ASSERT_OK(nts_jar_file_name(same[i], &a));
                ASSERT_OK(nts_jar_legacy_file_name(same[i], &b));
                ASSERT_STREQ(a, b);
        }

        _cleanup_free_ char *a = NULL, *b = NULL;
        ASSERT_OK(nts_jar_file_name("[2001:db8::1]:4460", &a));
        ASSERT_OK(nts_jar_legacy_file_name("[2001:db8::1]:4460", &b));
        ASSERT_STREQ(a, "nts-%5B2001_db8__1%5D_4460.jar");
        ASSERT_STREQ(b, "nts-_2001_db8__1__4460.jar");
}

/* "nts-" + 247 bytes + ".jar" is the longest file name (NAME_MAX, 255). Longer names, such as a
 * valid host name of 253 characters with a port, are refused, so that the daemon says once that
 * it keeps no state for them instead of failing every write. */
static void test_too_long_file_name_is_refused(void) {
        char server[300];
        char *name = NULL;

        memset(server, 'a', 247);
        server[247] = '\0';
        ASSERT_OK(nts_jar_file_name(server, &name));
        ASSERT_EQ(strlen(name), 255);
        free(name);

        strcpy(server + 247, "a");
        ASSERT_ERROR(nts_jar_file_name(server, &name), ENAMETOOLONG);

        /* A valid host name of 253 characters (four labels of 62 and one of 1) and a port. */
        memset(server, 'x', 253);
        for (size_t i = 62; i < 253; i += 63)
                server[i] = '.';
        strcpy(server + 253, ":4460");
        ASSERT_ERROR(nts_jar_file_name(server, &name), ENAMETOOLONG);
}

static void test_missing_file_is_enoent(void) {
        NTSJar k;

        (void) unlink(path);
        ASSERT_ERROR(nts_jar_load(path, SERVER, NOW, &k, NULL, 0), ENOENT);
}

/* What a start does before it spends a cookie of the file: the file is gone, also when it was
 * gone already; a removal that fails says which step and why. */
static void test_remove_takes_the_file_away_and_names_a_failure(void) {
        char inner[sizeof path + 8], reason[NTS_JAR_REASON_MAX] = "";
        NTSJar j, k;

        make_jar(&j, 2);
        ASSERT_OK(nts_jar_save(&j, SERVER, path, NULL, 0));
        nts_jar_done(&j);
        ASSERT_OK(nts_jar_remove(path, reason, sizeof reason));
        ASSERT_ERROR(nts_jar_load(path, SERVER, NOW, &k, NULL, 0), ENOENT);
        ASSERT_OK(nts_jar_remove(path, reason, sizeof reason));

        /* A directory with something in it cannot be unlink()ed. */
        snprintf(inner, sizeof inner, "%s/x", path);
        ASSERT_OK(mkdir(path, 0700));
        ASSERT_OK(mkdir(inner, 0700));
        ASSERT_ERROR(nts_jar_remove(path, reason, sizeof reason), EISDIR);
        ASSERT_STREQ(reason, "cannot remove it: Is a directory");
        ASSERT_OK(rmdir(inner));
        ASSERT_OK(rmdir(path));
}

int main(void) {
        static const TestCase cases[] = {
                TEST_CASE(test_cookies_are_spent_oldest_first),
                TEST_CASE(test_full_jar_drops_the_oldest),
                TEST_CASE(test_empty_jar_gives_nothing),
                TEST_CASE(test_save_and_load_round_trip_with_mode_0600),
                TEST_CASE(test_key_exchange_peer_round_trip),
                TEST_CASE(test_leftover_temporary_file_is_replaced_not_written_through),
                TEST_CASE(test_file_of_another_server_is_refused),
                TEST_CASE(test_stale_or_future_file_is_refused),
                TEST_CASE(test_keys_expire_after_the_maximum_age_or_when_from_the_future),
                TEST_CASE(test_readable_by_others_is_refused_naming_the_mode),
                TEST_CASE(test_refusals_say_what_is_wrong_with_the_file),
                TEST_CASE(test_numbers_are_parsed_strictly_and_the_key_is_named),
                TEST_CASE(test_every_other_flaw_is_named),
                TEST_CASE(test_binding_round_trips_and_a_mismatch_names_what_changed),
                TEST_CASE(test_a_file_without_its_binding_is_refused),
                TEST_CASE(test_malformed_files_are_refused),
                TEST_CASE(test_write_failure_names_the_step),
                TEST_CASE(test_server_names_never_share_a_state_file),
                TEST_CASE(test_file_names_are_unchanged_except_for_bracketed_addresses),
                TEST_CASE(test_too_long_file_name_is_refused),
                TEST_CASE(test_missing_file_is_enoent),
                TEST_CASE(test_remove_takes_the_file_away_and_names_a_failure),
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
