/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <fcntl.h>
#include <math.h>
#include <netinet/ip.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <systemd/sd-daemon.h>

#include "iovec-util.h"
#include "log.h"
#include "random-util.h"
#include "string-util.h"
#include "strv.h"
#include "timesyncd-bus.h"
#include "timesyncd-clockfile.h"
#include "timesyncd-manager.h"
#include "timesyncd-network.h"
#include "timesyncd-nts.h"


/* Kiss codes (RFC 5905 section 7.4) we act on. */
#define KISS_RATE "RATE"
#define KISS_DENY "DENY"
#define KISS_RSTR "RSTR"

static int manager_arm_timer(Manager *m, usec_t next);
static int manager_arm_retry(Manager *m);
static int manager_on_reload_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata);

static int poll_log2_seconds(usec_t interval) {
        int l = 0;

        while (l < 30 && ((usec_t) 2 << l) * USEC_PER_SEC <= interval)
                l++;
        return l;
}

static void manager_update_poll_interval(Manager *m) {
        m->poll_interval_usec = MIN(m->config.poll_interval_min_usec << m->poll_level,
                                    m->config.poll_interval_max_usec);
}
static int manager_clock_watch_setup(Manager *m);

static int64_t timespec_to_nsec(const struct timespec *ts) {
        return (int64_t) ts->tv_sec * NTP_NSEC_PER_SEC + ts->tv_nsec;
}

/* Always fills buf: callers pass buf itself on to other calls, and arguments of a log call are
 * not evaluated below its level (a STATUS= line once showed an empty address that way). */
static const char *current_address_pretty(Manager *m, char *buf, size_t size) {
        if (!m->current_server_address) {
                snprintf(buf, size, "n/a");
                return buf;
        }
        return server_address_pretty(m->current_server_address, buf, size);
}

/* STATUS=, what `systemctl status` shows: what the daemon does, and while NTS does not work,
 * why (NTSStatus: the failed key exchange, the refused replies, the missing libssl...). A
 * status that names the reason itself gets it once. */
static void manager_notify_status(Manager *m, const char *format, ...) _printf_(2, 3);
static void manager_notify_status(Manager *m, const char *format, ...) {
        char buf[512];
        va_list ap;

        va_start(ap, format);
        (void) vsnprintf(buf, sizeof buf, format, ap);
        va_end(ap);
        if (m->nts_status[0] != '\0' && !strstr(buf, m->nts_status))
                (void) sd_notifyf(false, "STATUS=%s %s.", buf, m->nts_status);
        else
                (void) sd_notifyf(false, "STATUS=%s", buf);
        m->status_notified = true;
}

void manager_notify_ready(Manager *m) {
        /* A reason found while starting ("NTSRequired=yes but no NTS server is configured")
         * must stay what `systemctl status` shows: the default text only if none was sent. */
        (void) sd_notify(false, m->status_notified ? "READY=1" : "READY=1\nSTATUS=Daemon is running");
}

/* ---- server selection ---- */

ServerName **manager_server_list(Manager *m, ServerType t) {
        switch (t) {
        case SERVER_SYSTEM:
                return &m->system_servers;
        case SERVER_FALLBACK:
                return &m->fallback_servers;
        case SERVER_LINK:
                return &m->link_servers;
        case SERVER_RUNTIME:
                return &m->runtime_servers;
        case SERVER_NTS:
                return &m->nts_servers;
        case SERVER_NTS_RUNTIME:
                return &m->nts_runtime_servers;
        default:
                assert_not_reached();
        }
}

static ServerName *first_usable(ServerName *n) {
        for (; n; n = n->names_next)
                if (!n->refused && !nts_state_backing_off(n->nts))
                        return n;
        return NULL;
}

/* Precedence as in stock timesyncd: runtime, then system, then link servers, round and round;
 * the fallback list only when none of those exists. *wrapped is set when the walk starts over,
 * that is when every server was tried once. */
static ServerName *manager_next_server_name(Manager *m, bool *wrapped) {
        static const ServerType ntp_order[] = { SERVER_RUNTIME, SERVER_SYSTEM, SERVER_LINK };
        static const ServerType nts_order[] = { SERVER_NTS_RUNTIME, SERVER_NTS };
        /* With NTS servers configured, the others do not exist for us: no downgrade. */
        const bool nts = manager_nts_enabled(m);
        const ServerType *order = nts ? nts_order : ntp_order;
        size_t n_order = nts ? ELEMENTSOF(nts_order) : ELEMENTSOF(ntp_order);
        ServerName *n;
        size_t start = 0;

        *wrapped = false;

        if (!nts && !m->runtime_servers && !m->system_servers && !m->link_servers) {
                n = m->current_server_name ? first_usable(m->current_server_name->names_next) : NULL;
                if (n)
                        return n;
                *wrapped = m->current_server_name;
                return first_usable(m->fallback_servers);
        }

        if (m->current_server_name && m->current_server_name->type != SERVER_FALLBACK) {
                n = first_usable(m->current_server_name->names_next);
                if (n)
                        return n;
                for (size_t i = 0; i < n_order; i++)
                        if (order[i] == m->current_server_name->type)
                                start = i + 1;
        }

        for (size_t i = start; i < n_order; i++) {
                n = first_usable(*manager_server_list(m, order[i]));
                if (n)
                        return n;
        }

        *wrapped = m->current_server_name;
        for (size_t i = 0; i < n_order; i++) {
                n = first_usable(*manager_server_list(m, order[i]));
                if (n)
                        return n;
        }
        return NULL;
}

void manager_set_server_name(Manager *m, ServerName *n) {
        assert(m);

        if (m->current_server_name == n)
                return;

        m->current_server_name = n;
        /* A new server starts with a clean slate: its offsets say nothing about the old one. */
        manager_set_server_address(m, NULL);
        m->resolve_query = resolve_query_free(m->resolve_query);

        if (n)
                log_debug("Selected server %s.", n->string);
        /* The NTS properties are read through the selected server: they changed with it. */
        (void) manager_bus_emit_changed(m, "ServerName", "NTSAuthenticated", "NTSKeyExchangeServer", "NTSAEAD",
                                        "NTSCookies", NULL);
}

void manager_set_server_address(Manager *m, ServerAddress *a) {
        assert(m);

        if (m->current_server_address == a)
                return;

        m->current_server_address = a;
        manager_disconnect(m);
        m->talking = false;
        ntp_filter_reset(&m->filter);
        m->poll_resync = true;
        /* NTSAuthenticated speaks of the server in use, at this address: none, or one that has
         * not answered yet, has authenticated nothing. This includes the moment the addresses
         * are resolved again after a key exchange (NAK, renewal): no address, nothing shown as
         * authenticated, until the next verified reply a round trip later. */
        m->ntpmsg_authenticated = false;

        if (a) {
                char buf[80];
                log_debug("Selected address %s of server %s.",
                          server_address_pretty(a, buf, sizeof buf), a->name->string);
        }
        (void) manager_bus_emit_changed(m, "ServerAddress", "NTSAuthenticated", NULL);
}

void manager_flush_server_names(Manager *m, ServerType t) {
        ServerName **list = manager_server_list(m, t);

        while (*list)
                server_name_free(*list);
}

/* ---- request and reply ---- */

void manager_disconnect(Manager *m) {
        assert(m);

        m->event_receive = sd_event_source_disable_unref(m->event_receive);
        m->event_timeout = sd_event_source_disable_unref(m->event_timeout);
        m->event_timer = sd_event_source_disable_unref(m->event_timer);
        m->socket_fd = safe_close(m->socket_fd);
        m->pending = false;
}

static int manager_on_reply(sd_event_source *s, int fd, uint32_t revents, void *userdata);

static int manager_open_socket(Manager *m) {
        const int on = 1, tos = IPTOS_LOWDELAY;
        union sockaddr_union any = {};
        int family, r;

        assert(m->current_server_address);

        if (m->socket_fd >= 0)
                return 0;

        family = m->current_server_address->sockaddr.sa.sa_family;
        m->socket_fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (m->socket_fd < 0)
                return log_error_errno(errno, "Failed to open UDP socket: %m");

        any.sa.sa_family = family;
        if (bind(m->socket_fd, &any.sa, family == AF_INET6 ? sizeof any.in6 : sizeof any.in) < 0)
                return log_error_errno(errno, "Failed to bind UDP socket: %m");

        /* Kernel receive timestamps make t4 independent of how busy the loop is. */
        if (setsockopt(m->socket_fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) < 0)
                log_debug_errno(errno, "Failed to enable receive timestamps, ignoring: %m");
        if (family == AF_INET)
                (void) setsockopt(m->socket_fd, IPPROTO_IP, IP_TOS, &tos, sizeof tos);

        r = sd_event_add_io(m->event, &m->event_receive, m->socket_fd, EPOLLIN, manager_on_reply, m);
        if (r < 0)
                return log_error_errno(r, "Failed to watch UDP socket: %m");

        return 0;
}

/* NTSStatus after a request whose replies were all refused: the last cause, with how often
 * and since when the server sent such replies. */
static void manager_set_refusal_status(Manager *m, const char *addr) {
        const Refusals *r = &m->current_server_name->refusals;
        const RefusalCount *c = &r->by_cause[r->last];

        snprintf(m->nts_status, sizeof m->nts_status, "Reply from %s (%s) refused: %s, %u %s since %s",
                 addr, m->current_server_name->string, c->reason, c->count, c->count == 1 ? "time" : "times",
                 FORMAT_TIMESTAMP(c->first_realtime));
        (void) manager_bus_emit_changed(m, "NTSStatus", NULL);
}

static int manager_on_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        char buf[80];

        (void) current_address_pretty(m, buf, sizeof buf);
        if (m->request_refused > 0 && m->current_server_name) {
                const Refusals *r = &m->current_server_name->refusals;

                /* Not a silent server: say what came instead of a reply we could use. */
                log_info("Timed out waiting for reply from %s (%s): %u %s refused, the last one: %s.",
                         buf, m->current_server_name->string, m->request_refused,
                         m->request_refused == 1 ? "reply was" : "replies were", r->by_cause[r->last].reason);
                if (m->current_server_name->nts)
                        manager_set_refusal_status(m, buf);
        } else
                log_info("Timed out waiting for reply from %s (%s).", buf,
                         strna(server_name_string(m->current_server_name)));

        return manager_connect(m);
}

static int manager_arm_reply_timeout(Manager *m) {
        int r;

        r = sd_event_add_time_relative(m->event, &m->event_timeout, CLOCK_BOOTTIME,
                                       NTP_REQUEST_TIMEOUT_USEC, 0, manager_on_timeout, m);
        if (r < 0)
                return log_error_errno(r, "Failed to arm reply timeout: %m");
        return 0;
}

static int manager_send_request(Manager *m) {
        uint8_t packet[NTS_MAX_PACKET_SIZE];
        size_t size = NTP_HEADER_SIZE;
        struct timespec ts;
        NTPHeader h = {
                .leap = m->synchronized ? NTP_LEAP_NONE : NTP_LEAP_NOTINSYNC,
                .version = NTP_VERSION,
                .mode = NTP_MODE_CLIENT,
        };
        ssize_t l;
        int r;

        assert(m->current_server_address);

        m->event_timeout = sd_event_source_disable_unref(m->event_timeout);

        r = manager_open_socket(m);
        if (r < 0)
                /* Out of descriptors: like a lost packet, the timeout moves on. */
                return manager_arm_reply_timeout(m);

        /* A random transmit timestamp (RFC 5905 section 15, "bogus packet" defence): a reply
         * must echo it as its origin timestamp, which an off-path attacker cannot guess. Our
         * real send time is kept locally. */
        r = random_bytes_pooled(&h.transmit, sizeof h.transmit);
        if (r < 0)
                return log_error_errno(r, "Failed to generate request nonce: %m");
        m->request_nonce = h.transmit;
        m->request_refused = 0;

        ntp_header_encode(&h, packet);

        if (m->current_server_name->nts) {
                ssize_t n = manager_nts_build_request(m, packet, sizeof packet);
                if (n <= 0)
                        return (int) n; /* 0: no cookie left, a key exchange takes over */
                size = (size_t) n;
        }

        assert_se(clock_backend_now(m->clock, &ts) == 0);
        m->request_realtime_nsec = timespec_to_nsec(&ts);
        m->request_monotonic = now(CLOCK_MONOTONIC);

        l = sendto(m->socket_fd, packet, size, MSG_DONTWAIT,
                   &m->current_server_address->sockaddr.sa, m->current_server_address->socklen);
        if (l < 0) {
                char buf[80];
                log_debug_errno(errno, "Sending NTP request to %s failed: %m",
                                current_address_pretty(m, buf, sizeof buf));
        } else
                m->pending = true;

        /* A send error is treated like a lost packet: the timeout moves on to the next
         * address, so an unreachable network cannot spin the loop. */
        return manager_arm_reply_timeout(m);
}

static int manager_on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        m->event_timer = sd_event_source_disable_unref(m->event_timer);
        return manager_send_request(m);
}

static int manager_arm_timer(Manager *m, usec_t next) {
        int r;

        assert(m);

        m->event_timer = sd_event_source_disable_unref(m->event_timer);
        if (next == 0)
                return manager_send_request(m);

        /* Accuracy 0 is sd-event's default of 250 ms, harmless at 32 s and more; a test poll
         * interval of a few milliseconds must mean what it says. */
        r = sd_event_add_time_relative(m->event, &m->event_timer, CLOCK_BOOTTIME, next,
                                       m->test_poll_interval_usec > 0 ? 1 : 0, manager_on_timer, m);
        if (r < 0)
                return log_error_errno(r, "Failed to arm poll timer: %m");
        return 0;
}

static void manager_write_sync_flag(Manager *m) {
        _cleanup_free_ char *p = NULL;
        _cleanup_close_ int fd = -EBADF;

        /* systemd-time-wait-sync trusts this flag to mean "the clock is right": in observe
         * mode we did not make it so. */
        if (m->sync_flag_written || !m->runtime_dir || m->observe)
                return;

        if (asprintf(&p, "%s/synchronized", m->runtime_dir) < 0) {
                log_oom();
                return;
        }
        fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);
        if (fd < 0) {
                log_warning_errno(errno, "Failed to touch %s, ignoring: %m", p);
                return;
        }
        m->sync_flag_written = true;
}

void manager_save_clock(Manager *m) {
        _cleanup_free_ char *p = NULL;
        struct timespec ts;
        int r;

        if (!m->state_dir)
                return;
        if (asprintf(&p, "%s/clock", m->state_dir) < 0) {
                log_oom();
                return;
        }
        if (clock_backend_now(m->clock, &ts) < 0)
                return;
        r = clock_file_save(p, &ts);
        if (r < 0)
                log_debug_errno(r, "Failed to save clock file %s: %m", p);
}

static int manager_adjust_clock(Manager *m, int64_t offset_nsec, int leap, int64_t root_distance_nsec) {
        ClockAdjustment a = {
                .offset_nsec = offset_nsec,
                .step = llabs(offset_nsec) >= NTP_STEP_THRESHOLD_NSEC,
                .leap = leap,
                .poll_log2 = poll_log2_seconds(m->poll_interval_usec),
                .max_error_nsec = root_distance_nsec,
        };
        ClockState st;
        int r;

        r = clock_backend_adjust(m->clock, &a);
        if (r < 0)
                return log_error_errno(r, "Failed to adjust the system clock: %m");

        if (a.step) {
                /* Our own step fires the clock-change watch; set it up anew so it does not
                 * read as a foreign jump. */
                (void) manager_clock_watch_setup(m);
                ntp_filter_reset(&m->filter);
        }

        if (clock_backend_get_state(m->clock, &st) >= 0)
                m->frequency = st.frequency;

        return 0;
}

static bool reply_is_from_current_server(Manager *m, const union sockaddr_union *from, socklen_t len) {
        const union sockaddr_union *s = &m->current_server_address->sockaddr;

        if (from->sa.sa_family != s->sa.sa_family)
                return false;
        if (from->sa.sa_family == AF_INET)
                return from->in.sin_port == s->in.sin_port &&
                       from->in.sin_addr.s_addr == s->in.sin_addr.s_addr;
        if (from->sa.sa_family == AF_INET6)
                return from->in6.sin6_port == s->in6.sin6_port &&
                       memcmp(&from->in6.sin6_addr, &s->in6.sin6_addr, sizeof(struct in6_addr)) == 0;
        return false;
}

/* Kiss-o'-death (RFC 5905 section 7.4). Returns > 0 if the caller should stop handling this
 * reply, after acting on it. */
static int manager_handle_kiss(Manager *m, const NTPHeader *h) {
        char code[5] = {};

        memcpy(code, h->refid, 4);
        for (size_t i = 0; i < 4; i++)
                if (code[i] < 0x20 || code[i] > 0x7e)
                        code[i] = '?';

        if (ntp_header_is_kiss(h, KISS_RATE)) {
                /* Slow down: double the interval, up to our maximum. */
                if (m->poll_level < m->poll_level_max)
                        m->poll_level++;
                manager_update_poll_interval(m);
                log_notice("Server %s asks us to slow down (kiss code RATE), polling every %s.",
                           m->current_server_name->string, FORMAT_TIMESPAN(m->poll_interval_usec, USEC_PER_SEC));
                return manager_arm_timer(m, m->poll_interval_usec) < 0 ? -1 : 1;
        }

        if (ntp_header_is_kiss(h, KISS_DENY) || ntp_header_is_kiss(h, KISS_RSTR)) {
                log_warning("Server %s refuses service (kiss code %s), not using it any more.",
                            m->current_server_name->string, code);
                m->current_server_name->refused = true;
                /* Skip its other addresses too: it is the same operator. */
                manager_set_server_address(m, NULL);
                return manager_connect(m) < 0 ? -1 : 1;
        }

        /* RFC 5905 section 7.4: unknown kiss codes carry no instruction; this reply gave no
         * time, so poll again later like after any reply. */
        log_debug("Ignoring kiss-o'-death packet with code %s.", code);
        return manager_arm_timer(m, m->poll_interval_usec) < 0 ? -1 : 1;
}

/* Counts a refused reply to the request in flight and logs it: the first of each cause per
 * server and REFUSAL_LOG_INTERVAL_USEC at warning (NTS verification) or notice level, the
 * rest at debug level, so that a flood of forged replies costs a few lines. */
static void manager_refuse_reply(Manager *m, RefusalCause cause, const char *reason) {
        ServerName *n = m->current_server_name;
        char addr[80];
        bool first;
        int level;

        first = refusals_add(&n->refusals, cause, reason, now(CLOCK_REALTIME), now(CLOCK_BOOTTIME));
        m->request_refused++;

        (void) current_address_pretty(m, addr, sizeof addr);
        if (cause >= REFUSAL_NTS_TRUNCATED) {
                level = first ? LOG_WARNING : LOG_DEBUG;
                log_full(level, "Ignoring reply from %s (%s) that fails NTS verification: %s.", addr, n->string,
                         reason);
        } else {
                level = first ? LOG_NOTICE : LOG_DEBUG;
                log_full(level, "Ignoring reply from %s (%s): %s.", addr, n->string, reason);
        }
}

static int manager_on_reply(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;
        uint8_t buf[NTS_MAX_PACKET_SIZE];
        union sockaddr_union from;
        struct iovec iov = IOVEC_MAKE(buf, sizeof buf);
        uint8_t control[CMSG_SPACE(sizeof(struct timespec))];
        struct msghdr mh = {
                .msg_name = &from,
                .msg_namelen = sizeof from,
                .msg_iov = &iov,
                .msg_iovlen = 1,
                .msg_control = control,
                .msg_controllen = sizeof control,
        };
        struct timespec recv_ts = {}, now_ts;
        NTPHeader h;
        NTPSample sample;
        char addr[80];
        int64_t t4, root_distance;
        bool spike, first;
        ssize_t l;
        int r;

        l = recvmsg(fd, &mh, MSG_DONTWAIT);
        if (l < 0) {
                if (errno == EAGAIN || errno == EINTR)
                        return 0;
                /* ICMP errors show up here (ECONNREFUSED): the server's port is closed. */
                log_debug_errno(errno, "Failed to receive NTP reply: %m");
                return 0;
        }

        if (!m->current_server_address || !reply_is_from_current_server(m, &from, mh.msg_namelen)) {
                log_debug("Reply from unknown source, ignoring.");
                return 0;
        }

        if (!m->pending) {
                log_debug("Unexpected reply, ignoring.");
                return 0;
        }

        /* A datagram larger than the buffer arrives cut (MSG_TRUNC). Its first bytes may well
         * parse and, with NTS, even verify (fields after the authenticator are not covered by
         * it): refused whole, never used cut. No reply we accept is that large. */
        if (mh.msg_flags & MSG_TRUNC) {
                manager_refuse_reply(m, REFUSAL_OVERSIZED, "it is larger than any reply accepted");
                return 0;
        }

        if ((size_t) l < NTP_HEADER_SIZE) {
                manager_refuse_reply(m, REFUSAL_SHORT, "it is shorter than an NTP header");
                return 0;
        }

        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS &&
                    c->cmsg_len == CMSG_LEN(sizeof(struct timespec)))
                        memcpy(&recv_ts, CMSG_DATA(c), sizeof recv_ts);

        ntp_header_decode(buf, &h);

        /* The origin check comes first: anything that does not echo our nonce is not an
         * answer to our request, whatever else it says. */
        if (!ntp_ts_equal(h.origin, m->request_nonce)) {
                manager_refuse_reply(m, REFUSAL_WRONG_ORIGIN, "it does not match our request (origin timestamp)");
                return 0;
        }

        if (h.mode != NTP_MODE_SERVER || (h.version != 4 && h.version != 3)) {
                log_debug("Unsupported reply (mode %u, version %u).", h.mode, h.version);
                manager_refuse_reply(m, REFUSAL_NOT_SERVER_REPLY, "it is not an NTPv3 or NTPv4 server reply");
                return 0;
        }

        /* With NTS, nothing of a reply is looked at before it verified: not its time, not
         * its kiss codes. Only a NAK for our own request is acted on (inside). */
        if (m->current_server_name->nts) {
                ServerName *n = m->current_server_name;
                RefusalCause cause;
                const char *reason;

                r = manager_nts_verify_reply(m, buf, (size_t) l, &cause, &reason);
                if (r == -EKEYREJECTED) {
                        /* A NAK was acted on (logged there): a new key exchange, maybe another
                         * server meanwhile. Only counted, on the server that sent it. */
                        (void) refusals_add(&n->refusals, cause, reason, now(CLOCK_REALTIME), now(CLOCK_BOOTTIME));
                        return 0;
                }
                if (r < 0) {
                        manager_refuse_reply(m, cause, reason);
                        return 0;
                }
                /* A verified reply: NTS works, whatever failed before. */
                if (m->nts_status[0] != '\0') {
                        m->nts_status[0] = '\0';
                        (void) manager_bus_emit_changed(m, "NTSStatus", NULL);
                }
        }

        m->pending = false;
        m->event_timeout = sd_event_source_disable_unref(m->event_timeout);

        if (h.stratum == NTP_STRATUM_KISS) {
                r = manager_handle_kiss(m, &h);
                return r < 0 ? r : 0;
        }

        if (h.leap == NTP_LEAP_NOTINSYNC || h.stratum > NTP_STRATUM_MAX) {
                log_info("Server %s is not synchronized, trying the next one.",
                         current_address_pretty(m, addr, sizeof addr));
                return manager_connect(m);
        }

        if (ntp_ts_is_zero(h.receive) || ntp_ts_is_zero(h.transmit)) {
                log_debug("Reply has zero timestamps, ignoring.");
                return manager_arm_timer(m, m->poll_interval_usec);
        }

        root_distance = ntp_root_distance_nsec(&h);
        if (root_distance > (int64_t) m->config.root_distance_max_usec * 1000) {
                log_info("Server %s has too large root distance (%.3f s > %.3f s), trying the next one.",
                         current_address_pretty(m, addr, sizeof addr), (double) root_distance / NTP_NSEC_PER_SEC,
                         (double) m->config.root_distance_max_usec / USEC_PER_SEC);
                return manager_connect(m);
        }

        /* t4 from the kernel timestamp if we have one; otherwise now. Both are checked against
         * the monotonic clock, so a clock step while waiting cannot produce a huge sample. */
        assert_se(clock_backend_now(m->clock, &now_ts) == 0);
        t4 = recv_ts.tv_sec > 0 && clock_backend_type(m->clock) != CLOCK_BACKEND_FAKE
                ? timespec_to_nsec(&recv_ts) : timespec_to_nsec(&now_ts);
        {
                int64_t elapsed = (int64_t) (now(CLOCK_MONOTONIC) - m->request_monotonic) * 1000;
                if (t4 < m->request_realtime_nsec || t4 - m->request_realtime_nsec > elapsed + NTP_NSEC_PER_SEC)
                        t4 = m->request_realtime_nsec + elapsed;
        }

        sample = ntp_sample_compute(m->request_realtime_nsec, ntp_ts_to_nsec(h.receive),
                                    ntp_ts_to_nsec(h.transmit), t4);
        if (sample.delay_nsec < 0)
                sample.delay_nsec = 0;

        /* Keys from a bootstrap exchange (wrong clock, certificate not yet valid) bound what
         * their time may do; see timesyncd-nts.c. Checked before the sample counts for
         * anything: a refused one is neither filtered nor shown nor "contacted". */
        if (m->current_server_name->nts &&
            manager_nts_check_bootstrap(m, ntp_ts_to_nsec(h.transmit), sample.offset_nsec) < 0)
                return manager_connect(m);

        spike = ntp_filter_add(&m->filter, sample.offset_nsec);
        first = !m->talking;

        m->ntpmsg = (NTPMessage) {
                .header = h,
                .origin_nsec = m->request_realtime_nsec,
                .receive_nsec = ntp_ts_to_nsec(h.receive),
                .transmit_nsec = ntp_ts_to_nsec(h.transmit),
                .destination_nsec = t4,
                .spike = spike,
                .packet_count = m->filter.packet_count,
                .jitter_nsec = (int64_t) m->filter.jitter_nsec,
        };
        m->ntpmsg_authenticated = m->current_server_name->nts;

        (void) current_address_pretty(m, addr, sizeof addr);
        log_debug("NTP reply from %s: stratum %u, offset %+.6f s, delay %.6f s, jitter %.6f s%s.",
                  addr, h.stratum,
                  (double) sample.offset_nsec / NTP_NSEC_PER_SEC, (double) sample.delay_nsec / NTP_NSEC_PER_SEC,
                  m->filter.jitter_nsec / NTP_NSEC_PER_SEC, spike ? " (spike)" : "");

        if (first) {
                /* Stock's words, and for NTS what `systemctl status` readers want to know. */
                const char *auth = m->ntpmsg_authenticated ? ", NTS authenticated" : "";

                m->talking = true;
                log_info("Contacted time server %s (%s)%s.", addr, m->current_server_name->string, auth);
                manager_notify_status(m, "Contacted time server %s (%s)%s.", addr, m->current_server_name->string, auth);
        }

        if (m->poll_resync) {
                m->poll_level = 0;
                m->poll_resync = false;
        } else
                m->poll_level = ntp_poll_next(m->poll_level, sample.offset_nsec, spike, m->filter.jitter_nsec,
                                              0, m->poll_level_max);
        manager_update_poll_interval(m);

        if (!spike) {
                r = manager_adjust_clock(m, sample.offset_nsec, h.leap, root_distance);
                if (r >= 0) {
                        m->last_offset_nsec = sample.offset_nsec;
                        if (!m->synchronized) {
                                m->synchronized = true;
                                log_info("Initial clock synchronization to %s (offset %+.6f s%s%s).",
                                         m->current_server_name->string, (double) sample.offset_nsec / NTP_NSEC_PER_SEC,
                                         m->ntpmsg_authenticated ? ", NTS authenticated" : "",
                                         clock_backend_type(m->clock) == CLOCK_BACKEND_FAKE ? ", observe mode: test clock adjusted" :
                                         m->observe ? ", observe mode: clock left alone" : "");
                        }
                        manager_write_sync_flag(m);
                        manager_save_clock(m);
                        if (m->current_server_name->nts && manager_nts_bootstrap_done(m)) {
                                /* A new key exchange takes over; it polls again when done. */
                                (void) manager_bus_emit_changed(m, "NTPMessage", "NTSAuthenticated", NULL);
                                return 0;
                        }
                }
        }

        (void) manager_bus_emit_changed(m, "NTPMessage", "PollIntervalUSec", "Frequency", "NTSAuthenticated",
                                        "NTSCookies", NULL);
        return manager_arm_timer(m, m->poll_interval_usec);
}

/* ---- connecting ---- */

static int manager_begin(Manager *m) {
        char buf[80];

        assert(m->current_server_address);

        m->poll_level = 0;
        manager_update_poll_interval(m);

        (void) current_address_pretty(m, buf, sizeof buf);
        log_debug("Connecting to time server %s (%s).", buf, m->current_server_name->string);
        manager_notify_status(m, "Connecting to time server %s (%s).", buf, m->current_server_name->string);

        return manager_send_request(m);
}

static void manager_on_resolved(ResolveQuery *q, int error, const struct addrinfo *ai, void *userdata) {
        Manager *m = userdata;
        ServerName *n = m->current_server_name;
        int r;

        m->resolve_query = resolve_query_free(m->resolve_query);
        assert(n);

        if (error < 0) {
                log_info("Failed to resolve %s: %s", n->host, resolve_error_string(error));
                (void) manager_connect(m);
                return;
        }

        server_name_flush_addresses(n);

        for (; ai; ai = ai->ai_next) {
                union sockaddr_union sa = {};

                if (ai->ai_family == AF_INET && ai->ai_addrlen == sizeof(struct sockaddr_in)) {
                        memcpy(&sa.in, ai->ai_addr, sizeof sa.in);
                        sa.in.sin_port = htons(m->resolve_port);
                } else if (ai->ai_family == AF_INET6 && ai->ai_addrlen == sizeof(struct sockaddr_in6)) {
                        memcpy(&sa.in6, ai->ai_addr, sizeof sa.in6);
                        sa.in6.sin6_port = htons(m->resolve_port);
                } else
                        continue;

                r = server_address_new(n, NULL, &sa.sa, (socklen_t) ai->ai_addrlen);
                if (r < 0) {
                        log_oom();
                        return;
                }
        }

        if (!n->addresses) {
                log_info("Server %s resolved to no usable address.", n->string);
                (void) manager_connect(m);
                return;
        }

        manager_set_server_address(m, n->addresses);
        (void) manager_begin(m);
}

int manager_resolve_ntp(Manager *m, const char *host, uint16_t port) {
        int r;

        assert(m->current_server_name);

        m->resolve_query = resolve_query_free(m->resolve_query);
        /* Resolve anew every time a name comes up: DNS answers change. */
        server_name_flush_addresses(m->current_server_name);
        m->resolve_port = port;

        r = resolve_query_new(m->event, host, NULL, AF_UNSPEC, SOCK_DGRAM, manager_on_resolved, m,
                              &m->resolve_query);
        if (r < 0) {
                /* Out of descriptors or memory: try again later rather than stop for good. */
                log_warning_errno(r, "Failed to start resolving %s, retrying: %m", host);
                return manager_arm_retry(m);
        }
        return 0;
}

static int manager_on_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        m->event_retry = sd_event_source_disable_unref(m->event_retry);
        return manager_connect(m);
}

static int manager_arm_retry(Manager *m) {
        int r;

        m->event_retry = sd_event_source_disable_unref(m->event_retry);
        r = sd_event_add_time_relative(m->event, &m->event_retry, CLOCK_BOOTTIME,
                                       m->config.connection_retry_usec, 0, manager_on_retry, m);
        if (r < 0)
                return log_error_errno(r, "Failed to arm retry timer: %m");
        return 0;
}

/* Time may come from NTS only, and there is no NTS server: NTS= named only invalid servers
 * (logged with the configuration), or NTSRequired=yes and none was given. Nothing to retry, and
 * no plain NTP either, until NTS servers come (manager_servers_changed()). */
static void manager_nts_missing(Manager *m) {
        if (m->config.nts_set) {
                snprintf(m->nts_status, sizeof m->nts_status, "NTS= names no valid server");
                (void) manager_bus_emit_changed(m, "NTSStatus", NULL);
                manager_notify_status(m, "No valid NTS server configured.");
                return;
        }

        /* Said once each time the daemon gets here, not at every stall check. */
        if (m->nts_missing_reported)
                return;
        m->nts_missing_reported = true;
        log_error("NTSRequired=yes but no NTS server is configured: the clock is not synchronized. "
                  "NTP=, FallbackNTP=, per-link and runtime NTP servers are not used; set NTS= "
                  "(or SecureServers=), or runtime NTS servers.");
        snprintf(m->nts_status, sizeof m->nts_status, "NTSRequired=yes but no NTS server is configured");
        (void) manager_bus_emit_changed(m, "NTSStatus", NULL);
        manager_notify_status(m, "NTSRequired=yes but no NTS server is configured.");
}

int manager_connect(Manager *m) {
        ServerName *n;
        bool wrapped;

        assert(m);

        manager_disconnect(m);
        m->event_retry = sd_event_source_disable_unref(m->event_retry);

        /* Offline (or not yet told): nothing to talk to. Going online connects again, see
         * manager_network_update(); so do servers set at runtime meanwhile. */
        if (!m->network_online) {
                log_debug("Network is not online, not connecting yet.");
                manager_set_server_name(m, NULL);
                return 0;
        }

        /* Next address of the current name, if any. */
        if (m->current_server_address && m->current_server_address->addresses_next) {
                manager_set_server_address(m, m->current_server_address->addresses_next);
                return manager_begin(m);
        }

        n = manager_next_server_name(m, &wrapped);
        if (!n) {
                manager_set_server_name(m, NULL);
                if (manager_nts_enabled(m) && !m->nts_servers && !m->nts_runtime_servers) {
                        manager_nts_missing(m);
                        return 0;
                }
                if (manager_nts_enabled(m) && !m->nts_unavailable) {
                        /* Every NTS server backs off after failed key exchanges: look again. */
                        manager_notify_status(m, "No NTS server usable, retrying.");
                        return manager_arm_retry(m);
                }
                log_debug("No usable server configured.");
                manager_notify_status(m, "Idle.");
                return 0;
        }

        if (wrapped && !m->exhausted_servers) {
                /* Every server failed once: wait before going round again. */
                m->exhausted_servers = true;
                manager_set_server_name(m, NULL);
                log_debug("Tried every server, waiting %s before trying again.",
                          FORMAT_TIMESPAN(m->config.connection_retry_usec, USEC_PER_SEC));
                manager_notify_status(m, "No server answered, retrying.");
                return manager_arm_retry(m);
        }
        m->exhausted_servers = false;

        manager_set_server_name(m, n);
        if (n->nts && m->nts_unavailable) {
                /* libssl missing (logged once at start): nothing to do until the configuration
                 * changes, and never plain NTP instead. */
                manager_notify_status(m, "Not synchronizing.");
                return 0;
        }
        if (n->nts)
                return manager_nts_connect(m, n);
        return manager_resolve_ntp(m, n->host, n->port > 0 ? n->port : 123);
}

/* A server list was replaced: selection starts again from the first server. With nts_added,
 * NTS servers may have come (libssl is loaded, or its absence logged, now). */
static int manager_servers_changed(Manager *m, bool nts_added) {
        manager_set_server_name(m, NULL);
        m->exhausted_servers = false;
        if (!manager_nts_enabled(m)) {
                /* No NTS server left: the missing libssl no longer matters. */
                m->nts_unavailable = false;
                m->nts_status[0] = '\0';
        }
        if (m->nts_missing_reported && (m->nts_servers || m->nts_runtime_servers || !m->config.nts_required)) {
                /* NTS servers came, or NTSRequired= went: the reason no longer holds. */
                m->nts_missing_reported = false;
                m->nts_status[0] = '\0';
                (void) manager_bus_emit_changed(m, "NTSStatus", NULL);
        }
        if (m->nts_unavailable || (nts_added && manager_nts_prepare(m) < 0))
                return 0;
        return manager_connect(m);
}

int manager_set_runtime_servers(Manager *m, ServerType type, char **names) {
        int r;

        assert(IN_SET(type, SERVER_RUNTIME, SERVER_NTS_RUNTIME));

        manager_flush_server_names(m, type);
        for (char **s = names; s && *s; s++) {
                r = server_name_new(m, NULL, type, *s);
                if (r < 0)
                        return r;
        }

        return manager_servers_changed(m, type == SERVER_NTS_RUNTIME);
}

/* ---- clock changes made by others ---- */

static int manager_clock_changed(Manager *m) {
        log_info("System clock changed, resynchronizing.");
        (void) manager_clock_watch_setup(m);

        /* Samples from before the jump are meaningless. */
        ntp_filter_reset(&m->filter);
        m->poll_resync = true;

        if (m->current_server_address && !m->pending)
                return manager_arm_timer(m, 0);
        return 0;
}

static int manager_on_clock_change(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        return manager_clock_changed(userdata);
}

/* --test-clock-offset=: SIGUSR1 plays another program that sets the clock. The fake clock
 * cannot fire the timerfd, so the jump takes the path the timerfd would. */
static int manager_on_test_clock_jump(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        clock_backend_fake_jump(m->clock, m->test_clock_offset_nsec);
        log_info("Test clock: jumped by %+.6f s, now %+.6f s from the system clock.",
                 (double) m->test_clock_offset_nsec / NTP_NSEC_PER_SEC,
                 (double) clock_backend_fake_offset(m->clock) / NTP_NSEC_PER_SEC);
        return manager_clock_changed(m);
}

/* A timerfd that fires on any CLOCK_REALTIME change (TFD_TIMER_CANCEL_ON_SET). */
static int manager_clock_watch_setup(Manager *m) {
        struct itimerspec its = { .it_value.tv_sec = INT32_MAX };
        int r;

        m->event_clock_watch = sd_event_source_disable_unref(m->event_clock_watch);
        m->clock_watch_fd = safe_close(m->clock_watch_fd);

        m->clock_watch_fd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
        if (m->clock_watch_fd < 0)
                return log_error_errno(errno, "Failed to create clock watch: %m");

        if (timerfd_settime(m->clock_watch_fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &its, NULL) < 0)
                return log_error_errno(errno, "Failed to arm clock watch: %m");

        r = sd_event_add_io(m->event, &m->event_clock_watch, m->clock_watch_fd, EPOLLIN,
                            manager_on_clock_change, m);
        if (r < 0)
                return log_error_errno(r, "Failed to watch for clock changes: %m");
        return 0;
}

static int manager_on_save_clock(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        int r;

        if (m->synchronized)
                manager_save_clock(m);
        r = sd_event_source_set_time_relative(s, m->config.save_interval_usec);
        if (r < 0)
                return log_error_errno(r, "Failed to rearm clock file timer: %m");
        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

/* Every step of the poll cycle arms the next one: poll timer, reply timeout, retry, name
 * resolution, key exchange. Where arming failed (ENOMEM from sd-event), nothing would ever run
 * again. This timer is allocated once at start and only re-armed (which allocates nothing):
 * when it finds nothing in flight it starts over, and it retries a lost bus. */
static bool manager_in_flight(Manager *m) {
        NTSState *s = m->current_server_name ? m->current_server_name->nts : NULL;

        return m->event_timer || m->event_timeout || m->event_retry || m->resolve_query ||
               (s && (s->ke || s->resolve));
}

/* Why nothing is in flight on purpose with a server selected, or NULL. Such a state waits for
 * the configuration to change: starting over would only log that it starts over. */
static const char *manager_idle_reason(Manager *m) {
        /* NTS servers configured, libssl missing: logged once at start, no plain NTP instead. */
        if (m->current_server_name && m->current_server_name->nts && m->nts_unavailable)
                return m->nts_status;
        return NULL;
}

static int manager_on_stall_check(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        const char *idle;
        int r;

        idle = manager_idle_reason(m);
        if (idle)
                log_debug("Stall check: nothing in progress, as intended (%s).", idle);
        else if (m->network_online && !manager_in_flight(m)) {
                /* Without a current server this is the idle state of a daemon with nothing
                 * usable configured, and connecting again is cheap and quiet. */
                if (m->current_server_name)
                        log_notice("Nothing in progress with %s after an earlier failure, starting over.",
                                   m->current_server_name->string);
                manager_set_server_name(m, NULL);
                (void) manager_connect(m);
        }
        manager_bus_check(m);

        r = sd_event_source_set_time_relative(s, m->config.connection_retry_usec);
        if (r < 0)
                return log_error_errno(r, "Failed to rearm the stall check: %m");
        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

/* ---- life cycle ---- */

int manager_new(Manager **ret, const ManagerOptions *o) {
        _cleanup_(manager_freep) Manager *m = NULL;
        int r;

        assert(ret);
        assert(o);

        m = new0(Manager, 1);
        if (!m)
                return log_oom();

        m->socket_fd = m->clock_watch_fd = -EBADF;
        m->observe = o->observe;
        m->test_poll_interval_usec = o->test_poll_interval_usec;

        if ((o->config_file && !(m->config_file = strdup(o->config_file))) ||
            (o->state_dir && !(m->state_dir = strdup(o->state_dir))) ||
            (o->runtime_dir && !(m->runtime_dir = strdup(o->runtime_dir))))
                return log_oom();

        /* A fake clock only where the real one is never touched. */
        assert(!o->test_fake_clock || o->observe);
        r = clock_backend_new(o->test_fake_clock ? CLOCK_BACKEND_FAKE :
                              o->observe ? CLOCK_BACKEND_OBSERVE : CLOCK_BACKEND_KERNEL, &m->clock);
        if (r < 0)
                return log_oom();
        if (o->test_fake_clock) {
                clock_backend_fake_follow(m->clock, o->test_clock_offset_nsec);
                m->test_clock_offset_nsec = o->test_clock_offset_nsec;
        }

        r = sd_event_default(&m->event);
        if (r < 0)
                return log_error_errno(r, "Failed to allocate event loop: %m");

        (void) sd_event_add_signal(m->event, NULL, SIGTERM | SD_EVENT_SIGNAL_PROCMASK, NULL, NULL);
        (void) sd_event_add_signal(m->event, NULL, SIGINT | SD_EVENT_SIGNAL_PROCMASK, NULL, NULL);
        r = sd_event_add_signal(m->event, NULL, SIGHUP | SD_EVENT_SIGNAL_PROCMASK, manager_on_reload_signal, m);
        if (r < 0)
                return log_error_errno(r, "Failed to watch SIGHUP: %m");
        if (o->test_fake_clock) {
                r = sd_event_add_signal(m->event, NULL, SIGUSR1 | SD_EVENT_SIGNAL_PROCMASK,
                                        manager_on_test_clock_jump, m);
                if (r < 0)
                        return log_error_errno(r, "Failed to watch SIGUSR1: %m");
        }

        /* Pings the service manager when WATCHDOG_USEC is set. */
        (void) sd_event_set_watchdog(m->event, true);

        *ret = TAKE_PTR(m);
        return 0;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;

        manager_disconnect(m);
        for (ServerType t = 0; t < _SERVER_TYPE_MAX; t++)
                manager_flush_server_names(m, t);

        m->resolve_query = resolve_query_free(m->resolve_query);
        m->event_retry = sd_event_source_disable_unref(m->event_retry);
        m->event_clock_watch = sd_event_source_disable_unref(m->event_clock_watch);
        m->event_save_clock = sd_event_source_disable_unref(m->event_save_clock);
        m->event_stall_check = sd_event_source_disable_unref(m->event_stall_check);
        m->event_network = sd_event_source_disable_unref(m->event_network);
        m->event_bus_reconnect = sd_event_source_disable_unref(m->event_bus_reconnect);
        safe_close(m->clock_watch_fd);

        sd_bus_flush_close_unref(m->bus);
        sd_event_unref(m->event);
        clock_backend_free(m->clock);
        timesync_config_done(&m->config);

        free(m->config_file);
        free(m->state_dir);
        free(m->runtime_dir);
        return mfree(m);
}

static int manager_add_servers(Manager *m, ServerType type, char **names) {
        int r;

        for (char **s = names; s && *s; s++) {
                r = server_name_new(m, NULL, type, *s);
                if (r == -ENOMEM)
                        return log_oom();
                if (r < 0)
                        log_warning_errno(r, "Ignoring invalid server name '%s'.", *s);
        }
        return 0;
}

/* Reads the configuration files into c, with the poll interval of --test-poll-interval= over
 * theirs. Like stock, a file that cannot be parsed to its end still leaves a usable
 * configuration in c (what was read, defaults for the rest; errors are logged there), and the
 * parser's error is returned for the caller to judge. */
static int manager_read_config(Manager *m, TimesyncConfig *c) {
        int r;

        if (m->config_file)
                r = timesync_config_load_file(c, m->config_file);
        else
                r = timesync_config_load(c, NULL);

        if (m->test_poll_interval_usec > 0)
                c->poll_interval_min_usec = c->poll_interval_max_usec = m->test_poll_interval_usec;
        return r;
}

/* Poll intervals are the minimum doubled k times, capped at the maximum. */
static void manager_apply_poll_limits(Manager *m) {
        m->poll_level_max = 0;
        while (m->poll_level_max < 20 &&
               (m->config.poll_interval_min_usec << (m->poll_level_max + 1)) <= m->config.poll_interval_max_usec)
                m->poll_level_max++;
        m->poll_level = MIN(m->poll_level, m->poll_level_max);
        if (m->poll_interval_usec > 0) /* 0: no poll yet, and none shown */
                manager_update_poll_interval(m);
}

static int manager_add_config_servers(Manager *m) {
        int r;

        manager_flush_server_names(m, SERVER_SYSTEM);
        manager_flush_server_names(m, SERVER_FALLBACK);
        manager_flush_server_names(m, SERVER_NTS);

        r = manager_add_servers(m, SERVER_SYSTEM, m->config.ntp_servers);
        if (r < 0)
                return r;
        r = manager_add_servers(m, SERVER_NTS, m->config.nts_servers);
        if (r < 0)
                return r;
        if (m->config.nts_set && !m->nts_servers)
                log_error("NTS= names no valid server. There is no fallback to unauthenticated NTP: time "
                          "comes only from NTS servers set at runtime, if any.");
        return manager_add_servers(m, SERVER_FALLBACK, m->config.fallback_servers);
}

int manager_load_config(Manager *m) {
        int r;

        timesync_config_done(&m->config);
        r = manager_read_config(m, &m->config);
        if (r == -ENOENT && m->config_file)
                return log_error_errno(r, "Configuration file %s does not exist.", m->config_file);

        manager_apply_poll_limits(m);
        return manager_add_config_servers(m);
}

/* Servers that decide where time comes from, and what a key exchange trusts. */
static bool config_servers_equal(const TimesyncConfig *a, const TimesyncConfig *b) {
        return strv_equal(a->ntp_servers, b->ntp_servers) &&
               strv_equal(a->fallback_servers, b->fallback_servers) &&
               strv_equal(a->nts_servers, b->nts_servers) && a->nts_set == b->nts_set &&
               a->nts_required == b->nts_required &&
               streq_ptr(a->nts_trusted_certificates, b->nts_trusted_certificates) &&
               a->nts_trusted_certificates_invalid == b->nts_trusted_certificates_invalid;
}

int manager_reload_config(Manager *m) {
        _cleanup_(timesync_config_done) TimesyncConfig c = {};
        usec_t interval;
        bool changed;
        int r;

        assert(m);

        /* No STATUS= here: it would stay after READY=1, until the next poll says something. */
        (void) sd_notifyf(false, "RELOADING=1\nMONOTONIC_USEC=" USEC_FMT, now(CLOCK_MONOTONIC));

        /* Half a configuration is fine at start, where there is nothing better; here the one in
         * use is better than a file that could not be read (it might drop the NTS servers). */
        r = manager_read_config(m, &c);
        if (r < 0) {
                log_warning_errno(r, "Failed to read the configuration again, keeping the one in use: %m");
                goto finish;
        }

        changed = !config_servers_equal(&m->config, &c);
        timesync_config_done(&m->config);
        m->config = c;
        c = (TimesyncConfig) {};
        interval = m->poll_interval_usec;
        manager_apply_poll_limits(m);

        if (!changed) {
                /* Same servers: the one in use keeps its keys and cookies. A poll interval that
                 * changed applies from now, not after a wait under the old one. */
                log_info("Configuration reloaded, servers unchanged.");
                if (m->poll_interval_usec != interval && m->event_timer && !m->pending)
                        r = manager_arm_timer(m, m->poll_interval_usec);
                goto finish;
        }

        log_info("Configuration reloaded, servers changed: selecting a server again.");
        r = manager_add_config_servers(m);
        if (r >= 0)
                r = manager_servers_changed(m, manager_nts_enabled(m));
        (void) manager_bus_emit_changed(m, "NTS", "NTSKeyExchangeServers", NULL);

finish:
        (void) sd_notify(false, "READY=1");
        return r;
}

static int manager_on_reload_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        (void) manager_reload_config(userdata);
        return 0;
}

int manager_start(Manager *m) {
        _cleanup_free_ char *clock_file = NULL;
        int r;

        if (m->state_dir) {
                if (asprintf(&clock_file, "%s/clock", m->state_dir) < 0)
                        return log_oom();
                r = clock_file_restore(m->clock, clock_file, TIME_EPOCH, NULL);
        } else
                r = 0;
        /* Read once, before the first sync moves the clock file: the NTS bootstrap's evidence
         * that the clock is behind is about where the clock stood when the machine booted. */
        clock_floor_read(&m->clock_floor, clock_file, TIME_EPOCH, CLOCK_EPOCH_FILE);
        m->clock_floor.advanced = r > 0;

        r = manager_clock_watch_setup(m);
        if (r < 0)
                return r;

        /* Without libssl, NTS servers stay configured and unused: an error, never plain NTP. */
        (void) manager_nts_prepare(m);

        r = sd_event_add_time_relative(m->event, &m->event_stall_check, CLOCK_BOOTTIME,
                                       m->config.connection_retry_usec, USEC_PER_SEC, manager_on_stall_check, m);
        if (r < 0)
                return log_error_errno(r, "Failed to arm stall check timer: %m");

        r = sd_event_add_time_relative(m->event, &m->event_save_clock, CLOCK_BOOTTIME,
                                       m->config.save_interval_usec, 10 * USEC_PER_SEC,
                                       manager_on_save_clock, m);
        if (r < 0)
                return log_error_errno(r, "Failed to arm clock file timer: %m");

        /* Connects once the network is up (at once without networkd). */
        return manager_network_watch(m);
}
