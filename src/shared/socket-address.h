/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A resolved socket address as one value, so that lists of them can be passed around and
 * copied, and its text form for logs. */

#include <sys/socket.h>

#include "in-addr-util.h"
#include "macro.h"

typedef struct SocketAddress {
        struct sockaddr_storage sa;
        socklen_t len;
} SocketAddress;

/* "127.0.0.1:123", "[::1]:4460"; "(unknown)" for families other than AF_INET and AF_INET6. */
#define SOCKET_ADDRESS_STRING_MAX (1 + IN_ADDR_TO_STRING_MAX + 2 + 5)
const char *socket_address_to_string(const SocketAddress *a,
                                     char buf[static SOCKET_ADDRESS_STRING_MAX]);

/* The address alone, "127.0.0.1" or "::1", for a host name field. */
#define SOCKET_ADDRESS_HOST_MAX IN_ADDR_TO_STRING_MAX
const char *socket_address_host_to_string(const SocketAddress *a, char buf[static SOCKET_ADDRESS_HOST_MAX]);

/* Returns 0, or -EAFNOSUPPORT for a family other than AF_INET and AF_INET6. */
int socket_address_from_in_addr(int family, const union in_addr_union *u, uint16_t port,
                                SocketAddress *ret);
/* Parses an IPv4 or IPv6 literal (no name resolution) with the given port. Returns 0 or
 * -EINVAL. */
int socket_address_from_string(const char *ip, uint16_t port, SocketAddress *ret);

uint16_t socket_address_port(const SocketAddress *a);
/* Same family, address, port and (IPv6) scope; an IPv4 address and its IPv4-mapped IPv6 form
 * differ. Families other than AF_INET and AF_INET6 are never equal. */
bool socket_address_equal(const SocketAddress *a, const SocketAddress *b) _pure_;
void socket_address_set_port(SocketAddress *a, uint16_t port);
