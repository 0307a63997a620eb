/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "iovec-util.h"
#include "nts-ke-check.h"
#include "nts-server-ke.h"
#include "nts.h"
#include "tests.h"
#include "unaligned.h"

static const NTS_AEADAlgorithm offered[] = { NTS_AEAD_AES_SIV_CMAC_256, NTS_AEAD_AES_128_GCM_SIV };

/* Large enough for any message the decoder accepts, one beyond its limit, and the largest
 * record. */
static uint8_t buf[NTS_KE_RECORD_HEADER_SIZE + UINT16_MAX + 1];

/* ---- helpers ---- */

typedef struct Rec {
        uint16_t type;
        bool critical;
        const void *body;
        size_t size;
} Rec;

#define U16(v) ((const uint8_t[]) { (uint8_t) ((v) >> 8), (uint8_t) (v) })
#define REC_U16(t, v) { .type = (t), .critical = true, .body = U16(v), .size = 2 }
#define REC_NTPV4 REC_U16(NTS_KE_RECORD_NEXT_PROTOCOL, NTS_PROTOCOL_NTPV4)
#define REC_AEAD(id) REC_U16(NTS_KE_RECORD_AEAD_ALGORITHM, id)
#define REC_COOKIE { .type = NTS_KE_RECORD_NEW_COOKIE, .body = "cookie-bytes", .size = 12 }
#define REC_PORT(p) REC_U16(NTS_KE_RECORD_PORT, p)
#define REC_SERVER(s) { .type = NTS_KE_RECORD_SERVER, .critical = true, .body = (s), .size = strlen(s) }
#define REC_END { .type = NTS_KE_RECORD_END_OF_MESSAGE, .critical = true }

static size_t build(const Rec *recs, size_t n) {
        struct iovec out = IOVEC_MAKE(buf, sizeof(buf));

        for (size_t i = 0; i < n; i++)
                ASSERT_OK(NTS_record_append(&out, recs[i].type, recs[i].critical, recs[i].body,
                                            recs[i].size));
        return sizeof(buf) - out.iov_len;
}

/* Decodes p[0..size) and checks the decoder's contract on the result, whatever it is. */
static ssize_t decode_at(const uint8_t *p, size_t size, NTS_Agreement *a) {
        struct iovec msg = IOVEC_MAKE(p, size);
        const char *broken;
        ssize_t r;

        r = NTS_decode_response(&msg, offered, ELEMENTSOF(offered), a);
        broken = nts_ke_check_decode_result(&msg, offered, ELEMENTSOF(offered), r, a);
        if (broken) {
                fprintf(stderr, "decoding %zu bytes returned %zd, error %d: %s\n",
                        size, r, (int) a->error, broken);
                abort();
        }
        return r;
}

static ssize_t decode(size_t size, NTS_Agreement *a) {
        return decode_at(buf, size, a);
}

/* Like decode(), from a heap copy of exactly size bytes, so that the sanitizers catch any read
 * past the end. */
static ssize_t decode_exact(size_t size, NTS_Agreement *a) {
        _cleanup_free_ uint8_t *p = malloc(MAX(size, (size_t) 1));

        ASSERT_TRUE(p);
        memcpy(p, buf, size);
        return decode_at(p, size, a);
}

static ssize_t decode_records(const Rec *recs, size_t n, NTS_Agreement *a) {
        return decode(build(recs, n), a);
}

static void assert_refused(const Rec *recs, size_t n, NTS_Error error, uint16_t record_type) {
        NTS_Agreement a;

        ASSERT_ERROR(decode_records(recs, n, &a), EBADMSG);
        ASSERT_EQ(a.error, error);
        ASSERT_EQ(a.record_type, record_type);
}

#define ASSERT_REFUSED(error, record_type, ...)                                                \
        do {                                                                                   \
                const Rec _recs[] = { __VA_ARGS__ };                                           \
                assert_refused(_recs, ELEMENTSOF(_recs), (error), (record_type));              \
        } while (false)

#define ASSERT_ACCEPTED(...)                                                                   \
        do {                                                                                   \
                const Rec _recs[] = { __VA_ARGS__ };                                           \
                ASSERT_OK(decode_records(_recs, ELEMENTSOF(_recs), &(NTS_Agreement) {}));      \
        } while (false)

static void assert_request_refused(const Rec *recs, size_t n, uint16_t error_code) {
        NTSServerKERequest req;

        ASSERT_ERROR(nts_server_ke_decode_request(&IOVEC_MAKE(buf, build(recs, n)), &req), EBADMSG);
        ASSERT_EQ(req.error_code, error_code);
}

#define ASSERT_REQUEST_REFUSED(error_code, ...)                                                \
        do {                                                                                   \
                const Rec _recs[] = { __VA_ARGS__ };                                           \
                assert_request_refused(_recs, ELEMENTSOF(_recs), (error_code));                \
        } while (false)

static size_t encode_response(const NTSServerKEResponse *r) {
        return (size_t) ASSERT_OK(nts_server_ke_encode_response(buf, sizeof(buf), r));
}

static void assert_response_refused(const NTSServerKEResponse *r, NTS_Error error, uint16_t record_type) {
        NTS_Agreement a;

        ASSERT_ERROR(decode(encode_response(r), &a), EBADMSG);
        ASSERT_EQ(a.error, error);
        ASSERT_EQ(a.record_type, record_type);
}

/* ---- records ---- */

static void test_record_next_splits_header_and_body(void) {
        static const uint8_t msg[] = { 0x80, 0x04, 0x00, 0x02, 0x00, 0x0f, 0x00, 0x05, 0x00, 0x01, 0xaa };
        struct iovec rest = IOVEC_MAKE(msg, sizeof(msg));
        NTS_Record rec;

        ASSERT_OK(NTS_record_next(&rest, &rec));
        ASSERT_EQ(rec.type, NTS_KE_RECORD_AEAD_ALGORITHM);
        ASSERT_TRUE(rec.critical);
        ASSERT_TRUE(rec.body.iov_base == msg + 4);
        ASSERT_EQ(rec.body.iov_len, 2);

        ASSERT_OK(NTS_record_next(&rest, &rec));
        ASSERT_EQ(rec.type, NTS_KE_RECORD_NEW_COOKIE);
        ASSERT_FALSE(rec.critical);
        ASSERT_EQ(rec.body.iov_len, 1);
        ASSERT_EQ(*(const uint8_t *) rec.body.iov_base, 0xaa);
        ASSERT_EQ(rest.iov_len, 0);

        ASSERT_ERROR(NTS_record_next(&rest, &rec), ENODATA);
}

static void test_record_next_needs_a_whole_record(void) {
        static const uint8_t msg[] = { 0x00, 0x05, 0x00, 0x03, 0x01, 0x02 };

        for (size_t n = 0; n <= sizeof(msg); n++) {
                struct iovec rest = IOVEC_MAKE(msg, n);
                NTS_Record rec;

                ASSERT_ERROR(NTS_record_next(&rest, &rec), ENODATA);
                ASSERT_TRUE(rest.iov_base == msg);
                ASSERT_EQ(rest.iov_len, n);
        }
}

static void test_record_append_refuses_what_does_not_fit(void) {
        static uint8_t big[UINT16_MAX + 1];
        uint8_t small[8];
        struct iovec out = IOVEC_MAKE(small, sizeof(small));

        ASSERT_ERROR(NTS_record_append(&out, NTS_KE_RECORD_NEW_COOKIE, false, "12345", 5), ENOBUFS);
        ASSERT_TRUE(out.iov_base == small);
        ASSERT_EQ(out.iov_len, sizeof(small));

        ASSERT_OK(NTS_record_append(&out, NTS_KE_RECORD_NEW_COOKIE, false, "1234", 4));
        ASSERT_EQ(out.iov_len, 0);
        ASSERT_MEMEQ(small, ((const uint8_t[]) { 0x00, 0x05, 0x00, 0x04, '1', '2', '3', '4' }), 8);

        out = IOVEC_MAKE(buf, sizeof(buf));
        ASSERT_ERROR(NTS_record_append(&out, NTS_KE_RECORD_NEW_COOKIE, false, big, sizeof(big)), EMSGSIZE);
        ASSERT_OK(NTS_record_append(&out, NTS_KE_RECORD_NEW_COOKIE, false, big, sizeof(big) - 1));
}

/* ---- request ---- */

static void test_request_is_byte_exact(void) {
        static const uint8_t expected[] = {
                0x80, 0x01, 0x00, 0x02, 0x00, 0x00,             /* Next Protocol, critical: NTPv4 */
                0x80, 0x04, 0x00, 0x06, 0x00, 0x1e, 0x00, 0x0f, /* AEAD, critical: 30, 15, 17 */
                0x00, 0x11,
                0x04, 0x00, 0x00, 0x00,                         /* 1024 (30 is offered), empty, not critical */
                0x80, 0x00, 0x00, 0x00,                         /* End of Message, critical */
        };
        static const NTS_AEADAlgorithm aead[] = {
                NTS_AEAD_AES_128_GCM_SIV, NTS_AEAD_AES_SIV_CMAC_256, NTS_AEAD_AES_SIV_CMAC_512,
        };
        uint8_t req[64];

        ASSERT_EQ(NTS_request_size(aead, ELEMENTSOF(aead), NULL, 0), sizeof(expected));
        ASSERT_EQ(ASSERT_OK(NTS_encode_request(req, sizeof(req), aead, ELEMENTSOF(aead), NULL, 0)), sizeof(expected));
        ASSERT_MEMEQ(req, expected, sizeof(expected));

        /* Exactly the size needed is enough. */
        ASSERT_EQ(ASSERT_OK(NTS_encode_request(req, sizeof(expected), aead, ELEMENTSOF(aead), NULL, 0)),
                  sizeof(expected));
}

static void test_request_needs_room_and_an_algorithm(void) {
        static const NTS_AEADAlgorithm aead[] = { NTS_AEAD_AES_SIV_CMAC_256 };
        uint8_t req[6 + 6 + 4];

        for (size_t n = 0; n < sizeof(req); n++)
                ASSERT_ERROR(NTS_encode_request(req, n, aead, 1, NULL, 0), ENOBUFS);
        ASSERT_EQ(ASSERT_OK(NTS_encode_request(req, sizeof(req), aead, 1, NULL, 0)), sizeof(req));
        ASSERT_ERROR(NTS_encode_request(req, sizeof(req), aead, 0, NULL, 0), EINVAL);
}

/* draft-venhoek-nts-pool section 6.6: type 13 without the critical bit (a server that knows no
 * pools must skip it, RFC 8915 section 4), after the AEAD record, one per name, the name's
 * bytes as given and nothing else: no port, no terminator. */
static void test_deny_records_are_noncritical_one_per_name_before_end(void) {
        static const uint8_t expected[] = {
                0x80, 0x01, 0x00, 0x02, 0x00, 0x00,             /* Next Protocol, critical: NTPv4 */
                0x80, 0x04, 0x00, 0x02, 0x00, 0x0f,             /* AEAD, critical: 15 */
                0x00, 0x0d, 0x00, 0x0b, 'M', 'e', 'm', 'b',     /* NTP Server Deny, 11 bytes */
                'e', 'r', '1', '.', 'T', 'e', 's',
                0x00, 0x0d, 0x00, 0x09, '1', '2', '7', '.',     /* NTP Server Deny, 9 bytes */
                '0', '.', '0', '.', '2',
                0x80, 0x00, 0x00, 0x00,                         /* End of Message, critical */
        };
        static const NTS_AEADAlgorithm aead[] = { NTS_AEAD_AES_SIV_CMAC_256 };
        char *deny[] = { (char *) "Member1.Tes", (char *) "127.0.0.2" };
        uint8_t req[128];

        ASSERT_EQ(NTS_request_size(aead, ELEMENTSOF(aead), deny, ELEMENTSOF(deny)), sizeof(expected));
        ASSERT_EQ(ASSERT_OK(NTS_encode_request(req, sizeof(req), aead, ELEMENTSOF(aead), deny, ELEMENTSOF(deny))),
                  sizeof(expected));
        ASSERT_MEMEQ(req, expected, sizeof(expected));

        /* Every shorter buffer is refused whole, never cut after a deny record. */
        for (size_t n = 0; n < sizeof(expected); n++)
                ASSERT_ERROR(NTS_encode_request(req, n, aead, ELEMENTSOF(aead), deny, ELEMENTSOF(deny)), ENOBUFS);
}

static void test_deny_list_bounds(void) {
        static const NTS_AEADAlgorithm aead[] = { NTS_AEAD_AES_SIV_CMAC_256 };
        char longest[NTS_MAX_SERVER_NAME_SIZE + 2], *deny[NTS_KE_MAX_DENIED_SERVERS + 1];
        static uint8_t req[NTS_KE_MAX_MESSAGE_SIZE];
        NTSServerKERequest decoded;
        size_t size;

        memset(longest, 'a', sizeof(longest) - 1);
        longest[sizeof(longest) - 1] = 0;

        /* A name of 255 bytes is the longest a Server record may carry; 256 is refused. */
        deny[0] = longest + 1;
        ASSERT_EQ(ASSERT_OK(NTS_encode_request(req, sizeof(req), aead, 1, deny, 1)), NTS_request_size(aead, 1, deny, 1));
        deny[0] = longest;
        ASSERT_ERROR(NTS_encode_request(req, sizeof(req), aead, 1, deny, 1), EINVAL);
        deny[0] = (char *) "";
        ASSERT_ERROR(NTS_encode_request(req, sizeof(req), aead, 1, deny, 1), EINVAL);

        /* At most NTS_KE_MAX_DENIED_SERVERS names, the largest request well inside a message. */
        for (size_t i = 0; i < ELEMENTSOF(deny); i++)
                deny[i] = longest + 1;
        size = (size_t) ASSERT_OK(NTS_encode_request(req, sizeof(req), aead, 1, deny, NTS_KE_MAX_DENIED_SERVERS));
        ASSERT_EQ(size, NTS_request_size(aead, 1, deny, NTS_KE_MAX_DENIED_SERVERS));
        ASSERT_TRUE(size < NTS_KE_MAX_MESSAGE_SIZE / 2);
        ASSERT_EQ(nts_server_ke_decode_request(&IOVEC_MAKE(req, size), &decoded), size);
        ASSERT_EQ(decoded.n_denied, NTS_KE_MAX_DENIED_SERVERS);
        ASSERT_ERROR(NTS_encode_request(req, sizeof(req), aead, 1, deny, NTS_KE_MAX_DENIED_SERVERS + 1), E2BIG);
}

/* ---- responses of real servers ---- */

static void test_chrony_like_response_is_accepted(void) {
        static const uint8_t head[] = {
                0x80, 0x01, 0x00, 0x02, 0x00, 0x00,     /* Next Protocol, critical: NTPv4 */
                0x80, 0x04, 0x00, 0x02, 0x00, 0x0f,     /* AEAD, critical: 15 */
                0x80, 0x07, 0x00, 0x02, 0x2b, 0x73,     /* Port, critical: 11123 */
                0x00, 0x05, 0x00, 0x64,                 /* first cookie, 100 bytes */
        };
        NTSServerKEResponse resp = NTS_SERVER_KE_RESPONSE_DEFAULT(NTS_AEAD_ID_AES_SIV_CMAC_256);
        NTS_Agreement a;
        size_t size;

        resp.port = 11123;
        size = encode_response(&resp);
        ASSERT_EQ(size, sizeof(head) - 4 + 8 * (4 + 100) + 4);
        ASSERT_MEMEQ(buf, head, sizeof(head));

        ASSERT_EQ(decode(size, &a), size);
        ASSERT_EQ(a.error, NTS_OK);
        ASSERT_EQ(a.aead, NTS_AEAD_AES_SIV_CMAC_256);
        ASSERT_EQ(a.port, 11123);
        ASSERT_FALSE(iovec_is_set(&a.server));
        ASSERT_EQ(a.n_cookies, 8);
        for (size_t i = 0; i < a.n_cookies; i++) {
                const uint8_t *c = a.cookies[i].iov_base;

                ASSERT_EQ(a.cookies[i].iov_len, 100);
                ASSERT_TRUE(c == buf + sizeof(head) + i * 104);
                ASSERT_EQ(c[0], (uint8_t) (i * 16));
                ASSERT_EQ(c[99], (uint8_t) (i * 16 + 99));
        }
}

static void test_ntpsec_like_response_is_accepted(void) {
        static const uint8_t head[] = {
                0x80, 0x01, 0x00, 0x02, 0x00, 0x00,     /* Next Protocol, critical: NTPv4 */
                0x00, 0x04, 0x00, 0x02, 0x00, 0x0f,     /* AEAD, not critical: 15 */
        };
        NTS_Agreement a;
        size_t size = sizeof(head);

        memcpy(buf, head, sizeof(head));
        for (size_t i = 0; i < 8; i++) {
                memcpy(buf + size, ((const uint8_t[]) { 0x00, 0x05, 0x00, 0x68 }), 4);
                memset(buf + size + 4, (int) ('A' + i), 104);
                size += 4 + 104;
        }
        memcpy(buf + size, ((const uint8_t[]) { 0x80, 0x00, 0x00, 0x00 }), 4);
        size += 4;

        ASSERT_EQ(decode(size, &a), size);
        ASSERT_EQ(a.aead, NTS_AEAD_AES_SIV_CMAC_256);
        ASSERT_EQ(a.port, 0);
        ASSERT_FALSE(iovec_is_set(&a.server));
        ASSERT_EQ(a.n_cookies, 8);
        for (size_t i = 0; i < 8; i++) {
                ASSERT_EQ(a.cookies[i].iov_len, 104);
                ASSERT_EQ(((const uint8_t *) a.cookies[i].iov_base)[103], 'A' + i);
        }
}

static void test_chrony_error_only_response_names_the_server_error(void) {
        NTS_Agreement a;

        /* What chrony sends to a request it cannot parse: Error and End of Message only. */
        const Rec recs[] = { REC_U16(NTS_KE_RECORD_ERROR, NTS_KE_ERROR_BAD_REQUEST), REC_END };

        ASSERT_ERROR(decode_records(recs, ELEMENTSOF(recs), &a), EBADMSG);
        ASSERT_EQ(a.error, NTS_ERROR_SERVER_BAD_REQUEST);
        ASSERT_EQ(a.record_type, NTS_KE_RECORD_ERROR);
        ASSERT_EQ(a.server_code, NTS_KE_ERROR_BAD_REQUEST);
}

/* ---- one rule broken at a time ---- */

static void test_error_record_codes_are_mapped(void) {
        static const struct {
                int code;
                NTS_Error error;
        } map[] = {
                { NTS_KE_ERROR_UNRECOGNIZED_CRITICAL_RECORD, NTS_ERROR_SERVER_UNRECOGNIZED_CRITICAL_RECORD },
                { NTS_KE_ERROR_BAD_REQUEST, NTS_ERROR_SERVER_BAD_REQUEST },
                { NTS_KE_ERROR_INTERNAL_SERVER_ERROR, NTS_ERROR_SERVER_INTERNAL_ERROR },
                { 3, NTS_ERROR_SERVER_UNKNOWN_ERROR },
                { 0xffff, NTS_ERROR_SERVER_UNKNOWN_ERROR },
        };

        for (size_t i = 0; i < ELEMENTSOF(map); i++) {
                NTSServerKEResponse resp = NTS_SERVER_KE_RESPONSE_DEFAULT(NTS_AEAD_ID_AES_SIV_CMAC_256);
                NTS_Agreement a;

                resp.error_code = map[i].code;
                ASSERT_ERROR(decode(encode_response(&resp), &a), EBADMSG);
                ASSERT_EQ(a.error, map[i].error);
                ASSERT_EQ(a.server_code, map[i].code);
                ASSERT_EQ(a.record_type, NTS_KE_RECORD_ERROR);
        }
}

static void test_any_warning_is_an_error(void) {
        NTSServerKEResponse resp = NTS_SERVER_KE_RESPONSE_DEFAULT(NTS_AEAD_ID_AES_SIV_CMAC_256);
        NTS_Agreement a;

        resp.warning_code = 5;
        ASSERT_ERROR(decode(encode_response(&resp), &a), EBADMSG);
        ASSERT_EQ(a.error, NTS_ERROR_SERVER_WARNING);
        ASSERT_EQ(a.server_code, 5);
}

static void test_error_and_warning_records_must_hold_a_code(void) {
        ASSERT_REFUSED(NTS_ERROR_KE_BAD_RECORD_LENGTH, NTS_KE_RECORD_ERROR,
                       { .type = NTS_KE_RECORD_ERROR, .critical = true, .body = "abc", .size = 3 }, REC_END);
        ASSERT_REFUSED(NTS_ERROR_KE_BAD_RECORD_LENGTH, NTS_KE_RECORD_WARNING,
                       REC_NTPV4, { .type = NTS_KE_RECORD_WARNING, .critical = true }, REC_END);
}

static void test_response_without_cookies_is_refused(void) {
        NTSServerKEResponse resp = NTS_SERVER_KE_RESPONSE_DEFAULT(NTS_AEAD_ID_AES_SIV_CMAC_256);

        resp.n_cookies = 0;
        assert_response_refused(&resp, NTS_ERROR_KE_NO_COOKIES, NTS_KE_RECORD_NEW_COOKIE);
}

static void test_empty_or_oversized_cookie_is_refused(void) {
        NTSServerKEResponse resp = NTS_SERVER_KE_RESPONSE_DEFAULT(NTS_AEAD_ID_AES_SIV_CMAC_256);
        NTS_Agreement a;

        resp.cookie_size = 0;
        assert_response_refused(&resp, NTS_ERROR_KE_BAD_COOKIE, NTS_KE_RECORD_NEW_COOKIE);

        resp.cookie_size = NTS_MAX_COOKIE_SIZE + 1;
        assert_response_refused(&resp, NTS_ERROR_KE_BAD_COOKIE, NTS_KE_RECORD_NEW_COOKIE);

        resp.cookie_size = NTS_MAX_COOKIE_SIZE;
        ASSERT_OK(decode(encode_response(&resp), &a));
        ASSERT_EQ(a.cookies[7].iov_len, NTS_MAX_COOKIE_SIZE);
}

static void test_cookies_beyond_eight_are_ignored(void) {
        NTSServerKEResponse resp = NTS_SERVER_KE_RESPONSE_DEFAULT(NTS_AEAD_ID_AES_SIV_CMAC_256);
        NTS_Agreement a;

        resp.n_cookies = 12;
        resp.cookie_size = 16;
        ASSERT_OK(decode(encode_response(&resp), &a));
        ASSERT_EQ(a.n_cookies, NTS_MAX_COOKIES);
        ASSERT_EQ(((const uint8_t *) a.cookies[7].iov_base)[0], 7 * 16);
}

static void test_unknown_critical_record_is_refused(void) {
        NTSServerKEResponse resp = NTS_SERVER_KE_RESPONSE_DEFAULT(NTS_AEAD_ID_AES_SIV_CMAC_256);

        resp.unknown_critical = true;
        assert_response_refused(&resp, NTS_ERROR_KE_UNKNOWN_CRITICAL_RECORD, NTS_SERVER_KE_UNKNOWN_RECORD);
}

static void test_unknown_noncritical_record_is_skipped(void) {
        NTSServerKEResponse resp = NTS_SERVER_KE_RESPONSE_DEFAULT(NTS_AEAD_ID_AES_SIV_CMAC_256);
        NTS_Agreement a;
        size_t size;

        resp.unknown_noncritical = true;
        size = encode_response(&resp);
        ASSERT_EQ(decode(size, &a), size);
        ASSERT_EQ(a.n_cookies, 8);
}

/* A pool may pass on the Keep Alive record (draft-venhoek-nts-pool section 6.1, type 8, not
 * critical) it exchanged with its member: skipped like any unknown non-critical record. With
 * the critical bit, which the draft forbids, it is an unknown critical record like any other. */
static void test_keep_alive_from_a_pool_is_skipped(void) {
        NTS_Agreement a;

        ASSERT_EQ(decode_records((const Rec[]) { REC_NTPV4, REC_AEAD(15), REC_SERVER("127.0.0.2"), REC_PORT(123),
                                                 { .type = NTS_KE_RECORD_KEEP_ALIVE }, REC_COOKIE, REC_END },
                                 7, &a),
                  6 + 6 + 13 + 6 + 4 + 16 + 4);
        ASSERT_EQ(a.n_cookies, 1);
        ASSERT_EQ(a.port, 123);
        ASSERT_TRUE(iovec_equal(&a.server, &IOVEC_MAKE("127.0.0.2", 9)));

        ASSERT_REFUSED(NTS_ERROR_KE_UNKNOWN_CRITICAL_RECORD, NTS_KE_RECORD_KEEP_ALIVE, REC_NTPV4, REC_AEAD(15),
                       { .type = NTS_KE_RECORD_KEEP_ALIVE, .critical = true }, REC_COOKIE, REC_END);
}

/* Sent to a client it is meaningless (section 6.6: "MUST NOT be sent by a server"): skipped. */
static void test_deny_record_in_a_response_is_skipped(void) {
        ASSERT_ACCEPTED(REC_NTPV4, REC_AEAD(15), { .type = NTS_KE_RECORD_NTP_SERVER_DENY, .body = "x", .size = 1 },
                        REC_COOKIE, REC_END);
}

/* chrony's record 1024 (empty, not critical) in the answer of a server that chose
 * AEAD_AES_128_GCM_SIV: the keys come from the RFC's exporter context, with 30. */
static void test_compliant_128gcm_record_is_noted(void) {
        const Rec compliant = { .type = NTS_KE_RECORD_COMPLIANT_128GCM_EXPORT };
        NTS_Agreement a;

        ASSERT_OK(decode_records((const Rec[]) { REC_NTPV4, REC_AEAD(30), compliant, REC_COOKIE, REC_END }, 5, &a));
        ASSERT_EQ(a.aead, NTS_AEAD_AES_128_GCM_SIV);
        ASSERT_TRUE(a.compliant_128gcm);
        ASSERT_EQ(NTS_exporter_aead(&a), NTS_AEAD_ID_AES_128_GCM_SIV);

        /* Without it (chrony 4.4 to 4.6.0, or 4.6.1 and later to a client that did not ask):
         * the old context, with 15. */
        ASSERT_OK(decode_records((const Rec[]) { REC_NTPV4, REC_AEAD(30), REC_COOKIE, REC_END }, 4, &a));
        ASSERT_FALSE(a.compliant_128gcm);
        ASSERT_EQ(NTS_exporter_aead(&a), NTS_AEAD_ID_AES_SIV_CMAC_256);

        /* With another algorithm the record changes nothing. */
        ASSERT_OK(decode_records((const Rec[]) { REC_NTPV4, REC_AEAD(15), compliant, REC_COOKIE, REC_END }, 5, &a));
        ASSERT_EQ(NTS_exporter_aead(&a), NTS_AEAD_ID_AES_SIV_CMAC_256);

        /* Its body is empty; the critical bit is accepted either way, as for the others. */
        ASSERT_REFUSED(NTS_ERROR_KE_BAD_RECORD_LENGTH, NTS_KE_RECORD_COMPLIANT_128GCM_EXPORT, REC_NTPV4, REC_AEAD(30),
                       { .type = NTS_KE_RECORD_COMPLIANT_128GCM_EXPORT, .body = "x", .size = 1 }, REC_COOKIE, REC_END);
        ASSERT_ACCEPTED(REC_NTPV4, REC_AEAD(30), { .type = NTS_KE_RECORD_COMPLIANT_128GCM_EXPORT, .critical = true },
                        REC_COOKIE, REC_END);
}

/* The exporter context's AEAD ID for every algorithm, with and without record 1024. */
static void test_exporter_aead_table(void) {
        static const struct {
                NTS_AEADAlgorithm aead;
                bool compliant;
                uint16_t context;
        } table[] = {
                { NTS_AEAD_AES_SIV_CMAC_256, false, 15 }, { NTS_AEAD_AES_SIV_CMAC_256, true, 15 },
                { NTS_AEAD_AES_SIV_CMAC_384, false, 16 }, { NTS_AEAD_AES_SIV_CMAC_384, true, 16 },
                { NTS_AEAD_AES_SIV_CMAC_512, false, 17 }, { NTS_AEAD_AES_SIV_CMAC_512, true, 17 },
                { NTS_AEAD_AES_128_GCM_SIV, false, 15 },  { NTS_AEAD_AES_128_GCM_SIV, true, 30 },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                ASSERT_EQ(NTS_exporter_aead(&(NTS_Agreement) { .aead = table[i].aead,
                                                               .compliant_128gcm = table[i].compliant }),
                          table[i].context);
}

/* Record 1024 goes out exactly when AEAD_AES_128_GCM_SIV is offered, wherever it stands. */
static void test_request_asks_for_compliant_128gcm_only_with_it(void) {
        static const NTS_AEADAlgorithm with[] = { NTS_AEAD_AES_SIV_CMAC_512, NTS_AEAD_AES_128_GCM_SIV },
                                       without[] = { NTS_AEAD_AES_SIV_CMAC_512, NTS_AEAD_AES_SIV_CMAC_256 };
        uint8_t req[64];
        struct iovec rest;
        NTS_Record rec;
        ssize_t n;

        for (size_t k = 0; k < 2; k++) {
                bool found = false;

                n = ASSERT_OK(NTS_encode_request(req, sizeof(req), k == 0 ? with : without, 2, NULL, 0));
                ASSERT_EQ((size_t) n, NTS_request_size(k == 0 ? with : without, 2, NULL, 0));
                rest = IOVEC_MAKE(req, (size_t) n);
                while (NTS_record_next(&rest, &rec) >= 0)
                        if (rec.type == NTS_KE_RECORD_COMPLIANT_128GCM_EXPORT) {
                                ASSERT_FALSE(rec.critical);
                                ASSERT_EQ(rec.body.iov_len, 0);
                                found = true;
                        }
                ASSERT_EQ(found, k == 0);
        }
}

static void test_aead_not_offered_is_refused_and_named(void) {
        NTSServerKEResponse resp = NTS_SERVER_KE_RESPONSE_DEFAULT(NTS_AEAD_ID_AES_SIV_CMAC_512);
        NTS_Agreement a;

        assert_response_refused(&resp, NTS_ERROR_KE_AEAD_NOT_OFFERED, NTS_KE_RECORD_AEAD_ALGORITHM);

        /* The refused choice is kept for the message, also one we never offer. */
        resp.aead = NTS_AEAD_ID_AES_256_GCM_SIV;
        ASSERT_ERROR(decode(encode_response(&resp), &a), EBADMSG);
        ASSERT_EQ(a.error, NTS_ERROR_KE_AEAD_NOT_OFFERED);
        ASSERT_EQ(a.aead, NTS_AEAD_AES_256_GCM_SIV);
}

static void test_empty_aead_record_means_no_common_algorithm(void) {
        NTSServerKEResponse resp = NTS_SERVER_KE_RESPONSE_DEFAULT(NTS_AEAD_ID_AES_SIV_CMAC_256);

        resp.aead_empty = true;
        assert_response_refused(&resp, NTS_ERROR_KE_NO_COMMON_AEAD, NTS_KE_RECORD_AEAD_ALGORITHM);
}

static void test_aead_record_must_name_one_algorithm(void) {
        ASSERT_REFUSED(NTS_ERROR_KE_BAD_RECORD_LENGTH, NTS_KE_RECORD_AEAD_ALGORITHM,
                       REC_NTPV4,
                       { .type = NTS_KE_RECORD_AEAD_ALGORITHM, .body = U16(15), .size = 1 },
                       REC_COOKIE, REC_END);
        ASSERT_REFUSED(NTS_ERROR_KE_BAD_RECORD_LENGTH, NTS_KE_RECORD_AEAD_ALGORITHM,
                       REC_NTPV4,
                       { .type = NTS_KE_RECORD_AEAD_ALGORITHM, .body = "\0\x0f\0\x1e", .size = 4 },
                       REC_COOKIE, REC_END);
}

static void test_missing_aead_record_is_refused(void) {
        NTSServerKEResponse resp = NTS_SERVER_KE_RESPONSE_DEFAULT(NTS_AEAD_ID_AES_SIV_CMAC_256);

        resp.omit_aead = true;
        assert_response_refused(&resp, NTS_ERROR_KE_NO_AEAD, NTS_KE_RECORD_AEAD_ALGORITHM);
}

static void test_duplicate_aead_record_is_refused(void) {
        ASSERT_REFUSED(NTS_ERROR_KE_DUPLICATE_RECORD, NTS_KE_RECORD_AEAD_ALGORITHM,
                       REC_NTPV4, REC_AEAD(15), REC_AEAD(15), REC_COOKIE, REC_END);
}

static void test_missing_next_protocol_is_refused(void) {
        NTSServerKEResponse resp = NTS_SERVER_KE_RESPONSE_DEFAULT(NTS_AEAD_ID_AES_SIV_CMAC_256);

        resp.omit_next_protocol = true;
        assert_response_refused(&resp, NTS_ERROR_KE_NO_NEXT_PROTOCOL, NTS_KE_RECORD_NEXT_PROTOCOL);
}

static void test_next_protocol_must_be_exactly_ntpv4(void) {
        NTSServerKEResponse resp = NTS_SERVER_KE_RESPONSE_DEFAULT(NTS_AEAD_ID_AES_SIV_CMAC_256);

        resp.empty_next_protocol = true;
        assert_response_refused(&resp, NTS_ERROR_KE_NO_NEXT_PROTOCOL, NTS_KE_RECORD_NEXT_PROTOCOL);

        ASSERT_REFUSED(NTS_ERROR_KE_NO_NEXT_PROTOCOL, NTS_KE_RECORD_NEXT_PROTOCOL,
                       REC_U16(NTS_KE_RECORD_NEXT_PROTOCOL, 1), REC_AEAD(15), REC_COOKIE, REC_END);
        ASSERT_REFUSED(NTS_ERROR_KE_NO_NEXT_PROTOCOL, NTS_KE_RECORD_NEXT_PROTOCOL,
                       { .type = NTS_KE_RECORD_NEXT_PROTOCOL, .body = "\0\0\0\0", .size = 4 },
                       REC_AEAD(15), REC_COOKIE, REC_END);
        ASSERT_REFUSED(NTS_ERROR_KE_BAD_RECORD_LENGTH, NTS_KE_RECORD_NEXT_PROTOCOL,
                       { .type = NTS_KE_RECORD_NEXT_PROTOCOL, .body = "\0\0\0", .size = 3 },
                       REC_AEAD(15), REC_COOKIE, REC_END);
}

static void test_duplicate_next_protocol_is_refused(void) {
        ASSERT_REFUSED(NTS_ERROR_KE_DUPLICATE_RECORD, NTS_KE_RECORD_NEXT_PROTOCOL,
                       REC_NTPV4, REC_AEAD(15), REC_NTPV4, REC_COOKIE, REC_END);
}

static void test_port_must_be_one_nonzero_value(void) {
        NTSServerKEResponse resp = NTS_SERVER_KE_RESPONSE_DEFAULT(NTS_AEAD_ID_AES_SIV_CMAC_256);

        resp.port = 123;
        resp.duplicate_port = true;
        assert_response_refused(&resp, NTS_ERROR_KE_DUPLICATE_RECORD, NTS_KE_RECORD_PORT);

        ASSERT_REFUSED(NTS_ERROR_KE_BAD_PORT, NTS_KE_RECORD_PORT,
                       REC_NTPV4, REC_AEAD(15), REC_PORT(0), REC_COOKIE, REC_END);
        ASSERT_REFUSED(NTS_ERROR_KE_BAD_RECORD_LENGTH, NTS_KE_RECORD_PORT,
                       REC_NTPV4, REC_AEAD(15), { .type = NTS_KE_RECORD_PORT, .body = "\x01", .size = 1 },
                       REC_COOKIE, REC_END);
        ASSERT_REFUSED(NTS_ERROR_KE_BAD_RECORD_LENGTH, NTS_KE_RECORD_PORT,
                       REC_NTPV4, REC_AEAD(15),
                       { .type = NTS_KE_RECORD_PORT, .body = "\0\x7b\0", .size = 3 },
                       REC_COOKIE, REC_END);
}

static void test_end_of_message_must_be_empty_and_last(void) {
        NTSServerKEResponse resp = NTS_SERVER_KE_RESPONSE_DEFAULT(NTS_AEAD_ID_AES_SIV_CMAC_256);

        resp.data_after_end = true;
        assert_response_refused(&resp, NTS_ERROR_KE_DATA_AFTER_END, NTS_KE_RECORD_END_OF_MESSAGE);

        ASSERT_REFUSED(NTS_ERROR_KE_BAD_RECORD_LENGTH, NTS_KE_RECORD_END_OF_MESSAGE,
                       REC_NTPV4, REC_AEAD(15), REC_COOKIE,
                       { .type = NTS_KE_RECORD_END_OF_MESSAGE, .critical = true, .body = "\0", .size = 1 });
}

static void test_message_without_end_is_incomplete(void) {
        NTS_Agreement a;
        const Rec recs[] = { REC_NTPV4, REC_AEAD(15), REC_COOKIE };

        ASSERT_ERROR(decode(0, &a), ENODATA);
        ASSERT_EQ(a.error, NTS_ERROR_KE_TRUNCATED);

        ASSERT_ERROR(decode_records(recs, ELEMENTSOF(recs), &a), ENODATA);
        ASSERT_EQ(a.error, NTS_ERROR_KE_TRUNCATED);
}

static void test_message_beyond_the_limit_is_too_long(void) {
        struct iovec out = IOVEC_MAKE(buf, sizeof(buf));
        NTS_Agreement a;

        /* Unknown non-critical records filling the limit, and no End of Message in sight. */
        while (sizeof(buf) - out.iov_len < NTS_KE_MAX_MESSAGE_SIZE)
                ASSERT_OK(NTS_record_append(&out, 0x1234, false, buf + sizeof(buf) / 2, 508));
        ASSERT_EQ(sizeof(buf) - out.iov_len, NTS_KE_MAX_MESSAGE_SIZE);
        ASSERT_ERROR(decode(NTS_KE_MAX_MESSAGE_SIZE, &a), EMSGSIZE);
        ASSERT_EQ(a.error, NTS_ERROR_KE_TOO_LONG);
        ASSERT_ERROR(decode(NTS_KE_MAX_MESSAGE_SIZE - 1, &a), ENODATA);

        /* A record that cannot end inside the limit is refused before it has arrived. */
        memcpy(buf, ((const uint8_t[]) { 0x00, 0x05, 0xff, 0xff }), 4);
        ASSERT_ERROR(decode(4, &a), EMSGSIZE);

        /* A complete message that fits exactly, and one that is one byte too long. */
        const size_t fill = NTS_KE_MAX_MESSAGE_SIZE - 6 - 6 - 16 - 4 - 4;
        Rec recs[] = {
                REC_NTPV4, REC_AEAD(15), REC_COOKIE,
                { .type = 0x1234, .body = buf + sizeof(buf) / 2, .size = fill },
                REC_END,
        };

        ASSERT_EQ(decode_records(recs, ELEMENTSOF(recs), &a), NTS_KE_MAX_MESSAGE_SIZE);
        recs[3].size++;
        ASSERT_ERROR(decode_records(recs, ELEMENTSOF(recs), &a), EMSGSIZE);
        ASSERT_EQ(a.error, NTS_ERROR_KE_TOO_LONG);
}

/* ---- server negotiation ---- */

static void test_server_accepts_addresses_and_names(void) {
        static const char *const good[] = {
                "192.0.2.1", "2001:db8::1", "::1", "::ffff:192.0.2.1", "ntp.example.com",
                "ntp.example.com.", "localhost", "a-b.c", "1ntp.example", "xn--bcher-kva.example",
        };

        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                const Rec recs[] = { REC_NTPV4, REC_AEAD(15), REC_SERVER(good[i]), REC_COOKIE, REC_END };
                NTS_Agreement a;

                ASSERT_OK(decode_records(recs, ELEMENTSOF(recs), &a));
                ASSERT_EQ(a.server.iov_len, strlen(good[i]));
                ASSERT_MEMEQ(a.server.iov_base, good[i], strlen(good[i]));
        }
}

static void test_server_refuses_what_is_neither_address_nor_name(void) {
        static const char *const bad[] = {
                "", ".", "1.2.3", "192.0.2.256", "192.0.2.01", "0x7f.0.0.1", "fe80::1%eth0", "[::1]",
                "2001:db8::1::2", "ntp..example", ".ntp.example", "-ntp.example", "ntp-.example",
                "ntp example", "ntp_1.example", "ntp.example\n", "ntp.ex\xe4mple", "ntp.example..",
                "ntp.123",
        };
        char label64[80], name254[300], huge[300];

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ASSERT_REFUSED(NTS_ERROR_KE_BAD_SERVER, NTS_KE_RECORD_SERVER,
                               REC_NTPV4, REC_AEAD(15), REC_SERVER(bad[i]), REC_COOKIE, REC_END);

        /* An embedded NUL would cut the name short for anyone who treats it as a C string. */
        ASSERT_REFUSED(NTS_ERROR_KE_BAD_SERVER, NTS_KE_RECORD_SERVER,
                       REC_NTPV4, REC_AEAD(15),
                       { .type = NTS_KE_RECORD_SERVER, .body = "ntp\0.example", .size = 12 },
                       REC_COOKIE, REC_END);

        memset(label64, 'a', 64);
        strcpy(label64 + 64, ".example");
        ASSERT_REFUSED(NTS_ERROR_KE_BAD_SERVER, NTS_KE_RECORD_SERVER,
                       REC_NTPV4, REC_AEAD(15), REC_SERVER(label64), REC_COOKIE, REC_END);
        ASSERT_ACCEPTED(REC_NTPV4, REC_AEAD(15), REC_SERVER(label64 + 1), REC_COOKIE, REC_END);

        /* 253 characters is the longest name; 254 only with the trailing dot. */
        for (size_t i = 0; i < 254; i++)
                name254[i] = i % 2 ? '.' : 'a';
        name254[253] = 0;
        ASSERT_ACCEPTED(REC_NTPV4, REC_AEAD(15), REC_SERVER(name254), REC_COOKIE, REC_END);
        name254[253] = '.';
        name254[254] = 0;
        ASSERT_ACCEPTED(REC_NTPV4, REC_AEAD(15), REC_SERVER(name254), REC_COOKIE, REC_END);
        name254[253] = 'a';
        ASSERT_REFUSED(NTS_ERROR_KE_BAD_SERVER, NTS_KE_RECORD_SERVER,
                       REC_NTPV4, REC_AEAD(15), REC_SERVER(name254), REC_COOKIE, REC_END);

        memset(huge, 'a', 256);
        huge[256] = 0;
        ASSERT_REFUSED(NTS_ERROR_KE_BAD_SERVER, NTS_KE_RECORD_SERVER,
                       REC_NTPV4, REC_AEAD(15), REC_SERVER(huge), REC_COOKIE, REC_END);
}

static void test_duplicate_server_is_refused(void) {
        ASSERT_REFUSED(NTS_ERROR_KE_DUPLICATE_RECORD, NTS_KE_RECORD_SERVER,
                       REC_NTPV4, REC_AEAD(15), REC_SERVER("192.0.2.1"), REC_SERVER("192.0.2.1"), REC_COOKIE,
                       REC_END);
}

/* ---- mutations ---- */

static size_t encode_mutation_base(void) {
        NTSServerKEResponse resp = NTS_SERVER_KE_RESPONSE_DEFAULT(NTS_AEAD_ID_AES_SIV_CMAC_256);

        resp.cookie_size = 20;
        resp.server = "ntp.example.com";
        resp.port = 11123;
        resp.unknown_noncritical = true;
        return encode_response(&resp);
}

static void test_flipped_bits_never_yield_an_unsafe_success(void) {
        _cleanup_free_ uint8_t *orig = NULL;
        size_t size, accepted = 0, refused = 0;
        NTS_Agreement a;

        size = encode_mutation_base();
        orig = malloc(size);
        ASSERT_TRUE(orig);
        memcpy(orig, buf, size);

        /* decode() asserts that every success still holds all invariants. */
        for (size_t i = 0; i < size; i++)
                for (unsigned mask = 1; mask <= 0x100; mask <<= 1) {
                        memcpy(buf, orig, size);
                        buf[i] ^= (uint8_t) (mask == 0x100 ? 0xff : mask);
                        if (decode_exact(size, &a) >= 0)
                                accepted++;
                        else
                                refused++;
                }

        /* Flips inside cookie bodies still decode; flips in lengths and types do not. */
        ASSERT_TRUE(accepted >= 8 * 20 * 9);
        ASSERT_TRUE(refused > 0);
}

static void test_truncation_at_any_length_is_incomplete(void) {
        size_t size = encode_mutation_base();
        NTS_Agreement a;

        for (size_t n = 0; n < size; n++) {
                ASSERT_ERROR(decode_exact(n, &a), ENODATA);
                ASSERT_EQ(a.error, NTS_ERROR_KE_TRUNCATED);
        }
        ASSERT_EQ(decode(size, &a), size);
}

/* ---- both sides ---- */

static void test_round_trip_through_the_server_side(void) {
        static const NTS_AEADAlgorithm aead[] = { NTS_AEAD_AES_SIV_CMAC_512, NTS_AEAD_AES_SIV_CMAC_256 };
        static const uint16_t supported[] = { NTS_AEAD_ID_AES_SIV_CMAC_256, NTS_AEAD_ID_AES_SIV_CMAC_512 };
        NTSServerKEResponse resp = NTS_SERVER_KE_RESPONSE_DEFAULT(0);
        NTSServerKERequest req;
        uint8_t request[64];
        NTS_Agreement a;
        ssize_t n;
        size_t size;

        n = ASSERT_OK(NTS_encode_request(request, sizeof(request), aead, ELEMENTSOF(aead), NULL, 0));
        ASSERT_EQ(nts_server_ke_decode_request(&IOVEC_MAKE(request, n), &req), n);
        ASSERT_EQ(req.n_protocols, 1);
        ASSERT_EQ(req.protocols[0], NTS_PROTOCOL_NTPV4);
        ASSERT_EQ(req.n_aead, 2);
        ASSERT_EQ(req.aead[0], NTS_AEAD_ID_AES_SIV_CMAC_512);
        ASSERT_EQ(req.aead[1], NTS_AEAD_ID_AES_SIV_CMAC_256);

        /* The client's preference wins over the server's order. */
        ASSERT_OK(nts_server_ke_pick_aead(&req, supported, ELEMENTSOF(supported), &resp.aead));
        ASSERT_EQ(resp.aead, NTS_AEAD_ID_AES_SIV_CMAC_512);

        size = (size_t) ASSERT_OK(nts_server_ke_encode_response(buf, sizeof(buf), &resp));
        ASSERT_EQ(NTS_decode_response(&IOVEC_MAKE(buf, size), aead, ELEMENTSOF(aead), &a), size);
        ASSERT_EQ(a.aead, NTS_AEAD_AES_SIV_CMAC_512);
        ASSERT_EQ(a.n_cookies, 8);

        resp.aead = nts_server_ke_unoffered_aead(&req);
        ASSERT_FALSE(nts_server_ke_request_offers(&req, resp.aead));
        size = (size_t) ASSERT_OK(nts_server_ke_encode_response(buf, sizeof(buf), &resp));
        ASSERT_ERROR(NTS_decode_response(&IOVEC_MAKE(buf, size), aead, ELEMENTSOF(aead), &a), EBADMSG);
        ASSERT_EQ(a.error, NTS_ERROR_KE_AEAD_NOT_OFFERED);

        ASSERT_ERROR(nts_server_ke_pick_aead(&req, (const uint16_t[]) { NTS_AEAD_ID_AES_128_GCM_SIV }, 1,
                                             &resp.aead),
                     ENOENT);
}

static void test_server_side_refuses_malformed_requests(void) {
        NTSServerKERequest req;
        uint8_t request[64];
        ssize_t n;

        n = ASSERT_OK(NTS_encode_request(request, sizeof(request), offered, ELEMENTSOF(offered), NULL, 0));
        for (ssize_t i = 0; i < n; i++)
                ASSERT_ERROR(nts_server_ke_decode_request(&IOVEC_MAKE(request, i), &req), ENODATA);

        ASSERT_REQUEST_REFUSED(NTS_KE_ERROR_BAD_REQUEST, REC_NTPV4, REC_END);
        ASSERT_REQUEST_REFUSED(NTS_KE_ERROR_BAD_REQUEST, REC_AEAD(15), REC_END);
        ASSERT_REQUEST_REFUSED(NTS_KE_ERROR_BAD_REQUEST,
                               REC_NTPV4, REC_AEAD(15), { .type = NTS_KE_RECORD_AEAD_ALGORITHM }, REC_END);
        ASSERT_REQUEST_REFUSED(NTS_KE_ERROR_BAD_REQUEST,
                               REC_NTPV4, REC_U16(NTS_KE_RECORD_ERROR, 1), REC_AEAD(15), REC_END);
        ASSERT_REQUEST_REFUSED(NTS_KE_ERROR_UNRECOGNIZED_CRITICAL_RECORD,
                               REC_NTPV4, REC_AEAD(15), { .type = 0x1234, .critical = true }, REC_END);
        ASSERT_REQUEST_REFUSED(NTS_KE_ERROR_BAD_REQUEST, REC_NTPV4, REC_AEAD(15), REC_END, REC_END);

        /* What a client may add, and what is unknown but not critical, is no reason to refuse. */
        ASSERT_EQ(nts_server_ke_decode_request(
                          &IOVEC_MAKE(buf, build((const Rec[]) { REC_NTPV4, REC_AEAD(15), REC_PORT(123),
                                                                 { .type = 0x1234 }, REC_END }, 5)),
                          &req),
                  6 + 6 + 6 + 4 + 4);
}

/* A pool reads back each name byte for byte as sent. */
static void test_denied_names_reach_the_server_side_as_sent(void) {
        static const NTS_AEADAlgorithm aead[] = { NTS_AEAD_AES_SIV_CMAC_256 };
        char *deny[] = { (char *) "A.Pool.Test", (char *) "b.pool.test", (char *) "::1" };
        NTSServerKERequest req;
        uint8_t request[128];
        ssize_t n;

        n = ASSERT_OK(NTS_encode_request(request, sizeof(request), aead, 1, deny, ELEMENTSOF(deny)));
        ASSERT_EQ(nts_server_ke_decode_request(&IOVEC_MAKE(request, n), &req), n);
        ASSERT_EQ(req.n_denied, ELEMENTSOF(deny));
        ASSERT_TRUE(nts_server_ke_request_denies(&req, "A.Pool.Test"));
        ASSERT_TRUE(nts_server_ke_request_denies(&req, "b.pool.test"));
        ASSERT_TRUE(nts_server_ke_request_denies(&req, "::1"));
        ASSERT_FALSE(nts_server_ke_request_denies(&req, "a.pool.test"));
        ASSERT_FALSE(nts_server_ke_request_denies(&req, "b.pool.tes"));
        ASSERT_EQ(req.n_aead, 1);

        ASSERT_REQUEST_REFUSED(NTS_KE_ERROR_BAD_REQUEST, REC_NTPV4, REC_AEAD(15),
                               { .type = NTS_KE_RECORD_NTP_SERVER_DENY }, REC_END);
}

TEST_MAIN(TEST_CASE(test_record_next_splits_header_and_body),
          TEST_CASE(test_record_next_needs_a_whole_record),
          TEST_CASE(test_record_append_refuses_what_does_not_fit),
          TEST_CASE(test_request_is_byte_exact),
          TEST_CASE(test_request_needs_room_and_an_algorithm),
          TEST_CASE(test_deny_records_are_noncritical_one_per_name_before_end),
          TEST_CASE(test_deny_list_bounds),
          TEST_CASE(test_chrony_like_response_is_accepted),
          TEST_CASE(test_ntpsec_like_response_is_accepted),
          TEST_CASE(test_chrony_error_only_response_names_the_server_error),
          TEST_CASE(test_error_record_codes_are_mapped),
          TEST_CASE(test_any_warning_is_an_error),
          TEST_CASE(test_error_and_warning_records_must_hold_a_code),
          TEST_CASE(test_response_without_cookies_is_refused),
          TEST_CASE(test_empty_or_oversized_cookie_is_refused),
          TEST_CASE(test_cookies_beyond_eight_are_ignored),
          TEST_CASE(test_unknown_critical_record_is_refused),
          TEST_CASE(test_unknown_noncritical_record_is_skipped),
          TEST_CASE(test_keep_alive_from_a_pool_is_skipped),
          TEST_CASE(test_deny_record_in_a_response_is_skipped),
          TEST_CASE(test_compliant_128gcm_record_is_noted),
          TEST_CASE(test_exporter_aead_table),
          TEST_CASE(test_request_asks_for_compliant_128gcm_only_with_it),
          TEST_CASE(test_aead_not_offered_is_refused_and_named),
          TEST_CASE(test_empty_aead_record_means_no_common_algorithm),
          TEST_CASE(test_aead_record_must_name_one_algorithm),
          TEST_CASE(test_missing_aead_record_is_refused),
          TEST_CASE(test_duplicate_aead_record_is_refused),
          TEST_CASE(test_missing_next_protocol_is_refused),
          TEST_CASE(test_next_protocol_must_be_exactly_ntpv4),
          TEST_CASE(test_duplicate_next_protocol_is_refused),
          TEST_CASE(test_port_must_be_one_nonzero_value),
          TEST_CASE(test_end_of_message_must_be_empty_and_last),
          TEST_CASE(test_message_without_end_is_incomplete),
          TEST_CASE(test_message_beyond_the_limit_is_too_long),
          TEST_CASE(test_server_accepts_addresses_and_names),
          TEST_CASE(test_server_refuses_what_is_neither_address_nor_name),
          TEST_CASE(test_duplicate_server_is_refused),
          TEST_CASE(test_flipped_bits_never_yield_an_unsafe_success),
          TEST_CASE(test_truncation_at_any_length_is_incomplete),
          TEST_CASE(test_round_trip_through_the_server_side),
          TEST_CASE(test_server_side_refuses_malformed_requests),
          TEST_CASE(test_denied_names_reach_the_server_side_as_sent))
