/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <sys/epoll.h>
#include <sys/socket.h>

#include "crypto-util.h"
#include "iovec-util.h"
#include "log.h"
#include "mock-ke.h"
#include "nts-server-ke.h"
#include "nts-crypto.h"

/* Large enough for eight cookies of the largest algorithm and every extra record. */
#define KE_RESPONSE_MAX 4096
#define ENDLESS_CHUNK 1024

typedef enum KEState {
        KE_HANDSHAKE,
        KE_READ,
        KE_WRITE,
        KE_ENDLESS,
} KEState;

struct KEConn {
        MockServer *server;
        KEConn *prev, *next;            /* in server->ke_conns */
        int fd;
        SSL *ssl;
        sd_event_source *io;
        sd_event_source *slow_timer;
        KEState state;

        uint8_t in[NTS_KE_MAX_MESSAGE_SIZE];
        size_t n_in;

        uint8_t out[KE_RESPONSE_MAX];
        size_t n_out, sent;
        bool endless_started;
};

static KEConn *ke_conn_free(KEConn *c) {
        if (!c)
                return NULL;

        if (c->prev)
                c->prev->next = c->next;
        else
                c->server->ke_conns = c->next;
        if (c->next)
                c->next->prev = c->prev;

        sd_event_source_disable_unref(c->io);
        sd_event_source_disable_unref(c->slow_timer);
        if (c->ssl) {
                (void) sym_SSL_shutdown(c->ssl);
                sym_SSL_free(c->ssl);
                sym_ERR_clear_error();
        }
        safe_close(c->fd);
        explicit_bzero_safe(c->in, sizeof(c->in));
        return mfree(c);
}

typedef struct CookieContext {
        const MockCookieKey *key;
        NTS_AEADAlgorithm aead;
        struct iovec c2s, s2c;
} CookieContext;

static int make_cookie(void *userdata, size_t index, uint8_t *buf, size_t size) {
        CookieContext *cc = userdata;
        return mock_cookie_make(cc->key, cc->aead, &cc->c2s, &cc->s2c, buf, size);
}

static int ke_conn_encode(KEConn *c, const NTSServerKEResponse *resp) {
        ssize_t n;

        n = nts_server_ke_encode_response(c->out, sizeof(c->out), resp);
        if (n < 0)
                return log_error_errno((int) n, "KE: failed to encode the response: %m");

        c->n_out = n;
        c->sent = 0;
        return 0;
}

static bool request_offers_ntpv4(const NTSServerKERequest *req) {
        for (size_t i = 0; i < req->n_protocols; i++)
                if (req->protocols[i] == NTS_PROTOCOL_NTPV4)
                        return true;
        return false;
}

/* The answers that carry no keys: a bad request, nothing in common. */
static int ke_conn_refuse(KEConn *c, const NTSServerKERequest *req, int decode_result) {
        NTSServerKEResponse resp;

        if (decode_result == -EBADMSG) {
                log_info("KE: bad request, answering with Error record %u", req->error_code);
                resp = (NTSServerKEResponse) {
                        .error_code = req->error_code,
                        .warning_code = -1,
                        .omit_next_protocol = true,
                        .omit_aead = true,
                };
        } else {
                log_info("KE: no common protocol or AEAD algorithm");
                resp = NTS_SERVER_KE_RESPONSE_DEFAULT(0);
                resp.empty_next_protocol = !request_offers_ntpv4(req);
                resp.aead_empty = true;
                resp.n_cookies = 0;
        }

        return ke_conn_encode(c, &resp);
}

static void ke_response_sabotage(NTSServerKEResponse *resp, Sabotage sabotage, const NTSServerKERequest *req) {
        switch (sabotage) {
        case SABOTAGE_NO_COOKIES:
                resp->n_cookies = 0;
                break;
        case SABOTAGE_ERROR_RECORD:
                resp->error_code = NTS_KE_ERROR_INTERNAL_SERVER_ERROR;
                break;
        case SABOTAGE_BAD_REQUEST:
                resp->error_code = NTS_KE_ERROR_BAD_REQUEST;
                break;
        case SABOTAGE_WARNING_RECORD:
                resp->warning_code = 0x1234;
                break;
        case SABOTAGE_UNKNOWN_CRITICAL:
                resp->unknown_critical = true;
                break;
        case SABOTAGE_WRONG_AEAD:
                resp->aead = nts_server_ke_unoffered_aead(req);
                break;
        case SABOTAGE_NO_AEAD:
                resp->omit_aead = true;
                break;
        default:
                break;
        }
}

static int ke_conn_answer(KEConn *c, const NTSServerKERequest *req, int decode_result) {
        MockServer *s = c->server;
        uint8_t c2s[NTS_MAX_AEAD_KEY_SIZE], s2c[NTS_MAX_AEAD_KEY_SIZE];
        const NTS_AEADParam *param;
        NTSServerKEResponse resp;
        CookieContext cc;
        uint16_t aead;
        int r;

        if (decode_result < 0 || !request_offers_ntpv4(req) ||
            nts_server_ke_pick_aead(req, s->aead, s->n_aead, &aead) < 0)
                return ke_conn_refuse(c, req, decode_result);

        param = NTS_aead_param(aead);
        assert(param);
        r = server_tls_export_keys(c->ssl, aead, param->key_size, c2s, s2c);
        if (r < 0)
                return log_error_errno(r, "KE: key export failed");

        cc = (CookieContext) {
                .key = &s->key,
                .aead = aead,
                .c2s = IOVEC_MAKE(c2s, param->key_size),
                .s2c = IOVEC_MAKE(s2c, param->key_size),
        };
        resp = NTS_SERVER_KE_RESPONSE_DEFAULT(aead);
        resp.cookie_size = mock_cookie_size(aead);
        resp.cookie_func = make_cookie;
        resp.userdata = &cc;
        resp.server = s->ntp_server;
        resp.port = s->ntp_port;
        if (s->pool.n_members > 0) {
                bool denied;
                const MockPoolMember *m = mock_pool_pick(&s->pool, req, &denied);

                resp.server = m->name;
                resp.port = m->port;
                resp.keep_alive = true;
                if (denied)
                        s->n_pool_denied_given++;
        }
        ke_response_sabotage(&resp, s->sabotage, req);

        r = ke_conn_encode(c, &resp);
        explicit_bzero_safe(c2s, sizeof(c2s));
        explicit_bzero_safe(s2c, sizeof(s2c));
        return r;
}

/* Fills c->out with a Next Protocol and AEAD record once, then unknown non-critical records
 * only: a response that never ends. */
static int ke_conn_fill_endless(KEConn *c) {
        static const uint8_t ntpv4[2] = { 0, NTS_PROTOCOL_NTPV4 };
        static const uint8_t aead[2] = { 0, NTS_AEAD_AES_SIV_CMAC_256 };
        static const uint8_t filler[ENDLESS_CHUNK / 4 - NTS_KE_RECORD_HEADER_SIZE] = {};
        struct iovec out = IOVEC_MAKE(c->out, ENDLESS_CHUNK);
        int r;

        if (!c->endless_started) {
                r = NTS_record_append(&out, NTS_KE_RECORD_NEXT_PROTOCOL, true, ntpv4, sizeof(ntpv4));
                if (r >= 0)
                        r = NTS_record_append(&out, NTS_KE_RECORD_AEAD_ALGORITHM, true, aead, sizeof(aead));
                if (r < 0)
                        return r;
                c->endless_started = true;
        }

        while (out.iov_len >= NTS_KE_RECORD_HEADER_SIZE + sizeof(filler)) {
                r = NTS_record_append(&out, NTS_SERVER_KE_UNKNOWN_RECORD, false, filler, sizeof(filler));
                if (r < 0)
                        return r;
        }

        c->n_out = ENDLESS_CHUNK - out.iov_len;
        c->sent = 0;
        return 0;
}

/* events 0: wait for the slow timer only. Returns 0 (waiting) or a negative errno, never the
 * "done" of the step functions. */
static int ke_conn_wait(KEConn *c, uint32_t events) {
        int r;

        if (events == 0)
                r = sd_event_source_set_enabled(c->io, SD_EVENT_OFF);
        else {
                r = sd_event_source_set_io_events(c->io, events);
                if (r >= 0)
                        r = sd_event_source_set_enabled(c->io, SD_EVENT_ON);
        }
        return r < 0 ? r : 0;
}

static int slow_timer_handler(sd_event_source *source, uint64_t usec, void *userdata);

static int ke_conn_write(KEConn *c) {
        uint32_t events;
        int r;

        while (c->sent < c->n_out) {
                size_t chunk = c->n_out - c->sent;

                if (c->server->sabotage == SABOTAGE_SLOW && c->state == KE_WRITE) {
                        if (c->slow_timer)
                                return ke_conn_wait(c, 0);
                        chunk = 1;
                }

                sym_ERR_clear_error();
                r = sym_SSL_write(c->ssl, c->out + c->sent, (int) chunk);
                if (r <= 0) {
                        r = server_tls_result(c->ssl, r, &events);
                        if (r == -EAGAIN)
                                return ke_conn_wait(c, events);
                        return r == 0 ? -ECONNRESET : r;
                }
                c->sent += r;

                if (c->server->sabotage == SABOTAGE_SLOW && c->state == KE_WRITE && c->sent < c->n_out) {
                        r = sd_event_add_time_relative(c->server->event, &c->slow_timer, CLOCK_MONOTONIC,
                                                       1000000, 0, slow_timer_handler, c);
                        if (r < 0)
                                return r;
                        return ke_conn_wait(c, 0);
                }

                if (c->sent == c->n_out && c->state == KE_ENDLESS) {
                        r = ke_conn_fill_endless(c);
                        if (r < 0)
                                return r;
                }
        }

        c->server->n_ke_sessions++;
        mock_server_write_counts(c->server);
        log_info("KE: response sent (%zu bytes)", c->n_out);
        return 1;
}

static int ke_conn_read(KEConn *c) {
        NTSServerKERequest req;
        uint32_t events;
        ssize_t n;
        int r;

        for (;;) {
                if (c->n_in == sizeof(c->in))
                        return log_info_errno(EMSGSIZE, "KE: request too long");

                sym_ERR_clear_error();
                r = sym_SSL_read(c->ssl, c->in + c->n_in, (int) (sizeof(c->in) - c->n_in));
                if (r <= 0) {
                        r = server_tls_result(c->ssl, r, &events);
                        if (r == -EAGAIN)
                                return ke_conn_wait(c, events);
                        return r == 0 ? log_info_errno(ECONNRESET, "KE: client closed before End of Message") : r;
                }
                c->n_in += r;

                n = nts_server_ke_decode_request(&IOVEC_MAKE(c->in, c->n_in), &req);
                if (n == -ENODATA)
                        continue;
                if (n == -EMSGSIZE)
                        return log_info_errno(EMSGSIZE, "KE: request too long");
                if (n < 0 && n != -EBADMSG)
                        return (int) n;

                r = ke_conn_answer(c, &req, n < 0 ? (int) n : 0);
                if (r < 0)
                        return r;
                c->state = KE_WRITE;
                return 1;
        }
}

static int ke_conn_step(KEConn *c) {
        uint32_t events;
        int r;

        switch (c->state) {
        case KE_HANDSHAKE:
                r = server_tls_handshake(c->ssl, &events);
                if (r == -EAGAIN)
                        return ke_conn_wait(c, events);
                if (r < 0)
                        return r;
                if (c->server->sabotage == SABOTAGE_ENDLESS_RECORDS) {
                        r = ke_conn_fill_endless(c);
                        if (r < 0)
                                return r;
                        c->state = KE_ENDLESS;
                        return ke_conn_write(c);
                }
                c->state = KE_READ;
                _fallthrough_;
        case KE_READ:
                r = ke_conn_read(c);
                if (r <= 0)
                        return r;
                _fallthrough_;
        case KE_WRITE:
        case KE_ENDLESS:
                r = ke_conn_write(c);
                if (r <= 0)
                        return r;
                /* Done: close_notify, then the connection is closed. */
                return -ESHUTDOWN;
        }
        assert_not_reached();
}

static int ke_conn_run(KEConn *c) {
        int r;

        r = ke_conn_step(c);
        if (r < 0) {
                if (r != -ESHUTDOWN)
                        log_debug_errno(r, "KE: connection ends: %m");
                ke_conn_free(c);
        }
        return 0;
}

static int slow_timer_handler(sd_event_source *source, uint64_t usec, void *userdata) {
        KEConn *c = userdata;

        c->slow_timer = sd_event_source_disable_unref(c->slow_timer);
        return ke_conn_run(c);
}

static int ke_conn_io_handler(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        return ke_conn_run(userdata);
}

static int ke_accept_handler(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        MockServer *s = userdata;
        KEConn *c;
        int cfd, r;

        cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) {
                log_debug_errno(errno, "accept: %m");
                return 0;
        }

        c = calloc(1, sizeof(KEConn));
        if (!c) {
                safe_close(cfd);
                return log_oom();
        }
        c->server = s;
        c->fd = cfd;
        c->next = s->ke_conns;
        if (c->next)
                c->next->prev = c;
        s->ke_conns = c;

        r = server_tls_ssl_new(s->tls, cfd, &c->ssl);
        if (r >= 0)
                r = sd_event_add_io(s->event, &c->io, cfd, EPOLLIN, ke_conn_io_handler, c);
        if (r < 0) {
                ke_conn_free(c);
                log_error_errno(r, "KE: failed to set up a connection: %m");
                return 0;
        }

        return ke_conn_run(c);
}

int mock_ke_listen(MockServer *s, int fd) {
        return sd_event_add_io(s->event, NULL, fd, EPOLLIN, ke_accept_handler, s);
}

void mock_ke_close_all(MockServer *s) {
        while (s->ke_conns)
                ke_conn_free(s->ke_conns);
}
