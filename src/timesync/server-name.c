/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "hostname-util.h"
#include "in-addr-util.h"
#include "server-name.h"
#include "string-util.h"

/* Decimal 1..65535, digits only: no sign, no blanks, no hex. */
static int parse_port(const char *s, uint16_t *ret) {
        uint64_t v;

        if (parse_unsigned(s, UINT16_MAX, &v) < 0 || v == 0)
                return -EINVAL;

        *ret = (uint16_t) v;
        return 0;
}

static bool host_is_valid(const char *host) {
        return in_addr_from_string(AF_INET, host, NULL) >= 0 || hostname_is_valid(host);
}

static int split(const char *s, const char **ret_host, size_t *ret_len, uint16_t *ret_port) {
        const char *colon;
        uint16_t port = 0;

        if (s[0] == '[') {
                const char *close = strchr(s, ']');
                size_t n;

                if (!close)
                        return -EINVAL;
                n = (size_t) (close - s - 1);
                if (n == 0 || n >= IN_ADDR_TO_STRING_MAX)
                        return -EINVAL;

                char address[n + 1];
                memcpy(address, s + 1, n);
                address[n] = '\0';
                if (in_addr_from_string(AF_INET6, address, NULL) < 0)
                        return -EINVAL;

                if (close[1] == ':') {
                        if (parse_port(close + 2, &port) < 0)
                                return -EINVAL;
                } else if (close[1] != '\0')
                        return -EINVAL;

                *ret_host = s + 1;
                *ret_len = n;
                *ret_port = port;
                return 0;
        }

        colon = strchr(s, ':');
        if (colon && strchr(colon + 1, ':')) {
                /* Two or more colons without brackets: only a bare IPv6 address fits. */
                if (in_addr_from_string(AF_INET6, s, NULL) < 0)
                        return -EINVAL;
                *ret_host = s;
                *ret_len = strlen(s);
                *ret_port = 0;
                return 0;
        }

        size_t n = colon ? (size_t) (colon - s) : strlen(s);
        char host[n + 1];
        memcpy(host, s, n);
        host[n] = '\0';
        if (!host_is_valid(host))
                return -EINVAL;
        if (colon && parse_port(colon + 1, &port) < 0)
                return -EINVAL;

        *ret_host = s;
        *ret_len = n;
        *ret_port = port;
        return 0;
}

int server_name_parse(const char *s, char **ret_host, uint16_t *ret_port) {
        const char *host;
        uint16_t port;
        size_t n;
        int r;

        assert(s);

        /* Bounds the stack copies in split(): nothing longer can be valid, not even the longest
         * host name with its trailing dot and a port. */
        if (strlen(s) > HOSTNAME_MAX + strlen(".:65535"))
                return -EINVAL;

        r = split(s, &host, &n, &port);
        if (r < 0)
                return r;

        if (ret_host) {
                char *h = strndup(host, n);
                if (!h)
                        return -ENOMEM;
                *ret_host = h;
        }
        if (ret_port)
                *ret_port = port;
        return 0;
}

/* What follows "pool:" or "srv:" is a pool's name unless it is a port: "pool:123" has always
 * been the host "pool" at port 123. */
static const char *pool_prefix(const char *s, const char *prefix) {
        const char *rest = startswith(s, prefix);

        if (!rest || (!isempty(rest) && strspn(rest, "0123456789") == strlen(rest)))
                return NULL;
        return rest;
}

int server_name_parse_nts(const char *s, ServerNameKind *ret_kind, char **ret_host, uint16_t *ret_port) {
        ServerNameKind kind = SERVER_NAME_ONE;
        const char *rest;
        uint16_t port = 0;
        int r;

        assert(s);

        if ((rest = pool_prefix(s, "srv:"))) {
                /* The records give the ports, and each target is a name of its own: no port,
                 * no address literal. */
                if (!hostname_is_valid(rest))
                        return -EINVAL;
                if (ret_host) {
                        char *h = strdup(rest);
                        if (!h)
                                return -ENOMEM;
                        *ret_host = h;
                }
                kind = SERVER_NAME_SRV;
        } else {
                rest = pool_prefix(s, "pool:");
                if (rest)
                        kind = SERVER_NAME_KE_POOL;
                r = server_name_parse(rest ?: s, ret_host, &port);
                if (r < 0)
                        return r;
        }

        if (ret_kind)
                *ret_kind = kind;
        if (ret_port)
                *ret_port = port;
        return 0;
}
