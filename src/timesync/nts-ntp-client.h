/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One NTS-protected NTP exchange (RFC 8915 section 5), blocking for at most a timeout: for
 * the one-shot query tool, the demo and the integration tests. The daemon runs its own NTP
 * loop on sd-event and does not use this. */

#include "ntp-packet.h"
#include "nts.h"
#include "socket-address.h"
#include "time-util.h"

typedef struct NTS_NTPQueryParams {
        NTS_AEADContext *c2s;
        NTS_AEADContext *s2c;
        struct iovec cookie;            /* spent by this query (not owned) */
        size_t n_placeholders;          /* cookies to ask for in addition to the one returned */
        usec_t timeout_usec;
} NTS_NTPQueryParams;

/* Everything here is owned by the result; release it with NTS_ntp_result_done(). */
typedef struct NTS_NTPResult {
        NTS_Error nts_error;            /* why the response was refused, NTS_OK otherwise */
        char kiss[5];                   /* kiss code of a refused kiss-o'-death, NUL-terminated */
        NTPHeader header;               /* the server's header, set once a reply to us arrived */
        NTPSample sample;               /* offset (server clock minus ours) and delay */
        struct iovec cookies[NTS_MAX_COOKIES];
        size_t n_cookies;
        size_t request_size;            /* UDP payload sent; 0 if nothing was sent */
        size_t reply_size;              /* UDP payload of the reply, once one arrived */
} NTS_NTPResult;

void NTS_ntp_result_done(NTS_NTPResult *r);

/* Sends one request to server and waits for the reply; *ret is overwritten. Packets that are
 * not a server reply to this request (wrong size, mode, version or origin timestamp) are
 * ignored while waiting; the first reply to it decides. Returns 0 when that reply is
 * authentic; the negative errno of NTS_parse_extension_fields() with ret->nts_error set when
 * NTS refuses it (NTS_ERROR_NTP_NAK included); -EPROTO with ret->kiss set for an authentic
 * kiss-o'-death; -ETIMEDOUT when no reply came in time; another negative errno for socket
 * errors. The caller judges stratum and leap of an authentic reply. */
int NTS_ntp_client_query(const SocketAddress *server, const NTS_NTPQueryParams *p, NTS_NTPResult *ret);

/* The same exchange without NTS: a bare NTPv4 request, and a reply that nothing authenticates.
 * Only for showing what plain NTP would say (nts-query --plain); never use it as time where NTS
 * was asked for. Returns 0, -EPROTO with ret->kiss set for a kiss-o'-death, -ETIMEDOUT, or a
 * socket error. */
int NTS_ntp_client_query_unauthenticated(const SocketAddress *server, uint64_t timeout_usec, NTS_NTPResult *ret);
