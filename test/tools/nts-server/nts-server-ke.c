/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "iovec-util.h"
#include "macro.h"
#include "nts-server-ke.h"
#include "unaligned.h"

static int bad_request(NTSServerKERequest *ret, uint16_t code) {
        ret->error_code = code;
        return -EBADMSG;
}

/* Reads a list of 16-bit IDs; an empty, odd-sized or overlong list is a bad request. */
static int read_ids(const struct iovec *body, uint16_t *ids, size_t *n) {
        const uint8_t *p = body->iov_base;

        if (body->iov_len == 0 || body->iov_len % 2 != 0 || body->iov_len / 2 > NTS_SERVER_KE_MAX_IDS)
                return -EBADMSG;

        *n = body->iov_len / 2;
        for (size_t i = 0; i < *n; i++)
                ids[i] = unaligned_read_be16(p + 2 * i);
        return 0;
}

ssize_t nts_server_ke_decode_request(const struct iovec *msg, NTSServerKERequest *ret) {
        bool have_protocols = false, have_aead = false, end = false;
        struct iovec rest;
        NTS_Record rec;

        assert(msg);
        assert(ret);

        *ret = (NTSServerKERequest) {};
        rest = *msg;

        while (!end) {
                if (NTS_record_next(&rest, &rec) < 0)
                        return msg->iov_len >= NTS_KE_MAX_MESSAGE_SIZE ? -EMSGSIZE : -ENODATA;
                if (msg->iov_len - rest.iov_len > NTS_KE_MAX_MESSAGE_SIZE)
                        return -EMSGSIZE;

                switch (rec.type) {

                case NTS_KE_RECORD_END_OF_MESSAGE:
                        if (rec.body.iov_len != 0 || rest.iov_len != 0)
                                return bad_request(ret, NTS_KE_ERROR_BAD_REQUEST);
                        end = true;
                        break;

                case NTS_KE_RECORD_NEXT_PROTOCOL:
                        if (have_protocols || read_ids(&rec.body, ret->protocols, &ret->n_protocols) < 0)
                                return bad_request(ret, NTS_KE_ERROR_BAD_REQUEST);
                        have_protocols = true;
                        break;

                case NTS_KE_RECORD_AEAD_ALGORITHM:
                        if (have_aead || read_ids(&rec.body, ret->aead, &ret->n_aead) < 0)
                                return bad_request(ret, NTS_KE_ERROR_BAD_REQUEST);
                        have_aead = true;
                        break;

                case NTS_KE_RECORD_ERROR:
                case NTS_KE_RECORD_WARNING:
                        /* Only servers send these. */
                        return bad_request(ret, NTS_KE_ERROR_BAD_REQUEST);

                case NTS_KE_RECORD_NTP_SERVER_DENY:
                        /* Whatever the critical bit says: the type is known here. */
                        if (ret->n_denied >= ELEMENTSOF(ret->denied) || rec.body.iov_len == 0 ||
                            rec.body.iov_len > NTS_MAX_SERVER_NAME_SIZE)
                                return bad_request(ret, NTS_KE_ERROR_BAD_REQUEST);
                        ret->denied[ret->n_denied++] = rec.body;
                        break;

                case NTS_KE_RECORD_NEW_COOKIE:
                case NTS_KE_RECORD_SERVER:
                case NTS_KE_RECORD_PORT:
                        /* A client may suggest a server or port, and may return cookies for
                         * reuse; a test server has no use for either. */
                        break;

                default:
                        if (rec.critical)
                                return bad_request(ret, NTS_KE_ERROR_UNRECOGNIZED_CRITICAL_RECORD);
                        break;
                }
        }

        if (!have_protocols || !have_aead)
                return bad_request(ret, NTS_KE_ERROR_BAD_REQUEST);

        return (ssize_t) (msg->iov_len - rest.iov_len);
}

bool nts_server_ke_request_offers(const NTSServerKERequest *req, uint16_t aead) {
        assert(req);

        for (size_t i = 0; i < req->n_aead; i++)
                if (req->aead[i] == aead)
                        return true;
        return false;
}

bool nts_server_ke_request_denies(const NTSServerKERequest *req, const char *name) {
        assert(req);
        assert(name);

        for (size_t i = 0; i < req->n_denied; i++)
                if (iovec_equal(&req->denied[i], &IOVEC_MAKE(name, strlen(name))))
                        return true;
        return false;
}

int nts_server_ke_pick_aead(const NTSServerKERequest *req, const uint16_t *supported, size_t n_supported,
                            uint16_t *ret) {
        assert(req);
        assert(supported || n_supported == 0);
        assert(ret);

        for (size_t i = 0; i < req->n_aead; i++)
                for (size_t j = 0; j < n_supported; j++)
                        if (req->aead[i] == supported[j]) {
                                *ret = supported[j];
                                return 0;
                        }
        return -ENOENT;
}

uint16_t nts_server_ke_unoffered_aead(const NTSServerKERequest *req) {
        static const uint16_t known[] = {
                NTS_AEAD_ID_AES_SIV_CMAC_256, NTS_AEAD_ID_AES_SIV_CMAC_384, NTS_AEAD_ID_AES_SIV_CMAC_512,
                NTS_AEAD_ID_AES_128_GCM_SIV, NTS_AEAD_ID_AES_256_GCM_SIV,
        };

        assert(req);

        for (size_t i = 0; i < ELEMENTSOF(known); i++)
                if (!nts_server_ke_request_offers(req, known[i]))
                        return known[i];

        /* Every registered one was offered: pick an unassigned ID. */
        for (uint16_t id = UINT16_MAX;; id--)
                if (!nts_server_ke_request_offers(req, id))
                        return id;
}

static int append_u16(struct iovec *out, uint16_t type, bool critical, uint16_t value) {
        uint8_t body[2];

        unaligned_write_be16(body, value);
        return NTS_record_append(out, type, critical, body, sizeof(body));
}

static int append_cookies(struct iovec *out, const NTSServerKEResponse *r) {
        _cleanup_free_ uint8_t *cookie = NULL;
        int k;

        if (r->n_cookies == 0)
                return 0;

        cookie = malloc(MAX(r->cookie_size, (size_t) 1));
        if (!cookie)
                return -ENOMEM;

        for (size_t i = 0; i < r->n_cookies; i++) {
                if (r->cookie_func) {
                        k = r->cookie_func(r->userdata, i, cookie, r->cookie_size);
                        if (k < 0)
                                return k;
                } else if (r->cookie_data)
                        memcpy(cookie, r->cookie_data + i * r->cookie_size, r->cookie_size);
                else
                        for (size_t j = 0; j < r->cookie_size; j++)
                                cookie[j] = (uint8_t) (i * 16 + j);

                /* RFC 8915 section 4.1.6: the critical bit is not set on cookies. */
                k = NTS_record_append(out, NTS_KE_RECORD_NEW_COOKIE, false, cookie, r->cookie_size);
                if (k < 0)
                        return k;
        }

        return 0;
}

ssize_t nts_server_ke_encode_response(void *buf, size_t size, const NTSServerKEResponse *r) {
        struct iovec out = IOVEC_MAKE(buf, size);
        int k;

        assert(buf || size == 0);
        assert(r);

        if (r->error_code >= 0) {
                k = append_u16(&out, NTS_KE_RECORD_ERROR, true, (uint16_t) r->error_code);
                if (k < 0)
                        return k;
        }

        if (r->warning_code >= 0) {
                k = append_u16(&out, NTS_KE_RECORD_WARNING, true, (uint16_t) r->warning_code);
                if (k < 0)
                        return k;
        }

        if (!r->omit_next_protocol) {
                if (r->empty_next_protocol)
                        k = NTS_record_append(&out, NTS_KE_RECORD_NEXT_PROTOCOL, true, NULL, 0);
                else
                        k = append_u16(&out, NTS_KE_RECORD_NEXT_PROTOCOL, true, NTS_PROTOCOL_NTPV4);
                if (k < 0)
                        return k;
        }

        if (!r->omit_aead) {
                if (r->aead_empty)
                        k = NTS_record_append(&out, NTS_KE_RECORD_AEAD_ALGORITHM, r->aead_critical, NULL, 0);
                else
                        k = append_u16(&out, NTS_KE_RECORD_AEAD_ALGORITHM, r->aead_critical, r->aead);
                if (k < 0)
                        return k;
        }

        if (r->server) {
                k = NTS_record_append(&out, NTS_KE_RECORD_SERVER, true, r->server, strlen(r->server));
                if (k < 0)
                        return k;
        }

        for (unsigned i = 0; r->port != 0 && i < (r->duplicate_port ? 2U : 1U); i++) {
                k = append_u16(&out, NTS_KE_RECORD_PORT, true, r->port);
                if (k < 0)
                        return k;
        }

        k = append_cookies(&out, r);
        if (k < 0)
                return k;

        /* draft-venhoek-nts-pool section 6.1: empty, not critical. */
        if (r->keep_alive) {
                k = NTS_record_append(&out, NTS_KE_RECORD_KEEP_ALIVE, false, NULL, 0);
                if (k < 0)
                        return k;
        }

        if (r->unknown_critical) {
                k = NTS_record_append(&out, NTS_SERVER_KE_UNKNOWN_RECORD, true, "?", 1);
                if (k < 0)
                        return k;
        }

        if (r->unknown_noncritical) {
                k = NTS_record_append(&out, NTS_SERVER_KE_UNKNOWN_RECORD, false, "?", 1);
                if (k < 0)
                        return k;
        }

        k = NTS_record_append(&out, NTS_KE_RECORD_END_OF_MESSAGE, true, NULL, 0);
        if (k < 0)
                return k;

        if (r->data_after_end) {
                k = append_u16(&out, NTS_KE_RECORD_PORT, true, 123);
                if (k < 0)
                        return k;
        }

        return (ssize_t) (size - out.iov_len);
}
