/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>

#include "socket-address.h"

const char *socket_address_host_to_string(const SocketAddress *a, char buf[static SOCKET_ADDRESS_HOST_MAX]) {
        const void *addr = NULL;

        assert(a);

        if (a->sa.ss_family == AF_INET)
                addr = &((const struct sockaddr_in *) &a->sa)->sin_addr;
        else if (a->sa.ss_family == AF_INET6)
                addr = &((const struct sockaddr_in6 *) &a->sa)->sin6_addr;

        if (!addr || !inet_ntop(a->sa.ss_family, addr, buf, SOCKET_ADDRESS_HOST_MAX))
                snprintf(buf, SOCKET_ADDRESS_HOST_MAX, "(unknown)");
        return buf;
}

const char *socket_address_to_string(const SocketAddress *a, char buf[static SOCKET_ADDRESS_STRING_MAX]) {
        char ip[SOCKET_ADDRESS_HOST_MAX];

        assert(a);

        socket_address_host_to_string(a, ip);
        if (a->sa.ss_family == AF_INET)
                snprintf(buf, SOCKET_ADDRESS_STRING_MAX, "%s:%u", ip, socket_address_port(a));
        else if (a->sa.ss_family == AF_INET6)
                snprintf(buf, SOCKET_ADDRESS_STRING_MAX, "[%s]:%u", ip, socket_address_port(a));
        else
                snprintf(buf, SOCKET_ADDRESS_STRING_MAX, "(unknown)");
        return buf;
}

int socket_address_from_string(const char *ip, uint16_t port, SocketAddress *ret) {
        struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(port) };
        struct sockaddr_in6 in6 = { .sin6_family = AF_INET6, .sin6_port = htons(port) };

        assert(ip);
        assert(ret);

        *ret = (SocketAddress) {};
        if (inet_pton(AF_INET, ip, &in.sin_addr) == 1) {
                memcpy(&ret->sa, &in, sizeof(in));
                ret->len = sizeof(in);
                return 0;
        }
        if (inet_pton(AF_INET6, ip, &in6.sin6_addr) == 1) {
                memcpy(&ret->sa, &in6, sizeof(in6));
                ret->len = sizeof(in6);
                return 0;
        }
        return -EINVAL;
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
