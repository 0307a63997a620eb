/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <endian.h>
#include <stdio.h>
#include <string.h>

#include "timesyncd-source-identity.h"

/* The IP address of a, with an IPv4-mapped IPv6 address as its IPv4 one: the same machine
 * reached over a dual-stack socket is still the same machine. */
static void ip_of(const SocketAddress *a, int *ret_family, union in_addr_union *ret, uint16_t *ret_port) {
        *ret = (union in_addr_union) {};
        *ret_family = AF_UNSPEC;
        *ret_port = a ? socket_address_port(a) : 0;

        if (!a)
                return;
        if (a->sa.ss_family == AF_INET && a->len >= sizeof(struct sockaddr_in)) {
                ret->in = ((const struct sockaddr_in *) &a->sa)->sin_addr;
                *ret_family = AF_INET;
        } else if (a->sa.ss_family == AF_INET6 && a->len >= sizeof(struct sockaddr_in6)) {
                const struct in6_addr *in6 = &((const struct sockaddr_in6 *) &a->sa)->sin6_addr;

                if (IN6_IS_ADDR_V4MAPPED(in6)) {
                        memcpy(&ret->in, in6->s6_addr + 12, sizeof ret->in);
                        *ret_family = AF_INET;
                } else {
                        ret->in6 = *in6;
                        *ret_family = AF_INET6;
                }
        }
}

void source_identity_set_ntp_address(SourceIdentity *id, const SocketAddress *a) {
        assert(id);
        ip_of(a, &id->ntp_family, &id->ntp_address, &id->ntp_port);
}

void source_identity_set_ke_address(SourceIdentity *id, const SocketAddress *a) {
        assert(id);
        ip_of(a, &id->ke_family, &id->ke_address, &id->ke_port);
}

void source_identity_set_key(SourceIdentity *id, const uint8_t *key) {
        assert(id);

        id->has_key = key;
        if (key)
                memcpy(id->key_sha256, key, sizeof id->key_sha256);
        else
                memset(id->key_sha256, 0, sizeof id->key_sha256);
}

bool source_identity_known(const SourceIdentity *id) {
        return id && (id->ntp_family != AF_UNSPEC || id->ke_family != AF_UNSPEC || id->has_key);
}

static bool is_loopback(int family, const union in_addr_union *u) {
        return family == AF_INET ? (be32toh(u->in.s_addr) >> 24) == 127 : IN6_IS_ADDR_LOOPBACK(&u->in6);
}

static bool same_ip(int fa, const union in_addr_union *a, uint16_t pa, int fb, const union in_addr_union *b,
                    uint16_t pb) {
        if (fa == AF_UNSPEC || fa != fb || !in_addr_equal(fa, a, b))
                return false;
        return !is_loopback(fa, a) || pa == pb;
}

static bool same_ntp_address(const SourceIdentity *a, const SourceIdentity *b) {
        return same_ip(a->ntp_family, &a->ntp_address, a->ntp_port, b->ntp_family, &b->ntp_address, b->ntp_port);
}

SourceSameness source_identity_same(const SourceIdentity *a, const SourceIdentity *b) {
        assert(a);
        assert(b);

        /* The members of one key-exchange pool share its server and its certificate: that is
         * what a pool is, and says nothing about the members. The pool names them all, so its
         * word about its own members is all there is, and costs no one else a vote. */
        if (a->ke_pool && a->ke_pool == b->ke_pool)
                return same_ntp_address(a, b) ? SOURCE_SAME_NTP_ADDRESS : SOURCE_DISTINCT;
        if (same_ip(a->ke_family, &a->ke_address, a->ke_port, b->ke_family, &b->ke_address, b->ke_port))
                return SOURCE_SAME_KE_ADDRESS;
        if (a->ke_family != AF_UNSPEC && is_loopback(a->ke_family, &a->ke_address) &&
            b->ke_family != AF_UNSPEC && is_loopback(b->ke_family, &b->ke_address))
                return SOURCE_DISTINCT;
        if (a->has_key && b->has_key && memcmp(a->key_sha256, b->key_sha256, sizeof a->key_sha256) == 0)
                return SOURCE_SAME_KEY;
        return SOURCE_DISTINCT;
}

bool source_identity_conflict(const SourceIdentity *a, const SourceIdentity *b) {
        assert(a);
        assert(b);

        return same_ntp_address(a, b) && source_identity_same(a, b) == SOURCE_DISTINCT;
}

const char *source_identity_reason(const SourceIdentity *a, SourceSameness why,
                                   char buf[static SOURCE_IDENTITY_REASON_MAX]) {
        char ip[IN_ADDR_TO_STRING_MAX];

        assert(a);

        switch (why) {
        case SOURCE_SAME_NTP_ADDRESS:
                snprintf(buf, SOURCE_IDENTITY_REASON_MAX, "same NTP address %s",
                         in_addr_to_string(a->ntp_family, &a->ntp_address, ip, sizeof ip) ?: "?");
                break;
        case SOURCE_SAME_KE_ADDRESS:
                snprintf(buf, SOURCE_IDENTITY_REASON_MAX, "same key-exchange address %s",
                         in_addr_to_string(a->ke_family, &a->ke_address, ip, sizeof ip) ?: "?");
                break;
        case SOURCE_SAME_KEY: {
                /* The first bytes are enough to find it again (openssl x509 -pubkey | openssl
                 * pkey -pubin -outform der | sha256sum). */
                int n = snprintf(buf, SOURCE_IDENTITY_REASON_MAX, "same certificate key, SHA-256 ");

                for (size_t i = 0; i < 8 && n > 0 && (size_t) n + 2 < SOURCE_IDENTITY_REASON_MAX; i++)
                        n += snprintf(buf + n, SOURCE_IDENTITY_REASON_MAX - (size_t) n, "%02x", a->key_sha256[i]);
                if (n > 0 && (size_t) n + 3 < SOURCE_IDENTITY_REASON_MAX)
                        memcpy(buf + n, "...", 4);
                break;
        }
        default:
                snprintf(buf, SOURCE_IDENTITY_REASON_MAX, "different servers");
        }
        return buf;
}
