/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* A mock NTS server for tests: NTS-KE over TLS 1.3 on a TCP port and NTP with NTS on a UDP
 * port, in one single-threaded sd-event loop, with sabotage modes that break one rule each,
 * and a key-exchange pool mode (--pool-member=, mock-pool.h).
 * Prints "READY ke-port=N ntp-port=N" on stdout once both sockets listen; SIGUSR1 switches
 * the sabotage and the time offset off (to check that a client recovers, or that a liar is
 * taken back); SIGTERM or SIGINT end it. */

#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>

#include "in-addr-util.h"
#include "log.h"
#include "mock-ke.h"
#include "mock-ntp.h"
#include "mock-server.h"
#include "nts-crypto.h"

typedef struct Options {
        const char *address;
        const char *ntp_address;
        uint16_t ke_port;
        uint16_t ntp_listen_port;
        bool ntp_listen_port_set;
        const char *cert;
        const char *key;
        const char *keys_file;
} Options;

static void help(void) {
        printf("nts-mock-server [OPTIONS]\n"
               "  --cert=FILE            certificate chain (PEM), required\n"
               "  --key=FILE             private key (PEM), required\n"
               "  --address=ADDR         NTS-KE listen address (default 127.0.0.1)\n"
               "  --ke-port=PORT         NTS-KE TCP port (default %u; 0: any)\n"
               "  --ntp-address=ADDR     NTP listen address (default: --address)\n"
               "  --ntp-listen-port=PORT NTP UDP port (default: --ntp-port, else 123; 0: any)\n"
               "  --ntp-server=NAME      send a Server Negotiation record\n"
               "  --ntp-port=PORT        send a Port Negotiation record\n"
               "  --aead=ID[,ID...]      AEAD identifiers accepted (default: 15, 16, 17)\n"
               "  --leap=N               leap indicator of answers with time (0, 1: insert, 2: delete)\n"
               "  --kiss=CODE            an authenticated kiss-o'-death (DENY, RSTR, RATE...) instead of time\n"
               "  --kiss-after=N         ... once N requests got time (default 0)\n"
               "  --keys-file=FILE       keep the cookie key here (created if missing)\n"
               "  --count-file=FILE      write counts of KE sessions, NTP requests answered with\n"
               "                         time, NAKs, kiss codes, pool members denied but given,\n"
               "                         distinct and reused cookies\n"
               "  --pool-member=NAME[:PORT]\n"
               "                         be a key-exchange pool: name this member (repeat)\n"
               "  --pool-sequence=I,J,.. offer the members in this order, cycled\n"
               "  --pool-ignore-deny     ignore NTP Server Deny records\n"
               "  --time-offset=SECONDS  serve the system clock shifted by this (a liar with valid NTS)\n"
               "  --sabotage=MODE        one of:",
               NTS_KE_PORT);
        for (Sabotage i = 0; i < _SABOTAGE_MAX; i++)
                printf(" %s", sabotage_to_string(i));
        printf("\n");
}

/* A decimal number from 0 to max. */
static int parse_unsigned(const char *s, unsigned max, unsigned *ret) {
        char *end;
        unsigned long v;

        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno != 0 || end == s || *end || *s == '-' || v > max)
                return -EINVAL;
        *ret = (unsigned) v;
        return 0;
}

static int parse_port(const char *s, uint16_t *ret) {
        unsigned v;

        if (parse_unsigned(s, UINT16_MAX, &v) < 0)
                return -EINVAL;
        *ret = (uint16_t) v;
        return 0;
}

/* Seconds, signed, with a fraction; at most ten years either way. */
static int parse_offset(const char *s, int64_t *ret) {
        char *end;
        double v;

        errno = 0;
        v = strtod(s, &end);
        if (errno != 0 || end == s || *end || !(v >= -315576000.0 && v <= 315576000.0))
                return -EINVAL;
        *ret = (int64_t) (v * 1e9);
        return 0;
}

static int parse_aead_list(const char *list, MockServer *s) {
        _cleanup_free_ char *copy = strdup(list);
        char *state = NULL;

        if (!copy)
                return log_oom();

        s->n_aead = 0;
        for (const char *w = strtok_r(copy, ",", &state); w; w = strtok_r(NULL, ",", &state)) {
                char *end;
                unsigned long id;

                errno = 0;
                id = strtoul(w, &end, 10);
                if (errno != 0 || end == w || *end || !NTS_aead_param((NTS_AEADAlgorithm) id))
                        return log_error_errno(EINVAL, "Unknown AEAD identifier: %s", w);
                if (!NTS_aead_supported((NTS_AEADAlgorithm) id))
                        return log_error_errno(EOPNOTSUPP, "libcrypto lacks %s", NTS_aead_name(id));
                if (s->n_aead >= ELEMENTSOF(s->aead))
                        return log_error_errno(E2BIG, "Too many AEAD identifiers: %s", list);
                s->aead[s->n_aead++] = (uint16_t) id;
        }

        return s->n_aead > 0 ? 0 : log_error_errno(EINVAL, "Empty --aead= list");
}

static void aead_default(MockServer *s) {
        static const NTS_AEADAlgorithm all[] = {
                NTS_AEAD_AES_SIV_CMAC_256, NTS_AEAD_AES_SIV_CMAC_384, NTS_AEAD_AES_SIV_CMAC_512,
        };

        assert_cc(ELEMENTSOF(all) <= ELEMENTSOF(s->aead));
        for (size_t i = 0; i < ELEMENTSOF(all); i++)
                if (NTS_aead_supported(all[i]))
                        s->aead[s->n_aead++] = all[i];
}

static int parse_argv(int argc, char *argv[], MockServer *s, Options *o) {
        enum {
                ARG_CERT = 0x100,
                ARG_KEY,
                ARG_ADDRESS,
                ARG_KE_PORT,
                ARG_NTP_ADDRESS,
                ARG_NTP_LISTEN_PORT,
                ARG_NTP_SERVER,
                ARG_NTP_PORT,
                ARG_AEAD,
                ARG_KEYS_FILE,
                ARG_COUNT_FILE,
                ARG_POOL_MEMBER,
                ARG_POOL_SEQUENCE,
                ARG_POOL_IGNORE_DENY,
                ARG_TIME_OFFSET,
                ARG_SABOTAGE,
                ARG_LEAP,
                ARG_KISS,
                ARG_KISS_AFTER,
        };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "cert", required_argument, NULL, ARG_CERT },
                { "key", required_argument, NULL, ARG_KEY },
                { "address", required_argument, NULL, ARG_ADDRESS },
                { "ke-port", required_argument, NULL, ARG_KE_PORT },
                { "ntp-address", required_argument, NULL, ARG_NTP_ADDRESS },
                { "ntp-listen-port", required_argument, NULL, ARG_NTP_LISTEN_PORT },
                { "ntp-server", required_argument, NULL, ARG_NTP_SERVER },
                { "ntp-port", required_argument, NULL, ARG_NTP_PORT },
                { "aead", required_argument, NULL, ARG_AEAD },
                { "keys-file", required_argument, NULL, ARG_KEYS_FILE },
                { "count-file", required_argument, NULL, ARG_COUNT_FILE },
                { "pool-member", required_argument, NULL, ARG_POOL_MEMBER },
                { "pool-sequence", required_argument, NULL, ARG_POOL_SEQUENCE },
                { "pool-ignore-deny", no_argument, NULL, ARG_POOL_IGNORE_DENY },
                { "time-offset", required_argument, NULL, ARG_TIME_OFFSET },
                { "sabotage", required_argument, NULL, ARG_SABOTAGE },
                { "leap", required_argument, NULL, ARG_LEAP },
                { "kiss", required_argument, NULL, ARG_KISS },
                { "kiss-after", required_argument, NULL, ARG_KISS_AFTER },
                {}
        };
        int c, r;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        exit(EXIT_SUCCESS);
                case ARG_CERT:
                        o->cert = optarg;
                        break;
                case ARG_KEY:
                        o->key = optarg;
                        break;
                case ARG_ADDRESS:
                        o->address = optarg;
                        break;
                case ARG_KE_PORT:
                        if (parse_port(optarg, &o->ke_port) < 0)
                                return log_error_errno(EINVAL, "Invalid --ke-port: %s", optarg);
                        break;
                case ARG_NTP_ADDRESS:
                        o->ntp_address = optarg;
                        break;
                case ARG_NTP_LISTEN_PORT:
                        if (parse_port(optarg, &o->ntp_listen_port) < 0)
                                return log_error_errno(EINVAL, "Invalid --ntp-listen-port: %s", optarg);
                        o->ntp_listen_port_set = true;
                        break;
                case ARG_NTP_SERVER:
                        s->ntp_server = optarg;
                        break;
                case ARG_NTP_PORT:
                        if (parse_port(optarg, &s->ntp_port) < 0 || s->ntp_port == 0)
                                return log_error_errno(EINVAL, "Invalid --ntp-port: %s", optarg);
                        break;
                case ARG_AEAD:
                        r = parse_aead_list(optarg, s);
                        if (r < 0)
                                return r;
                        break;
                case ARG_KEYS_FILE:
                        o->keys_file = optarg;
                        break;
                case ARG_COUNT_FILE:
                        s->count_file = optarg;
                        break;
                case ARG_POOL_MEMBER:
                        r = mock_pool_add_member(&s->pool, optarg);
                        if (r < 0)
                                return r;
                        break;
                case ARG_POOL_SEQUENCE:
                        r = mock_pool_set_sequence(&s->pool, optarg);
                        if (r < 0)
                                return r;
                        break;
                case ARG_POOL_IGNORE_DENY:
                        s->pool.ignore_deny = true;
                        break;
                case ARG_TIME_OFFSET:
                        r = parse_offset(optarg, &s->time_offset_nsec);
                        if (r < 0)
                                return log_error_errno(r, "Invalid --time-offset: %s", optarg);
                        break;
                case ARG_SABOTAGE:
                        s->sabotage = sabotage_from_string(optarg);
                        if (s->sabotage < 0)
                                return log_error_errno(EINVAL, "Unknown --sabotage mode: %s", optarg);
                        break;
                case ARG_LEAP:
                        /* 3 (not synchronized) is what --sabotage would be for. */
                        if (parse_unsigned(optarg, NTP_LEAP_MINUSSEC, &s->leap) < 0)
                                return log_error_errno(EINVAL, "Invalid --leap (0, 1 or 2): %s", optarg);
                        break;
                case ARG_KISS:
                        if (strlen(optarg) != sizeof(s->kiss))
                                return log_error_errno(EINVAL, "--kiss= takes a code of 4 characters: %s", optarg);
                        memcpy(s->kiss, optarg, sizeof(s->kiss));
                        break;
                case ARG_KISS_AFTER:
                        if (parse_unsigned(optarg, UINT_MAX, &s->kiss_after) < 0)
                                return log_error_errno(EINVAL, "Invalid --kiss-after: %s", optarg);
                        break;
                default:
                        return -EINVAL;
                }

        if (optind < argc)
                return log_error_errno(EINVAL, "Unexpected argument: %s", argv[optind]);
        if (!o->cert || !o->key)
                return log_error_errno(EINVAL, "--cert= and --key= are required.");
        r = mock_pool_check(&s->pool);
        if (r < 0)
                return r;
        if (s->pool.n_members > 0 && (s->ntp_server || s->ntp_port != 0))
                return log_error_errno(EINVAL, "A pool names its members: no --ntp-server= or --ntp-port=.");
        if (s->n_aead == 0)
                aead_default(s);
        if (!o->ntp_address)
                o->ntp_address = o->address;
        if (!o->ntp_listen_port_set)
                o->ntp_listen_port = s->ntp_port != 0 ? s->ntp_port : 123;
        return 0;
}

typedef union SocketAddress {
        struct sockaddr sa;
        struct sockaddr_in in;
        struct sockaddr_in6 in6;
} SocketAddress;

/* Returns a bound socket and the port it got in *port. */
static int socket_bind(const char *address, int type, uint16_t *port) {
        _cleanup_close_ int fd = -EBADF;
        union in_addr_union a;
        SocketAddress sa = {};
        socklen_t len;
        int family;

        if (in_addr_from_string_auto(address, &family, &a) < 0)
                return log_error_errno(EINVAL, "Not an IP address: %s", address);
        if (family == AF_INET) {
                sa.in = (struct sockaddr_in) { .sin_family = AF_INET, .sin_port = htons(*port), .sin_addr = a.in };
                len = sizeof(sa.in);
        } else {
                sa.in6 = (struct sockaddr_in6) { .sin6_family = AF_INET6, .sin6_port = htons(*port), .sin6_addr = a.in6 };
                len = sizeof(sa.in6);
        }

        fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return log_error_errno(errno, "socket: %m");
        if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &(int) { 1 }, sizeof(int)) < 0)
                return log_error_errno(errno, "SO_REUSEADDR: %m");
        if (bind(fd, &sa.sa, len) < 0)
                return log_error_errno(errno, "Failed to bind %s port %u: %m", address, *port);
        if (type == SOCK_STREAM && listen(fd, SOMAXCONN) < 0)
                return log_error_errno(errno, "listen: %m");

        if (getsockname(fd, &sa.sa, &len) < 0)
                return log_error_errno(errno, "getsockname: %m");
        *port = ntohs(family == AF_INET ? sa.in.sin_port : sa.in6.sin6_port);
        return TAKE_FD(fd);
}

static int on_terminate(sd_event_source *source, const struct signalfd_siginfo *si, void *userdata) {
        MockServer *s = userdata;
        return sd_event_exit(s->event, 0);
}

static int on_usr1(sd_event_source *source, const struct signalfd_siginfo *si, void *userdata) {
        MockServer *s = userdata;

        log_info("SIGUSR1: sabotage %s off, time offset %+.3f s off, leap and kiss codes off",
                 sabotage_to_string(s->sabotage), (double) s->time_offset_nsec / 1e9);
        s->sabotage = SABOTAGE_NONE;
        s->time_offset_nsec = 0;
        s->leap = NTP_LEAP_NONE;
        memset(s->kiss, 0, sizeof(s->kiss));
        s->alpn = sabotage_alpn(s->sabotage);
        return 0;
}

static void mock_server_done(MockServer *s) {
        mock_ke_close_all(s);
        for (size_t i = 0; i < ELEMENTSOF(s->signals); i++)
                s->signals[i] = sd_event_source_unref(s->signals[i]);
        s->event = sd_event_unref(s->event);
        mock_cookie_key_done(&s->key);
        if (s->tls)
                sym_SSL_CTX_free(s->tls);
        s->ke_fd = safe_close(s->ke_fd);
        s->ntp_fd = safe_close(s->ntp_fd);
        mock_server_forget_cookies(s);
}

static int run(int argc, char *argv[]) {
        _cleanup_(mock_server_done) MockServer s = { .ke_fd = -EBADF, .ntp_fd = -EBADF };
        Options o = { .address = "127.0.0.1", .ke_port = NTS_KE_PORT };
        sigset_t mask;
        int r;

        r = parse_argv(argc, argv, &s, &o);
        if (r < 0)
                return r;
        s.alpn = sabotage_alpn(s.sabotage);

        r = server_tls_ctx_new(&(ServerTLSOptions) { .cert_chain = o.cert, .key = o.key, .alpn = &s.alpn },
                               &s.tls);
        if (r < 0)
                return r;

        r = mock_cookie_key_load(o.keys_file, &s.key);
        if (r < 0)
                return r;

        s.ke_fd = socket_bind(o.address, SOCK_STREAM, &o.ke_port);
        if (s.ke_fd < 0)
                return s.ke_fd;
        s.ntp_fd = socket_bind(o.ntp_address, SOCK_DGRAM, &o.ntp_listen_port);
        if (s.ntp_fd < 0)
                return s.ntp_fd;

        (void) signal(SIGPIPE, SIG_IGN);
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGUSR1);
        assert_se(sigprocmask(SIG_BLOCK, &mask, NULL) == 0);

        r = sd_event_new(&s.event);
        if (r >= 0)
                r = sd_event_add_signal(s.event, &s.signals[0], SIGTERM, on_terminate, &s);
        if (r >= 0)
                r = sd_event_add_signal(s.event, &s.signals[1], SIGINT, on_terminate, &s);
        if (r >= 0)
                r = sd_event_add_signal(s.event, &s.signals[2], SIGUSR1, on_usr1, &s);
        /* Signals before sockets: a test that sends SIGUSR1 and then connects is answered in
         * the new mode. */
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(s.signals); i++)
                r = sd_event_source_set_priority(s.signals[i], SD_EVENT_PRIORITY_IMPORTANT);
        if (r >= 0)
                r = mock_ke_listen(&s, s.ke_fd);
        if (r >= 0)
                r = mock_ntp_listen(&s, s.ntp_fd);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the event loop: %m");

        mock_server_write_counts(&s);
        log_info("Listening: NTS-KE %s port %u, NTP %s port %u, sabotage %s", o.address, o.ke_port,
                 o.ntp_address, o.ntp_listen_port, sabotage_to_string(s.sabotage));
        printf("READY ke-port=%u ntp-port=%u\n", o.ke_port, o.ntp_listen_port);
        fflush(stdout);

        r = sd_event_loop(s.event);
        if (r < 0)
                return log_error_errno(r, "Event loop failed: %m");
        return 0;
}

int main(int argc, char *argv[]) {
        log_parse_environment();
        return run(argc, argv) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
