/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>

#include "fileio.h"
#include "hexdecoct.h"
#include "iovec-util.h"
#include "log.h"
#include "nts-crypto.h"
#include "string-util.h"
#include "timesyncd-nts-jar.h"

#define JAR_FILE_VERSION "1"
#define JAR_MAX_FILE_SIZE (64 * 1024)

void nts_jar_done(NTSJar *j) {
        if (!j)
                return;
        for (size_t i = 0; i < j->n_cookies; i++)
                iovec_done_erase(&j->cookies[i]);
        free(j->ntp_server);
        explicit_bzero_safe(j, sizeof *j);
}

int nts_jar_add_cookie(NTSJar *j, const struct iovec *cookie) {
        struct iovec copy;
        int r;

        assert(j);
        assert(cookie);

        if (cookie->iov_len == 0 || cookie->iov_len > NTS_MAX_COOKIE_SIZE)
                return -EINVAL;

        r = iovec_memdup(cookie, &copy);
        if (r < 0)
                return r;

        if (j->n_cookies == NTS_MAX_COOKIES) {
                iovec_done_erase(&j->cookies[0]);
                memmove(j->cookies, j->cookies + 1, (NTS_MAX_COOKIES - 1) * sizeof(struct iovec));
                j->n_cookies--;
        }
        j->cookies[j->n_cookies++] = copy;
        return 0;
}

int nts_jar_pop_cookie(NTSJar *j, struct iovec *ret) {
        assert(j);
        assert(ret);

        if (j->n_cookies == 0)
                return -ENOENT;

        *ret = j->cookies[0];
        memmove(j->cookies, j->cookies + 1, (j->n_cookies - 1) * sizeof(struct iovec));
        j->cookies[--j->n_cookies] = IOVEC_NULL;
        return 0;
}

bool nts_jar_usable(const NTSJar *j) {
        return j && j->key_size > 0 && j->n_cookies > 0;
}

int nts_jar_to_string(const NTSJar *j, const char *server, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f;

        assert(j);
        assert(server);
        assert(ret);

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;

        fprintf(f, "# NTS keys and cookies of timesyncd-nts. Secret: do not copy.\n");
        fprintf(f, "version=%s\nserver=%s\naead=%u\nke-realtime=" USEC_FMT "\n", JAR_FILE_VERSION, server,
                (unsigned) j->aead, j->ke_realtime);
        if (j->ntp_server)
                fprintf(f, "ntp-server=%s\n", j->ntp_server);
        if (j->ntp_port > 0)
                fprintf(f, "ntp-port=%u\n", j->ntp_port);
        if (IN_SET(j->ke_peer.sa.ss_family, AF_INET, AF_INET6)) {
                char host[SOCKET_ADDRESS_HOST_MAX];

                fprintf(f, "ke-address=%s\nke-port=%u\n", socket_address_host_to_string(&j->ke_peer, host),
                        socket_address_port(&j->ke_peer));
        }
        if (j->has_ke_key) {
                fputs("ke-key-sha256=", f);
                hex_write(f, j->ke_key_sha256, sizeof j->ke_key_sha256);
                fputc('\n', f);
        }
        fputs("trust-sha256=", f);
        hex_write(f, j->binding.trust_sha256, sizeof j->binding.trust_sha256);
        fputs("\nke-sha256=", f);
        hex_write(f, j->binding.ke_sha256, sizeof j->binding.ke_sha256);
        fputc('\n', f);
        fputs("c2s=", f);
        hex_write(f, j->c2s, j->key_size);
        fputs("\ns2c=", f);
        hex_write(f, j->s2c, j->key_size);
        fputc('\n', f);
        for (size_t i = 0; i < j->n_cookies; i++) {
                fputs("cookie=", f);
                hex_write(f, j->cookies[i].iov_base, j->cookies[i].iov_len);
                fputc('\n', f);
        }

        /* A memstream that could not grow drops writes and may still close fine, leaving a
         * truncated text (or none): that must not become the state file. */
        if (fflush(f) != 0 || ferror(f)) {
                fclose(f);
                return -ENOMEM;
        }
        if (fclose(f) != 0 || !buf)
                return -ENOMEM;

        *ret = TAKE_PTR(buf);
        return 0;
}

/* Sets the reason a file is refused (when the caller asked for one) and returns -EBADMSG. */
_printf_(3, 4)
static int jar_refuse(char *reason, size_t size, const char *format, ...) {
        va_list ap;

        if (reason && size > 0) {
                va_start(ap, format);
                vsnprintf(reason, size, format, ap);
                va_end(ap);
        }
        return -EBADMSG;
}

/* A value from the file, for a log line: only if it is short and printable ASCII, as the file
 * is meant to be. Never used for keys or cookies, which are secret. */
static const char *printable(const char *value) {
        size_t n = strlen(value);

        if (n > 32)
                return "(too long to show)";
        for (size_t i = 0; i < n; i++)
                if (value[i] < ' ' || value[i] > '~')
                        return "(unprintable)";
        return value;
}

/* The keys of the file, each allowed once except "cookie". */
typedef enum JarKey {
        JAR_VERSION,
        JAR_SERVER,
        JAR_AEAD,
        JAR_KE_REALTIME,
        JAR_NTP_SERVER,
        JAR_NTP_PORT,
        JAR_KE_ADDRESS,
        JAR_KE_PORT,
        JAR_KE_KEY_SHA256,
        JAR_TRUST_SHA256,
        JAR_KE_SHA256,
        JAR_C2S,
        JAR_S2C,
        JAR_COOKIE,
        _JAR_KEY_MAX,
} JarKey;

static const char *const jar_key_table[_JAR_KEY_MAX] = {
        [JAR_VERSION] = "version",
        [JAR_SERVER] = "server",
        [JAR_AEAD] = "aead",
        [JAR_KE_REALTIME] = "ke-realtime",
        [JAR_NTP_SERVER] = "ntp-server",
        [JAR_NTP_PORT] = "ntp-port",
        [JAR_KE_ADDRESS] = "ke-address",
        [JAR_KE_PORT] = "ke-port",
        [JAR_KE_KEY_SHA256] = "ke-key-sha256",
        [JAR_TRUST_SHA256] = "trust-sha256",
        [JAR_KE_SHA256] = "ke-sha256",
        [JAR_C2S] = "c2s",
        [JAR_S2C] = "s2c",
        [JAR_COOKIE] = "cookie",
};

static JarKey jar_key_from_string(const char *s) {
        for (JarKey k = 0; k < _JAR_KEY_MAX; k++)
                if (streq(jar_key_table[k], s))
                        return k;
        return _JAR_KEY_MAX;
}

static int parse_number(const char *key, const char *value, uint64_t max, uint64_t *ret, char *reason,
                        size_t size) {
        int r = parse_unsigned(value, max, ret);
        if (r == -ERANGE)
                return jar_refuse(reason, size, "%s=%s is out of range (at most %" PRIu64 ")", key,
                                  printable(value), max);
        if (r < 0)
                return jar_refuse(reason, size, "%s=%s is not a decimal number", key, printable(value));
        return 0;
}

static int parse_port(const char *key, const char *value, uint16_t *ret, char *reason, size_t size) {
        uint64_t v;
        int r;

        r = parse_number(key, value, UINT16_MAX, &v, reason, size);
        if (r < 0)
                return r;
        if (v == 0)
                return jar_refuse(reason, size, "%s=0 is not a port", key);
        *ret = (uint16_t) v;
        return 0;
}

static int parse_key(const char *key, const char *hex, uint8_t *out, size_t *ret_size, char *reason,
                     size_t size) {
        ssize_t n = hex_decode(hex, out, NTS_MAX_AEAD_KEY_SIZE);
        if (n <= 0)
                return jar_refuse(reason, size, "%s is not a key of 1 to %u bytes in hex", key,
                                  (unsigned) NTS_MAX_AEAD_KEY_SIZE);
        *ret_size = (size_t) n;
        return 0;
}

static int parse_sha256(const char *key, const char *hex, uint8_t out[static NTS_JAR_KEY_SHA256_SIZE],
                        char *reason, size_t size) {
        if (hex_decode(hex, out, NTS_JAR_KEY_SHA256_SIZE) != NTS_JAR_KEY_SHA256_SIZE)
                return jar_refuse(reason, size, "%s is not %u bytes in hex", key, (unsigned) NTS_JAR_KEY_SHA256_SIZE);
        return 0;
}

int nts_jar_from_string(const char *s, const char *server, NTSJar *ret, char *reason, size_t size) {
        _cleanup_(nts_jar_done) NTSJar j = {};
        bool seen[_JAR_KEY_MAX] = {};
        size_t c2s_size = 0, s2c_size = 0;
        uint16_t ke_port = 0;
        const NTS_AEADParam *param;
        const char *p = s;
        unsigned line_no = 0;
        uint64_t v;
        int r;

        assert(s);
        assert(server);
        assert(ret);

        while (*p) {
                const char *eol = strchrnul(p, '\n');
                _cleanup_free_ char *line = strndup(p, eol - p);
                char *value;
                JarKey key;

                if (!line)
                        return -ENOMEM;
                p = *eol ? eol + 1 : eol;
                line_no++;

                if (line[0] == '#' || line[0] == '\0')
                        continue;
                value = strchr(line, '=');
                if (!value)
                        return jar_refuse(reason, size, "line %u is not key=value", line_no);
                *value++ = '\0';

                key = jar_key_from_string(line);
                if (key == _JAR_KEY_MAX)
                        return jar_refuse(reason, size, "unknown key '%s' on line %u", printable(line), line_no);
                if (seen[key] && key != JAR_COOKIE)
                        return jar_refuse(reason, size, "%s is given twice (line %u)", line, line_no);
                seen[key] = true;

                switch (key) {
                case JAR_VERSION:
                        if (!streq(value, JAR_FILE_VERSION))
                                return jar_refuse(reason, size, "version=%s, only %s is known", printable(value),
                                                  JAR_FILE_VERSION);
                        break;
                case JAR_SERVER:
                        if (!streq(value, server))
                                return jar_refuse(reason, size, "written for server %s", printable(value));
                        break;
                case JAR_AEAD:
                        r = parse_number(line, value, UINT16_MAX, &v, reason, size);
                        if (r < 0)
                                return r;
                        if (!NTS_aead_param((NTS_AEADAlgorithm) v))
                                return jar_refuse(reason, size, "aead=%" PRIu64 " is not an algorithm this build knows", v);
                        j.aead = (NTS_AEADAlgorithm) v;
                        break;
                case JAR_KE_REALTIME:
                        r = parse_number(line, value, USEC_INFINITY - 1, &j.ke_realtime, reason, size);
                        if (r < 0)
                                return r;
                        break;
                case JAR_NTP_SERVER:
                        if (isempty(value) || strlen(value) > NTS_MAX_SERVER_NAME_SIZE)
                                return jar_refuse(reason, size, "ntp-server is empty or longer than %u bytes",
                                                  (unsigned) NTS_MAX_SERVER_NAME_SIZE);
                        r = free_and_strdup(&j.ntp_server, value);
                        if (r < 0)
                                return r;
                        break;
                case JAR_NTP_PORT:
                        r = parse_port(line, value, &j.ntp_port, reason, size);
                        if (r < 0)
                                return r;
                        break;
                case JAR_KE_ADDRESS:
                        /* A literal only: nothing read from the file is ever resolved. */
                        if (socket_address_from_string(value, 0, &j.ke_peer) < 0)
                                return jar_refuse(reason, size, "ke-address=%s is not an IPv4 or IPv6 address",
                                                  printable(value));
                        break;
                case JAR_KE_PORT:
                        r = parse_port(line, value, &ke_port, reason, size);
                        if (r < 0)
                                return r;
                        break;
                case JAR_KE_KEY_SHA256:
                        r = parse_sha256(line, value, j.ke_key_sha256, reason, size);
                        if (r < 0)
                                return r;
                        j.has_ke_key = true;
                        break;
                case JAR_TRUST_SHA256:
                        r = parse_sha256(line, value, j.binding.trust_sha256, reason, size);
                        if (r < 0)
                                return r;
                        break;
                case JAR_KE_SHA256:
                        r = parse_sha256(line, value, j.binding.ke_sha256, reason, size);
                        if (r < 0)
                                return r;
                        break;
                case JAR_C2S:
                        r = parse_key(line, value, j.c2s, &c2s_size, reason, size);
                        if (r < 0)
                                return r;
                        break;
                case JAR_S2C:
                        r = parse_key(line, value, j.s2c, &s2c_size, reason, size);
                        if (r < 0)
                                return r;
                        break;
                case JAR_COOKIE: {
                        uint8_t buf[NTS_MAX_COOKIE_SIZE];
                        ssize_t n;

                        if (j.n_cookies >= NTS_MAX_COOKIES)
                                return jar_refuse(reason, size, "more than %u cookies", (unsigned) NTS_MAX_COOKIES);
                        n = hex_decode(value, buf, sizeof buf);
                        if (n <= 0)
                                return jar_refuse(reason, size, "cookie on line %u is not 1 to %u bytes in hex",
                                                  line_no, (unsigned) NTS_MAX_COOKIE_SIZE);
                        r = nts_jar_add_cookie(&j, &IOVEC_MAKE(buf, (size_t) n));
                        explicit_bzero_safe(buf, sizeof buf);
                        if (r < 0)
                                return r;
                        break;
                }
                default:
                        assert_not_reached();
                }
        }

        /* Without ke-realtime the age of the keys is unknown: they could never be expired. */
        static const JarKey required[] = { JAR_VERSION, JAR_SERVER, JAR_AEAD, JAR_KE_REALTIME, JAR_C2S, JAR_S2C };
        for (size_t i = 0; i < ELEMENTSOF(required); i++)
                if (!seen[required[i]])
                        return jar_refuse(reason, size, "no %s line", jar_key_table[required[i]]);
        /* Fail closed: keys of a file without its binding (an earlier version wrote it) may come
         * from a key exchange under a trust that has been narrowed since. One key exchange
         * replaces them; the clock that runs while the package is updated is good enough for
         * it, and a clock too wrong for one has jars from the future, unused anyway. */
        if (!seen[JAR_TRUST_SHA256] || !seen[JAR_KE_SHA256]) {
                jar_refuse(reason, size, "no %s line: not bound to the trust and key exchange settings it was "
                           "made under (a file of an earlier version)",
                           jar_key_table[seen[JAR_TRUST_SHA256] ? JAR_KE_SHA256 : JAR_TRUST_SHA256]);
                return -ENOKEY;
        }
        /* An address without its port would name another server than the one that answered. */
        if (seen[JAR_KE_ADDRESS] != seen[JAR_KE_PORT])
                return jar_refuse(reason, size, "%s without %s", seen[JAR_KE_PORT] ? "ke-port" : "ke-address",
                                  seen[JAR_KE_PORT] ? "ke-address" : "ke-port");
        if (seen[JAR_KE_ADDRESS])
                socket_address_set_port(&j.ke_peer, ke_port);
        param = NTS_aead_param(j.aead);
        if (c2s_size != param->key_size || s2c_size != param->key_size)
                return jar_refuse(reason, size, "keys of %zu and %zu bytes, aead=%u needs %zu", c2s_size, s2c_size,
                                  (unsigned) j.aead, param->key_size);
        j.key_size = param->key_size;

        *ret = j;
        zero(j);
        return 0;
}

/* Like jar_refuse(), for a failed system call: the reason ends in the error's text. */
_printf_(4, 5)
static int jar_fail(char *reason, size_t size, int r, const char *format, ...) {
        va_list ap;
        int n;

        assert(r < 0);

        if (reason && size > 0) {
                va_start(ap, format);
                n = vsnprintf(reason, size, format, ap);
                va_end(ap);
                if (n >= 0 && (size_t) n < size)
                        snprintf(reason + n, size - (size_t) n, ": %s", strerror(-r));
        }
        return r;
}

int nts_jar_save(const NTSJar *j, const char *server, const char *path, char *reason, size_t size) {
        _cleanup_free_ char *text = NULL;
        const char *step;
        size_t n;
        int r;

        assert(j);
        assert(path);

        r = nts_jar_to_string(j, server, &text);
        if (r < 0)
                return jar_fail(reason, size, r, "cannot format the cookies");

        /* Through a temporary file and a rename: a crash leaves the old file or the new one,
         * never a truncated one, and a spent cookie never comes back from the old file once
         * the rename is done. */
        n = strlen(text);
        r = write_file_atomic(path, text, n, 0600, &step);
        explicit_bzero_safe(text, n);
        if (r < 0 && !step)
                return jar_fail(reason, size, r, "cannot format the cookies");
        if (r < 0)
                return jar_fail(reason, size, r, "cannot %s %s.tmp", step, path);
        return 0;
}

int nts_jar_remove(const char *path, char *reason, size_t size) {
        int r;

        assert(path);

        if (unlink(path) < 0) {
                if (errno == ENOENT)
                        return 0;
                return jar_fail(reason, size, -errno, "cannot remove it");
        }

        /* Until the directory is on disk, a power cut can bring the file back, and with it
         * cookies that were sent since. */
        r = fsync_parent_dir(path);
        if (r < 0)
                return jar_fail(reason, size, r, "cannot sync its directory after removing it");
        return 0;
}

static const char *file_type_string(mode_t mode) {
        switch (mode & S_IFMT) {
        case S_IFDIR:
                return "a directory";
        case S_IFIFO:
                return "a FIFO";
        case S_IFSOCK:
                return "a socket";
        case S_IFCHR:
                return "a character device";
        case S_IFBLK:
                return "a block device";
        case S_IFLNK:
                return "a symbolic link";
        default:
                return "of an unknown type";
        }
}

/* What makes a state file unusable before its content is read. */
static int jar_check_file(const struct stat *st, char *reason, size_t size) {
        if (!S_ISREG(st->st_mode))
                return jar_refuse(reason, size, "not a regular file but %s", file_type_string(st->st_mode));
        if (st->st_size > JAR_MAX_FILE_SIZE)
                return jar_refuse(reason, size, "%jd bytes, more than a state file ever has (%u)",
                                  (intmax_t) st->st_size, (unsigned) JAR_MAX_FILE_SIZE);
        /* A file someone else planted holds keys that are not ours. */
        if (st->st_uid != geteuid()) {
                jar_refuse(reason, size, "owned by uid %u, expected uid %u (the daemon's)", (unsigned) st->st_uid,
                           (unsigned) geteuid());
                return -EPERM;
        }
        /* Keys readable by others are compromised keys: do not use them. */
        if (st->st_mode & 0077) {
                jar_refuse(reason, size, "mode %04o, expected 0600 (others may have read its keys)",
                           (unsigned) (st->st_mode & 07777));
                return -EPERM;
        }
        return 0;
}

int nts_jar_load(const char *path, const char *server, usec_t now_realtime, NTSJar *ret, char *reason,
                 size_t size) {
        char detail[NTS_JAR_REASON_MAX - 16] = "";
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        size_t n = 0;
        int r;

        assert(path);
        assert(ret);

        /* O_NONBLOCK: a FIFO in its place must be refused, not wait for a writer forever. */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                r = -errno;
                if (r == -ENOENT)
                        return r;
                if (r == -ELOOP)
                        return jar_refuse(reason, size, "a symbolic link, not a regular file");
                /* Say who owns it and how, not only "Permission denied". */
                if (lstat(path, &st) >= 0 && jar_check_file(&st, reason, size) < 0)
                        return r;
                return jar_fail(reason, size, r, "cannot open it");
        }
        if (fstat(fd, &st) < 0)
                return jar_fail(reason, size, -errno, "cannot stat it");
        r = jar_check_file(&st, reason, size);
        if (r < 0)
                return r;

        r = read_full_fd(fd, JAR_MAX_FILE_SIZE, &text, &n);
        if (r == -EFBIG)
                return jar_refuse(reason, size, "more than %u bytes", (unsigned) JAR_MAX_FILE_SIZE);
        if (r < 0)
                return jar_fail(reason, size, r, "cannot read it");
        if (strlen(text) != n)
                r = jar_refuse(detail, sizeof detail, "contains a NUL byte");
        else
                r = nts_jar_from_string(text, server, ret, detail, sizeof detail);
        explicit_bzero_safe(text, n);
        if (r == -EBADMSG)
                return jar_refuse(reason, size, "malformed: %s", detail);
        if (r == -ENOKEY) {
                jar_refuse(reason, size, "%s", detail);
                return r;
        }
        if (r < 0)
                return jar_fail(reason, size, r, "cannot parse it");

        if (nts_jar_expired(ret, now_realtime)) {
                nts_jar_done(ret);
                jar_refuse(reason, size, "keys from a key exchange more than %s ago, or in the future",
                           FORMAT_TIMESPAN(NTS_JAR_MAX_AGE_USEC, USEC_PER_SEC));
                return -ESTALE;
        }
        return 0;
}

const char *nts_jar_binding_mismatch(const NTSJar *j, const NTSJarBinding *now) {
        assert(j);
        assert(now);

        if (memcmp(j->binding.trust_sha256, now->trust_sha256, sizeof now->trust_sha256) != 0)
                return "trust settings changed since the cookies were obtained";
        if (memcmp(j->binding.ke_sha256, now->ke_sha256, sizeof now->ke_sha256) != 0)
                return "key exchange settings (server name, port or AEAD offer) changed since the cookies were "
                       "obtained";
        return NULL;
}

bool nts_jar_expired(const NTSJar *j, usec_t now_realtime) {
        assert(j);

        /* No sums: ke-realtime comes from a file and may be anything up to USEC_INFINITY - 1. */
        if (j->ke_realtime > now_realtime)
                return j->ke_realtime - now_realtime > USEC_PER_DAY;
        return now_realtime - j->ke_realtime > NTS_JAR_MAX_AGE_USEC;
}

/* Characters kept as they are in a file name: letters, digits, '.' and '-'. ':' (before a port,
 * in IPv6 addresses) becomes '_', and every other byte, '_' and '%' included, %XX: the mapping
 * can be undone, so two names never share a file. */
static bool file_name_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
}

int nts_jar_file_name(const char *server, char **ret) {
        _cleanup_free_ char *name = NULL;
        char *p;

        assert(server);
        assert(ret);

        name = new(char, strlen("nts-") + 3 * strlen(server) + strlen(".jar") + 1);
        if (!name)
                return -ENOMEM;

        p = stpcpy(name, "nts-");
        for (const char *c = server; *c; c++)
                if (file_name_char(*c))
                        *p++ = *c;
                else if (*c == ':')
                        *p++ = '_';
                else
                        p += sprintf(p, "%%%02X", (unsigned) (uint8_t) *c);
        strcpy(p, ".jar");

        if (strlen(name) > NAME_MAX)
                return -ENAMETOOLONG;
        *ret = TAKE_PTR(name);
        return 0;
}

int nts_jar_legacy_file_name(const char *server, char **ret) {
        char *name;

        assert(server);
        assert(ret);

        if (asprintf(&name, "nts-%s.jar", server) < 0)
                return -ENOMEM;
        for (char *c = name + strlen("nts-"); *c; c++)
                if (!file_name_char(*c))
                        *c = '_';
        *ret = name;
        return 0;
}
