/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <sys/types.h>

#include "iovec-util.h"
#include "nts-server-ef.h"
#include "nts-extfields.h"
#include "unaligned.h"

static const char *const sabotage_names[_NTS_SERVER_SABOTAGE_MAX] = {
        [NTS_SERVER_HONEST] = "honest",
        [NTS_SERVER_WRONG_UID] = "wrong-uid",
        [NTS_SERVER_CORRUPT_AUTHENTICATOR] = "corrupt-authenticator",
        [NTS_SERVER_NO_AUTHENTICATOR] = "no-authenticator",
        [NTS_SERVER_NAK] = "nak",
        [NTS_SERVER_COOKIES_OUTSIDE] = "cookies-outside",
};

const char *nts_server_sabotage_to_string(NTSServerSabotage s) {
        return s >= 0 && s < _NTS_SERVER_SABOTAGE_MAX ? sabotage_names[s] : NULL;
}

int nts_server_sabotage_from_string(const char *s) {
        if (!s)
                return -EINVAL;
        for (int i = 0; i < _NTS_SERVER_SABOTAGE_MAX; i++)
                if (streq(s, sabotage_names[i]))
                        return i;
        return -EINVAL;
}

int nts_server_parse_request(const struct iovec *packet, NTSServerRequest *ret) {
        NTSServerRequest req = {};
        bool have_uid = false, have_cookie = false, have_auth = false;
        struct iovec p;
        NTS_ExtensionField ef;
        size_t placeholder_size = 0;
        int r;

        assert(packet);
        assert(ret);

        if (packet->iov_len < NTP_HEADER_SIZE)
                return -EBADMSG;

        p = *packet;
        iovec_inc(&p, NTP_HEADER_SIZE);
        while ((r = NTS_ef_next(&p, &ef)) >= 0) {
                if (have_auth)
                        return -EBADMSG;

                switch (ef.type) {
                case NTP_EF_NTS_UNIQUE_IDENTIFIER:
                        if (have_uid || ef.body.iov_len < NTS_UID_SIZE)
                                return -EBADMSG;
                        have_uid = true;
                        req.uid = ef.body;
                        break;
                case NTP_EF_NTS_COOKIE:
                        if (have_cookie)
                                return -EBADMSG;
                        have_cookie = true;
                        req.cookie = ef.body;
                        break;
                case NTP_EF_NTS_COOKIE_PLACEHOLDER:
                        if (req.n_placeholders > 0 && ef.body.iov_len != placeholder_size)
                                return -EBADMSG;
                        placeholder_size = ef.body.iov_len;
                        req.n_placeholders++;
                        break;
                case NTP_EF_NTS_AUTH_AND_EEF:
                        have_auth = true;
                        req.auth = ef;
                        break;
                default:
                        break;
                }
        }
        if (r != -ENODATA)
                return r;

        if (!have_uid || !have_cookie || !have_auth)
                return -EBADMSG;
        if (req.n_placeholders > 0 && placeholder_size != req.cookie.iov_len)
                return -EBADMSG;

        *ret = req;
        return 0;
}

int nts_server_verify_request(const struct iovec *packet, const NTSServerRequest *req, NTS_AEADContext *c2s) {
        uint8_t plaintext[NTS_MAX_PACKET_SIZE];
        struct iovec out = IOVEC_MAKE(plaintext, sizeof(plaintext));
        NTS_Error reason;
        int r;

        assert(packet);
        assert(req);
        assert(c2s);

        r = NTS_ef_open_authenticator(packet->iov_base, &req->auth, c2s, &out, &reason);
        explicit_bzero_safe(plaintext, sizeof(plaintext));
        return r;
}

static int append_cookies(struct iovec *out, const NTSServerResponse *r) {
        int k;

        for (size_t i = 0; i < r->n_cookies; i++) {
                k = NTS_ef_append(out, NTP_EF_NTS_COOKIE, r->cookies[i].iov_base, r->cookies[i].iov_len);
                if (k < 0)
                        return k;
        }
        return 0;
}

ssize_t nts_server_build_response(const NTSServerResponse *r, uint8_t *buf, size_t size) {
        uint8_t uid[256], plaintext[NTS_MAX_PACKET_SIZE];
        struct iovec out, pt;
        uint8_t *auth;
        int k;

        assert(r);
        assert(r->header);
        assert(buf);

        if (size < NTP_HEADER_SIZE || r->uid.iov_len > sizeof(uid) || !iovec_is_set(&r->uid))
                return -EINVAL;
        if (!r->s2c && r->sabotage != NTS_SERVER_NO_AUTHENTICATOR && r->sabotage != NTS_SERVER_NAK)
                return -EINVAL;

        memcpy(buf, r->header, NTP_HEADER_SIZE);
        out = IOVEC_MAKE(buf + NTP_HEADER_SIZE, size - NTP_HEADER_SIZE);

        if (r->sabotage == NTS_SERVER_NAK) {
                buf[1] = 0;
                memcpy(buf + 12, NTS_KISS_NTSN, 4);
        }

        memcpy(uid, r->uid.iov_base, r->uid.iov_len);
        if (r->sabotage == NTS_SERVER_WRONG_UID)
                uid[0] ^= 0xff;
        k = NTS_ef_append(&out, NTP_EF_NTS_UNIQUE_IDENTIFIER, uid, r->uid.iov_len);
        if (k < 0)
                return k;

        switch (r->sabotage) {
        case NTS_SERVER_NAK:
                return (uint8_t *) out.iov_base - buf;

        case NTS_SERVER_NO_AUTHENTICATOR:
                k = append_cookies(&out, r);
                if (k < 0)
                        return k;
                return (uint8_t *) out.iov_base - buf;

        case NTS_SERVER_COOKIES_OUTSIDE:
                k = append_cookies(&out, r);
                if (k < 0)
                        return k;
                pt = IOVEC_NULL;
                break;

        default:
                pt = IOVEC_MAKE(plaintext, sizeof(plaintext));
                k = append_cookies(&pt, r);
                if (k < 0)
                        return k;
                pt = IOVEC_MAKE(plaintext, (uint8_t *) pt.iov_base - plaintext);
        }

        auth = out.iov_base;
        k = NTS_ef_append_authenticator(&out, buf, r->s2c, &pt);
        explicit_bzero_safe(plaintext, sizeof(plaintext));
        if (k < 0)
                return k;

        if (r->sabotage == NTS_SERVER_CORRUPT_AUTHENTICATOR) {
                /* The first byte after the nonce: the SIV tag. */
                size_t nonce_size = unaligned_read_be16(auth + NTP_EF_HEADER_SIZE);
                auth[NTP_EF_HEADER_SIZE + 4 + ALIGN4(nonce_size)] ^= 0x01;
        }

        return (uint8_t *) out.iov_base - buf;
}
