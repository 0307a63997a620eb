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

/* Sets *why (when why is set) to what is wrong, a phrase for server_name_invalid_reason(). */
static int invalid(const char **why, const char *reason) {
        if (why)
                *why = reason;
        return -EINVAL;
}

static const char *host_invalid_reason(const char *host) {
        if (isempty(host))
                return "no host name";
        if (strchr(host, '_'))
                return "'_' is not allowed in a host name";
        return "not a host name or IPv4 address (letters, digits, '-' and '.', labels of 1 to 63)";
}

#define PORT_INVALID "the port is not a number from 1 to 65535"

static int split(const char *s, const char **ret_host, size_t *ret_len, uint16_t *ret_port, const char **why) {
        const char *colon;
        uint16_t port = 0;

        if (s[0] == '[') {
                const char *close = strchr(s, ']');
                size_t n;

                if (!close)
                        return invalid(why, "'[' without ']'");
                n = (size_t) (close - s - 1);
                if (n == 0 || n >= IN_ADDR_TO_STRING_MAX)
                        return invalid(why, "brackets hold an IPv6 address only");

                char address[n + 1];
                memcpy(address, s + 1, n);
                address[n] = '\0';
                if (in_addr_from_string(AF_INET6, address, NULL) < 0)
                        return invalid(why, "brackets hold an IPv6 address only");

                if (close[1] == ':') {
                        if (parse_port(close + 2, &port) < 0)
                                return invalid(why, PORT_INVALID);
                } else if (close[1] != '\0')
                        return invalid(why, "only \":PORT\" may follow ']'");

                *ret_host = s + 1;
                *ret_len = n;
                *ret_port = port;
                return 0;
        }

        colon = strchr(s, ':');
        if (colon && strchr(colon + 1, ':')) {
                /* Two or more colons without brackets: only a bare IPv6 address fits. */
                if (in_addr_from_string(AF_INET6, s, NULL) < 0)
                        return invalid(why, "not an IPv6 address (one with a port goes in brackets: "
                                            "[2001:db8::1]:4460)");
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
                return invalid(why, host_invalid_reason(host));
        if (colon && parse_port(colon + 1, &port) < 0)
                return invalid(why, PORT_INVALID);

        *ret_host = s;
        *ret_len = n;
        *ret_port = port;
        return 0;
}

/* The mistakes that no part of the name explains better: a URL, a list. */
static int check_whole(const char *s, const char **why) {
        if (isempty(s))
                return invalid(why, "empty");
        if (strstr(s, "://"))
                return invalid(why, "a URL: give the host name alone, without a scheme such as nts://");
        if (strchr(s, ','))
                return invalid(why, "a comma: servers are separated by spaces");
        /* Bounds the stack copies in split(): nothing longer can be valid, not even the longest
         * host name with its trailing dot and a port. */
        if (strlen(s) > HOSTNAME_MAX + strlen(".:65535"))
                return invalid(why, "longer than a host name can be");
        return 0;
}

static int parse_one(const char *s, char **ret_host, uint16_t *ret_port, const char **why) {
        const char *host;
        uint16_t port;
        size_t n;
        int r;

        assert(s);

        r = check_whole(s, why);
        if (r < 0)
                return r;
        r = split(s, &host, &n, &port, why);
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

int server_name_parse(const char *s, char **ret_host, uint16_t *ret_port) {
        return parse_one(s, ret_host, ret_port, NULL);
}

/* What follows "pool:" or "srv:" is a pool's name unless it is a port: "pool:123" has always
 * been the host "pool" at port 123. */
static const char *pool_prefix(const char *s, const char *prefix) {
        const char *rest = startswith(s, prefix);

        if (!rest || (!isempty(rest) && strspn(rest, "0123456789") == strlen(rest)))
                return NULL;
        return rest;
}

static int parse_nts(const char *s, ServerNameKind *ret_kind, char **ret_host, uint16_t *ret_port,
                     const char **why) {
        ServerNameKind kind = SERVER_NAME_ONE;
        const char *rest;
        uint16_t port = 0;
        int r;

        assert(s);

        if ((rest = pool_prefix(s, "srv:"))) {
                r = check_whole(rest, why);
                if (r < 0)
                        return r;
                /* The records give the ports, and each target is a name of its own: no port,
                 * no address literal. */
                if (!hostname_is_valid(rest))
                        return invalid(why, "srv: takes a DNS name, without a port or an address");
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
                r = parse_one(rest ?: s, ret_host, &port, why);
                if (r < 0)
                        return r;
        }

        if (ret_kind)
                *ret_kind = kind;
        if (ret_port)
                *ret_port = port;
        return 0;
}

int server_name_parse_nts(const char *s, ServerNameKind *ret_kind, char **ret_host, uint16_t *ret_port) {
        return parse_nts(s, ret_kind, ret_host, ret_port, NULL);
}

const char *server_name_invalid_reason(const char *s, bool nts) {
        const char *why = NULL;

        assert(s);

        if (nts)
                return parse_nts(s, NULL, NULL, NULL, &why) < 0 ? why : NULL;
        if (parse_one(s, NULL, NULL, &why) >= 0)
                return NULL;
        if (pool_prefix(s, "pool:") || pool_prefix(s, "srv:"))
                return "pool: and srv: entries are for NTS= and FallbackNTS= only";
        return why;
}
