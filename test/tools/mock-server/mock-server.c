/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* What every mock NTS server shares, whichever program runs it (nts-mock-server.c, or the
 * simulation's preload): the names of the sabotage modes, the record of cookies seen, and the
 * count file. */

#include <search.h>
#include <stdio.h>

#include "log.h"
#include "macro.h"
#include "mock-server.h"

static const char *const sabotage_table[_SABOTAGE_MAX] = {
        [SABOTAGE_NONE] = "none",
        [SABOTAGE_BAD_ALPN] = "bad-alpn",
        [SABOTAGE_NO_ALPN] = "no-alpn",
        [SABOTAGE_NO_COOKIES] = "no-cookies",
        [SABOTAGE_ERROR_RECORD] = "error-record",
        [SABOTAGE_BAD_REQUEST] = "bad-request",
        [SABOTAGE_WARNING_RECORD] = "warning-record",
        [SABOTAGE_UNKNOWN_CRITICAL] = "unknown-critical",
        [SABOTAGE_WRONG_AEAD] = "wrong-aead",
        [SABOTAGE_NO_AEAD] = "no-aead",
        [SABOTAGE_SLOW] = "slow",
        [SABOTAGE_ENDLESS_RECORDS] = "endless-records",
        [SABOTAGE_BAD_AUTH] = "bad-auth",
        [SABOTAGE_WRONG_UID] = "wrong-uid",
        [SABOTAGE_NAK] = "nak",
        [SABOTAGE_NAK_EVERY_SECOND] = "nak-every-second",
        [SABOTAGE_UNAUTHENTICATED] = "unauthenticated",
        [SABOTAGE_OVERSIZED] = "oversized",
};

const char *sabotage_to_string(Sabotage s) {
        if (s < 0 || s >= _SABOTAGE_MAX)
                return NULL;
        return sabotage_table[s];
}

Sabotage sabotage_from_string(const char *s) {
        for (Sabotage i = 0; i < _SABOTAGE_MAX; i++)
                if (streq(sabotage_table[i], s))
                        return i;
        return _SABOTAGE_INVALID;
}

ServerALPN sabotage_alpn(Sabotage s) {
        switch (s) {
        case SABOTAGE_BAD_ALPN:
                return SERVER_ALPN_OTHER;
        case SABOTAGE_NO_ALPN:
                return SERVER_ALPN_NONE;
        default:
                return SERVER_ALPN_NTSKE;
        }
}

typedef struct SeenCookie {
        size_t size;
        uint8_t data[];
} SeenCookie;

static int seen_cookie_compare(const void *a, const void *b) {
        const SeenCookie *x = a, *y = b;

        if (x->size != y->size)
                return x->size < y->size ? -1 : 1;
        return memcmp(x->data, y->data, x->size);
}

int mock_server_note_cookie(MockServer *s, const struct iovec *cookie) {
        SeenCookie *c, **found;

        assert(s);
        assert(cookie);

        c = malloc(offsetof(SeenCookie, data) + cookie->iov_len);
        if (!c)
                return log_oom();
        c->size = cookie->iov_len;
        memcpy(c->data, cookie->iov_base, cookie->iov_len);

        found = tsearch(c, &s->cookies_seen, seen_cookie_compare);
        if (!found) {
                free(c);
                return log_oom();
        }
        if (*found != c) {
                free(c);
                s->n_cookies_reused++;
                log_warning("NTP: cookie received again (%u reuses so far): the client sent a spent cookie",
                            s->n_cookies_reused);
                return 1;
        }
        s->n_cookies_seen++;
        return 0;
}

void mock_server_forget_cookies(MockServer *s) {
        tdestroy(s->cookies_seen, free);
        s->cookies_seen = NULL;
}

void mock_server_write_counts(MockServer *s) {
        _cleanup_free_ char *tmp = NULL;
        FILE *f;

        if (!s->count_file)
                return;

        if (asprintf(&tmp, "%s.tmp", s->count_file) < 0) {
                log_oom();
                return;
        }

        f = fopen(tmp, "we");
        if (!f) {
                log_error_errno(errno, "Failed to write %s: %m", tmp);
                return;
        }
        fprintf(f, "ke_sessions=%u\nntp_requests=%u\nntp_naks=%u\nntp_kisses=%u\npool_denied_given=%u\n"
                "cookies_seen=%u\ncookies_reused=%u\n", s->n_ke_sessions, s->n_ntp_requests, s->n_ntp_naks,
                s->n_ntp_kisses, s->n_pool_denied_given, s->n_cookies_seen, s->n_cookies_reused);
        if (fclose(f) != 0 || rename(tmp, s->count_file) < 0)
                log_error_errno(errno, "Failed to write %s: %m", s->count_file);
}
