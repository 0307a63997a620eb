/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <arpa/inet.h>
#include <stdio.h>

#include "server-name.h"
#include "timesyncd-manager.h"
#include "timesyncd-nts.h"
#include "timesyncd-server.h"

static const char *const server_type_table[_SERVER_TYPE_MAX] = {
        [SERVER_SYSTEM] = "system",
        [SERVER_FALLBACK] = "fallback",
        [SERVER_LINK] = "link",
        [SERVER_RUNTIME] = "runtime",
        [SERVER_NTS] = "nts",
        [SERVER_NTS_RUNTIME] = "nts-runtime",
};

const char *server_type_to_string(ServerType t) {
        if (t < 0 || t >= _SERVER_TYPE_MAX)
                return NULL;
        return server_type_table[t];
}

int server_name_new(Manager *m, ServerName **ret, ServerType type, const char *string) {
        _cleanup_free_ char *host = NULL;
        ServerName *n;
        uint16_t port;
        int r;

        assert(m);
        assert(string);
        assert(type >= 0 && type < _SERVER_TYPE_MAX);

        r = server_name_parse(string, &host, &port);
        if (r < 0)
                return r;

        n = new0(ServerName, 1);
        if (!n)
                return -ENOMEM;

        n->manager = m;
        n->type = type;
        n->port = port;
        n->host = TAKE_PTR(host);
        n->string = strdup(string);
        if (!n->string || (server_type_is_nts(type) && nts_state_new(n, &n->nts) < 0)) {
                free(n->string);
                free(n->host);
                free(n);
                return -ENOMEM;
        }

        LIST_APPEND(names, *manager_server_list(m, type), n);

        if (ret)
                *ret = n;
        return 0;
}

ServerName *server_name_free(ServerName *n) {
        if (!n)
                return NULL;

        server_name_flush_addresses(n);

        if (n->manager) {
                LIST_REMOVE(names, *manager_server_list(n->manager, n->type), n);
                if (n->manager->current_server_name == n)
                        manager_set_server_name(n->manager, NULL);
        }

        nts_state_free(n->nts);
        free(n->string);
        free(n->host);
        return mfree(n);
}

void server_name_flush_addresses(ServerName *n) {
        assert(n);

        while (n->addresses)
                server_address_free(n->addresses);
}

const char *server_name_string(const ServerName *n) {
        return n ? n->string : NULL;
}

int server_address_new(ServerName *n, ServerAddress **ret, const struct sockaddr *sa, socklen_t len) {
        ServerAddress *a;

        assert(n);
        assert(sa);

        if (len > sizeof(union sockaddr_union) || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
                return -EAFNOSUPPORT;

        a = new0(ServerAddress, 1);
        if (!a)
                return -ENOMEM;

        a->name = n;
        memcpy(&a->sockaddr, sa, len);
        a->socklen = len;

        LIST_APPEND(addresses, n->addresses, a);

        if (ret)
                *ret = a;
        return 0;
}

ServerAddress *server_address_free(ServerAddress *a) {
        if (!a)
                return NULL;

        if (a->name) {
                LIST_REMOVE(addresses, a->name->addresses, a);
                if (a->name->manager && a->name->manager->current_server_address == a)
                        manager_set_server_address(a->name->manager, NULL);
        }

        return mfree(a);
}

char *server_address_pretty(const ServerAddress *a, char *buf, size_t size) {
        char ip[INET6_ADDRSTRLEN];

        assert(a);
        assert(buf);

        if (a->sockaddr.sa.sa_family == AF_INET6) {
                inet_ntop(AF_INET6, &a->sockaddr.in6.sin6_addr, ip, sizeof ip);
                snprintf(buf, size, "[%s]:%u", ip, ntohs(a->sockaddr.in6.sin6_port));
        } else {
                inet_ntop(AF_INET, &a->sockaddr.in.sin_addr, ip, sizeof ip);
                snprintf(buf, size, "%s:%u", ip, ntohs(a->sockaddr.in.sin_port));
        }
        return buf;
}
