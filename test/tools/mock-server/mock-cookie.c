/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <fcntl.h>
#include <stdio.h>

#include "iovec-util.h"
#include "log.h"
#include "mock-cookie.h"
#include "nts-crypto.h"
#include "random-util.h"
#include "unaligned.h"

#define PLAIN_HEADER 4

static int read_key_file(const char *path, uint8_t *buf, size_t size) {
        uint8_t tmp[MOCK_COOKIE_KEY_ID_SIZE + MOCK_COOKIE_KEY_SIZE + 1];
        _cleanup_close_ int fd = -EBADF;
        ssize_t n;

        assert(size < sizeof(tmp));

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;

        /* One byte more than expected, to notice a file that is too long. */
        n = read(fd, tmp, size + 1);
        if (n < 0)
                return log_error_errno(errno, "Failed to read %s: %m", path);
        if ((size_t) n != size) {
                explicit_bzero_safe(tmp, sizeof(tmp));
                return log_error_errno(EINVAL, "%s: expected %zu bytes, got %zi", path, size, n);
        }

        memcpy(buf, tmp, size);
        explicit_bzero_safe(tmp, sizeof(tmp));
        return 0;
}

static int write_key_file(const char *path, const uint8_t *buf, size_t size) {
        _cleanup_close_ int fd = -EBADF;

        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0)
                return log_error_errno(errno, "Failed to create %s: %m", path);
        if (write(fd, buf, size) != (ssize_t) size)
                return log_error_errno(errno ?: EIO, "Failed to write %s: %m", path);
        return 0;
}

int mock_cookie_key_load(const char *path, MockCookieKey *ret) {
        uint8_t material[MOCK_COOKIE_KEY_ID_SIZE + MOCK_COOKIE_KEY_SIZE];
        int r;

        assert(ret);

        r = path ? read_key_file(path, material, sizeof(material)) : -ENOENT;
        if (r == -ENOENT) {
                r = random_bytes(material, sizeof(material));
                if (r < 0)
                        return log_error_errno(r, "Failed to make a server key: %m");
                if (path) {
                        r = write_key_file(path, material, sizeof(material));
                        if (r < 0)
                                return r;
                }
        } else if (r < 0)
                return r;

        memcpy(ret->id, material, MOCK_COOKIE_KEY_ID_SIZE);
        r = NTS_aead_new(NTS_AEAD_AES_SIV_CMAC_256,
                         &IOVEC_MAKE(material + MOCK_COOKIE_KEY_ID_SIZE, MOCK_COOKIE_KEY_SIZE), &ret->aead);
        explicit_bzero_safe(material, sizeof(material));
        if (r < 0)
                return log_error_errno(r, "Failed to set up the server key: %m");
        return 0;
}

void mock_cookie_key_done(MockCookieKey *k) {
        k->aead = NTS_aead_free(k->aead);
}

static size_t key_size(NTS_AEADAlgorithm aead) {
        const NTS_AEADParam *p = NTS_aead_param(aead);
        return p ? p->key_size : 0;
}

size_t mock_cookie_size(NTS_AEADAlgorithm aead) {
        size_t k = key_size(aead);

        if (k == 0)
                return 0;
        return MOCK_COOKIE_KEY_ID_SIZE + MOCK_COOKIE_NONCE_SIZE + PLAIN_HEADER + 2 * k + NTS_AEAD_TAG_SIZE;
}

int mock_cookie_make(const MockCookieKey *k, NTS_AEADAlgorithm aead, const struct iovec *c2s,
                     const struct iovec *s2c, uint8_t *buf, size_t size) {
        uint8_t plain[PLAIN_HEADER + 2 * NTS_MAX_AEAD_KEY_SIZE] = {};
        size_t ks = key_size(aead), header = MOCK_COOKIE_KEY_ID_SIZE + MOCK_COOKIE_NONCE_SIZE;
        struct iovec out;
        int r;

        if (ks == 0 || c2s->iov_len != ks || s2c->iov_len != ks)
                return -EINVAL;
        if (size != mock_cookie_size(aead))
                return -ENOBUFS;

        memcpy(buf, k->id, MOCK_COOKIE_KEY_ID_SIZE);
        r = random_bytes(buf + MOCK_COOKIE_KEY_ID_SIZE, MOCK_COOKIE_NONCE_SIZE);
        if (r < 0)
                return r;

        unaligned_write_be16(plain, aead);
        memcpy(plain + PLAIN_HEADER, c2s->iov_base, ks);
        memcpy(plain + PLAIN_HEADER + ks, s2c->iov_base, ks);

        out = IOVEC_MAKE(buf + header, size - header);
        r = NTS_aead_encrypt(k->aead, &IOVEC_MAKE(buf, MOCK_COOKIE_KEY_ID_SIZE), 1,
                             &IOVEC_MAKE(buf + MOCK_COOKIE_KEY_ID_SIZE, MOCK_COOKIE_NONCE_SIZE),
                             &IOVEC_MAKE(plain, PLAIN_HEADER + 2 * ks), &out);
        explicit_bzero_safe(plain, sizeof(plain));
        if (r < 0)
                return r;
        return out.iov_len == size - header ? 0 : -EIO;
}

int mock_cookie_open(const MockCookieKey *k, const struct iovec *cookie, MockSession *ret) {
        uint8_t plain[PLAIN_HEADER + 2 * NTS_MAX_AEAD_KEY_SIZE + NTS_AEAD_TAG_SIZE];
        size_t header = MOCK_COOKIE_KEY_ID_SIZE + MOCK_COOKIE_NONCE_SIZE, ks;
        const uint8_t *c = cookie->iov_base;
        struct iovec out = IOVEC_MAKE(plain, sizeof(plain));
        int r;

        if (cookie->iov_len <= header + NTS_AEAD_TAG_SIZE || cookie->iov_len > header + sizeof(plain) ||
            memcmp(c, k->id, MOCK_COOKIE_KEY_ID_SIZE) != 0)
                return -EBADMSG;

        r = NTS_aead_decrypt(k->aead, &IOVEC_MAKE(c, MOCK_COOKIE_KEY_ID_SIZE), 1,
                             &IOVEC_MAKE(c + MOCK_COOKIE_KEY_ID_SIZE, MOCK_COOKIE_NONCE_SIZE),
                             &IOVEC_MAKE(c + header, cookie->iov_len - header), &out);
        if (r < 0)
                return -EBADMSG;

        ks = out.iov_len >= PLAIN_HEADER ? key_size(unaligned_read_be16(plain)) : 0;
        if (ks == 0 || out.iov_len != PLAIN_HEADER + 2 * ks) {
                explicit_bzero_safe(plain, sizeof(plain));
                return -EBADMSG;
        }

        *ret = (MockSession) {
                .aead = unaligned_read_be16(plain),
                .key_size = ks,
        };
        memcpy(ret->c2s, plain + PLAIN_HEADER, ks);
        memcpy(ret->s2c, plain + PLAIN_HEADER + ks, ks);
        explicit_bzero_safe(plain, sizeof(plain));
        return 0;
}
