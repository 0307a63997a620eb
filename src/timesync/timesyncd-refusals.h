/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Replies from a server that the daemon refused, counted by cause: the log says each cause
 * once per interval, NTSStatus names the last one when no reply passed, and D-Bus shows the
 * counts (RefusedReplies). One record per server (ServerName), so that it moves with the server
 * into a per-source object. Pure: no I/O, no logging, no clock reads. */

#include <stdbool.h>

#include "nts.h"
#include "time-util.h"

/* The same cause is logged at most this often per server; the others go to debug level. */
#define REFUSAL_LOG_INTERVAL_USEC (10 * USEC_PER_MINUTE)

typedef enum RefusalCause {
        REFUSAL_OVERSIZED,              /* larger than the receive buffer: refused whole, never parsed cut */
        REFUSAL_SHORT,                  /* shorter than an NTP header */
        REFUSAL_WRONG_ORIGIN,           /* does not echo the transmit timestamp of our request */
        REFUSAL_NOT_SERVER_REPLY,       /* mode other than server, or version other than 3 and 4 */
        /* NTS verification, one per NTS_ERROR_NTP_* (nts.h) */
        REFUSAL_NTS_TRUNCATED,
        REFUSAL_NTS_BAD_EXTENSION_FIELD,
        REFUSAL_NTS_NO_UID,
        REFUSAL_NTS_UID_MISMATCH,
        REFUSAL_NTS_NO_AUTHENTICATOR,
        REFUSAL_NTS_BAD_AUTHENTICATOR,
        REFUSAL_NTS_AUTH_FAILED,
        REFUSAL_NTS_NO_COOKIES,
        REFUSAL_NTS_NAK,
        _REFUSAL_CAUSE_MAX,
        _REFUSAL_CAUSE_INVALID = -EINVAL,
} RefusalCause;

typedef struct RefusalCount {
        unsigned count;
        const char *reason;             /* static text of the last one, for logs and D-Bus */
        usec_t first_realtime;          /* CLOCK_REALTIME of the first one */
        usec_t last_realtime;
        usec_t logged;                  /* CLOCK_BOOTTIME of the last one logged; 0: none yet */
} RefusalCount;

typedef struct Refusals {
        RefusalCount by_cause[_REFUSAL_CAUSE_MAX];
        RefusalCause last;              /* valid when total > 0 */
        unsigned total;
} Refusals;

/* Counts one refusal; reason must be a static string. Returns true when it is to be logged:
 * the first of its cause, or the first after REFUSAL_LOG_INTERVAL_USEC. */
bool refusals_add(Refusals *r, RefusalCause cause, const char *reason, usec_t realtime, usec_t boottime);

/* "oversized", "nts-auth-failed", ...: the names D-Bus shows. NULL outside the enum. */
const char *refusal_cause_to_string(RefusalCause c);
/* The cause for an NTS_ERROR_NTP_* code; -EINVAL for any other. */
RefusalCause refusal_cause_from_nts_error(NTS_Error e);
