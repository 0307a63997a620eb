/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* NTP extension fields for NTS (RFC 8915 section 5): building a request, verifying a
 * response. Pure: buffers in, negative errno out.
 *
 * Why NTS_parse_extension_fields() refuses a response, and with which errno:
 *   -EBADMSG       NTS_ERROR_NTP_TRUNCATED, _BAD_EXTENSION_FIELD, _BAD_AUTHENTICATOR,
 *                  _AUTH_FAILED: the packet is malformed or not authentic.
 *   -ENOMSG        NTS_ERROR_NTP_NO_UID, _NO_AUTHENTICATOR, _NO_COOKIES: a field the
 *                  response must carry is missing (from its authenticated part).
 *   -ESRCH         NTS_ERROR_NTP_UID_MISMATCH: the response answers some other request.
 *   -EKEYREJECTED  NTS_ERROR_NTP_NAK: the server no longer accepts our cookies.
 * Only the last one is a reason to act (run NTS-KE again); after all others the caller keeps
 * waiting for the genuine response, as an attacker can inject any of them. */

#include "iovec-util.h"
#include "ntp-packet.h"
#include "nts-crypto.h"
#include "nts-extfields.h"
#include "random-util.h"
#include "unaligned.h"

/* RFC 7822 section 3: an extension field's 16-bit length counts its header. */
#define EF_MAX_SIZE (UINT16_MAX & ~(size_t) 3)

/* RFC 8915 section 5.6: the authenticator body starts with Nonce Length and Ciphertext
 * Length, 16 bits each. */
#define AUTH_LENGTHS_SIZE 4

static void ef_put_header(uint8_t *f, uint16_t type, size_t size) {
        unaligned_write_be16(f, type);
        unaligned_write_be16(f + 2, (uint16_t) size);
}

/* NTS_ef_next() with the reason for a refusal. */
static NTS_Error ef_read(struct iovec *p, NTS_ExtensionField *ret) {
        const uint8_t *f = p->iov_base;
        size_t size;

        if (p->iov_len < NTP_EF_HEADER_SIZE)
                return NTS_ERROR_NTP_TRUNCATED;

        size = unaligned_read_be16(f + 2);
        if (size < NTP_EF_MIN_SIZE || size % 4 != 0)
                return NTS_ERROR_NTP_BAD_EXTENSION_FIELD;
        if (size > p->iov_len)
                return NTS_ERROR_NTP_TRUNCATED;

        *ret = (NTS_ExtensionField) {
                .type = unaligned_read_be16(f),
                .body = IOVEC_MAKE(f + NTP_EF_HEADER_SIZE, size - NTP_EF_HEADER_SIZE),
        };
        iovec_inc(p, size);
        return NTS_OK;
}

int NTS_ef_next(struct iovec *p, NTS_ExtensionField *ret) {
        assert(p);
        assert(ret);

        if (p->iov_len == 0)
                return -ENODATA;

        return ef_read(p, ret) == NTS_OK ? 0 : -EBADMSG;
}

/* body == NULL appends a zero-filled body (a cookie placeholder). */
int NTS_ef_append(struct iovec *out, uint16_t type, const void *body, size_t size) {
        uint8_t *f;
        size_t total;

        assert(out);

        if (size > EF_MAX_SIZE - NTP_EF_HEADER_SIZE)
                return -ENOBUFS;
        total = MAX(NTP_EF_HEADER_SIZE + ALIGN4(size), (size_t) NTP_EF_MIN_SIZE);
        if (total > out->iov_len)
                return -ENOBUFS;

        f = out->iov_base;
        memset(f, 0, total);
        ef_put_header(f, type, total);
        if (body && size > 0)
                memcpy(f + NTP_EF_HEADER_SIZE, body, size);

        iovec_inc(out, total);
        return 0;
}

/* nonce: p->nonce_size random bytes drawn by the caller, or NULL to draw them here. */
static int ef_append_authenticator(struct iovec *out, const uint8_t *packet, NTS_AEADContext *aead,
                                   const struct iovec *plaintext, const uint8_t *nonce_in) {
        const NTS_AEADParam *p;
        size_t nonce_field, ct_size, total;
        uint8_t *f, *nonce, *ct;
        int r;

        assert(out);
        assert(packet && packet <= (const uint8_t *) out->iov_base);
        assert(aead);
        assert(plaintext);

        p = NTS_aead_param(NTS_aead_algorithm(aead));
        assert(p);

        /* RFC 8915 section 5.6: nonce and ciphertext are each padded to a word, and the nonce's
         * share is at least N_REQ octets, the lesser of 16 and the algorithm's longest nonce; a
         * shorter nonce would need padding after the ciphertext. We send 16 bytes with AES-SIV
         * and the only length AES-GCM-SIV takes (12, its N_REQ), so none is needed. */
        assert(p->nonce_size >= NTS_MIN_NONCE_FIELD_SIZE || p->nonce_size == NTS_GCM_SIV_NONCE_SIZE);
        nonce_field = ALIGN4(p->nonce_size);
        ct_size = plaintext->iov_len + p->tag_size;
        if (ct_size > UINT16_MAX)
                return -ENOBUFS;
        total = NTP_EF_HEADER_SIZE + AUTH_LENGTHS_SIZE + nonce_field + ALIGN4(ct_size);
        if (total > EF_MAX_SIZE || total > out->iov_len)
                return -ENOBUFS;

        f = out->iov_base;
        memset(f, 0, total);
        ef_put_header(f, NTP_EF_NTS_AUTH_AND_EEF, total);
        unaligned_write_be16(f + NTP_EF_HEADER_SIZE, (uint16_t) p->nonce_size);
        unaligned_write_be16(f + NTP_EF_HEADER_SIZE + 2, (uint16_t) ct_size);
        nonce = f + NTP_EF_HEADER_SIZE + AUTH_LENGTHS_SIZE;
        ct = nonce + nonce_field;

        if (nonce_in)
                memcpy(nonce, nonce_in, p->nonce_size);
        else {
                r = random_bytes(nonce, p->nonce_size);
                if (r < 0)
                        return r;
        }

        struct iovec ad = IOVEC_MAKE(packet, (size_t) (f - packet)),
                     n = IOVEC_MAKE(nonce, p->nonce_size),
                     c = IOVEC_MAKE(ct, ct_size);
        r = NTS_aead_encrypt(aead, &ad, 1, &n, plaintext, &c);
        if (r < 0)
                return r;
        assert(c.iov_len == ct_size);

        iovec_inc(out, total);
        return 0;
}

int NTS_ef_append_authenticator(struct iovec *out, const uint8_t *packet, NTS_AEADContext *aead,
                                const struct iovec *plaintext) {
        return ef_append_authenticator(out, packet, aead, plaintext, NULL);
}

int NTS_ef_open_authenticator(const uint8_t *packet, const NTS_ExtensionField *auth, NTS_AEADContext *aead,
                              struct iovec *out, NTS_Error *reason) {
        const uint8_t *b, *f;
        size_t nonce_size, ct_size;
        int r;

        assert(packet);
        assert(auth);
        assert(aead);
        assert(out);
        assert(reason);

        b = auth->body.iov_base;
        f = b - NTP_EF_HEADER_SIZE;
        assert(f >= packet);

        *reason = NTS_ERROR_NTP_BAD_AUTHENTICATOR;
        if (auth->body.iov_len < AUTH_LENGTHS_SIZE)
                return -EBADMSG;
        nonce_size = unaligned_read_be16(b);
        ct_size = unaligned_read_be16(b + 2);
        if (AUTH_LENGTHS_SIZE + ALIGN4(nonce_size) + ALIGN4(ct_size) > auth->body.iov_len)
                return -EBADMSG;
        if (nonce_size == 0 || ct_size < NTS_AEAD_TAG_SIZE)
                return -EBADMSG;

        struct iovec ad = IOVEC_MAKE(packet, (size_t) (f - packet)),
                     n = IOVEC_MAKE(b + AUTH_LENGTHS_SIZE, nonce_size),
                     c = IOVEC_MAKE(b + AUTH_LENGTHS_SIZE + ALIGN4(nonce_size), ct_size);
        r = NTS_aead_decrypt(aead, &ad, 1, &n, &c, out);
        if (r == -EINVAL)
                /* A nonce length the algorithm cannot take (AES-GCM-SIV takes only 12). */
                return -EBADMSG;
        if (r < 0) {
                *reason = NTS_ERROR_NTP_AUTH_FAILED;
                return r;
        }

        *reason = NTS_OK;
        return 0;
}

ssize_t NTS_add_extension_fields(uint8_t *buf, size_t size, size_t header_size, NTS_Query *q) {
        uint8_t rnd[64];
        const NTS_AEADParam *p;
        struct iovec out;
        int r;

        assert(buf);
        assert(q);

        if (header_size < NTP_HEADER_SIZE || header_size % 4 != 0 || header_size > size)
                return -EINVAL;
        if (!iovec_is_set(&q->cookie) || q->cookie.iov_len > NTS_MAX_COOKIE_SIZE)
                return -EINVAL;
        if (q->n_placeholders >= NTS_MAX_COOKIES || !q->c2s)
                return -EINVAL;

        /* The Unique Identifier and the authenticator's nonce in one draw, from the pool: a
         * getrandom() system call each cost half as much as the AES-SIV itself. */
        p = NTS_aead_param(NTS_aead_algorithm(q->c2s));
        assert(p && p->nonce_size <= sizeof rnd - sizeof(q->uid));
        r = random_bytes_pooled(rnd, sizeof(q->uid) + p->nonce_size);
        if (r < 0)
                return r;
        memcpy(q->uid, rnd, sizeof(q->uid));

        out = IOVEC_MAKE(buf + header_size, size - header_size);

        r = NTS_ef_append(&out, NTP_EF_NTS_UNIQUE_IDENTIFIER, q->uid, sizeof(q->uid));
        if (r < 0)
                return r;

        r = NTS_ef_append(&out, NTP_EF_NTS_COOKIE, q->cookie.iov_base, q->cookie.iov_len);
        if (r < 0)
                return r;

        /* RFC 8915 section 5.5: a placeholder is as long as the cookie, so that the response
         * (one new cookie per cookie and placeholder) is no larger than the request. */
        for (size_t i = 0; i < q->n_placeholders; i++) {
                r = NTS_ef_append(&out, NTP_EF_NTS_COOKIE_PLACEHOLDER, NULL, q->cookie.iov_len);
                if (r < 0)
                        return r;
        }

        r = ef_append_authenticator(&out, buf, q->c2s, &IOVEC_NULL, rnd + sizeof(q->uid));
        if (r < 0)
                return r;

        return (uint8_t *) out.iov_base - buf;
}

static int refuse(NTS_Receipt *ret, NTS_Error e) {
        *ret = (NTS_Receipt) { .error = e };

        switch (e) {
        case NTS_ERROR_NTP_NO_UID:
        case NTS_ERROR_NTP_NO_AUTHENTICATOR:
        case NTS_ERROR_NTP_NO_COOKIES:
                return -ENOMSG;
        case NTS_ERROR_NTP_UID_MISMATCH:
                return -ESRCH;
        case NTS_ERROR_NTP_NAK:
                return -EKEYREJECTED;
        default:
                return -EBADMSG;
        }
}

static bool uid_is_ours(const NTS_ExtensionField *ef, const NTS_Query *q) {
        return ef->body.iov_len == sizeof(q->uid) && memcmp(ef->body.iov_base, q->uid, sizeof(q->uid)) == 0;
}

/* RFC 8915 section 5.7: new cookies come only from the encrypted part; other fields in it
 * are skipped, as are cookies we could not store. */
static NTS_Error take_cookies(struct iovec plaintext, NTS_Receipt *ret) {
        NTS_ExtensionField ef;
        NTS_Error e;

        while (plaintext.iov_len > 0) {
                e = ef_read(&plaintext, &ef);
                if (e != NTS_OK)
                        return e;

                if (ef.type != NTP_EF_NTS_COOKIE || ef.body.iov_len > NTS_MAX_COOKIE_SIZE)
                        continue;
                if (ret->n_cookies < NTS_MAX_COOKIES)
                        ret->cookies[ret->n_cookies++] = ef.body;
        }

        return ret->n_cookies > 0 ? NTS_OK : NTS_ERROR_NTP_NO_COOKIES;
}

int NTS_parse_extension_fields(const struct iovec *packet, const NTS_Query *q, NTS_AEADContext *s2c,
                               struct iovec *scratch, NTS_Receipt *ret) {
        NTS_ExtensionField ef, auth = {};
        bool nak, have_auth = false, have_uid = false, uid_mismatch = false;
        struct iovec p, plaintext;
        NTPHeader h;
        NTS_Error e;
        int r;

        assert(packet);
        assert(q);
        assert(s2c);
        assert(scratch && scratch->iov_len >= packet->iov_len);
        assert(ret);

        *ret = (NTS_Receipt) {};

        if (packet->iov_len < NTP_HEADER_SIZE)
                return refuse(ret, NTS_ERROR_NTP_TRUNCATED);

        /* RFC 8915 section 5.7: an NTS NAK is a kiss-o'-death NTSN that echoes the UID and is
         * not authenticated (the server could not read our keys from the cookie). */
        ntp_header_decode(packet->iov_base, &h);
        nak = ntp_header_is_kiss(&h, NTS_KISS_NTSN);

        p = *packet;
        iovec_inc(&p, NTP_HEADER_SIZE);
        while (p.iov_len > 0) {
                e = ef_read(&p, &ef);
                if (e != NTS_OK)
                        return refuse(ret, e);

                if (ef.type == NTP_EF_NTS_AUTH_AND_EEF) {
                        /* RFC 8915 section 5.6: at most one authenticator per packet. */
                        if (have_auth)
                                return refuse(ret, NTS_ERROR_NTP_BAD_AUTHENTICATOR);
                        have_auth = true;
                        auth = ef;
                        continue;
                }

                /* Fields after the authenticator are not authenticated; they are ignored. A
                 * NAK has no authenticator, so its UID counts wherever it is. */
                if (have_auth && !nak)
                        continue;

                if (ef.type == NTP_EF_NTS_UNIQUE_IDENTIFIER) {
                        have_uid = true;
                        if (!uid_is_ours(&ef, q))
                                uid_mismatch = true;
                }
        }

        if (!have_uid)
                return refuse(ret, NTS_ERROR_NTP_NO_UID);
        if (uid_mismatch)
                return refuse(ret, NTS_ERROR_NTP_UID_MISMATCH);
        if (nak)
                return refuse(ret, NTS_ERROR_NTP_NAK);
        if (!have_auth)
                return refuse(ret, NTS_ERROR_NTP_NO_AUTHENTICATOR);

        plaintext = *scratch;
        r = NTS_ef_open_authenticator(packet->iov_base, &auth, s2c, &plaintext, &e);
        if (r < 0) {
                (void) refuse(ret, e);
                return r;
        }

        e = take_cookies(plaintext, ret);
        if (e != NTS_OK) {
                explicit_bzero_safe(plaintext.iov_base, plaintext.iov_len);
                return refuse(ret, e);
        }

        return 0;
}
