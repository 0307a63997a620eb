/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "ntp-packet.h"
#include "nts-server-ef.h"
#include "nts-test-util.h"
#include "nts-extfields.h"
#include "unaligned.h"

#define N_COOKIES 3

typedef struct Exchange {
        NTS_AEADContext *c2s, *s2c;
        uint8_t cookie[100];
        uint8_t new_cookies[N_COOKIES][100];
        struct iovec new_cookie_iov[N_COOKIES];
        NTS_Query q;
        uint8_t request[NTS_MAX_PACKET_SIZE];
        size_t request_size;
        uint8_t header[NTP_HEADER_SIZE];
        uint8_t response[NTS_MAX_PACKET_SIZE];
        size_t response_size;
        uint8_t scratch[NTS_MAX_PACKET_SIZE];
} Exchange;

static void server_header(uint8_t buf[static NTP_HEADER_SIZE]) {
        NTPHeader h = {
                .version = NTP_VERSION,
                .mode = NTP_MODE_SERVER,
                .stratum = 2,
                .poll = 6,
                .precision = -20,
                .refid = { 'G', 'P', 'S', 0 },
                .transmit = { 0xeb000000, 0x12345678 },
        };
        ntp_header_encode(&h, buf);
}

static void client_header(uint8_t buf[static NTP_HEADER_SIZE]) {
        NTPHeader h = {
                .version = NTP_VERSION,
                .mode = NTP_MODE_CLIENT,
                .transmit = { 0xeb000000, 0x9abcdef0 },
        };
        ntp_header_encode(&h, buf);
}

static void exchange_done(Exchange *x) {
        x->c2s = NTS_aead_free(x->c2s);
        x->s2c = NTS_aead_free(x->s2c);
}

/* The client sends a request with two placeholders. */
static void exchange_request(Exchange *x, NTS_AEADAlgorithm id) {
        *x = (Exchange) {};
        x->c2s = test_aead_new(id, 1);
        x->s2c = test_aead_new(id, 2);
        test_fill(x->cookie, sizeof(x->cookie), 3);
        for (size_t i = 0; i < N_COOKIES; i++) {
                test_fill(x->new_cookies[i], sizeof(x->new_cookies[i]), (uint8_t) (100 + i));
                x->new_cookie_iov[i] = IOVEC_MAKE(x->new_cookies[i], sizeof(x->new_cookies[i]));
        }

        x->q = (NTS_Query) {
                .cookie = IOVEC_MAKE(x->cookie, sizeof(x->cookie)),
                .n_placeholders = N_COOKIES - 1,
                .c2s = x->c2s,
        };
        client_header(x->request);
        x->request_size = (size_t) ASSERT_OK(NTS_add_extension_fields(x->request, sizeof(x->request),
                                                                      NTP_HEADER_SIZE, &x->q));
        server_header(x->header);
}

static void exchange_response(Exchange *x, NTSServerSabotage sabotage) {
        NTSServerResponse r = {
                .header = x->header,
                .uid = IOVEC_MAKE(x->q.uid, sizeof(x->q.uid)),
                .cookies = x->new_cookie_iov,
                .n_cookies = N_COOKIES,
                .s2c = x->s2c,
                .sabotage = sabotage,
        };

        x->response_size = (size_t) ASSERT_OK(nts_server_build_response(&r, x->response, sizeof(x->response)));
}

static int exchange_parse(Exchange *x, NTS_Receipt *ret) {
        return NTS_parse_extension_fields(&IOVEC_MAKE(x->response, x->response_size), &x->q, x->s2c,
                                          &IOVEC_MAKE(x->scratch, sizeof(x->scratch)), ret);
}

static void assert_refused(Exchange *x, NTS_Error e, int err) {
        NTS_Receipt receipt;

        ASSERT_ERROR(exchange_parse(x, &receipt), err);
        ASSERT_EQ(receipt.error, e);
        ASSERT_EQ(receipt.n_cookies, 0);
}

static void assert_new_cookies(const Exchange *x, const NTS_Receipt *receipt) {
        ASSERT_EQ(receipt->error, NTS_OK);
        ASSERT_EQ(receipt->n_cookies, N_COOKIES);
        for (size_t i = 0; i < N_COOKIES; i++)
                ASSERT_TRUE(iovec_equal(&receipt->cookies[i], &x->new_cookie_iov[i]));
}

static void test_round_trip_with_every_siv_algorithm(void) {
        static const NTS_AEADAlgorithm ids[] = {
                NTS_AEAD_AES_SIV_CMAC_256, NTS_AEAD_AES_SIV_CMAC_384, NTS_AEAD_AES_SIV_CMAC_512,
        };

        for (size_t i = 0; i < ELEMENTSOF(ids); i++) {
                _cleanup_(exchange_done) Exchange x = {};
                NTSServerRequest req;
                NTS_Receipt receipt;

                exchange_request(&x, ids[i]);

                ASSERT_OK(nts_server_parse_request(&IOVEC_MAKE(x.request, x.request_size), &req));
                ASSERT_TRUE(iovec_equal(&req.uid, &IOVEC_MAKE(x.q.uid, sizeof(x.q.uid))));
                ASSERT_TRUE(iovec_equal(&req.cookie, &x.q.cookie));
                ASSERT_EQ(req.n_placeholders, N_COOKIES - 1);
                ASSERT_OK(nts_server_verify_request(&IOVEC_MAKE(x.request, x.request_size), &req, x.c2s));
                /* The server-to-client key is not the one the client sealed with. */
                ASSERT_ERROR(nts_server_verify_request(&IOVEC_MAKE(x.request, x.request_size), &req, x.s2c), EBADMSG);

                exchange_response(&x, NTS_SERVER_HONEST);
                ASSERT_OK(exchange_parse(&x, &receipt));
                assert_new_cookies(&x, &receipt);
                /* Cookies point into the scratch buffer, not into the packet. */
                ASSERT_TRUE((uint8_t *) receipt.cookies[0].iov_base >= x.scratch &&
                            (uint8_t *) receipt.cookies[0].iov_base < x.scratch + sizeof(x.scratch));
        }
}

static void test_request_layout_follows_rfc8915(void) {
        _cleanup_(exchange_done) Exchange x = {};
        struct iovec p;
        NTS_ExtensionField ef;

        exchange_request(&x, NTS_AEAD_AES_SIV_CMAC_256);
        p = IOVEC_MAKE(x.request + NTP_HEADER_SIZE, x.request_size - NTP_HEADER_SIZE);

        ASSERT_OK(NTS_ef_next(&p, &ef));
        ASSERT_EQ(ef.type, NTP_EF_NTS_UNIQUE_IDENTIFIER);
        ASSERT_TRUE(iovec_equal(&ef.body, &IOVEC_MAKE(x.q.uid, NTS_UID_SIZE)));

        ASSERT_OK(NTS_ef_next(&p, &ef));
        ASSERT_EQ(ef.type, NTP_EF_NTS_COOKIE);
        ASSERT_TRUE(iovec_equal(&ef.body, &x.q.cookie));

        for (size_t i = 0; i < N_COOKIES - 1; i++) {
                ASSERT_OK(NTS_ef_next(&p, &ef));
                ASSERT_EQ(ef.type, NTP_EF_NTS_COOKIE_PLACEHOLDER);
                ASSERT_EQ(ef.body.iov_len, sizeof(x.cookie));
        }

        /* Authenticator: 16-byte nonce, an empty plaintext sealed to a bare 16-byte tag. */
        ASSERT_OK(NTS_ef_next(&p, &ef));
        ASSERT_EQ(ef.type, NTP_EF_NTS_AUTH_AND_EEF);
        ASSERT_EQ(unaligned_read_be16(ef.body.iov_base), NTS_SIV_NONCE_SIZE);
        ASSERT_EQ(unaligned_read_be16((uint8_t *) ef.body.iov_base + 2), NTS_AEAD_TAG_SIZE);
        ASSERT_EQ(ef.body.iov_len, 4 + NTS_SIV_NONCE_SIZE + NTS_AEAD_TAG_SIZE);

        ASSERT_ERROR(NTS_ef_next(&p, &ef), ENODATA);
}

static void test_placeholders_are_sized_like_the_cookie(void) {
        static const size_t sizes[] = { 1, 13, 16, 100, NTS_MAX_COOKIE_SIZE };
        _cleanup_(NTS_aead_freep) NTS_AEADContext *c2s = test_aead_new(NTS_AEAD_AES_SIV_CMAC_256, 1);
        uint8_t cookie[NTS_MAX_COOKIE_SIZE], buf[NTS_MAX_PACKET_SIZE];

        test_fill(cookie, sizeof(cookie), 5);

        for (size_t i = 0; i < ELEMENTSOF(sizes); i++) {
                NTS_Query q = {
                        .cookie = IOVEC_MAKE(cookie, sizes[i]),
                        .n_placeholders = NTS_MAX_COOKIES - 1,
                        .c2s = c2s,
                };
                NTSServerRequest req;
                struct iovec p;
                NTS_ExtensionField ef;
                size_t n = 0, cookie_field = 0;
                ssize_t l;

                client_header(buf);
                l = ASSERT_OK(NTS_add_extension_fields(buf, sizeof(buf), NTP_HEADER_SIZE, &q));
                p = IOVEC_MAKE(buf + NTP_HEADER_SIZE, (size_t) l - NTP_HEADER_SIZE);
                while (NTS_ef_next(&p, &ef) >= 0) {
                        if (ef.type == NTP_EF_NTS_COOKIE)
                                cookie_field = ef.body.iov_len;
                        if (ef.type != NTP_EF_NTS_COOKIE_PLACEHOLDER)
                                continue;
                        n++;
                        ASSERT_EQ(ef.body.iov_len, cookie_field);
                        ASSERT_TRUE(ef.body.iov_len >= sizes[i]);
                        for (size_t k = 0; k < ef.body.iov_len; k++)
                                ASSERT_EQ(((uint8_t *) ef.body.iov_base)[k], 0);
                }
                ASSERT_EQ(n, NTS_MAX_COOKIES - 1);

                ASSERT_OK(nts_server_parse_request(&IOVEC_MAKE(buf, (size_t) l), &req));
                ASSERT_EQ(req.n_placeholders, NTS_MAX_COOKIES - 1);
                ASSERT_OK(nts_server_verify_request(&IOVEC_MAKE(buf, (size_t) l), &req, c2s));
        }
}

static void test_uid_is_fresh_per_request(void) {
        _cleanup_(exchange_done) Exchange x = {};
        uint8_t first[NTS_UID_SIZE];

        exchange_request(&x, NTS_AEAD_AES_SIV_CMAC_256);
        memcpy(first, x.q.uid, sizeof(first));
        ASSERT_OK(NTS_add_extension_fields(x.request, sizeof(x.request), NTP_HEADER_SIZE, &x.q));
        ASSERT_TRUE(memcmp(first, x.q.uid, sizeof(first)) != 0);
}

static void test_bad_query_is_refused(void) {
        _cleanup_(exchange_done) Exchange x = {};
        NTS_Query q;

        exchange_request(&x, NTS_AEAD_AES_SIV_CMAC_256);

        q = x.q;
        q.cookie = IOVEC_NULL;
        ASSERT_ERROR(NTS_add_extension_fields(x.request, sizeof(x.request), NTP_HEADER_SIZE, &q), EINVAL);

        q = x.q;
        q.cookie.iov_len = NTS_MAX_COOKIE_SIZE + 1;
        ASSERT_ERROR(NTS_add_extension_fields(x.request, sizeof(x.request), NTP_HEADER_SIZE, &q), EINVAL);

        q = x.q;
        q.n_placeholders = NTS_MAX_COOKIES;
        ASSERT_ERROR(NTS_add_extension_fields(x.request, sizeof(x.request), NTP_HEADER_SIZE, &q), EINVAL);

        q = x.q;
        ASSERT_ERROR(NTS_add_extension_fields(x.request, sizeof(x.request), NTP_HEADER_SIZE - 4, &q), EINVAL);
        ASSERT_ERROR(NTS_add_extension_fields(x.request, x.request_size - 1, NTP_HEADER_SIZE, &q), ENOBUFS);
        ASSERT_EQ(NTS_add_extension_fields(x.request, x.request_size, NTP_HEADER_SIZE, &q), (ssize_t) x.request_size);
}

static void test_ef_next_enforces_rfc7822_lengths(void) {
        uint8_t buf[32] = {};
        struct iovec p;
        NTS_ExtensionField ef;

        p = IOVEC_MAKE(buf, 0);
        ASSERT_ERROR(NTS_ef_next(&p, &ef), ENODATA);

        p = IOVEC_MAKE(buf, 3);
        ASSERT_ERROR(NTS_ef_next(&p, &ef), EBADMSG);

        unaligned_write_be16(buf, 0x1234);
        for (uint16_t len = 0; len < 40; len++) {
                unaligned_write_be16(buf + 2, len);
                p = IOVEC_MAKE(buf, sizeof(buf));
                if (len < NTP_EF_MIN_SIZE || len % 4 != 0 || len > sizeof(buf)) {
                        ASSERT_ERROR(NTS_ef_next(&p, &ef), EBADMSG);
                        ASSERT_EQ(p.iov_len, sizeof(buf));
                } else {
                        ASSERT_OK(NTS_ef_next(&p, &ef));
                        ASSERT_EQ(ef.type, 0x1234);
                        ASSERT_EQ(ef.body.iov_len, len - 4u);
                        ASSERT_EQ(p.iov_len, sizeof(buf) - len);
                }
        }
}

static void test_ef_append_pads_to_word_and_minimum(void) {
        uint8_t buf[64], body[13];
        struct iovec out;

        test_fill(body, sizeof(body), 1);
        memset(buf, 0xaa, sizeof(buf));

        out = IOVEC_MAKE(buf, sizeof(buf));
        ASSERT_OK(NTS_ef_append(&out, 7, body, 1));
        ASSERT_EQ(out.iov_len, sizeof(buf) - NTP_EF_MIN_SIZE);
        ASSERT_EQ(unaligned_read_be16(buf + 2), NTP_EF_MIN_SIZE);
        for (size_t i = 5; i < NTP_EF_MIN_SIZE; i++)
                ASSERT_EQ(buf[i], 0);

        ASSERT_OK(NTS_ef_append(&out, 8, body, sizeof(body)));
        ASSERT_EQ(unaligned_read_be16(buf + 16), 8);
        ASSERT_EQ(unaligned_read_be16(buf + 18), 20);
        ASSERT_MEMEQ(buf + 20, body, sizeof(body));
        ASSERT_TRUE(buf + 20 + 16 == (uint8_t *) out.iov_base);
        ASSERT_EQ(buf[20 + 13], 0);

        out = IOVEC_MAKE(buf, 19);
        ASSERT_ERROR(NTS_ef_append(&out, 8, body, sizeof(body)), ENOBUFS);
        ASSERT_EQ(out.iov_len, 19);
}

static void test_flipping_any_bit_of_a_response_is_never_accepted(void) {
        _cleanup_(exchange_done) Exchange x = {};
        NTS_Receipt receipt;

        exchange_request(&x, NTS_AEAD_AES_SIV_CMAC_256);
        exchange_response(&x, NTS_SERVER_HONEST);

        for (size_t i = 0; i < x.response_size; i++)
                for (unsigned bit = 0; bit < 8; bit++) {
                        x.response[i] ^= (uint8_t) (1u << bit);
                        ASSERT_TRUE(exchange_parse(&x, &receipt) < 0);
                        ASSERT_TRUE(receipt.error != NTS_OK);
                        ASSERT_EQ(receipt.n_cookies, 0);
                        x.response[i] ^= (uint8_t) (1u << bit);
                }

        ASSERT_OK(exchange_parse(&x, &receipt));
}

static void test_truncating_a_response_is_never_accepted(void) {
        _cleanup_(exchange_done) Exchange x = {};
        NTS_Receipt receipt;
        size_t full;

        exchange_request(&x, NTS_AEAD_AES_SIV_CMAC_256);
        exchange_response(&x, NTS_SERVER_HONEST);
        full = x.response_size;

        for (size_t l = 0; l < full; l++) {
                x.response_size = l;
                ASSERT_TRUE(exchange_parse(&x, &receipt) < 0);
                ASSERT_TRUE(receipt.error != NTS_OK);
        }

        x.response_size = 10;
        assert_refused(&x, NTS_ERROR_NTP_TRUNCATED, EBADMSG);
        x.response_size = full - 4;
        assert_refused(&x, NTS_ERROR_NTP_TRUNCATED, EBADMSG);
}

static void test_uid_mismatch_is_rejected(void) {
        _cleanup_(exchange_done) Exchange x = {};

        exchange_request(&x, NTS_AEAD_AES_SIV_CMAC_256);
        exchange_response(&x, NTS_SERVER_WRONG_UID);
        assert_refused(&x, NTS_ERROR_NTP_UID_MISMATCH, ESRCH);
}

/* A response to an older request of ours, authentic but for another UID. */
static void test_response_to_another_request_is_rejected(void) {
        _cleanup_(exchange_done) Exchange x = {};

        exchange_request(&x, NTS_AEAD_AES_SIV_CMAC_256);
        exchange_response(&x, NTS_SERVER_HONEST);
        ASSERT_OK(NTS_add_extension_fields(x.request, sizeof(x.request), NTP_HEADER_SIZE, &x.q));
        assert_refused(&x, NTS_ERROR_NTP_UID_MISMATCH, ESRCH);
}

/* Builds header, the given fields before the authenticator, and an authenticator sealing
 * the exchange's new cookies. */
static void build_custom_response(Exchange *x, bool with_uid, const struct iovec *clear_cookie) {
        uint8_t plaintext[NTS_MAX_PACKET_SIZE];
        struct iovec out, pt = IOVEC_MAKE(plaintext, sizeof(plaintext));

        for (size_t i = 0; i < N_COOKIES; i++)
                ASSERT_OK(NTS_ef_append(&pt, NTP_EF_NTS_COOKIE, x->new_cookies[i], sizeof(x->new_cookies[i])));
        pt = IOVEC_MAKE(plaintext, (uint8_t *) pt.iov_base - plaintext);

        memcpy(x->response, x->header, NTP_HEADER_SIZE);
        out = IOVEC_MAKE(x->response + NTP_HEADER_SIZE, sizeof(x->response) - NTP_HEADER_SIZE);
        if (with_uid)
                ASSERT_OK(NTS_ef_append(&out, NTP_EF_NTS_UNIQUE_IDENTIFIER, x->q.uid, sizeof(x->q.uid)));
        if (clear_cookie)
                ASSERT_OK(NTS_ef_append(&out, NTP_EF_NTS_COOKIE, clear_cookie->iov_base, clear_cookie->iov_len));
        ASSERT_OK(NTS_ef_append_authenticator(&out, x->response, x->s2c, &pt));
        x->response_size = (uint8_t *) out.iov_base - x->response;
}

static void append_to_response(Exchange *x, uint16_t type, const void *body, size_t size) {
        struct iovec out = IOVEC_MAKE(x->response + x->response_size, sizeof(x->response) - x->response_size);

        ASSERT_OK(NTS_ef_append(&out, type, body, size));
        x->response_size = (uint8_t *) out.iov_base - x->response;
}

static void test_missing_uid_is_rejected(void) {
        _cleanup_(exchange_done) Exchange x = {};

        exchange_request(&x, NTS_AEAD_AES_SIV_CMAC_256);
        build_custom_response(&x, false, NULL);
        assert_refused(&x, NTS_ERROR_NTP_NO_UID, ENOMSG);

        build_custom_response(&x, true, NULL);
        NTS_Receipt receipt;
        ASSERT_OK(exchange_parse(&x, &receipt));
        assert_new_cookies(&x, &receipt);
}

/* The UID counts only where the authenticator covers it. */
static void test_uid_after_the_authenticator_does_not_count(void) {
        _cleanup_(exchange_done) Exchange x = {};

        exchange_request(&x, NTS_AEAD_AES_SIV_CMAC_256);
        build_custom_response(&x, false, NULL);
        append_to_response(&x, NTP_EF_NTS_UNIQUE_IDENTIFIER, x.q.uid, sizeof(x.q.uid));
        assert_refused(&x, NTS_ERROR_NTP_NO_UID, ENOMSG);
}

static void test_missing_authenticator_is_rejected(void) {
        _cleanup_(exchange_done) Exchange x = {};

        exchange_request(&x, NTS_AEAD_AES_SIV_CMAC_256);
        exchange_response(&x, NTS_SERVER_NO_AUTHENTICATOR);
        assert_refused(&x, NTS_ERROR_NTP_NO_AUTHENTICATOR, ENOMSG);
}

static void test_duplicate_authenticator_is_rejected(void) {
        _cleanup_(exchange_done) Exchange x = {};
        NTS_ExtensionField ef;
        struct iovec p;

        exchange_request(&x, NTS_AEAD_AES_SIV_CMAC_256);
        exchange_response(&x, NTS_SERVER_HONEST);

        p = IOVEC_MAKE(x.response + NTP_HEADER_SIZE, x.response_size - NTP_HEADER_SIZE);
        do
                ASSERT_OK(NTS_ef_next(&p, &ef));
        while (ef.type != NTP_EF_NTS_AUTH_AND_EEF);

        uint8_t copy[NTS_MAX_PACKET_SIZE];
        memcpy(copy, ef.body.iov_base, ef.body.iov_len);
        append_to_response(&x, NTP_EF_NTS_AUTH_AND_EEF, copy, ef.body.iov_len);
        assert_refused(&x, NTS_ERROR_NTP_BAD_AUTHENTICATOR, EBADMSG);
}

static void test_corrupt_authenticator_is_rejected(void) {
        _cleanup_(exchange_done) Exchange x = {};

        exchange_request(&x, NTS_AEAD_AES_SIV_CMAC_256);
        exchange_response(&x, NTS_SERVER_CORRUPT_AUTHENTICATOR);
        assert_refused(&x, NTS_ERROR_NTP_AUTH_FAILED, EBADMSG);
}

static void test_response_sealed_with_another_key_is_rejected(void) {
        _cleanup_(exchange_done) Exchange x = {};
        NTS_AEADContext *real;

        exchange_request(&x, NTS_AEAD_AES_SIV_CMAC_256);
        /* The server seals with the client-to-server key by mistake. */
        real = x.s2c;
        x.s2c = x.c2s;
        exchange_response(&x, NTS_SERVER_HONEST);
        x.s2c = real;
        assert_refused(&x, NTS_ERROR_NTP_AUTH_FAILED, EBADMSG);
}

static void test_malformed_authenticator_lengths_are_rejected(void) {
        static const uint16_t bad[][2] = {
                { 0, 16 },              /* no nonce */
                { 16, 8 },              /* ciphertext shorter than a tag */
                { 16, 2000 },           /* ciphertext beyond the field */
                { 0xffff, 16 },         /* nonce beyond the field */
        };
        _cleanup_(exchange_done) Exchange x = {};
        uint8_t body[4 + 16 + 16] = {};

        exchange_request(&x, NTS_AEAD_AES_SIV_CMAC_256);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                memcpy(x.response, x.header, NTP_HEADER_SIZE);
                x.response_size = NTP_HEADER_SIZE;
                append_to_response(&x, NTP_EF_NTS_UNIQUE_IDENTIFIER, x.q.uid, sizeof(x.q.uid));
                unaligned_write_be16(body, bad[i][0]);
                unaligned_write_be16(body + 2, bad[i][1]);
                append_to_response(&x, NTP_EF_NTS_AUTH_AND_EEF, body, sizeof(body));
                assert_refused(&x, NTS_ERROR_NTP_BAD_AUTHENTICATOR, EBADMSG);
        }
}

static void test_nak_for_our_uid_is_reported(void) {
        _cleanup_(exchange_done) Exchange x = {};

        exchange_request(&x, NTS_AEAD_AES_SIV_CMAC_256);
        exchange_response(&x, NTS_SERVER_NAK);
        assert_refused(&x, NTS_ERROR_NTP_NAK, EKEYREJECTED);
}

static void test_nak_for_another_uid_is_a_uid_mismatch(void) {
        _cleanup_(exchange_done) Exchange x = {};
        uint8_t other[NTS_UID_SIZE];

        exchange_request(&x, NTS_AEAD_AES_SIV_CMAC_256);
        memcpy(other, x.q.uid, sizeof(other));
        other[31] ^= 0x40;

        NTSServerResponse r = {
                .header = x.header,
                .uid = IOVEC_MAKE(other, sizeof(other)),
                .sabotage = NTS_SERVER_NAK,
        };
        x.response_size = (size_t) ASSERT_OK(nts_server_build_response(&r, x.response, sizeof(x.response)));
        assert_refused(&x, NTS_ERROR_NTP_UID_MISMATCH, ESRCH);

        /* Without any UID a NAK cannot be ours either. */
        x.response_size = NTP_HEADER_SIZE;
        assert_refused(&x, NTS_ERROR_NTP_NO_UID, ENOMSG);
}

static void test_cookies_outside_the_encrypted_part_are_ignored(void) {
        _cleanup_(exchange_done) Exchange x = {};
        uint8_t outside[64];
        NTS_Receipt receipt;

        exchange_request(&x, NTS_AEAD_AES_SIV_CMAC_256);

        /* Only cookies in the clear: authentic, but nothing to take. */
        exchange_response(&x, NTS_SERVER_COOKIES_OUTSIDE);
        assert_refused(&x, NTS_ERROR_NTP_NO_COOKIES, ENOMSG);

        /* A clear cookie next to sealed ones: only the sealed ones are taken. */
        test_fill(outside, sizeof(outside), 77);
        build_custom_response(&x, true, &IOVEC_MAKE(outside, sizeof(outside)));
        ASSERT_OK(exchange_parse(&x, &receipt));
        assert_new_cookies(&x, &receipt);
}

static void test_fields_after_the_authenticator_are_ignored(void) {
        _cleanup_(exchange_done) Exchange x = {};
        uint8_t junk[40], wrong_uid[NTS_UID_SIZE] = {};
        NTS_Receipt receipt;

        exchange_request(&x, NTS_AEAD_AES_SIV_CMAC_256);
        exchange_response(&x, NTS_SERVER_HONEST);

        test_fill(junk, sizeof(junk), 9);
        append_to_response(&x, NTP_EF_NTS_COOKIE, junk, sizeof(junk));
        append_to_response(&x, NTP_EF_NTS_UNIQUE_IDENTIFIER, wrong_uid, sizeof(wrong_uid));
        append_to_response(&x, 0x7777, junk, 12);

        ASSERT_OK(exchange_parse(&x, &receipt));
        assert_new_cookies(&x, &receipt);
}

static void test_malformed_field_anywhere_is_rejected(void) {
        _cleanup_(exchange_done) Exchange x = {};
        size_t valid;

        exchange_request(&x, NTS_AEAD_AES_SIV_CMAC_256);
        exchange_response(&x, NTS_SERVER_HONEST);
        valid = x.response_size;

        /* A length below the RFC 7822 minimum, after the authenticator. */
        unaligned_write_be16(x.response + valid, 0x7777);
        unaligned_write_be16(x.response + valid + 2, 12);
        memset(x.response + valid + 4, 0, 8);
        x.response_size = valid + 12;
        assert_refused(&x, NTS_ERROR_NTP_BAD_EXTENSION_FIELD, EBADMSG);

        /* A length that is not a multiple of four. */
        unaligned_write_be16(x.response + valid + 2, 18);
        x.response_size = valid + 20;
        assert_refused(&x, NTS_ERROR_NTP_BAD_EXTENSION_FIELD, EBADMSG);

        /* Trailing bytes too short for a field header. */
        x.response_size = valid + 2;
        assert_refused(&x, NTS_ERROR_NTP_TRUNCATED, EBADMSG);
}

static void test_at_most_eight_cookies_are_taken(void) {
        _cleanup_(exchange_done) Exchange x = {};
        struct iovec many[NTS_MAX_COOKIES + 2];
        NTS_Receipt receipt;

        exchange_request(&x, NTS_AEAD_AES_SIV_CMAC_256);
        for (size_t i = 0; i < ELEMENTSOF(many); i++)
                many[i] = x.new_cookie_iov[i % N_COOKIES];

        NTSServerResponse r = {
                .header = x.header,
                .uid = IOVEC_MAKE(x.q.uid, sizeof(x.q.uid)),
                .cookies = many,
                .n_cookies = ELEMENTSOF(many),
                .s2c = x.s2c,
        };
        x.response_size = (size_t) ASSERT_OK(nts_server_build_response(&r, x.response, sizeof(x.response)));
        ASSERT_OK(exchange_parse(&x, &receipt));
        ASSERT_EQ(receipt.n_cookies, NTS_MAX_COOKIES);
}

static void test_server_refuses_malformed_requests(void) {
        _cleanup_(exchange_done) Exchange x = {};
        NTSServerRequest req;
        uint8_t placeholder[8] = {};
        struct iovec out;

        exchange_request(&x, NTS_AEAD_AES_SIV_CMAC_256);
        ASSERT_OK(nts_server_parse_request(&IOVEC_MAKE(x.request, x.request_size), &req));

        /* Anything after the authenticator. */
        out = IOVEC_MAKE(x.request + x.request_size, sizeof(x.request) - x.request_size);
        ASSERT_OK(NTS_ef_append(&out, NTP_EF_NTS_COOKIE_PLACEHOLDER, placeholder, sizeof(placeholder)));
        ASSERT_ERROR(nts_server_parse_request(&IOVEC_MAKE(x.request, x.request_size + 16), &req), EBADMSG);

        /* No authenticator. */
        ASSERT_ERROR(nts_server_parse_request(&IOVEC_MAKE(x.request, NTP_HEADER_SIZE + 36 + 104), &req), EBADMSG);
        ASSERT_ERROR(nts_server_parse_request(&IOVEC_MAKE(x.request, 20), &req), EBADMSG);

        /* A flipped bit in the header fails verification. */
        ASSERT_OK(nts_server_parse_request(&IOVEC_MAKE(x.request, x.request_size), &req));
        x.request[40] ^= 1;
        ASSERT_ERROR(nts_server_verify_request(&IOVEC_MAKE(x.request, x.request_size), &req, x.c2s), EBADMSG);
}

static void test_sabotage_names_round_trip(void) {
        for (int s = 0; s < _NTS_SERVER_SABOTAGE_MAX; s++)
                ASSERT_EQ(nts_server_sabotage_from_string(nts_server_sabotage_to_string(s)), s);
        ASSERT_ERROR(nts_server_sabotage_from_string("lie"), EINVAL);
        ASSERT_TRUE(!nts_server_sabotage_to_string(_NTS_SERVER_SABOTAGE_MAX));
}

TEST_MAIN(TEST_CASE(test_round_trip_with_every_siv_algorithm),
          TEST_CASE(test_request_layout_follows_rfc8915),
          TEST_CASE(test_placeholders_are_sized_like_the_cookie),
          TEST_CASE(test_uid_is_fresh_per_request),
          TEST_CASE(test_bad_query_is_refused),
          TEST_CASE(test_ef_next_enforces_rfc7822_lengths),
          TEST_CASE(test_ef_append_pads_to_word_and_minimum),
          TEST_CASE(test_flipping_any_bit_of_a_response_is_never_accepted),
          TEST_CASE(test_truncating_a_response_is_never_accepted),
          TEST_CASE(test_uid_mismatch_is_rejected),
          TEST_CASE(test_response_to_another_request_is_rejected),
          TEST_CASE(test_missing_uid_is_rejected),
          TEST_CASE(test_uid_after_the_authenticator_does_not_count),
          TEST_CASE(test_missing_authenticator_is_rejected),
          TEST_CASE(test_duplicate_authenticator_is_rejected),
          TEST_CASE(test_corrupt_authenticator_is_rejected),
          TEST_CASE(test_response_sealed_with_another_key_is_rejected),
          TEST_CASE(test_malformed_authenticator_lengths_are_rejected),
          TEST_CASE(test_nak_for_our_uid_is_reported),
          TEST_CASE(test_nak_for_another_uid_is_a_uid_mismatch),
          TEST_CASE(test_cookies_outside_the_encrypted_part_are_ignored),
          TEST_CASE(test_fields_after_the_authenticator_are_ignored),
          TEST_CASE(test_malformed_field_anywhere_is_rejected),
          TEST_CASE(test_at_most_eight_cookies_are_taken),
          TEST_CASE(test_server_refuses_malformed_requests),
          TEST_CASE(test_sabotage_names_round_trip));
