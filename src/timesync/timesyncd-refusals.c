/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <limits.h>

#include "macro.h"
#include "timesyncd-refusals.h"

static const char *const refusal_cause_table[_REFUSAL_CAUSE_MAX] = {
        [REFUSAL_OVERSIZED] = "oversized",
        [REFUSAL_SHORT] = "short",
        [REFUSAL_WRONG_ORIGIN] = "wrong-origin",
        [REFUSAL_NOT_SERVER_REPLY] = "not-server-reply",
        [REFUSAL_NTS_TRUNCATED] = "nts-truncated",
        [REFUSAL_NTS_BAD_EXTENSION_FIELD] = "nts-bad-extension-field",
        [REFUSAL_NTS_NO_UID] = "nts-no-uid",
        [REFUSAL_NTS_UID_MISMATCH] = "nts-uid-mismatch",
        [REFUSAL_NTS_NO_AUTHENTICATOR] = "nts-no-authenticator",
        [REFUSAL_NTS_BAD_AUTHENTICATOR] = "nts-bad-authenticator",
        [REFUSAL_NTS_AUTH_FAILED] = "nts-auth-failed",
        [REFUSAL_NTS_NO_COOKIES] = "nts-no-cookies",
        [REFUSAL_NTS_NAK] = "nts-nak",
};

const char *refusal_cause_to_string(RefusalCause c) {
        if (c < 0 || c >= _REFUSAL_CAUSE_MAX)
                return NULL;
        return refusal_cause_table[c];
}

RefusalCause refusal_cause_from_nts_error(NTS_Error e) {
        switch (e) {
        case NTS_ERROR_NTP_TRUNCATED:
                return REFUSAL_NTS_TRUNCATED;
        case NTS_ERROR_NTP_BAD_EXTENSION_FIELD:
                return REFUSAL_NTS_BAD_EXTENSION_FIELD;
        case NTS_ERROR_NTP_NO_UID:
                return REFUSAL_NTS_NO_UID;
        case NTS_ERROR_NTP_UID_MISMATCH:
                return REFUSAL_NTS_UID_MISMATCH;
        case NTS_ERROR_NTP_NO_AUTHENTICATOR:
                return REFUSAL_NTS_NO_AUTHENTICATOR;
        case NTS_ERROR_NTP_BAD_AUTHENTICATOR:
                return REFUSAL_NTS_BAD_AUTHENTICATOR;
        case NTS_ERROR_NTP_AUTH_FAILED:
                return REFUSAL_NTS_AUTH_FAILED;
        case NTS_ERROR_NTP_NO_COOKIES:
                return REFUSAL_NTS_NO_COOKIES;
        case NTS_ERROR_NTP_NAK:
                return REFUSAL_NTS_NAK;
        default:
                return _REFUSAL_CAUSE_INVALID;
        }
}

bool refusals_add(Refusals *r, RefusalCause cause, const char *reason, usec_t realtime, usec_t boottime) {
        RefusalCount *c;

        assert(r);
        assert(cause >= 0 && cause < _REFUSAL_CAUSE_MAX);
        assert(reason);

        c = &r->by_cause[cause];
        if (c->count == 0)
                c->first_realtime = realtime;
        if (c->count < UINT_MAX)
                c->count++;
        c->last_realtime = realtime;
        c->reason = reason;
        r->last = cause;
        if (r->total < UINT_MAX)
                r->total++;

        /* boottime 0 is the first microsecond after boot, never a real "last logged". */
        if (c->logged != 0 && boottime < c->logged + REFUSAL_LOG_INTERVAL_USEC)
                return false;
        c->logged = MAX(boottime, (usec_t) 1);
        return true;
}
