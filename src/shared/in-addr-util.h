/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* IPv4/IPv6 addresses as one union plus an address family, parsed and printed strictly: IPv4 only
 * as four decimal octets, IPv6 in RFC 4291 section 2.2 text form without a zone index. */

#include <netinet/in.h>
#include <sys/socket.h>

#include "macro.h"

union in_addr_union {
        struct in_addr in;
        struct in6_addr in6;
        uint8_t bytes[sizeof(struct in6_addr)];
};

/* INET6_ADDRSTRLEN, which also fits every IPv4 address. */
#define IN_ADDR_TO_STRING_MAX INET6_ADDRSTRLEN

static inline bool address_family_is_ip(int family) {
        return family == AF_INET || family == AF_INET6;
}

/* Bytes of the address for AF_INET/AF_INET6, 0 for anything else. */
size_t family_address_size(int family) _const_;

/* -EAFNOSUPPORT for a family other than AF_INET/AF_INET6, -EINVAL for text that is not an
 * address of that family. ret may be NULL to only validate. */
int in_addr_from_string(int family, const char *s, union in_addr_union *ret);
/* Tries IPv4, then IPv6; the family found goes to *ret_family. */
int in_addr_from_string_auto(const char *s, int *ret_family, union in_addr_union *ret);

/* Formats into buf (at least IN_ADDR_TO_STRING_MAX bytes); NULL for an unsupported family. */
const char *in_addr_to_string(int family, const union in_addr_union *u, char *buf, size_t size);
#define IN_ADDR_TO_STRING(family, u)                                                           \
        in_addr_to_string((family), (u), (char[IN_ADDR_TO_STRING_MAX]) {}, IN_ADDR_TO_STRING_MAX)

bool in_addr_is_null(int family, const union in_addr_union *u) _pure_;
bool in_addr_equal(int family, const union in_addr_union *a, const union in_addr_union *b) _pure_;
