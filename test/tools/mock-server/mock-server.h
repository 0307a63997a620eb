/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* State of the mock NTS server (nts-mock-server.c) shared by its KE side (mock-ke.c) and its
 * NTP side (mock-ntp.c). */

#include <systemd/sd-event.h>

#include "mock-cookie.h"
#include "mock-pool.h"
#include "nts-server-tls.h"

typedef enum Sabotage {
        SABOTAGE_NONE,
        /* KE over TLS */
        SABOTAGE_BAD_ALPN,              /* the server selects "http/1.1" */
        SABOTAGE_NO_ALPN,               /* the server selects no ALPN protocol */
        SABOTAGE_NO_COOKIES,
        SABOTAGE_ERROR_RECORD,          /* Error record, internal server error */
        SABOTAGE_BAD_REQUEST,           /* Error record, bad request: do not come back soon */
        SABOTAGE_WARNING_RECORD,
        SABOTAGE_UNKNOWN_CRITICAL,
        SABOTAGE_WRONG_AEAD,            /* an algorithm the client did not offer */
        SABOTAGE_NO_AEAD,               /* no AEAD record */
        SABOTAGE_SLOW,                  /* the response at one byte per second */
        SABOTAGE_ENDLESS_RECORDS,       /* unknown records forever, never End of Message */
        /* NTP */
        SABOTAGE_BAD_AUTH,              /* authenticator does not verify */
        SABOTAGE_WRONG_UID,             /* Unique Identifier not the request's */
        SABOTAGE_NAK,                   /* kiss code NTSN for every request */
        SABOTAGE_NAK_EVERY_SECOND,      /* NTSN for every second request: a server that changes
                                         * its keys after each reply, so that every set of cookies
                                         * works once and then needs a new key exchange */
        SABOTAGE_UNAUTHENTICATED,       /* plain NTP answer without NTS fields */
        SABOTAGE_OVERSIZED,             /* an honest answer padded with unauthenticated fields to
                                         * NTS_MAX_PACKET_SIZE, plus one more field beyond it */
        _SABOTAGE_MAX,
        _SABOTAGE_INVALID = -EINVAL,
} Sabotage;

const char *sabotage_to_string(Sabotage s);
Sabotage sabotage_from_string(const char *s);
/* The ALPN behaviour that goes with a sabotage mode. */
ServerALPN sabotage_alpn(Sabotage s);

typedef struct KEConn KEConn;

typedef struct MockServer {
        sd_event *event;
        sd_event_source *signals[3];    /* SIGTERM, SIGINT, SIGUSR1 */
        KEConn *ke_conns;
        int ke_fd, ntp_fd;
        Sabotage sabotage;
        ServerALPN alpn;                /* follows sabotage */
        SSL_CTX *tls;
        MockCookieKey key;

        uint16_t aead[8];               /* algorithms the server accepts, by its preference */
        size_t n_aead;

        const char *ntp_server;         /* Server Negotiation record; NULL: none */
        uint16_t ntp_port;              /* Port Negotiation record; 0: none */
        MockPool pool;                  /* with members: a key-exchange pool, see mock-pool.h */
        int64_t time_offset_nsec;       /* added to the time it serves: an authentic liar */
        unsigned leap;                  /* leap indicator of its answers with time (--leap=) */
        char kiss[4];                   /* --kiss=: an authenticated kiss-o'-death with this
                                         * code instead of time; all zero: none */
        unsigned kiss_after;            /* ... once this many requests got time */
        bool plain_ntp;                 /* a request without extension fields gets a plain NTP
                                         * answer (RFC 5905), as a public server's would */

        const char *count_file;
        unsigned n_ke_sessions;         /* complete KE responses sent */
        unsigned n_ntp_requests;        /* NTP requests answered with time */
        unsigned n_ntp_naks;
        unsigned n_ntp_kisses;          /* authenticated kiss-o'-death answers (--kiss=) */
        unsigned n_ntp_plain;           /* plain NTP requests answered (plain_ntp) */
        unsigned n_pool_denied_given;   /* pool members handed out although denied */

        /* Every cookie a well-formed NTP request carried (a tsearch() tree), so that a client
         * that sends one twice is caught (RFC 8915 section 5.7: each cookie once). */
        void *cookies_seen;
        unsigned n_cookies_seen;        /* distinct cookies */
        unsigned n_cookies_reused;      /* requests whose cookie was seen before */
} MockServer;

/* Records a cookie of an NTP request; logs and counts it if it came before. */
int mock_server_note_cookie(MockServer *s, const struct iovec *cookie);
void mock_server_forget_cookies(MockServer *s);

/* Rewrites the count file, if any, atomically. */
void mock_server_write_counts(MockServer *s);
