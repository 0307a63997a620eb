/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "fileio.h"
#include "hexdecoct.h"
#include "iovec-util.h"
#include "log.h"
#include "nts_crypto.h"
#include "string-util.h"
#include "timesyncd-nts-jar.h"

#define JAR_VERSION "1"
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
        fprintf(f, "version=%s\nserver=%s\naead=%u\nke-realtime=" USEC_FMT "\n", JAR_VERSION, server,
                (unsigned) j->aead, j->ke_realtime);
        if (j->ntp_server)
                fprintf(f, "ntp-server=%s\n", j->ntp_server);
        if (j->ntp_port > 0)
                fprintf(f, "ntp-port=%u\n", j->ntp_port);
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

static int parse_key(const char *hex, uint8_t *out, size_t *size) {
        ssize_t n = hex_decode(hex, out, NTS_MAX_AEAD_KEY_SIZE);
        if (n <= 0)
                return -EBADMSG;
        if (*size != 0 && (size_t) n != *size)
                return -EBADMSG;
        *size = (size_t) n;
        return 0;
}

int nts_jar_from_string(const char *s, const char *server, NTSJar *ret) {
        _cleanup_(nts_jar_done) NTSJar j = {};
        bool have_version = false, have_server = false, have_aead = false;
        size_t c2s_size = 0, s2c_size = 0;
        const NTS_AEADParam *param;
        const char *p = s;

        assert(s);
        assert(server);
        assert(ret);

        while (*p) {
                const char *eol = strchrnul(p, '\n');
                _cleanup_free_ char *line = strndup(p, eol - p);
                char *value;
                int r;

                if (!line)
                        return -ENOMEM;
                p = *eol ? eol + 1 : eol;

                if (line[0] == '#' || line[0] == '\0')
                        continue;
                value = strchr(line, '=');
                if (!value)
                        return -EBADMSG;
                *value++ = '\0';

                if (streq(line, "version")) {
                        if (!streq(value, JAR_VERSION))
                                return -EBADMSG;
                        have_version = true;
                } else if (streq(line, "server")) {
                        if (!streq(value, server))
                                return -EBADMSG;
                        have_server = true;
                } else if (streq(line, "aead")) {
                        unsigned a;
                        if (sscanf(value, "%u", &a) != 1 || !NTS_aead_param((NTS_AEADAlgorithm) a))
                                return -EBADMSG;
                        j.aead = (NTS_AEADAlgorithm) a;
                        have_aead = true;
                } else if (streq(line, "ke-realtime")) {
                        if (sscanf(value, "%" SCNu64, &j.ke_realtime) != 1)
                                return -EBADMSG;
                } else if (streq(line, "ntp-server")) {
                        if (isempty(value) || strlen(value) > NTS_MAX_SERVER_NAME_SIZE)
                                return -EBADMSG;
                        r = free_and_strdup(&j.ntp_server, value);
                        if (r < 0)
                                return r;
                } else if (streq(line, "ntp-port")) {
                        unsigned port;
                        if (sscanf(value, "%u", &port) != 1 || port == 0 || port > 65535)
                                return -EBADMSG;
                        j.ntp_port = (uint16_t) port;
                } else if (streq(line, "c2s")) {
                        if (parse_key(value, j.c2s, &c2s_size) < 0)
                                return -EBADMSG;
                } else if (streq(line, "s2c")) {
                        if (parse_key(value, j.s2c, &s2c_size) < 0)
                                return -EBADMSG;
                } else if (streq(line, "cookie")) {
                        uint8_t buf[NTS_MAX_COOKIE_SIZE];
                        ssize_t n = hex_decode(value, buf, sizeof buf);
                        if (n <= 0 || j.n_cookies >= NTS_MAX_COOKIES)
                                return -EBADMSG;
                        r = nts_jar_add_cookie(&j, &IOVEC_MAKE(buf, (size_t) n));
                        explicit_bzero_safe(buf, sizeof buf);
                        if (r < 0)
                                return r;
                } else
                        return -EBADMSG;
        }

        if (!have_version || !have_server || !have_aead)
                return -EBADMSG;
        param = NTS_aead_param(j.aead);
        if (c2s_size != param->key_size || s2c_size != param->key_size)
                return -EBADMSG;
        j.key_size = param->key_size;

        *ret = j;
        zero(j);
        return 0;
}

int nts_jar_save(const NTSJar *j, const char *server, const char *path) {
        _cleanup_free_ char *text = NULL, *tmp = NULL;
        _cleanup_close_ int fd = -EBADF;
        size_t n, done = 0;
        int r;

        assert(j);
        assert(path);

        r = nts_jar_to_string(j, server, &text);
        if (r < 0)
                return r;

        if (asprintf(&tmp, "%s.tmp", path) < 0)
                return -ENOMEM;

        /* A fresh inode, never one a link points at. A temporary file is only there when an
         * earlier write was cut short: removed then, not before every write. */
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0 && errno == EEXIST) {
                (void) unlink(tmp);
                fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        }
        if (fd < 0)
                return -errno;

        n = strlen(text);
        while (done < n) {
                ssize_t l = write(fd, text + done, n - done);
                if (l < 0) {
                        r = -errno;
                        goto fail;
                }
                done += (size_t) l;
        }

        /* The rename must not reach the disk before the data: then a crash leaves either the
         * old file or the new one, never a truncated one. */
        if (fsync(fd) < 0) {
                r = -errno;
                goto fail;
        }
        explicit_bzero_safe(text, n);

        if (rename(tmp, path) < 0) {
                r = -errno;
                goto fail;
        }

        /* Without this the rename itself may be lost in a power cut, and a spent cookie
         * would come back from the old file. */
        r = fsync_parent_dir(path);
        if (r < 0)
                log_debug_errno(r, "Failed to sync directory of %s, ignoring: %m", path);
        return 0;

fail:
        explicit_bzero_safe(text, n);
        (void) unlink(tmp);
        return r;
}

int nts_jar_load(const char *path, const char *server, usec_t now_realtime, NTSJar *ret) {
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        size_t size = 0;
        int r;

        assert(path);
        assert(ret);

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode) || st.st_size > JAR_MAX_FILE_SIZE)
                return -EBADMSG;
        /* Keys readable by others are compromised keys: do not use them. */
        if (st.st_mode & 0077)
                return -EPERM;

        r = read_full_fd(fd, JAR_MAX_FILE_SIZE, &text, &size);
        if (r < 0)
                return r == -EFBIG ? -EBADMSG : r;
        if (strlen(text) != size)
                r = -EBADMSG;
        else
                r = nts_jar_from_string(text, server, ret);
        explicit_bzero_safe(text, size);
        if (r < 0)
                return r;

        if (nts_jar_expired(ret, now_realtime)) {
                nts_jar_done(ret);
                return -ESTALE;
        }
        return 0;
}

bool nts_jar_expired(const NTSJar *j, usec_t now_realtime) {
        assert(j);
        return j->ke_realtime > now_realtime + USEC_PER_DAY ||
               j->ke_realtime + NTS_JAR_MAX_AGE_USEC < now_realtime;
}
