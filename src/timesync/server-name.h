/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The spelling of one server in NTP=, FallbackNTP=, NTS= and on D-Bus:
 *
 *   host          ntp.example.com    a host name (RFC 1123, see hostname-util.h)
 *   host:port     ntp.example.com:4460
 *   v4, v4:port   192.0.2.1, 192.0.2.1:123
 *   [v6][:port]   [2001:db8::1], [2001:db8::1]:4460
 *   v6            2001:db8::1        bare IPv6, which can carry no port
 *
 * Stock timesyncd 252 takes no ports; the forms without one mean the same thing as there. */

#include <stdint.h>

#include "macro.h"

/* Splits s into the host (without brackets) and the port, 0 when none is given (the protocol's
 * default then). -EINVAL when s is none of the forms above or the port is not in 1..65535.
 * ret_host may be NULL to only validate; -ENOMEM when it cannot be allocated. */
int server_name_parse(const char *s, char **ret_host, uint16_t *ret_port);

static inline bool server_name_is_valid(const char *s) {
        return server_name_parse(s, NULL, NULL) >= 0;
}
