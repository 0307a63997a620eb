/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Numbers from RFC 8915 (Network Time Security for NTP) and the RFCs it builds on, each with
 * the section that defines it, plus the size limits this implementation enforces. NTP's own
 * numbers are in ntp-packet.h. */

#include "ntp-packet.h"

/* RFC 8915 section 4: NTS-KE runs over TLS on TCP port 4460, ALPN "ntske/1". */
#define NTS_KE_PORT 4460
#define NTS_KE_ALPN "ntske/1"

/* RFC 8915 section 4: every record is a 4-byte header (critical bit + 15-bit type, 16-bit
 * body length) followed by the body. */
#define NTS_KE_RECORD_HEADER_SIZE 4
#define NTS_KE_RECORD_CRITICAL 0x8000U
#define NTS_KE_RECORD_TYPE_MASK 0x7fffU

/* RFC 8915 section 4.1 (registry: section 7.6): record types. */
enum {
        NTS_KE_RECORD_END_OF_MESSAGE = 0,    /* 4.1.1 */
        NTS_KE_RECORD_NEXT_PROTOCOL = 1,     /* 4.1.2 */
        NTS_KE_RECORD_ERROR = 2,             /* 4.1.3 */
        NTS_KE_RECORD_WARNING = 3,           /* 4.1.4 */
        NTS_KE_RECORD_AEAD_ALGORITHM = 4,    /* 4.1.5 */
        NTS_KE_RECORD_NEW_COOKIE = 5,        /* 4.1.6 */
        NTS_KE_RECORD_SERVER = 6,            /* 4.1.7 NTPv4 Server Negotiation */
        NTS_KE_RECORD_PORT = 7,              /* 4.1.8 NTPv4 Port Negotiation */

        /* draft-venhoek-nts-pool ("NTS extensions for enabling pools"), section 6, with the
         * numbers IANA allocated and the pool implementations (pendulum-project's nts-pool,
         * ntpd-rs) use; the draft still lists its experimental ones, 0x4000 and 0x4003. Both
         * go without the critical bit, so that a server that knows no pools skips them. */
        NTS_KE_RECORD_KEEP_ALIVE = 8,        /* 6.1: between a pool and its members; a pool may
                                              * pass a member's on to the client, which skips it
                                              * like any unknown non-critical record */
        NTS_KE_RECORD_NTP_SERVER_DENY = 13,  /* 6.6: the body names a member the client does not
                                              * want, exactly as a Server record gave it (section
                                              * 5), without port; one record per member. A pool
                                              * with no other member gives a denied one anyway. */

        /* chrony's "Compliant AES-128-GCM-SIV Exporter Context" record
         * (https://chrony-project.org/doc/spec/nts-compliant-128gcm.html), from the range of
         * private use: empty and not critical. A client that offers AEAD_AES_128_GCM_SIV sends
         * it; a server that chose that algorithm and knows the record echoes it, and only then
         * do both put 30 into the exporter context (RFC 8915 section 5.1). Without it chrony
         * 4.4 and later put 15 there for this algorithm. */
        NTS_KE_RECORD_COMPLIANT_128GCM_EXPORT = 1024,
};

/* RFC 8915 section 4.1.3 (registry: section 7.8): codes of the Error record. */
enum {
        NTS_KE_ERROR_UNRECOGNIZED_CRITICAL_RECORD = 0,
        NTS_KE_ERROR_BAD_REQUEST = 1,
        NTS_KE_ERROR_INTERNAL_SERVER_ERROR = 2,
};

/* RFC 8915 section 7.7: NTS Next Protocols registry, Protocol ID 0 is NTPv4. */
#define NTS_PROTOCOL_NTPV4 0

/* AEAD algorithm identifiers from the IANA AEAD registry (RFC 5116 section 6):
 * RFC 5297 section 6 for AES-SIV-CMAC, RFC 8452 section 8 for AES-GCM-SIV. Of AES-GCM-SIV we
 * offer only AEAD_AES_128_GCM_SIV, where libcrypto has it (docs/NTS.md, "AEAD algorithms");
 * the number of AEAD_AES_256_GCM_SIV is here so that a server's choice of it can be named. */
#define NTS_AEAD_ID_AES_SIV_CMAC_256 15
#define NTS_AEAD_ID_AES_SIV_CMAC_384 16
#define NTS_AEAD_ID_AES_SIV_CMAC_512 17
#define NTS_AEAD_ID_AES_128_GCM_SIV 30
#define NTS_AEAD_ID_AES_256_GCM_SIV 31

/* RFC 8915 section 5.1: key derivation with the TLS exporter; the context is the protocol
 * ID (2 bytes), the AEAD ID (2 bytes) and 0x00 for client-to-server, 0x01 for
 * server-to-client keys. */
#define NTS_EXPORTER_LABEL "EXPORTER-network-time-security"
#define NTS_EXPORTER_CONTEXT_SIZE 5
#define NTS_EXPORTER_C2S 0x00
#define NTS_EXPORTER_S2C 0x01

/* RFC 8915 section 5.3-5.6 (registry: section 7.5): NTP extension field types. */
#define NTP_EF_NTS_UNIQUE_IDENTIFIER 0x0104
#define NTP_EF_NTS_COOKIE 0x0204
#define NTP_EF_NTS_COOKIE_PLACEHOLDER 0x0304
#define NTP_EF_NTS_AUTH_AND_EEF 0x0404

/* RFC 8915 section 5.3: the Unique Identifier is at least 32 random octets. */
#define NTS_UID_SIZE 32

/* RFC 8915 section 5.6: the nonce with the padding after it and the additional padding after
 * the ciphertext is at least N_REQ octets, the lesser of 16 and the algorithm's longest nonce.
 * We send 16-byte nonces with AES-SIV (RFC 5297 allows any length), and the 12 bytes that
 * AES-GCM-SIV takes (RFC 8452 section 4: N_MIN = N_MAX = 12), so no additional padding is
 * ever needed. */
#define NTS_MIN_NONCE_FIELD_SIZE 16
#define NTS_SIV_NONCE_SIZE 16
#define NTS_GCM_SIV_NONCE_SIZE 12
#define NTS_AEAD_TAG_SIZE 16

/* RFC 8915 section 4.1.6: servers SHOULD send eight cookies; section 5.7: a client keeps
 * about that many by asking for refills with placeholders. */
#define NTS_MAX_COOKIES 8

/* RFC 8915 section 5.7: the kiss code a server sends when it cannot use a cookie. */
#define NTS_KISS_NTSN "NTSN"

/* Our limits. A valid KE answer with eight cookies of any real server is a few hundred
 * bytes; anything larger than these is treated as an attack or a bug. */
#define NTS_KE_MAX_MESSAGE_SIZE 16384
#define NTS_MAX_COOKIE_SIZE 1024
#define NTS_MAX_SERVER_NAME_SIZE 255   /* RFC 1035 section 2.3.4: names are at most 255 octets */
/* NTP Server Deny records in one request: more than the sources a client takes from one pool
 * plus the members it turned down for sharing an address with one in use. */
#define NTS_KE_MAX_DENIED_SERVERS 16
#define NTS_MAX_AEAD_KEY_SIZE 64       /* AEAD_AES_SIV_CMAC_512 */
/* An NTP response: header, UID, authenticator with 8 cookies of the largest size. */
#define NTS_MAX_PACKET_SIZE (NTP_HEADER_SIZE + 2 * 64 + NTS_MAX_COOKIES * (NTS_MAX_COOKIE_SIZE + 8) + 128)
