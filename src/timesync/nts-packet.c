/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "hostname-util.h"
#include "in-addr-util.h"
#include "iovec-util.h"
#include "macro.h"
#include "nts.h"
#include "unaligned.h"

int NTS_record_next(struct iovec *msg, NTS_Record *ret) {
        const uint8_t *p;
        size_t size;

        assert(msg);
        assert(ret);

        if (msg->iov_len < NTS_KE_RECORD_HEADER_SIZE)
                return -ENODATA;

        p = msg->iov_base;
        size = unaligned_read_be16(p + 2);
        if (msg->iov_len - NTS_KE_RECORD_HEADER_SIZE < size)
                return -ENODATA;

        *ret = (NTS_Record) {
                .type = unaligned_read_be16(p) & NTS_KE_RECORD_TYPE_MASK,
                .critical = unaligned_read_be16(p) & NTS_KE_RECORD_CRITICAL,
                .body = IOVEC_MAKE(p + NTS_KE_RECORD_HEADER_SIZE, size),
        };
        iovec_inc(msg, NTS_KE_RECORD_HEADER_SIZE + size);
        return 0;
}

/* Writes a record header to *out and returns where its body goes; the caller fills the body. */
static int record_begin(struct iovec *out, uint16_t type, bool critical, size_t size, uint8_t **ret_body) {
        uint8_t *p;

        assert(out);
        assert(type <= NTS_KE_RECORD_TYPE_MASK);

        if (size > UINT16_MAX)
                return -EMSGSIZE;
        if (out->iov_len < NTS_KE_RECORD_HEADER_SIZE + size)
                return -ENOBUFS;

        p = out->iov_base;
        unaligned_write_be16(p, (uint16_t) (type | (critical ? NTS_KE_RECORD_CRITICAL : 0)));
        unaligned_write_be16(p + 2, (uint16_t) size);
        iovec_inc(out, NTS_KE_RECORD_HEADER_SIZE + size);

        *ret_body = p + NTS_KE_RECORD_HEADER_SIZE;
        return 0;
}

int NTS_record_append(struct iovec *out, uint16_t type, bool critical, const void *body, size_t size) {
        uint8_t *p;
        int r;

        assert(body || size == 0);

        r = record_begin(out, type, critical, size, &p);
        if (r < 0)
                return r;

        if (size > 0)
                memcpy(p, body, size);
        return 0;
}

static bool offers_128gcm(const NTS_AEADAlgorithm *aead, size_t n_aead) {
        for (size_t i = 0; i < n_aead; i++)
                if (aead[i] == NTS_AEAD_AES_128_GCM_SIV)
                        return true;
        return false;
}

size_t NTS_request_size(const NTS_AEADAlgorithm *aead, size_t n_aead, char *const *deny, size_t n_deny) {
        size_t size = 3 * NTS_KE_RECORD_HEADER_SIZE + 2 + 2 * n_aead;

        assert(aead || n_aead == 0);
        assert(deny || n_deny == 0);

        if (offers_128gcm(aead, n_aead))
                size += NTS_KE_RECORD_HEADER_SIZE;

        for (size_t i = 0; i < n_deny; i++)
                size += NTS_KE_RECORD_HEADER_SIZE + strlen(deny[i]);
        return size;
}

ssize_t NTS_encode_request(void *buf, size_t size, const NTS_AEADAlgorithm *aead, size_t n_aead,
                           char *const *deny, size_t n_deny) {
        struct iovec out = IOVEC_MAKE(buf, size);
        uint8_t protocol[2], *p;
        int r;

        assert(buf || size == 0);
        assert(aead || n_aead == 0);
        assert(deny || n_deny == 0);

        /* A list longer than one record body can hold is as meaningless as an empty one. */
        if (n_aead == 0 || n_aead > UINT16_MAX / 2)
                return -EINVAL;
        if (n_deny > NTS_KE_MAX_DENIED_SERVERS)
                return -E2BIG;
        /* No pool has sent a name like these in a Server record: the decoder refuses them. */
        for (size_t i = 0; i < n_deny; i++)
                if (isempty(deny[i]) || strlen(deny[i]) > NTS_MAX_SERVER_NAME_SIZE)
                        return -EINVAL;

        /* RFC 8915 section 4.1.2 and 4.1.5: both records are critical in a request, as a server
         * that does not understand them cannot give a useful answer. */
        unaligned_write_be16(protocol, NTS_PROTOCOL_NTPV4);
        r = NTS_record_append(&out, NTS_KE_RECORD_NEXT_PROTOCOL, true, protocol, sizeof(protocol));
        if (r < 0)
                return r;

        r = record_begin(&out, NTS_KE_RECORD_AEAD_ALGORITHM, true, 2 * n_aead, &p);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n_aead; i++)
                unaligned_write_be16(p + 2 * i, (uint16_t) aead[i]);

        /* Asks for the RFC's exporter context with AEAD_AES_128_GCM_SIV. Not critical: a
         * server that does not know the record skips it. */
        if (offers_128gcm(aead, n_aead)) {
                r = NTS_record_append(&out, NTS_KE_RECORD_COMPLIANT_128GCM_EXPORT, false, NULL, 0);
                if (r < 0)
                        return r;
        }

        /* draft-venhoek-nts-pool section 6.6: not critical, or a server without pool support
         * would answer with an Error record (RFC 8915 section 4) instead of ignoring it. */
        for (size_t i = 0; i < n_deny; i++) {
                r = NTS_record_append(&out, NTS_KE_RECORD_NTP_SERVER_DENY, false, deny[i], strlen(deny[i]));
                if (r < 0)
                        return r;
        }

        r = NTS_record_append(&out, NTS_KE_RECORD_END_OF_MESSAGE, true, NULL, 0);
        if (r < 0)
                return r;

        return (ssize_t) (size - out.iov_len);
}

static bool aead_offered(uint16_t id, const NTS_AEADAlgorithm *offered, size_t n_offered) {
        for (size_t i = 0; i < n_offered; i++)
                if ((uint16_t) offered[i] == id)
                        return true;
        return false;
}

static bool server_is_valid(const struct iovec *body) {
        char text[NTS_MAX_SERVER_NAME_SIZE + 1];

        /* An embedded NUL would cut the name short for anyone who treats it as a C string. */
        if (body->iov_len == 0 || body->iov_len > NTS_MAX_SERVER_NAME_SIZE ||
            memchr(body->iov_base, 0, body->iov_len))
                return false;

        memcpy(text, body->iov_base, body->iov_len);
        text[body->iov_len] = 0;

        return in_addr_from_string_auto(text, NULL, NULL) >= 0 || hostname_is_valid(text);
}

/* Fills in why the response was refused, and drops everything else so that no half-decoded
 * agreement can be used by mistake. */
static ssize_t refuse(NTS_Agreement *ret, int r, NTS_Error error, uint16_t record_type,
                      uint16_t server_code) {
        *ret = (NTS_Agreement) {
                .error = error,
                .record_type = record_type,
                .server_code = server_code,
        };
        return r;
}

static ssize_t refuse_record(NTS_Agreement *ret, NTS_Error error, uint16_t record_type) {
        return refuse(ret, -EBADMSG, error, record_type, 0);
}

static NTS_Error server_error(uint16_t code) {
        switch (code) {
        case NTS_KE_ERROR_UNRECOGNIZED_CRITICAL_RECORD:
                return NTS_ERROR_SERVER_UNRECOGNIZED_CRITICAL_RECORD;
        case NTS_KE_ERROR_BAD_REQUEST:
                return NTS_ERROR_SERVER_BAD_REQUEST;
        case NTS_KE_ERROR_INTERNAL_SERVER_ERROR:
                return NTS_ERROR_SERVER_INTERNAL_ERROR;
        default:
                return NTS_ERROR_SERVER_UNKNOWN_ERROR;
        }
}

/* Once the records seen so far cannot fit into a message of NTS_KE_MAX_MESSAGE_SIZE, waiting
 * for more is pointless. */
static ssize_t refuse_incomplete(const struct iovec *msg, const struct iovec *rest, NTS_Agreement *ret) {
        size_t offset = msg->iov_len - rest->iov_len, needed = NTS_KE_RECORD_HEADER_SIZE;

        if (rest->iov_len >= NTS_KE_RECORD_HEADER_SIZE)
                needed += unaligned_read_be16((const uint8_t *) rest->iov_base + 2);

        if (offset + needed > NTS_KE_MAX_MESSAGE_SIZE)
                return refuse(ret, -EMSGSIZE, NTS_ERROR_KE_TOO_LONG, 0, 0);
        return refuse(ret, -ENODATA, NTS_ERROR_KE_TRUNCATED, 0, 0);
}

ssize_t NTS_decode_response(const struct iovec *msg, const NTS_AEADAlgorithm *offered, size_t n_offered,
                            NTS_Agreement *ret) {
        bool have_next_protocol = false, have_aead = false, have_port = false, end = false;
        struct iovec rest;
        NTS_Record rec;

        assert(msg);
        assert(msg->iov_base || msg->iov_len == 0);
        assert(offered || n_offered == 0);
        assert(ret);

        *ret = (NTS_Agreement) {};
        rest = *msg;

        /* The critical bit tells a receiver whether it may skip a record type it does not
         * know. For the types below it changes nothing, so it is accepted either way: servers
         * differ (chrony marks the AEAD record critical, NTPsec does not). */
        while (!end) {
                if (NTS_record_next(&rest, &rec) < 0)
                        return refuse_incomplete(msg, &rest, ret);
                if (msg->iov_len - rest.iov_len > NTS_KE_MAX_MESSAGE_SIZE)
                        return refuse(ret, -EMSGSIZE, NTS_ERROR_KE_TOO_LONG, 0, 0);

                const uint8_t *body = rec.body.iov_base;
                size_t size = rec.body.iov_len;

                switch (rec.type) {

                case NTS_KE_RECORD_END_OF_MESSAGE:
                        /* RFC 8915 section 4.1.1: the body is empty, and it ends the message. */
                        if (size != 0)
                                return refuse_record(ret, NTS_ERROR_KE_BAD_RECORD_LENGTH, rec.type);
                        if (rest.iov_len > 0)
                                return refuse_record(ret, NTS_ERROR_KE_DATA_AFTER_END, rec.type);
                        end = true;
                        break;

                case NTS_KE_RECORD_NEXT_PROTOCOL:
                        /* RFC 8915 section 4.1.2: a list of 16-bit protocol IDs, a subset of the
                         * request's. We asked for NTPv4 only, so that is the one acceptable
                         * answer; an empty list is the server's refusal. */
                        if (have_next_protocol)
                                return refuse_record(ret, NTS_ERROR_KE_DUPLICATE_RECORD, rec.type);
                        if (size % 2 != 0)
                                return refuse_record(ret, NTS_ERROR_KE_BAD_RECORD_LENGTH, rec.type);
                        if (size != 2 || unaligned_read_be16(body) != NTS_PROTOCOL_NTPV4)
                                return refuse_record(ret, NTS_ERROR_KE_NO_NEXT_PROTOCOL, rec.type);
                        have_next_protocol = true;
                        break;

                case NTS_KE_RECORD_ERROR:
                        /* RFC 8915 section 4.1.3: one 16-bit error code. */
                        if (size != 2)
                                return refuse_record(ret, NTS_ERROR_KE_BAD_RECORD_LENGTH, rec.type);
                        return refuse(ret, -EBADMSG, server_error(unaligned_read_be16(body)), rec.type,
                                      unaligned_read_be16(body));

                case NTS_KE_RECORD_WARNING:
                        /* RFC 8915 section 4.1.4: one 16-bit warning code. None are defined,
                         * and a client must treat those it does not know as errors. */
                        if (size != 2)
                                return refuse_record(ret, NTS_ERROR_KE_BAD_RECORD_LENGTH, rec.type);
                        return refuse(ret, -EBADMSG, NTS_ERROR_SERVER_WARNING, rec.type,
                                      unaligned_read_be16(body));

                case NTS_KE_RECORD_AEAD_ALGORITHM:
                        /* RFC 8915 section 4.1.5: in a response exactly one 16-bit ID, one we
                         * offered; an empty body means there is no algorithm in common. */
                        if (have_aead)
                                return refuse_record(ret, NTS_ERROR_KE_DUPLICATE_RECORD, rec.type);
                        if (size == 0)
                                return refuse_record(ret, NTS_ERROR_KE_NO_COMMON_AEAD, rec.type);
                        if (size != 2)
                                return refuse_record(ret, NTS_ERROR_KE_BAD_RECORD_LENGTH, rec.type);
                        if (!aead_offered(unaligned_read_be16(body), offered, n_offered)) {
                                (void) refuse_record(ret, NTS_ERROR_KE_AEAD_NOT_OFFERED, rec.type);
                                /* Named in the message: a server may pick one we never offer. */
                                ret->aead = (NTS_AEADAlgorithm) unaligned_read_be16(body);
                                return -EBADMSG;
                        }
                        ret->aead = (NTS_AEADAlgorithm) unaligned_read_be16(body);
                        have_aead = true;
                        break;

                case NTS_KE_RECORD_NEW_COOKIE:
                        /* RFC 8915 section 4.1.6: an opaque cookie. Every one must be sane,
                         * but only the first NTS_MAX_COOKIES are kept. */
                        if (size == 0 || size > NTS_MAX_COOKIE_SIZE)
                                return refuse_record(ret, NTS_ERROR_KE_BAD_COOKIE, rec.type);
                        if (ret->n_cookies < NTS_MAX_COOKIES)
                                ret->cookies[ret->n_cookies++] = rec.body;
                        break;

                case NTS_KE_RECORD_SERVER:
                        /* RFC 8915 section 4.1.7: an IPv4 or IPv6 address or a host name in
                         * ASCII, where the NTP server is. */
                        if (iovec_is_set(&ret->server))
                                return refuse_record(ret, NTS_ERROR_KE_DUPLICATE_RECORD, rec.type);
                        if (!server_is_valid(&rec.body))
                                return refuse_record(ret, NTS_ERROR_KE_BAD_SERVER, rec.type);
                        ret->server = rec.body;
                        break;

                case NTS_KE_RECORD_PORT:
                        /* RFC 8915 section 4.1.8: one 16-bit UDP port. */
                        if (have_port)
                                return refuse_record(ret, NTS_ERROR_KE_DUPLICATE_RECORD, rec.type);
                        if (size != 2)
                                return refuse_record(ret, NTS_ERROR_KE_BAD_RECORD_LENGTH, rec.type);
                        if (unaligned_read_be16(body) == 0)
                                return refuse_record(ret, NTS_ERROR_KE_BAD_PORT, rec.type);
                        ret->port = unaligned_read_be16(body);
                        have_port = true;
                        break;

                case NTS_KE_RECORD_COMPLIANT_128GCM_EXPORT:
                        /* chrony's record: empty. It matters only with AEAD_AES_128_GCM_SIV
                         * (NTS_exporter_aead()); twice says nothing new. */
                        if (size != 0)
                                return refuse_record(ret, NTS_ERROR_KE_BAD_RECORD_LENGTH, rec.type);
                        ret->compliant_128gcm = true;
                        break;

                default:
                        /* RFC 8915 section 4: a record we do not know may be skipped only
                         * when the server did not mark it critical. */
                        if (rec.critical)
                                return refuse_record(ret, NTS_ERROR_KE_UNKNOWN_CRITICAL_RECORD, rec.type);
                        break;
                }
        }

        if (!have_next_protocol)
                return refuse_record(ret, NTS_ERROR_KE_NO_NEXT_PROTOCOL, NTS_KE_RECORD_NEXT_PROTOCOL);
        if (!have_aead)
                return refuse_record(ret, NTS_ERROR_KE_NO_AEAD, NTS_KE_RECORD_AEAD_ALGORITHM);
        if (ret->n_cookies == 0)
                return refuse_record(ret, NTS_ERROR_KE_NO_COOKIES, NTS_KE_RECORD_NEW_COOKIE);

        ret->error = NTS_OK;
        return (ssize_t) (msg->iov_len - rest.iov_len);
}

uint16_t NTS_exporter_aead(const NTS_Agreement *a) {
        assert(a);

        /* The server echoes record 1024 only when it chose AEAD_AES_128_GCM_SIV and takes the
         * RFC's context. chrony 4.4 to 4.6.0 do not know the record, and chrony 4.6.1 and
         * later fall back to that old context without it: 15 for this algorithm. */
        if (a->aead == NTS_AEAD_AES_128_GCM_SIV && !a->compliant_128gcm)
                return NTS_AEAD_ID_AES_SIV_CMAC_256;
        return (uint16_t) a->aead;
}
