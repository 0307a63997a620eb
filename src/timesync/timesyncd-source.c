/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <netinet/ip.h>
#include <stdio.h>

#include "iovec-util.h"
#include "log.h"
#include "nts.h"
#include "random-util.h"
#include "resolve-util.h"
#include "string-util.h"
#include "timesyncd-backoff.h"
#include "timesyncd-clock.h"
#include "timesyncd-nts-client.h"
#include "timesyncd-source.h"
#include "timesyncd-messages.h"

/* Kiss codes (RFC 5905 section 7.4) we act on. */
#define KISS_RATE "RATE"
#define KISS_DENY "DENY"
#define KISS_RSTR "RSTR"

struct Source {
        const SourceSettings *settings;
        source_handler_t handler;
        void *userdata;
        char *name;                     /* as configured */
        char *host;                     /* plain NTP: the server; NTS: the NTS-KE server */
        uint16_t port;
        NTSClient *nts;                 /* NTS servers only */

        SourceState state;
        char last_error[256];
        usec_t last_error_realtime;
        unsigned n_failures;

        /* The NTP server's addresses from the last resolution, polled one after the other. */
        SocketAddress *addresses;
        size_t n_addresses;
        size_t address;                 /* the one polled; n_addresses: none */
        uint16_t ntp_port;              /* of the name being resolved */
        ResolveQuery *resolve;
        int fd;                         /* UDP, for the address polled; open across polls */
        sd_event_source *event_receive;
        sd_event_source *event_timer;   /* allocated once; meaning by state */

        /* The request in flight. */
        bool pending;
        bool request_stale;             /* the clock was stepped while it was out */
        NTPTimestamp request_nonce;     /* random transmit timestamp: the reply must echo it */
        unsigned request_refused;       /* replies to it that were refused */
        int64_t request_realtime_nsec;  /* t1 */
        usec_t request_monotonic;
        usec_t request_boottime;

        NTPFilter filter;
        unsigned poll_level;            /* poll interval: the minimum doubled this many times */
        unsigned poll_level_min;        /* raised by RATE kiss codes, for the source's life */
        unsigned poll_level_max;
        unsigned poll_level_before;     /* before the last sample moved it */
        unsigned poll_level_filter;     /* where the sample being handled put it, before the lock */
        bool poll_judging;              /* its sample is being handled: poll_level_filter holds */
        usec_t poll_interval_locked;    /* the owner's clock discipline lets it grow no further */
        bool poll_resync;               /* the next sample starts the poll interval over */
        bool unused;                    /* the owner does not follow its samples */
        usec_t poll_interval_usec;
        bool talking;                   /* the address polled answered */
        bool heard;                     /* a datagram came from an NTP server of it, ever */
        bool silent;                    /* NTS: it failed as its NTP server never answered, though
                                         * its key exchange gave keys */
        SourceSample sample;
        bool has_sample;
        Refusals refusals;
};

static int64_t timespec_to_nsec(const struct timespec *ts) {
        return (int64_t) ts->tv_sec * NTP_NSEC_PER_SEC + ts->tv_nsec;
}

/* Always fills buf: arguments of a log call are not evaluated below its level, and callers
 * pass buf on to other calls. */
static const char *source_address_string(const Source *s, char buf[static SOCKET_ADDRESS_STRING_MAX]) {
        const SocketAddress *a = source_address(s);

        if (!a)
                return strcpy(buf, "n/a");
        return socket_address_to_string(a, buf);
}

/* ---- the state and what it waits for ---- */

static void source_emit(Source *s, SourceEvent e) {
        s->handler(s, e, s->userdata);
}

static void source_disconnect(Source *s) {
        s->event_receive = sd_event_source_disable_unref(s->event_receive);
        s->fd = safe_close(s->fd);
        s->pending = false;
}

/* Enters state, along the transitions of source_state_transition_allowed(), and arms what it
 * waits for: the timer after delay (POLL_WAIT, REPLY_WAIT, BACKING_OFF), or nothing of the
 * source's own: the resolver query (RESOLVING, started by the caller), the NTS client
 * (KEY_EXCHANGE), or nothing at all (IDLE, FAILED). Arming the timer allocates nothing;
 * should sd-event fail anyway, the owner's safety net finds the source stalled
 * (source_stalled()). */
static void source_enter(Source *s, SourceState state, usec_t delay) {
        bool timer = IN_SET(state, SOURCE_POLL_WAIT, SOURCE_REPLY_WAIT, SOURCE_BACKING_OFF);
        int r = 0;

        assert(source_state_transition_allowed(s->state, state));

        s->state = state;
        if (state != SOURCE_RESOLVING)
                s->resolve = resolve_query_free(s->resolve);

        if (!timer) {
                (void) sd_event_source_set_enabled(s->event_timer, SD_EVENT_OFF);
                return;
        }

        /* sd-event's default accuracy of 250 ms is harmless at 32 s and more; a test poll
         * interval of a few milliseconds must mean what it says. */
        r = sd_event_source_set_time_accuracy(s->event_timer, s->settings->precise_timers ? 1 : 250 * USEC_PER_MSEC);
        /* From the clock's now, not sd-event's: a relative time counts from the start of the
         * loop's iteration, and a delay the caller computed as "until the NTS client's retry
         * time" after handling a key exchange would end before that time. The source would
         * then find its client still backing off and fail once more without trying. */
        if (r >= 0)
                r = sd_event_source_set_time(s->event_timer, usec_add(now(CLOCK_BOOTTIME), delay));
        if (r >= 0)
                r = sd_event_source_set_enabled(s->event_timer, SD_EVENT_ONESHOT);
        if (r < 0)
                log_error_errno(r, "Failed to arm the timer of %s (%s): %m", source_name(s), source_state_to_string(state));
}

/* Gave up on the server for now. The source backs off (the owner may rather stop it and move
 * on): until the NTS client may try again, or ConnectionRetrySec=. */
static void source_fail_full(Source *s, const char *reason, bool silent) {
        usec_t retry, t = now(CLOCK_BOOTTIME);

        /* A pool's member that keeps failing is turned down: the next start asks the pool for
         * another one. */
        if (s->nts)
                (void) nts_client_pool_member_failed(s->nts, /* refused= */ false);
        retry = nts_client_retry_after(s->nts);

        snprintf(s->last_error, sizeof s->last_error, "%s", reason);
        s->silent = silent;
        s->last_error_realtime = now(CLOCK_REALTIME);
        s->n_failures++;
        source_disconnect(s);
        source_enter(s, SOURCE_BACKING_OFF, retry > t ? retry - t : s->settings->retry_usec);
        source_emit(s, SOURCE_EVENT_FAILED);
}

static void source_fail(Source *s, const char *reason) {
        source_fail_full(s, reason, /* silent= */ false);
}

/* ---- poll interval ---- */

static void source_update_poll_interval(Source *s) {
        s->poll_interval_usec = MIN(s->settings->poll_interval_min_usec << s->poll_level,
                                    s->settings->poll_interval_max_usec);
}

/* Poll intervals are the minimum doubled k times, capped at the maximum. */
static void source_apply_poll_limits(Source *s) {
        const SourceSettings *c = s->settings;

        s->poll_level_max = 0;
        while (s->poll_level_max < 20 &&
               (c->poll_interval_min_usec << (s->poll_level_max + 1)) <= c->poll_interval_max_usec)
                s->poll_level_max++;
        s->poll_level_min = MIN(s->poll_level_min, s->poll_level_max);
        s->poll_level = CLAMP(s->poll_level, s->poll_level_min, s->poll_level_max);
        source_update_poll_interval(s);
}

void source_poll_limits_changed(Source *s) {
        usec_t interval = s->poll_interval_usec;

        assert(s);

        source_apply_poll_limits(s);
        /* A new interval applies from now, not after a wait under the old one. */
        if (s->state == SOURCE_POLL_WAIT && s->poll_interval_usec != interval)
                source_enter(s, SOURCE_POLL_WAIT, s->poll_interval_usec);
}

/* ---- requests ---- */

static int source_on_reply(sd_event_source *es, int fd, uint32_t revents, void *userdata);

static int source_socket_new(Source *s) {
        const SocketAddress *a = source_address(s);
        const int on = 1, tos = IPTOS_LOWDELAY;
        SocketAddress any = {};
        int family, r;

        family = a->sa.ss_family;
        s->fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (s->fd < 0)
                return log_error_errno(errno, "Failed to open UDP socket: %m");

        any.sa.ss_family = family;
        any.len = family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
        if (bind(s->fd, (const struct sockaddr *) &any.sa, any.len) < 0)
                return log_error_errno(errno, "Failed to bind UDP socket: %m");

        /* One socket per address (source_begin() closes it): connected, the kernel keeps the
         * route instead of looking it up for every request, and drops datagrams from anyone
         * else before they wake us. An unreachable network fails here, like a lost packet. */
        if (connect(s->fd, (const struct sockaddr *) &a->sa, a->len) < 0)
                return log_debug_errno(errno, "Failed to connect UDP socket to %s: %m",
                                       source_address_string(s, (char[SOCKET_ADDRESS_STRING_MAX]) {}));

        /* Kernel receive timestamps make t4 independent of how busy the loop is. */
        if (setsockopt(s->fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) < 0)
                log_debug_errno(errno, "Failed to enable receive timestamps, ignoring: %m");
        if (family == AF_INET)
                (void) setsockopt(s->fd, IPPROTO_IP, IP_TOS, &tos, sizeof tos);

        r = sd_event_add_io(s->settings->event, &s->event_receive, s->fd, EPOLLIN, source_on_reply, s);
        if (r < 0)
                return log_error_errno(r, "Failed to watch UDP socket: %m");
        return 0;
}

/* The socket of the address polled. On failure nothing is left open: the next request tries
 * again from scratch. */
static int source_open_socket(Source *s) {
        int r;

        if (s->fd >= 0)
                return 0;

        r = source_socket_new(s);
        if (r < 0)
                source_disconnect(s);
        return r;
}

static void source_wait_for_nts(Source *s);

/* The header and, for NTS, the extension fields. Returns the length, 0 when the NTS client
 * took over (a key exchange instead of this request), negative errno on failure. */
static ssize_t source_build_request(Source *s, uint8_t *buf, size_t size) {
        NTPHeader h = {
                .leap = s->settings->synchronized ? NTP_LEAP_NONE : NTP_LEAP_NOTINSYNC,
                .version = NTP_VERSION,
                .mode = NTP_MODE_CLIENT,
        };
        bool unanswered;
        ssize_t l;
        int r;

        /* A random transmit timestamp (RFC 5905 section 15, "bogus packet" defence): a reply
         * must echo it as its origin timestamp, which an off-path attacker cannot guess. Our
         * real send time is kept locally. */
        r = random_bytes_pooled(&h.transmit, sizeof h.transmit);
        if (r < 0)
                return log_error_errno(r, "Failed to generate request nonce: %m");
        s->request_nonce = h.transmit;
        s->request_refused = 0;
        s->request_stale = false;
        ntp_header_encode(&h, buf);

        if (!s->nts)
                return NTP_HEADER_SIZE;

        unanswered = nts_client_awaiting_reply(s->nts);
        l = nts_client_seal(s->nts, buf, size);
        /* The reply brings a new cookie and announces the count with the sample; only when the
         * last request went unanswered does the count fall for good, and say so now. */
        if (l > 0 && unanswered)
                source_emit(s, SOURCE_EVENT_NTS_COOKIES);
        return l;
}

/* Sends a request to the address polled and waits for the reply. A send error counts as a
 * lost packet: the timeout moves on to the next address, so an unreachable network cannot
 * spin the loop. */
static void source_send_request(Source *s) {
        uint8_t packet[NTS_MAX_PACKET_SIZE];
        char buf[SOCKET_ADDRESS_STRING_MAX];
        const SocketAddress *a = source_address(s);
        struct timespec ts;
        ssize_t l;

        assert(a);

        if (source_open_socket(s) < 0) {
                /* No socket (out of descriptors, no route to the address): like a lost packet, the
                 * timeout moves on. */
                source_enter(s, SOURCE_REPLY_WAIT, SOURCE_REPLY_TIMEOUT_USEC);
                return;
        }

        l = source_build_request(s, packet, sizeof packet);
        if (l == 0) {
                source_wait_for_nts(s);
                return;
        }
        if (l < 0) {
                source_enter(s, SOURCE_REPLY_WAIT, SOURCE_REPLY_TIMEOUT_USEC);
                return;
        }

        assert_se(clock_backend_now(s->settings->clock, &ts) == 0);
        s->request_realtime_nsec = timespec_to_nsec(&ts);
        s->request_monotonic = now(CLOCK_MONOTONIC);
        s->request_boottime = now(CLOCK_BOOTTIME);

        if (send(s->fd, packet, (size_t) l, MSG_DONTWAIT) < 0)
                log_debug_errno(errno, "Sending NTP request to %s failed: %m", source_address_string(s, buf));
        else
                s->pending = true;

        source_enter(s, SOURCE_REPLY_WAIT, SOURCE_REPLY_TIMEOUT_USEC);
}

static void source_continue_nts(Source *s);
static void source_forget_addresses(Source *s);

/* A new address: its samples start from scratch, and so does the poll interval. */
static void source_begin(Source *s, size_t address) {
        /* A pool's member must be a server that no other source of the pool polls: else the
         * client turned it down and asks the pool again. */
        if (s->nts && nts_client_pool_claim_address(s->nts, &s->addresses[address]) < 0) {
                source_forget_addresses(s);
                source_continue_nts(s);
                return;
        }

        source_disconnect(s);
        s->address = address;
        s->talking = false;
        s->unused = false;
        ntp_filter_reset(&s->filter);
        s->poll_resync = true;
        s->poll_level = s->poll_level_min;
        source_update_poll_interval(s);

        source_emit(s, SOURCE_EVENT_ADDRESS);
        source_send_request(s);
}

/* The next address of the same name, or the source fails: the timeout, or a reply that says
 * this address is of no use. */
static void source_next_address(Source *s, const char *reason) {
        if (s->address + 1 < s->n_addresses)
                source_begin(s, s->address + 1);
        else
                source_fail(s, reason);
}

/* ---- name resolution ---- */

static void source_forget_addresses(Source *s) {
        source_disconnect(s);
        s->addresses = mfree(s->addresses);
        s->n_addresses = s->address = 0;
}

static int source_add_address(Source *s, const struct addrinfo *ai) {
        SocketAddress *a;

        if (!IN_SET(ai->ai_family, AF_INET, AF_INET6) ||
            ai->ai_addrlen != (ai->ai_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6)))
                return 0;

        a = reallocarray(s->addresses, s->n_addresses + 1, sizeof *a);
        if (!a)
                return -ENOMEM;
        s->addresses = a;
        a += s->n_addresses++;
        *a = (SocketAddress) { .len = ai->ai_addrlen };
        memcpy(&a->sa, ai->ai_addr, ai->ai_addrlen);
        socket_address_set_port(a, s->ntp_port);
        return 0;
}

static void source_on_resolved(ResolveQuery *q, int error, const struct addrinfo *ai, void *userdata) {
        Source *s = userdata;
        char reason[256];

        s->resolve = resolve_query_free(s->resolve);

        if (error < 0) {
                log_info("Failed to resolve %s: %s", source_name(s), resolve_error_string(error));
                snprintf(reason, sizeof reason, "cannot resolve: %s", resolve_error_string(error));
                source_fail(s, reason);
                return;
        }

        for (; ai; ai = ai->ai_next)
                if (source_add_address(s, ai) < 0) {
                        log_oom();
                        source_fail(s, "out of memory");
                        return;
                }

        if (s->n_addresses == 0) {
                log_info("Server %s resolved to no usable address.", source_name(s));
                source_fail(s, "no usable address");
                return;
        }

        source_begin(s, 0);
}

/* Resolves host anew every time a source starts: DNS answers change. */
static int source_resolve(Source *s, const char *host, uint16_t port) {
        int r;

        source_forget_addresses(s);
        s->resolve = resolve_query_free(s->resolve);
        s->ntp_port = port;

        r = resolve_query_new(s->settings->event, host, NULL, AF_UNSPEC, SOCK_DGRAM, source_on_resolved, s,
                              &s->resolve);
        if (r < 0)
                return log_warning_errno(r, "Failed to start resolving %s: %m", host);

        source_enter(s, SOURCE_RESOLVING, 0);
        return 0;
}

/* ---- NTS ---- */

/* The NTS client took over (no cookie left, keys too old, a NAK, the end of a bootstrap): it
 * runs a key exchange or backs off, and reports either, so the source waits for its word. */
static void source_wait_for_nts(Source *s) {
        source_disconnect(s);
        source_enter(s, SOURCE_KEY_EXCHANGE, 0);
}

/* The NTS client says what now, after it took over (a key exchange instead of a request, a
 * NAK, a key exchange that ended): poll the server it names, wait for it, or back off as it
 * does. The addresses are resolved again: a key exchange may name another NTP server. */
static void source_continue_nts(Source *s) {
        bool had_address = source_address(s);

        switch (nts_client_prepare(s->nts)) {
        case NTS_CLIENT_READY:
                if (source_resolve(s, nts_client_ntp_host(s->nts), nts_client_ntp_port(s->nts)) < 0)
                        source_fail(s, "cannot start resolving the NTP server");
                else if (had_address)
                        source_emit(s, SOURCE_EVENT_ADDRESS);
                return;
        case NTS_CLIENT_POOL_WAIT:
        case NTS_CLIENT_RESOLVING:
        case NTS_CLIENT_KEY_EXCHANGE:
                source_wait_for_nts(s);
                return;
        case NTS_CLIENT_BACKING_OFF:
        default:
                source_fail(s, nts_client_last_error(s->nts));
                return;
        }
}

static void source_on_nts_changed(NTSClient *c, NTSClientEvent e, void *userdata) {
        static const SourceEvent map[_NTS_CLIENT_EVENT_MAX] = {
                [NTS_CLIENT_EVENT_KEYS] = SOURCE_EVENT_NTS_KEYS,
                [NTS_CLIENT_EVENT_KE_FAILED] = SOURCE_EVENT_NTS_KE_FAILED,
                [NTS_CLIENT_EVENT_BOOTSTRAP_REFUSED] = SOURCE_EVENT_NTS_BOOTSTRAP_REFUSED,
        };
        Source *s = userdata;

        /* What changed first (the owner shows it), then what the source does about it. */
        source_emit(s, map[e]);
        if (s->state == SOURCE_KEY_EXCHANGE)
                source_continue_nts(s);
}

/* ---- replies ---- */

/* Counts a refused reply to the request in flight and logs it: the first of each cause and
 * REFUSAL_LOG_INTERVAL_USEC at warning (NTS verification) or notice level, the rest at debug
 * level, so that a flood of forged replies costs a few lines. */
static void source_refuse(Source *s, RefusalCause cause, const char *reason) {
        char addr[SOCKET_ADDRESS_STRING_MAX];
        bool first;

        first = refusals_add(&s->refusals, cause, reason, now(CLOCK_REALTIME), now(CLOCK_BOOTTIME));
        s->request_refused++;

        (void) source_address_string(s, addr);
        if (cause >= REFUSAL_NTS_TRUNCATED)
                log_struct(first ? LOG_WARNING : LOG_DEBUG, TIMESYNC_MESSAGE_NTS_REPLY_REFUSED,
                           ((const char *const[]) { "NTP_SERVER", source_name(s), "NTP_ADDRESS", addr,
                                                    "NTS_ERROR", reason, NULL }),
                           "Ignoring reply from %s (%s) that fails NTS verification: %s.", addr, source_name(s),
                           reason);
        else
                log_full(first ? LOG_NOTICE : LOG_DEBUG, "Ignoring reply from %s (%s): %s.", addr, source_name(s), reason);
}

/* A datagram received on the socket: its length, whether it came cut (larger than the buffer),
 * and the kernel's receive time (zero without one). */
typedef struct Datagram {
        size_t size;
        bool truncated;
        struct timespec kernel_ts;
} Datagram;

/* Reads one datagram from the address polled: 0, or negative when there is nothing (more) of
 * use to read. */
static int source_receive(Source *s, int fd, uint8_t *buf, size_t size, Datagram *ret) {
        const SocketAddress *a = source_address(s);
        SocketAddress from = {};
        struct iovec iov = IOVEC_MAKE(buf, size);
        uint8_t control[CMSG_SPACE(sizeof(struct timespec))];
        struct msghdr mh = {
                .msg_name = &from.sa,
                .msg_namelen = sizeof from.sa,
                .msg_iov = &iov,
                .msg_iovlen = 1,
                .msg_control = control,
                .msg_controllen = sizeof control,
        };
        ssize_t l;

        l = recvmsg(fd, &mh, MSG_DONTWAIT);
        if (l < 0) {
                /* ICMP errors show up here (ECONNREFUSED): the server's port is closed. */
                if (IN_SET(errno, EAGAIN, EINTR))
                        return -errno;
                return log_debug_errno(errno, "Failed to receive NTP reply: %m");
        }

        from.len = mh.msg_namelen;
        if (!a || !socket_address_equal(&from, a)) {
                log_debug("Reply from unknown source, ignoring.");
                return -EADDRNOTAVAIL;
        }

        *ret = (Datagram) {
                .size = (size_t) l,
                .truncated = mh.msg_flags & MSG_TRUNC,
        };
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS &&
                    c->cmsg_len == CMSG_LEN(sizeof(struct timespec)))
                        memcpy(&ret->kernel_ts, CMSG_DATA(c), sizeof ret->kernel_ts);
        return 0;
}

/* Is this a reply to our request at all? Nothing else of it is looked at before. */
static bool source_reply_matches(Source *s, const uint8_t *buf, const Datagram *d, NTPHeader *ret) {
        if (!s->pending) {
                log_debug("Unexpected reply, ignoring.");
                return false;
        }

        /* A datagram larger than the buffer arrives cut. Its first bytes may well parse and,
         * with NTS, even verify (fields after the authenticator are not covered by it): refused
         * whole, never used cut. No reply we accept is that large. */
        if (d->truncated) {
                source_refuse(s, REFUSAL_OVERSIZED, "it is larger than any reply accepted");
                return false;
        }
        if (d->size < NTP_HEADER_SIZE) {
                source_refuse(s, REFUSAL_SHORT, "it is shorter than an NTP header");
                return false;
        }

        ntp_header_decode(buf, ret);

        /* The origin check comes first: anything that does not echo our nonce is not an
         * answer to our request, whatever else it says. */
        if (!ntp_ts_equal(ret->origin, s->request_nonce)) {
                source_refuse(s, REFUSAL_WRONG_ORIGIN, "it does not match our request (origin timestamp)");
                return false;
        }
        if (ret->mode != NTP_MODE_SERVER || !IN_SET(ret->version, 3, 4)) {
                log_debug("Unsupported reply (mode %u, version %u).", ret->mode, ret->version);
                source_refuse(s, REFUSAL_NOT_SERVER_REPLY, "it is not an NTPv3 or NTPv4 server reply");
                return false;
        }
        return true;
}

/* With NTS, nothing of a reply is looked at before it verified: not its time, not its kiss
 * codes. Only a NAK for our own request is acted on: the NTS client runs a key exchange or
 * backs off. */
static bool source_reply_authentic(Source *s, const uint8_t *buf, size_t size) {
        RefusalCause cause;
        const char *reason;
        int r;

        if (!s->nts)
                return true;

        r = nts_client_open(s->nts, buf, size, &cause, &reason);
        if (r == -EKEYREJECTED) {
                /* Logged by the client; only counted here. */
                (void) refusals_add(&s->refusals, cause, reason, now(CLOCK_REALTIME), now(CLOCK_BOOTTIME));
                source_wait_for_nts(s);
                source_emit(s, SOURCE_EVENT_NTS_KEYS_DROPPED);
                return false;
        }
        if (r < 0) {
                source_refuse(s, cause, reason);
                return false;
        }

        source_emit(s, SOURCE_EVENT_NTS_VERIFIED);
        return true;
}

/* Kiss-o'-death (RFC 5905 section 7.4), authentic if it came over NTS. */
static void source_handle_kiss(Source *s, const NTPHeader *h) {
        char code[5] = {};

        memcpy(code, h->refid, 4);
        for (size_t i = 0; i < 4; i++)
                if (code[i] < 0x20 || code[i] > 0x7e)
                        code[i] = '?';

        if (ntp_header_is_kiss(h, KISS_RATE)) {
                /* Slow down: double the interval, up to our maximum, and never poll faster again
                 * (samples that call for fast polls, a new address, a restart of the source
                 * poll at this floor: docs/POOLS.md). */
                s->poll_level_min = backoff_rate_kiss(s->poll_level, s->poll_level_min, s->poll_level_max);
                s->poll_level = MAX(s->poll_level, s->poll_level_min);
                source_update_poll_interval(s);
                log_notice("Server %s asks us to slow down (kiss code RATE), polling every %s.",
                           source_name(s), FORMAT_TIMESPAN(s->poll_interval_usec, USEC_PER_SEC));
        } else if ((ntp_header_is_kiss(h, KISS_DENY) || ntp_header_is_kiss(h, KISS_RSTR)) && s->nts &&
                   nts_client_pool_member_failed(s->nts, /* refused= */ true)) {
                /* One member of many: the pool is asked for another (logged by the client). */
                char reason[64];

                snprintf(reason, sizeof reason, "a pool member refused service (kiss code %s)", code);
                source_fail(s, reason);
                return;
        } else if (ntp_header_is_kiss(h, KISS_DENY) || ntp_header_is_kiss(h, KISS_RSTR)) {
                log_struct(LOG_WARNING, TIMESYNC_MESSAGE_REPLY_REFUSED,
                           ((const char *const[]) { "NTP_SERVER", source_name(s), "KISS_CODE", code, NULL }),
                           "Server %s refuses service (kiss code %s), not using it any more.", source_name(s), code);
                snprintf(s->last_error, sizeof s->last_error, "refuses service (kiss code %s)", code);
                s->last_error_realtime = now(CLOCK_REALTIME);
                s->n_failures++;
                /* Its other addresses too: it is the same operator. */
                source_forget_addresses(s);
                source_enter(s, SOURCE_FAILED, 0);
                source_emit(s, SOURCE_EVENT_FAILED);
                return;
        } else
                /* RFC 5905 section 7.4: unknown kiss codes carry no instruction; this reply gave
                 * no time, so poll again later like after any reply. */
                log_debug("Ignoring kiss-o'-death packet with code %s.", code);

        source_enter(s, SOURCE_POLL_WAIT, s->poll_interval_usec);
}

/* An authentic reply to our request: does it carry time we may use? If not, acts on it (kiss
 * codes, the next address) and returns false. */
static bool source_reply_usable(Source *s, const NTPHeader *h) {
        char buf[SOCKET_ADDRESS_STRING_MAX];
        int64_t root_distance;

        if (h->stratum == NTP_STRATUM_KISS) {
                source_handle_kiss(s, h);
                return false;
        }

        if (h->leap == NTP_LEAP_NOTINSYNC || h->stratum > NTP_STRATUM_MAX) {
                log_info("Server %s is not synchronized, trying the next one.", source_address_string(s, buf));
                source_next_address(s, "not synchronized");
                return false;
        }

        if (ntp_ts_is_zero(h->receive) || ntp_ts_is_zero(h->transmit)) {
                log_debug("Reply has zero timestamps, ignoring.");
                source_enter(s, SOURCE_POLL_WAIT, s->poll_interval_usec);
                return false;
        }

        root_distance = ntp_root_distance_nsec(h);
        if (root_distance > (int64_t) s->settings->root_distance_max_usec * 1000) {
                log_info("Server %s has too large root distance (%.3f s > %.3f s), trying the next one.",
                         source_address_string(s, buf), (double) root_distance / NTP_NSEC_PER_SEC,
                         (double) s->settings->root_distance_max_usec / USEC_PER_SEC);
                source_next_address(s, "root distance too large");
                return false;
        }
        return true;
}

/* t4 from the kernel timestamp if there is one; otherwise now. Both are checked against the
 * monotonic clock, so a clock step while waiting cannot produce a huge sample. */
static int64_t source_destination_time(Source *s, const struct timespec *kernel_ts) {
        struct timespec now_ts;
        int64_t t4, elapsed;

        assert_se(clock_backend_now(s->settings->clock, &now_ts) == 0);
        t4 = kernel_ts->tv_sec > 0 && clock_backend_type(s->settings->clock) != CLOCK_BACKEND_FAKE
                ? timespec_to_nsec(kernel_ts) : timespec_to_nsec(&now_ts);

        elapsed = (int64_t) (now(CLOCK_MONOTONIC) - s->request_monotonic) * 1000;
        if (t4 < s->request_realtime_nsec || t4 - s->request_realtime_nsec > elapsed + NTP_NSEC_PER_SEC)
                t4 = s->request_realtime_nsec + elapsed;
        return t4;
}

/* The sample of a usable reply; false when bootstrap keys refuse its time (the source failed). */
static bool source_make_sample(Source *s, const NTPHeader *h, const struct timespec *kernel_ts) {
        SourceSample *p = &s->sample;
        int64_t t4 = source_destination_time(s, kernel_ts), delay_min;
        NTPFilterDelay delay;
        NTPSample ntp;
        bool spike;

        ntp = ntp_sample_compute(s->request_realtime_nsec, ntp_ts_to_nsec(h->receive), ntp_ts_to_nsec(h->transmit), t4);
        if (ntp.delay_nsec < 0)
                ntp.delay_nsec = 0;

        /* Keys from a bootstrap exchange (wrong clock, certificate not yet valid) bound what
         * their time may do; see timesyncd-nts-client.c. Checked before the sample counts for
         * anything: a refused one is neither filtered nor shown nor "contacted". */
        if (s->nts && nts_client_check_bootstrap(s->nts, ntp_ts_to_nsec(h->transmit), ntp.offset_nsec) < 0) {
                source_fail(s, "bootstrap time refused");
                return false;
        }

        delay_min = ntp_filter_delay_min(&s->filter);
        spike = ntp_filter_add(&s->filter, ntp.offset_nsec, ntp.delay_nsec, &delay);
        *p = (SourceSample) {
                .header = *h,
                .origin_nsec = s->request_realtime_nsec,
                .receive_nsec = ntp_ts_to_nsec(h->receive),
                .transmit_nsec = ntp_ts_to_nsec(h->transmit),
                .destination_nsec = t4,
                .ntp = ntp,
                .root_distance_nsec = ntp_root_distance_nsec(h),
                .spike = spike,
                .delay = delay,
                .delay_min_nsec = delay_min,
                .packet_count = s->filter.packet_count,
                .jitter_nsec = s->filter.jitter_nsec,
                .authenticated = s->nts,
                .first = !s->talking,
                .boottime = s->request_boottime,
                .bootstrap = s->nts ? nts_client_bootstrap(s->nts) : NTS_CLIENT_BOOTSTRAP_NONE,
        };
        s->has_sample = true;
        s->talking = true;
        return true;
}

/* A large offset polls fast because the clock is about to be corrected and must be measured
 * again soon. A source whose samples are not used (a falseticker) keeps its offset, as the
 * clock is not moved towards it: polled at the shortest interval for as long as it lies, a
 * pool member wrong by seconds would be polled every 32 s by a whole fleet. Its level follows
 * its own consistency instead, as the others' follows the clock's. */
/* When the level grows, it grows as far as the clock's discipline is locked for (one step at a
 * time without a discipline), and no further; it never drops for that (an unlocked loop still
 * has its samples at the interval it had). */
static void source_cap_poll_level(Source *s) {
        /* From the filter's verdict, not from an earlier cap of it: a lock that grew after the
         * sample (the steer it led to) lets the level grow as the filter said. */
        if (s->poll_judging)
                s->poll_level = s->poll_level_filter;
        if (s->poll_level > s->poll_level_before && s->poll_interval_locked != USEC_INFINITY)
                while (s->poll_level < s->poll_level_max &&
                       (s->settings->poll_interval_min_usec << (s->poll_level + 1)) <= s->poll_interval_locked)
                        s->poll_level++;
        while (s->poll_level > s->poll_level_before &&
               (s->settings->poll_interval_min_usec << s->poll_level) > s->poll_interval_locked)
                s->poll_level--;
        source_update_poll_interval(s);
}

static void source_next_poll_level(Source *s) {
        const SourceSample *p = &s->sample;
        int64_t offset = s->unused ? ntp_filter_deviation(&s->filter, p->ntp.offset_nsec) : p->ntp.offset_nsec;

        s->poll_level_before = s->poll_level;
        if (s->poll_resync) {
                s->poll_level = s->poll_level_min;
                s->poll_resync = false;
        } else if (p->delay == NTP_FILTER_DELAY_USUAL)
                s->poll_level = ntp_filter_poll_next(s->poll_level, offset, p->spike, p->jitter_nsec,
                                                     s->poll_level_min, s->poll_level_max);
        /* A sample whose delay is not trusted says nothing of the clock: the level stays, and a
         * delay that lasts is learnt no faster than the interval the source had. */
        s->poll_level_filter = s->poll_level;
        s->poll_judging = true;
        source_cap_poll_level(s);
}

void source_set_poll_interval_locked(Source *s, usec_t interval) {
        assert(s);

        s->poll_interval_locked = interval;
        /* Told while its own sample is handled: that sample's growth is judged again. */
        if (s->state == SOURCE_REPLY_WAIT)
                source_cap_poll_level(s);
}

static void source_use_reply(Source *s, const NTPHeader *h, const struct timespec *kernel_ts) {
        char buf[SOCKET_ADDRESS_STRING_MAX];

        if (!source_make_sample(s, h, kernel_ts))
                return;

        source_next_poll_level(s);
        log_debug("NTP reply from %s: stratum %u, offset %+.6f s, delay %.6f s%s, jitter %.6f s%s, next poll in %s.",
                  source_address_string(s, buf), h->stratum,
                  (double) s->sample.ntp.offset_nsec / NTP_NSEC_PER_SEC,
                  (double) s->sample.ntp.delay_nsec / NTP_NSEC_PER_SEC,
                  s->sample.delay == NTP_FILTER_DELAY_JUMPED ? " (jumped)" :
                  s->sample.delay == NTP_FILTER_DELAY_TOO_LONG ? " (too long)" : "",
                  s->sample.jitter_nsec / NTP_NSEC_PER_SEC,
                  s->sample.spike ? " (spike)" : "", FORMAT_TIMESPAN(s->poll_interval_usec, USEC_PER_MSEC));
        source_emit(s, SOURCE_EVENT_SAMPLE);
        s->poll_judging = false;
        /* Unless the handler changed course (a stop, the end of a bootstrap). */
        if (s->state == SOURCE_REPLY_WAIT)
                source_enter(s, SOURCE_POLL_WAIT, s->poll_interval_usec);
}

/* Receive, check, use: each a step of its own, and each may end the handling of a packet. */
static int source_on_reply(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        Source *s = userdata;
        char addr[SOCKET_ADDRESS_STRING_MAX];
        uint8_t buf[NTS_MAX_PACKET_SIZE];
        Datagram d = {};
        NTPHeader h;

        if (source_receive(s, fd, buf, sizeof buf, &d) < 0)
                return 0;
        s->heard = true;
        if (!source_reply_matches(s, buf, &d, &h) || !source_reply_authentic(s, buf, d.size))
                return 0;

        s->pending = false;
        /* Its t1 was read from the clock before a step, its t4 after: the offset would be
         * measured against a clock that no longer is (with several sources, stored as if it
         * were current). Authentic, so its cookies count; its time does not: ask again now. */
        if (s->request_stale) {
                log_debug("Reply from %s (%s) to a request sent before the clock was stepped, not used; asking again.",
                          source_address_string(s, addr), s->name);
                source_enter(s, SOURCE_POLL_WAIT, 0);
                return 0;
        }
        if (source_reply_usable(s, &h))
                source_use_reply(s, &h, &d.kernel_ts);
        return 0;
}

/* ---- the timer ---- */

static void source_on_reply_timeout(Source *s) {
        const RefusalCount *last = &s->refusals.by_cause[s->refusals.last];
        char buf[SOCKET_ADDRESS_STRING_MAX], reason[96];

        (void) source_address_string(s, buf);
        if (s->request_refused == 0)
                log_info("Timed out waiting for reply from %s (%s).", buf, source_name(s));
        else {
                /* Not a silent server: say what came instead of a reply we could use. */
                log_info("Timed out waiting for reply from %s (%s): %u %s refused, the last one: %s.", buf, source_name(s),
                         s->request_refused, s->request_refused == 1 ? "reply was" : "replies were", last->reason);
                source_emit(s, SOURCE_EVENT_REFUSED);
        }
        if (s->address + 1 < s->n_addresses || !s->nts || s->heard) {
                source_next_address(s, "no reply");
                return;
        }
        /* Keys came over TCP, yet nothing ever came back over UDP: what a firewall that lets
         * the key exchange's port through and not NTP's looks like (nts-query says the same). */
        (void) snprintf(reason, sizeof reason, "key exchange works, no NTP reply: UDP port %u blocked?",
                        socket_address_port(source_address(s)));
        source_fail_full(s, reason, /* silent= */ true);
}

static int source_on_timer(sd_event_source *es, uint64_t usec, void *userdata) {
        Source *s = userdata;

        switch (s->state) {
        case SOURCE_POLL_WAIT:
                source_send_request(s);
                break;
        case SOURCE_REPLY_WAIT:
                source_on_reply_timeout(s);
                break;
        case SOURCE_BACKING_OFF:
                if (source_start(s) < 0)
                        source_fail(s, s->nts ? nts_client_last_error(s->nts) : "cannot start resolving");
                break;
        default:
                assert_not_reached();
        }
        return 0;
}

/* ---- life cycle ---- */

int source_new(const SourceSettings *settings, const char *name, const char *host, uint16_t port, bool nts,
               source_handler_t handler, void *userdata, Source **ret) {
        _cleanup_(source_freep) Source *s = NULL;
        int r;

        assert(settings);
        assert(name);
        assert(host);
        assert(handler);
        assert(ret);

        s = new0(Source, 1);
        if (!s)
                return -ENOMEM;

        s->settings = settings;
        s->poll_interval_locked = USEC_INFINITY;
        s->handler = handler;
        s->userdata = userdata;
        s->fd = -EBADF;
        s->port = port;
        s->name = strdup(name);
        s->host = strdup(host);
        if (!s->name || !s->host)
                return -ENOMEM;

        if (nts) {
                r = nts_client_new(settings->nts, name, host, port, source_on_nts_changed, s, &s->nts);
                if (r < 0)
                        return r;
        }

        r = sd_event_add_time_relative(settings->event, &s->event_timer, CLOCK_BOOTTIME, 0, 0, source_on_timer, s);
        if (r < 0)
                return r;
        source_enter(s, SOURCE_IDLE, 0);
        source_apply_poll_limits(s);

        *ret = TAKE_PTR(s);
        return 0;
}

Source *source_free(Source *s) {
        if (!s)
                return NULL;

        source_forget_addresses(s);
        s->resolve = resolve_query_free(s->resolve);
        s->event_timer = sd_event_source_disable_unref(s->event_timer);
        nts_client_free(s->nts);
        free(s->name);
        free(s->host);
        return mfree(s);
}

int source_set_pool(Source *s, const char *state_name, NTSClientPool *ke_pool) {
        int r;

        assert(s);
        assert(s->nts);

        r = nts_client_set_state_name(s->nts, state_name);
        if (r < 0 || !ke_pool)
                return r;
        return nts_client_join_pool(s->nts, ke_pool);
}

int source_start(Source *s) {
        assert(s);
        assert(IN_SET(s->state, SOURCE_IDLE, SOURCE_BACKING_OFF));

        if (!s->nts)
                return source_resolve(s, s->host, s->port ?: NTP_PORT);

        switch (nts_client_prepare(s->nts)) {
        case NTS_CLIENT_READY:
                return source_resolve(s, nts_client_ntp_host(s->nts), nts_client_ntp_port(s->nts));
        case NTS_CLIENT_POOL_WAIT:
        case NTS_CLIENT_RESOLVING:
        case NTS_CLIENT_KEY_EXCHANGE:
                source_enter(s, SOURCE_KEY_EXCHANGE, 0);
                return 0;
        case NTS_CLIENT_BACKING_OFF:
        default:
                return -EAGAIN;
        }
}

int source_keep_trying(Source *s) {
        usec_t retry, t;
        int r;

        assert(s);

        if (s->state == SOURCE_FAILED)
                return -EPERM;
        r = source_start(s);
        if (r >= 0)
                return 0;

        retry = nts_client_retry_after(s->nts);
        t = now(CLOCK_BOOTTIME);
        snprintf(s->last_error, sizeof s->last_error, "%s",
                 s->nts && r == -EAGAIN ? nts_client_last_error(s->nts) : "cannot start resolving");
        s->last_error_realtime = now(CLOCK_REALTIME);
        source_forget_addresses(s);
        source_enter(s, SOURCE_BACKING_OFF, retry > t ? retry - t : s->settings->retry_usec);
        return r;
}

bool source_retry_now(Source *s) {
        bool retried;

        assert(s);

        retried = s->nts && nts_client_retry_now(s->nts);
        if (s->state != SOURCE_BACKING_OFF)
                return retried;
        source_enter(s, SOURCE_BACKING_OFF, 0);
        return true;
}

void source_stop(Source *s) {
        assert(s);

        if (s->state == SOURCE_FAILED)
                return;

        source_forget_addresses(s);
        ntp_filter_reset(&s->filter);
        s->talking = false;
        s->poll_resync = true;
        source_enter(s, SOURCE_IDLE, 0);
}

bool source_usable(const Source *s) {
        return s->state != SOURCE_FAILED && !nts_client_backing_off(s->nts);
}

bool source_sample_used(Source *s) {
        assert(s);

        if (!s->nts || !nts_client_bootstrap_done(s->nts))
                return false;

        /* A new key exchange takes over; the source polls again when it is done. */
        source_wait_for_nts(s);
        return true;
}

void source_set_unused(Source *s, bool unused) {
        assert(s);

        s->unused = unused;
}

void source_clock_stepped(Source *s, bool poll_now) {
        assert(s);

        ntp_filter_clock_stepped(&s->filter);
        /* A request out now was sent against the clock before the step. */
        if (s->pending)
                s->request_stale = true;
        if (!poll_now)
                return;

        s->poll_resync = true;
        if (s->state == SOURCE_POLL_WAIT)
                source_enter(s, SOURCE_POLL_WAIT, 0);
}

void source_sample_stepped(Source *s, int64_t step_nsec) {
        assert(s);

        if (s->has_sample)
                s->sample.ntp.offset_nsec = int64_sub_saturating(s->sample.ntp.offset_nsec, step_nsec);
}

/* ---- views ---- */

bool source_stalled(const Source *s) {
        switch (s->state) {
        case SOURCE_POLL_WAIT:
        case SOURCE_REPLY_WAIT:
        case SOURCE_BACKING_OFF:
                return sd_event_source_get_enabled(s->event_timer, NULL) <= 0;
        case SOURCE_RESOLVING:
                return !s->resolve;
        default:
                return false;
        }
}

SourceState source_state(const Source *s) {
        return s->state;
}

const char *source_name(const Source *s) {
        /* A key-exchange pool's source is its member once it has one. */
        return nts_client_pool_member(s->nts) ?: s->name;
}

const SocketAddress *source_address(const Source *s) {
        return s->address < s->n_addresses ? &s->addresses[s->address] : NULL;
}

const SourceSample *source_sample(const Source *s) {
        return s->has_sample ? &s->sample : NULL;
}

usec_t source_poll_interval(const Source *s) {
        return s->poll_interval_usec;
}

NTSClient *source_nts(const Source *s) {
        return s->nts;
}

const Refusals *source_refusals(const Source *s) {
        return &s->refusals;
}

const char *source_last_error(const Source *s) {
        return s->last_error;
}

bool source_silent(const Source *s) {
        return s->silent;
}

usec_t source_last_error_realtime(const Source *s) {
        return s->last_error_realtime;
}

unsigned source_failures(const Source *s) {
        return s->n_failures;
}
