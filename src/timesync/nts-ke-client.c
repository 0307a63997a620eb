/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "iovec-util.h"
#include "log.h"
#include "nts-ke-client.h"
#include "string-util.h"

typedef enum KEState {
        KE_STATE_IDLE,
        KE_STATE_CONNECTING,
        KE_STATE_HANDSHAKE,
        KE_STATE_SENDING,
        KE_STATE_RECEIVING,
        KE_STATE_DONE,
} KEState;

struct NTS_KEClient {
        sd_event *event;
        sd_event_source *defer;
        sd_event_source *io;
        sd_event_source *timer;
        NTS_KEClientHandler handler;
        void *userdata;

        SocketAddress *addresses;
        size_t n_addresses;
        size_t n_tried;
        char *hostname;
        char *ca_file;
        char *ca_dir;
        NTS_TLSOptions tls_options;     /* its strings point to the copies above */
        NTS_AEADAlgorithm *aead;
        size_t n_aead;
        usec_t deadline;                /* CLOCK_MONOTONIC */

        KEState state;
        int fd;
        NTS_TLS *tls;
        uint8_t *request;
        size_t request_size;
        size_t request_sent;
        uint8_t *response;              /* NTS_KE_MAX_MESSAGE_SIZE bytes */
        size_t response_size;

        NTS_KEResult *result;           /* handed to the handler on completion */
};

static const char *const ke_stage_table[_NTS_KE_STAGE_MAX] = {
        [NTS_KE_STAGE_CONNECT] = "connect",
        [NTS_KE_STAGE_TLS] = "TLS",
        [NTS_KE_STAGE_PROTOCOL] = "KE protocol",
        [NTS_KE_STAGE_TIMEOUT] = "timeout",
};

const char *NTS_ke_stage_to_string(NTS_KEStage s) {
        if (s < 0 || s >= _NTS_KE_STAGE_MAX)
                return NULL;
        return ke_stage_table[s];
}

static void ke_result_clear(NTS_KEResult *r) {
        iovec_done_erase(&r->c2s_key);
        iovec_done_erase(&r->s2c_key);
        for (size_t i = 0; i < r->n_cookies; i++)
                iovec_done_erase(&r->cookies[i]);
        r->n_cookies = 0;
        iovec_done_erase(&r->response);
        r->ntp_server = mfree(r->ntp_server);
}

NTS_KEResult *NTS_ke_result_free(NTS_KEResult *r) {
        if (!r)
                return NULL;

        ke_result_clear(r);
        return mfree(r);
}

static const char *ke_client_address_string(const NTS_KEClient *c,
                                            char buf[static SOCKET_ADDRESS_STRING_MAX]) {
        return socket_address_to_string(&c->result->address, buf);
}

static void ke_client_close_connection(NTS_KEClient *c) {
        c->io = sd_event_source_disable_unref(c->io);
        c->tls = NTS_tls_free(c->tls);
        c->fd = safe_close(c->fd);
}

/* Hands the result over; c must not be touched afterwards, the handler may have freed it. */
static void ke_client_complete(NTS_KEClient *c) {
        c->defer = sd_event_source_disable_unref(c->defer);
        c->timer = sd_event_source_disable_unref(c->timer);
        ke_client_close_connection(c);
        c->state = KE_STATE_DONE;

        /* Best effort: the copy only serves diagnostics. It holds cookies, hence the erasing
         * free. */
        if (c->response_size > 0)
                (void) iovec_memdup(&IOVEC_MAKE(c->response, c->response_size), &c->result->response);

        c->handler(c, TAKE_PTR(c->result), c->userdata);
}

_printf_(5, 6) static void ke_client_fail(NTS_KEClient *c, NTS_KEStage stage, int error,
                                          NTS_Error nts_error, const char *format, ...) {
        va_list ap;

        assert(error < 0);

        /* A failed result carries no keys or cookies, also when it failed while copying them. */
        ke_result_clear(c->result);
        c->result->error = error;
        c->result->stage = stage;
        c->result->nts_error = nts_error;

        va_start(ap, format);
        (void) vsnprintf(c->result->reason, sizeof(c->result->reason), format, ap);
        va_end(ap);

        log_debug("NTS-KE with %s failed (%s stage): %s", c->hostname, ke_stage_table[stage],
                  c->result->reason);
        ke_client_complete(c);
}

static const char *ke_client_tls_reason(const NTS_KEClient *c, int error) {
        const char *e = c->tls ? NTS_tls_error(c->tls) : NULL;
        return isempty(e) ? strerror(-error) : e;
}

static void ke_client_connect_next(NTS_KEClient *c);

/* The timer is one-shot: after a connect share expired it must be enabled again. */
static int ke_client_arm_timer(NTS_KEClient *c, usec_t usec) {
        int r;

        r = sd_event_source_set_time(c->timer, usec);
        if (r < 0)
                return r;
        return sd_event_source_set_enabled(c->timer, SD_EVENT_ONESHOT);
}

static void ke_client_connect_failed(NTS_KEClient *c, int error) {
        char a[SOCKET_ADDRESS_STRING_MAX];

        (void) snprintf(c->result->reason, sizeof(c->result->reason), "connecting to %s failed: %s",
                        ke_client_address_string(c, a), strerror(-error));
        c->result->error = error;
        log_debug("NTS-KE with %s: %s", c->hostname, c->result->reason);

        ke_client_close_connection(c);
        ke_client_connect_next(c);
}

static void ke_client_wait(NTS_KEClient *c) {
        int r;

        r = sd_event_source_set_io_events(c->io, NTS_tls_events(c->tls));
        if (r < 0)
                ke_client_fail(c, NTS_KE_STAGE_TLS, r, NTS_OK, "waiting for the socket failed: %s",
                               strerror(-r));
}

static void ke_client_finish(NTS_KEClient *c, const NTS_Agreement *a) {
        uint8_t c2s[NTS_MAX_AEAD_KEY_SIZE], s2c[NTS_MAX_AEAD_KEY_SIZE];
        struct iovec c2s_key = IOVEC_MAKE(c2s, sizeof(c2s)), s2c_key = IOVEC_MAKE(s2c, sizeof(s2c));
        NTS_KEResult *res = c->result;
        int r;

        r = NTS_tls_export_keys(c->tls, a->aead, NTS_exporter_aead(a), &c2s_key, &s2c_key);
        if (r < 0) {
                ke_client_fail(c, NTS_KE_STAGE_TLS, r, NTS_OK, "exporting the keys failed: %s",
                               ke_client_tls_reason(c, r));
                return;
        }

        r = iovec_memdup(&c2s_key, &res->c2s_key);
        if (r >= 0)
                r = iovec_memdup(&s2c_key, &res->s2c_key);
        explicit_bzero_safe(c2s, sizeof(c2s));
        explicit_bzero_safe(s2c, sizeof(s2c));
        for (size_t i = 0; r >= 0 && i < a->n_cookies; i++) {
                r = iovec_memdup(&a->cookies[i], &res->cookies[i]);
                if (r >= 0)
                        res->n_cookies++;
        }
        /* The decoder has checked that the body is a name or an address, so it has no NUL. */
        if (r >= 0 && iovec_is_set(&a->server)) {
                res->ntp_server = strndup(a->server.iov_base, a->server.iov_len);
                if (!res->ntp_server)
                        r = -ENOMEM;
        }
        if (r < 0) {
                ke_client_fail(c, NTS_KE_STAGE_PROTOCOL, r, NTS_OK,
                               "storing the KE response failed: %s", strerror(-r));
                return;
        }

        res->aead = a->aead;
        res->ntp_port = a->port;
        res->error = 0;
        res->reason[0] = 0;

        log_debug("NTS-KE with %s done: %s, %zu cookies, NTP server %s port %u", c->hostname,
                  strna(NTS_aead_name(a->aead)), res->n_cookies, strna(res->ntp_server),
                  res->ntp_port);

        NTS_tls_shutdown(c->tls);
        ke_client_complete(c);
}

/* The code the server sent, the algorithm it chose, or the record at fault, where the cause has
 * one. */
static const char *ke_agreement_detail(const NTS_Agreement *a, char buf[static 32]) {
        switch (a->error) {
        case NTS_ERROR_SERVER_UNRECOGNIZED_CRITICAL_RECORD ... NTS_ERROR_SERVER_WARNING:
                snprintf(buf, 32, " (code %u)", a->server_code);
                break;
        case NTS_ERROR_KE_AEAD_NOT_OFFERED:
                if (NTS_aead_name(a->aead))
                        snprintf(buf, 32, " (%s, %u)", NTS_aead_name(a->aead), a->aead);
                else
                        snprintf(buf, 32, " (AEAD algorithm %u)", a->aead);
                break;
        case NTS_ERROR_KE_BAD_RECORD_LENGTH ... NTS_ERROR_KE_NO_COMMON_AEAD:
        case NTS_ERROR_KE_NO_COOKIES ... NTS_ERROR_KE_BAD_PORT:
                snprintf(buf, 32, " (record type %u)", a->record_type);
                break;
        default:
                buf[0] = 0;
        }
        return buf;
}

/* Returns true when the session continues and more data is needed. */
static bool ke_client_receive(NTS_KEClient *c) {
        char a[SOCKET_ADDRESS_STRING_MAX], detail[32];
        NTS_Agreement agreement = {};
        ssize_t n;

        if (c->response_size >= NTS_KE_MAX_MESSAGE_SIZE) {
                ke_client_fail(c, NTS_KE_STAGE_PROTOCOL, -EMSGSIZE, NTS_ERROR_KE_TOO_LONG,
                               "KE response from %s refused: %s (more than %u bytes)",
                               ke_client_address_string(c, a),
                               strna(NTS_error_string(NTS_ERROR_KE_TOO_LONG)),
                               (unsigned) NTS_KE_MAX_MESSAGE_SIZE);
                return false;
        }

        n = NTS_tls_read(c->tls, c->response + c->response_size,
                        NTS_KE_MAX_MESSAGE_SIZE - c->response_size);
        if (n == -EAGAIN) {
                ke_client_wait(c);
                return false;
        }
        if (n < 0) {
                ke_client_fail(c, NTS_KE_STAGE_TLS, (int) n, NTS_OK,
                               "reading the KE response from %s failed: %s",
                               ke_client_address_string(c, a), ke_client_tls_reason(c, (int) n));
                return false;
        }
        if (n == 0) {
                ke_client_fail(c, NTS_KE_STAGE_PROTOCOL, -EBADMSG, NTS_ERROR_KE_TRUNCATED,
                               "KE response from %s refused: %s (closed after %zu bytes)",
                               ke_client_address_string(c, a),
                               strna(NTS_error_string(NTS_ERROR_KE_TRUNCATED)), c->response_size);
                return false;
        }
        c->response_size += (size_t) n;

        n = NTS_decode_response(&IOVEC_MAKE(c->response, c->response_size), c->aead, c->n_aead,
                                &agreement);
        if (n == -ENODATA)
                return true;
        if (n < 0) {
                ke_client_fail(c, NTS_KE_STAGE_PROTOCOL, (int) n, agreement.error,
                               "KE response from %s refused: %s%s", ke_client_address_string(c, a),
                               strna(NTS_error_string(agreement.error)),
                               ke_agreement_detail(&agreement, detail));
                return false;
        }

        ke_client_finish(c, &agreement);
        return false;
}

static void ke_client_save_tls_info(NTS_KEClient *c, bool handshake_done) {
        NTS_TLSInfo info;
        int r;

        r = NTS_tls_info(c->tls, &info);
        if (handshake_done) {
                (void) snprintf(c->result->tls.version, sizeof(c->result->tls.version), "%s",
                                strempty(info.version));
                (void) snprintf(c->result->tls.cipher, sizeof(c->result->tls.cipher), "%s",
                                strempty(info.cipher));
        }
        if (r < 0)
                return;

        c->result->tls.certificate = true;
        (void) snprintf(c->result->tls.subject, sizeof(c->result->tls.subject), "%s", info.subject);
        (void) snprintf(c->result->tls.issuer, sizeof(c->result->tls.issuer), "%s", info.issuer);
        (void) snprintf(c->result->tls.sans, sizeof(c->result->tls.sans), "%s", info.sans);
        c->result->tls.not_before = info.not_before;
        c->result->tls.not_after = info.not_after;
        (void) snprintf(c->result->tls.verification, sizeof(c->result->tls.verification), "%s",
                        strempty(info.verify_result));
        c->result->tls.valid_from = info.valid_from;
        c->result->tls.valid_until = info.valid_until;
        c->result->tls.has_key_sha256 = info.has_key_sha256;
        memcpy(c->result->tls.key_sha256, info.key_sha256, sizeof c->result->tls.key_sha256);
}

/* Drives TLS as far as the socket allows; returns when waiting or when the session ended. */
static void ke_client_process(NTS_KEClient *c) {
        char a[SOCKET_ADDRESS_STRING_MAX];
        ssize_t n;
        int r;

        for (;;)
                switch (c->state) {

                case KE_STATE_HANDSHAKE:
                        r = NTS_tls_handshake(c->tls);
                        if (r == -EAGAIN) {
                                ke_client_wait(c);
                                return;
                        }
                        if (r < 0) {
                                c->result->cert_time_failure = NTS_tls_cert_time_failure(c->tls);
                                ke_client_save_tls_info(c, false);
                                /* The TLS module names the step ("TLS handshake: ..."): once is enough. */
                                ke_client_fail(c, NTS_KE_STAGE_TLS, r, NTS_OK,
                                               "TLS handshake with %s failed: %s",
                                               ke_client_address_string(c, a),
                                               startswith(ke_client_tls_reason(c, r), "TLS handshake: ") ?:
                                               ke_client_tls_reason(c, r));
                                return;
                        }
                        log_debug("NTS-KE with %s: TLS handshake with %s done", c->hostname,
                                  ke_client_address_string(c, a));
                        ke_client_save_tls_info(c, true);
                        c->state = KE_STATE_SENDING;
                        break;

                case KE_STATE_SENDING:
                        if (c->request_sent >= c->request_size) {
                                c->state = KE_STATE_RECEIVING;
                                break;
                        }
                        n = NTS_tls_write(c->tls, c->request + c->request_sent,
                                         c->request_size - c->request_sent);
                        if (n == -EAGAIN) {
                                ke_client_wait(c);
                                return;
                        }
                        if (n < 0) {
                                ke_client_fail(c, NTS_KE_STAGE_TLS, (int) n, NTS_OK,
                                               "sending the KE request to %s failed: %s",
                                               ke_client_address_string(c, a),
                                               ke_client_tls_reason(c, (int) n));
                                return;
                        }
                        c->request_sent += (size_t) n;
                        break;

                case KE_STATE_RECEIVING:
                        /* Loop until TLS says "wait": data already decrypted inside libssl
                         * does not wake up epoll again. */
                        if (!ke_client_receive(c))
                                return;
                        break;

                default:
                        assert_not_reached();
                }
}

static void ke_client_connected(NTS_KEClient *c) {
        char error[256];
        int r;

        c->result->connected = true;

        /* The connect timer share is no longer relevant; the rest of the session has what is
         * left of the overall budget. */
        r = ke_client_arm_timer(c, c->deadline);
        if (r < 0) {
                ke_client_fail(c, NTS_KE_STAGE_CONNECT, r, NTS_OK, "arming the timer failed: %s",
                               strerror(-r));
                return;
        }

        r = NTS_tls_new(c->fd, &c->tls_options, &c->tls, error, sizeof(error));
        if (r < 0) {
                ke_client_fail(c, NTS_KE_STAGE_TLS, r, NTS_OK, "setting up TLS failed: %s",
                               isempty(error) ? strerror(-r) : error);
                return;
        }

        c->state = KE_STATE_HANDSHAKE;
        ke_client_process(c);
}

static int ke_client_on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        NTS_KEClient *c = userdata;

        if (c->state == KE_STATE_CONNECTING) {
                int error = 0;
                socklen_t l = sizeof(error);

                if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &l) < 0)
                        error = errno;
                if (error == 0 && (revents & (EPOLLERR | EPOLLHUP)))
                        error = ECONNREFUSED;
                if (error != 0) {
                        ke_client_connect_failed(c, -error);
                        return 0;
                }

                ke_client_connected(c);
                return 0;
        }

        ke_client_process(c);
        return 0;
}

static int ke_client_connect_one(NTS_KEClient *c, const SocketAddress *address) {
        _cleanup_close_ int fd = -EBADF;
        usec_t t, share;
        int r;

        fd = socket(address->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
        if (fd < 0)
                return -errno;

        /* The exchange is a few small TLS records, each answered before the next goes: with
         * Nagle's algorithm a record waits for the peer's delayed ACK of the previous one,
         * about 40 ms each time (measured: 48 ms per key exchange on loopback, 4 ms without). */
        if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(const int) { 1 }, sizeof(int)) < 0)
                return -errno;

        if (connect(fd, (const struct sockaddr *) &address->sa, address->len) < 0 &&
            errno != EINPROGRESS)
                return -errno;

        r = sd_event_add_io(c->event, &c->io, fd, EPOLLOUT, ke_client_on_io, c);
        if (r < 0)
                return r;

        /* A silent address gets an equal share of the remaining time, so that the addresses
         * after it are still tried within the overall timeout. */
        r = sd_event_now(c->event, CLOCK_MONOTONIC, &t);
        if (r < 0)
                return r;
        share = t < c->deadline ? (c->deadline - t) / (c->n_addresses - c->n_tried + 1) : 0;
        r = ke_client_arm_timer(c, t + share);
        if (r < 0)
                return r;

        c->fd = TAKE_FD(fd);
        return 0;
}

static void ke_client_connect_next(NTS_KEClient *c) {
        char a[SOCKET_ADDRESS_STRING_MAX];
        int r;

        while (c->n_tried < c->n_addresses) {
                c->result->address = c->addresses[c->n_tried++];
                c->state = KE_STATE_CONNECTING;

                log_debug("NTS-KE with %s: connecting to %s", c->hostname,
                          ke_client_address_string(c, a));
                r = ke_client_connect_one(c, &c->result->address);
                if (r >= 0)
                        return;

                (void) snprintf(c->result->reason, sizeof(c->result->reason),
                                "connecting to %s failed: %s", ke_client_address_string(c, a),
                                strerror(-r));
                c->result->error = r;
                log_debug("NTS-KE with %s: %s", c->hostname, c->result->reason);
                ke_client_close_connection(c);
        }

        /* Every address failed: the reason of the last one stands for all. */
        char last[sizeof(c->result->reason)];
        memcpy(last, c->result->reason, sizeof(last));
        ke_client_fail(c, NTS_KE_STAGE_CONNECT, c->result->error, NTS_OK, "%s%s", last,
                       c->n_addresses > 1 ? " (and every other address)" : "");
}

static int ke_client_on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        static const char *const doing[] = {
                [KE_STATE_IDLE] = "before connecting",
                [KE_STATE_CONNECTING] = "connecting",
                [KE_STATE_HANDSHAKE] = "in the TLS handshake",
                [KE_STATE_SENDING] = "sending the request",
                [KE_STATE_RECEIVING] = "waiting for the response",
                [KE_STATE_DONE] = "after completion",
        };
        NTS_KEClient *c = userdata;
        char a[SOCKET_ADDRESS_STRING_MAX];

        if (c->state == KE_STATE_CONNECTING && usec < c->deadline) {
                ke_client_connect_failed(c, -ETIMEDOUT);
                return 0;
        }

        ke_client_fail(c, NTS_KE_STAGE_TIMEOUT, -ETIMEDOUT, NTS_OK,
                       "timed out %s (%s, %zu bytes received)", doing[c->state],
                       ke_client_address_string(c, a), c->response_size);
        return 0;
}

static int ke_client_on_start(sd_event_source *s, void *userdata) {
        NTS_KEClient *c = userdata;

        c->defer = sd_event_source_disable_unref(c->defer);
        ke_client_connect_next(c);
        return 0;
}

static int ke_client_copy_params(NTS_KEClient *c, const NTS_KEClientParams *p) {
        ssize_t n;

        c->addresses = calloc(p->n_addresses, sizeof(SocketAddress));
        c->aead = calloc(p->n_aead, sizeof(NTS_AEADAlgorithm));
        c->hostname = strdup(p->tls.hostname);
        if (!c->addresses || !c->aead || !c->hostname)
                return -ENOMEM;
        memcpy(c->addresses, p->addresses, p->n_addresses * sizeof(SocketAddress));
        memcpy(c->aead, p->aead, p->n_aead * sizeof(NTS_AEADAlgorithm));
        c->n_addresses = p->n_addresses;
        c->n_aead = p->n_aead;

        if (p->tls.ca_file) {
                c->ca_file = strdup(p->tls.ca_file);
                if (!c->ca_file)
                        return -ENOMEM;
        }
        if (p->tls.ca_dir) {
                c->ca_dir = strdup(p->tls.ca_dir);
                if (!c->ca_dir)
                        return -ENOMEM;
        }
        c->tls_options = p->tls;
        c->tls_options.hostname = c->hostname;
        c->tls_options.ca_file = c->ca_file;
        c->tls_options.ca_dir = c->ca_dir;

        /* The request is encoded once, here: it carries the denied names, so they need no copy. */
        c->request_size = NTS_request_size(p->aead, p->n_aead, p->deny, p->n_deny);
        c->request = malloc(c->request_size);
        c->response = malloc(NTS_KE_MAX_MESSAGE_SIZE);
        if (!c->request || !c->response)
                return -ENOMEM;

        n = NTS_encode_request(c->request, c->request_size, c->aead, c->n_aead, p->deny, p->n_deny);
        if (n < 0)
                return (int) n;
        c->request_size = (size_t) n;
        return 0;
}

int NTS_ke_client_start(sd_event *e, const NTS_KEClientParams *p, NTS_KEClientHandler handler,
                        void *userdata, NTS_KEClient **ret) {
        _cleanup_(NTS_ke_client_freep) NTS_KEClient *c = NULL;
        usec_t t;
        int r;

        assert(e);
        assert(p);
        assert(handler);
        assert(ret);

        if (p->n_addresses == 0 || p->n_aead == 0 || p->n_aead > UINT16_MAX / 2 ||
            isempty(p->tls.hostname))
                return -EINVAL;
        if (p->n_deny > NTS_KE_MAX_DENIED_SERVERS)
                return -E2BIG;

        c = calloc(1, sizeof(NTS_KEClient));
        if (!c)
                return -ENOMEM;
        c->fd = -EBADF;
        c->event = sd_event_ref(e);
        c->handler = handler;
        c->userdata = userdata;

        c->result = calloc(1, sizeof(NTS_KEResult));
        if (!c->result)
                return -ENOMEM;

        r = ke_client_copy_params(c, p);
        if (r < 0)
                return r;

        r = sd_event_now(e, CLOCK_MONOTONIC, &t);
        if (r < 0)
                return r;
        c->deadline = p->timeout_usec > USEC_INFINITY - t ? USEC_INFINITY : t + p->timeout_usec;

        r = sd_event_add_time(e, &c->timer, CLOCK_MONOTONIC, c->deadline, 0, ke_client_on_timer, c);
        if (r < 0)
                return r;

        /* Connecting may fail at once; the handler must still run from the loop, after the
         * caller has stored *ret. */
        r = sd_event_add_defer(e, &c->defer, ke_client_on_start, c);
        if (r < 0)
                return r;
        r = sd_event_source_set_enabled(c->defer, SD_EVENT_ONESHOT);
        if (r < 0)
                return r;

        c->state = KE_STATE_IDLE;
        *ret = TAKE_PTR(c);
        return 0;
}

NTS_KEClient *NTS_ke_client_free(NTS_KEClient *c) {
        if (!c)
                return NULL;

        c->defer = sd_event_source_disable_unref(c->defer);
        c->timer = sd_event_source_disable_unref(c->timer);
        ke_client_close_connection(c);
        sd_event_unref(c->event);

        free(c->addresses);
        free(c->hostname);
        free(c->ca_file);
        free(c->ca_dir);
        free(c->aead);
        free(c->request);
        free(c->response);
        NTS_ke_result_free(c->result);
        return mfree(c);
}

typedef struct KERun {
        sd_event *event;
        NTS_KEResult *result;
} KERun;

static void ke_run_done(NTS_KEClient *c, NTS_KEResult *result, void *userdata) {
        KERun *run = userdata;

        run->result = result;
        (void) sd_event_exit(run->event, 0);
}

int NTS_ke_client_run(const NTS_KEClientParams *p, NTS_KEResult **ret) {
        _cleanup_(NTS_ke_client_freep) NTS_KEClient *c = NULL;
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        KERun run = {};
        int r;

        assert(p);
        assert(ret);

        r = sd_event_new(&e);
        if (r < 0)
                return r;
        run.event = e;

        r = NTS_ke_client_start(e, p, ke_run_done, &run, &c);
        if (r < 0)
                return r;

        r = sd_event_loop(e);
        if (r < 0) {
                NTS_ke_result_free(run.result);
                return r;
        }
        /* The handler runs exactly once before the loop can end. */
        assert(run.result);

        *ret = run.result;
        return 0;
}
