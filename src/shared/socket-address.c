/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdio.h>

#include "socket-address.h"

const char *socket_address_host_to_string(const SocketAddress *a, char buf[static SOCKET_ADDRESS_HOST_MAX]) {
        const void *addr = NULL;

        assert(a);

        if (a->sa.ss_family == AF_INET)
                addr = &((const struct sockaddr_in *) &a->sa)->sin_addr;
        else if (a->sa.ss_family == AF_INET6)
                addr = &((const struct sockaddr_in6 *) &a->sa)->sin6_addr;

        if (!addr || !in_addr_to_string(a->sa.ss_family, addr, buf, SOCKET_ADDRESS_HOST_MAX))
                snprintf(buf, SOCKET_ADDRESS_HOST_MAX, "(unknown)");
        return buf;
}

const char *socket_address_to_string(const SocketAddress *a,
                                     char buf[static SOCKET_ADDRESS_STRING_MAX]) {
        char ip[IN_ADDR_TO_STRING_MAX];

        assert(a);

        switch (a->sa.ss_family) {
        case AF_INET: {
                const struct sockaddr_in *in = (const struct sockaddr_in *) &a->sa;
                if (!in_addr_to_string(AF_INET, (const union in_addr_union *) &in->sin_addr, ip,
                                       sizeof(ip)))
                        break;
                snprintf(buf, SOCKET_ADDRESS_STRING_MAX, "%s:%u", ip, ntohs(in->sin_port));
                return buf;
        }
        case AF_INET6: {
                const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *) &a->sa;
                if (!in_addr_to_string(AF_INET6, (const union in_addr_union *) &in6->sin6_addr, ip,
                                       sizeof(ip)))
                        break;
                snprintf(buf, SOCKET_ADDRESS_STRING_MAX, "[%s]:%u", ip, ntohs(in6->sin6_port));
                return buf;
        }
        }

        snprintf(buf, SOCKET_ADDRESS_STRING_MAX, "(unknown)");
        return buf;
}

int socket_address_from_in_addr(int family, const union in_addr_union *u, uint16_t port,
                                SocketAddress *ret) {
        assert(u);
        assert(ret);

        *ret = (SocketAddress) {};
        switch (family) {
        case AF_INET: {
                struct sockaddr_in in = { .sin_family = AF_INET,
                                          .sin_port = htons(port),
                                          .sin_addr = u->in };
                memcpy(&ret->sa, &in, sizeof(in));
                ret->len = sizeof(in);
                return 0;
        }
        case AF_INET6: {
                struct sockaddr_in6 in6 = { .sin6_family = AF_INET6,
                                            .sin6_port = htons(port),
                                            .sin6_addr = u->in6 };
                memcpy(&ret->sa, &in6, sizeof(in6));
                ret->len = sizeof(in6);
                return 0;
        }
        }
        return -EAFNOSUPPORT;
}

int socket_address_from_string(const char *ip, uint16_t port, SocketAddress *ret) {
        union in_addr_union u;
        int family, r;

        assert(ip);
        assert(ret);

        r = in_addr_from_string_auto(ip, &family, &u);
        if (r < 0)
                return r;
        return socket_address_from_in_addr(family, &u, port, ret);
}

uint16_t socket_address_port(const SocketAddress *a) {
        assert(a);

        switch (a->sa.ss_family) {
        case AF_INET:
                return ntohs(((const struct sockaddr_in *) &a->sa)->sin_port);
        case AF_INET6:
                return ntohs(((const struct sockaddr_in6 *) &a->sa)->sin6_port);
        }
        return 0;
}

bool socket_address_equal(const SocketAddress *a, const SocketAddress *b) {
        assert(a);
        assert(b);

        if (a->sa.ss_family != b->sa.ss_family)
                return false;

        switch (a->sa.ss_family) {
        case AF_INET: {
                const struct sockaddr_in *x = (const struct sockaddr_in *) &a->sa,
                                         *y = (const struct sockaddr_in *) &b->sa;
                return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
        }
        case AF_INET6: {
                const struct sockaddr_in6 *x = (const struct sockaddr_in6 *) &a->sa,
                                          *y = (const struct sockaddr_in6 *) &b->sa;
                return x->sin6_port == y->sin6_port && x->sin6_scope_id == y->sin6_scope_id &&
                       memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr)) == 0;
        }
        }
        return false;
}

void socket_address_set_port(SocketAddress *a, uint16_t port) {
        assert(a);

        switch (a->sa.ss_family) {
        case AF_INET:
                ((struct sockaddr_in *) &a->sa)->sin_port = htons(port);
                break;
        case AF_INET6:
                ((struct sockaddr_in6 *) &a->sa)->sin6_port = htons(port);
                break;
        }
}
