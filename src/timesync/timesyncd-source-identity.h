/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Which server a time source is, beyond the name it was listed under: one server, one vote
 * (docs/ARCHITECTURE.md, "Several sources", "One server, one vote").
 *
 * What the client verified itself is proof; what a key-exchange server says is a claim. The
 * address the client made its TLS connection to (one that completed a key exchange, so the
 * server there holds a valid certificate for the name asked) and the public key of that
 * certificate (the SHA-256 of its SubjectPublicKeyInfo) are proof. The NTP address is a claim:
 * the key-exchange server names it (RFC 8915 section 4.1.7), and may name any address, another
 * server's among them. So two sources are the same server when their key-exchange servers have
 * the same IP address, or showed certificates with the same public key: a name and its
 * address, one name in other letter case, two names of one machine, two SRV targets on one
 * address are all one server.
 *
 * The NTP address makes two sources one server only where one claimant named both: the members
 * of one key-exchange pool share its key-exchange server and certificate by design, so among
 * them only the NTP address tells servers apart (a pool naming one member twice, on two ports,
 * is one server). Elsewhere two sources that name one NTP address while their key-exchange
 * addresses and keys differ are a conflict (source_identity_conflict()), not twins: merging
 * them would let one key-exchange server, by naming another server's address, take that
 * server's vote away. Each keeps its vote, and the caller reports the conflict.
 *
 * A loopback address is this machine: servers there are daemons its administrator runs, told
 * apart by their ports, and their certificate keys are not compared (no one on the path can
 * put a server on the loopback; the test suites run all their servers there with one key).
 *
 * Pure: no I/O, no logging. The caller fills in what it knows; what is not known yet never
 * makes two sources the same. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "in-addr-util.h"
#include "socket-address.h"

#define SOURCE_IDENTITY_KEY_SIZE 32     /* SHA-256 */

typedef struct SourceIdentity {
        int ntp_family;                 /* AF_UNSPEC: not known */
        union in_addr_union ntp_address;
        int ke_family;                  /* AF_UNSPEC: not known (no key exchange in this run) */
        union in_addr_union ke_address;
        bool has_key;
        uint8_t key_sha256[SOURCE_IDENTITY_KEY_SIZE]; /* of the server certificate's SubjectPublicKeyInfo */
        const void *ke_pool;            /* the key-exchange pool it takes its member from; NULL: none */
        uint16_t ntp_port, ke_port;     /* tell servers on a loopback address apart */
} SourceIdentity;

typedef enum SourceSameness {
        SOURCE_DISTINCT,
        SOURCE_SAME_NTP_ADDRESS,
        SOURCE_SAME_KE_ADDRESS,
        SOURCE_SAME_KEY,
        _SOURCE_SAMENESS_MAX,
} SourceSameness;

/* The IP address of a (NULL: not known); an IPv4-mapped IPv6 address is taken as the IPv4
 * address it maps, the port and an IPv6 scope are left out. */
void source_identity_set_ntp_address(SourceIdentity *id, const SocketAddress *a);
void source_identity_set_ke_address(SourceIdentity *id, const SocketAddress *a);
/* key: SOURCE_IDENTITY_KEY_SIZE bytes; NULL: not known. */
void source_identity_set_key(SourceIdentity *id, const uint8_t *key);

bool source_identity_known(const SourceIdentity *id);

/* Whether a and b are one server, and why: within one key-exchange pool by the NTP address,
 * else by the key-exchange address, then by the certificate key. */
SourceSameness source_identity_same(const SourceIdentity *a, const SourceIdentity *b);

/* Whether a and b name one NTP address (on the loopback: and port) without being one server:
 * a claim one of them makes, not a reason to count them once. */
bool source_identity_conflict(const SourceIdentity *a, const SourceIdentity *b);

/* "same NTP address 127.0.0.1", "same key-exchange address ::1", "same certificate key
 * (SHA-256 1a2b3c4d...)": the reason in words with what a and b share. */
#define SOURCE_IDENTITY_REASON_MAX 96
const char *source_identity_reason(const SourceIdentity *a, SourceSameness why,
                                   char buf[static SOURCE_IDENTITY_REASON_MAX]);
