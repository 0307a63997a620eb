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
 * Stock timesyncd 252 takes no ports; the forms without one mean the same thing as there.
 *
 * NTS lists (NTS=, SetRuntimeNTSServers()) also take two kinds of pool (docs/NTS.md, "Pools"):
 *
 *   pool:SERVER   pool:nts.pool.example      a key-exchange pool: SERVER (any form above) is
 *                                            asked several times, for several members
 *   srv:NAME      srv:example.org            an SRV pool: the NTS-KE servers named by the
 *                                            DNSSEC-validated SRV records _ntske._tcp.NAME
 *
 * "pool:" and "srv:" followed by a port number keep their old meaning (a host named "pool" or
 * "srv" at that port): a pool name is never all digits. */

#include <stdint.h>

#include "macro.h"

/* Splits s into the host (without brackets) and the port, 0 when none is given (the protocol's
 * default then). -EINVAL when s is none of the forms above or the port is not in 1..65535.
 * ret_host may be NULL to only validate; -ENOMEM when it cannot be allocated. */
int server_name_parse(const char *s, char **ret_host, uint16_t *ret_port);

static inline bool server_name_is_valid(const char *s) {
        return server_name_parse(s, NULL, NULL) >= 0;
}

typedef enum ServerNameKind {
        SERVER_NAME_ONE,        /* one server */
        SERVER_NAME_KE_POOL,    /* pool:SERVER */
        SERVER_NAME_SRV,        /* srv:NAME (ret_port 0: the SRV records give the ports) */
        _SERVER_NAME_KIND_MAX,
} ServerNameKind;

/* As server_name_parse(), for the spellings of NTS lists: also pool:SERVER and srv:NAME (a host
 * name, a trailing dot allowed, no port). ret_kind may be NULL. */
int server_name_parse_nts(const char *s, ServerNameKind *ret_kind, char **ret_host, uint16_t *ret_port);

static inline bool server_name_is_valid_nts(const char *s) {
        return server_name_parse_nts(s, NULL, NULL, NULL) >= 0;
}

/* Why s is not a valid server name, in the spelling of NTS lists (nts) or of NTP lists: a phrase
 * for a message ("the port is not a number from 1 to 65535", "a URL: give the host name alone,
 * without a scheme such as nts://"); NULL when s is valid. */
const char *server_name_invalid_reason(const char *s, bool nts);
