/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* A plain NTP server for tests, with the misbehaviours real servers cannot be made to show on
 * demand: kiss-o'-death codes, an unsynchronized server, silence, a shifted clock, a too large
 * root distance. It never touches the clock: its time is CLOCK_REALTIME plus --offset.
 *
 *   ntp-test-server --listen=127.0.0.1:PORT [--mode=MODE] [--offset=SEC] [--count-file=FILE]
 *   MODE: normal rate deny rstr unsync silent far (root distance 10 s)
 *         oversized (a correct reply followed by zeros up to OVERSIZED_REPLY_SIZE bytes)
 * Prints READY on stdout when listening; SIGUSR1 switches to normal; SIGTERM ends it. The
 * count file gets the number of requests answered, rewritten after each one. */

#include <arpa/inet.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "log.h"
#include "ntp-packet.h"

typedef enum Mode { MODE_NORMAL, MODE_RATE, MODE_DENY, MODE_RSTR, MODE_UNSYNC, MODE_SILENT, MODE_FAR, MODE_OVERSIZED } Mode;

static const char *const mode_names[] = {
        [MODE_NORMAL] = "normal", [MODE_RATE] = "rate",     [MODE_DENY] = "deny", [MODE_RSTR] = "rstr",
        [MODE_UNSYNC] = "unsync", [MODE_SILENT] = "silent", [MODE_FAR] = "far",   [MODE_OVERSIZED] = "oversized",
};

/* Larger than any reply a client reads whole (the daemon's buffer holds an NTS reply with eight
 * cookies of the largest size, 8560 bytes); its first 48 bytes are a correct reply. */
#define OVERSIZED_REPLY_SIZE 16384

static volatile sig_atomic_t got_usr1 = 0, got_term = 0;

static void on_signal(int sig) {
        if (sig == SIGUSR1)
                got_usr1 = 1;
        else
                got_term = 1;
}

static int parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len) {
        char host[INET6_ADDRSTRLEN + 2];
        const char *colon = strrchr(s, ':');
        unsigned port;

        if (!colon || (size_t) (colon - s) >= sizeof host || sscanf(colon + 1, "%u", &port) != 1 || port > 65535)
                return -EINVAL;
        memcpy(host, s, colon - s);
        host[colon - s] = '\0';

        memset(ss, 0, sizeof *ss);
        if (host[0] == '[') {
                struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) ss;
                host[strlen(host) - 1] = '\0';
                in6->sin6_family = AF_INET6;
                in6->sin6_port = htons(port);
                *len = sizeof *in6;
                return inet_pton(AF_INET6, host + 1, &in6->sin6_addr) == 1 ? 0 : -EINVAL;
        }

        struct sockaddr_in *in = (struct sockaddr_in *) ss;
        in->sin_family = AF_INET;
        in->sin_port = htons(port);
        *len = sizeof *in;
        return inet_pton(AF_INET, host, &in->sin_addr) == 1 ? 0 : -EINVAL;
}

static void write_count(const char *path, unsigned long n) {
        FILE *f;

        if (!path)
                return;
        f = fopen(path, "we");
        if (!f)
                return;
        fprintf(f, "%lu\n", n);
        fclose(f);
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "listen", required_argument, NULL, 'l' },
                { "mode", required_argument, NULL, 'm' },
                { "offset", required_argument, NULL, 'o' },
                { "count-file", required_argument, NULL, 'c' },
                {}
        };
        struct sockaddr_storage addr;
        socklen_t addr_len = 0;
        const char *count_file = NULL;
        double offset = 0;
        Mode mode = MODE_NORMAL;
        unsigned long served = 0;
        int c, fd;

        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0)
                switch (c) {
                case 'l':
                        if (parse_listen(optarg, &addr, &addr_len) < 0) {
                                log_error("Bad --listen=%s", optarg);
                                return EXIT_FAILURE;
                        }
                        break;
                case 'm': {
                        size_t i;
                        for (i = 0; i < ELEMENTSOF(mode_names); i++)
                                if (streq(mode_names[i], optarg))
                                        break;
                        if (i >= ELEMENTSOF(mode_names)) {
                                log_error("Unknown --mode=%s", optarg);
                                return EXIT_FAILURE;
                        }
                        mode = (Mode) i;
                        break;
                }
                case 'o':
                        offset = strtod(optarg, NULL);
                        break;
                case 'c':
                        count_file = optarg;
                        break;
                default:
                        return EXIT_FAILURE;
                }

        if (addr_len == 0) {
                log_error("--listen= is required.");
                return EXIT_FAILURE;
        }

        fd = socket(addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *) &addr, addr_len) < 0) {
                log_error_errno(errno, "Failed to listen: %m");
                return EXIT_FAILURE;
        }

        struct sigaction sa = { .sa_handler = on_signal };
        sigaction(SIGUSR1, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);

        write_count(count_file, 0);
        printf("READY\n");
        fflush(stdout);

        while (!got_term) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                struct sockaddr_storage from;
                socklen_t from_len = sizeof from;
                static uint8_t out[OVERSIZED_REPLY_SIZE];
                uint8_t buf[2048];
                size_t out_size = NTP_HEADER_SIZE;
                struct timespec now;
                NTPHeader req, h;
                ssize_t l;

                if (got_usr1) {
                        got_usr1 = 0;
                        mode = MODE_NORMAL;
                }

                if (poll(&p, 1, 200) <= 0)
                        continue;

                l = recvfrom(fd, buf, sizeof buf, MSG_DONTWAIT, (struct sockaddr *) &from, &from_len);
                if (l < NTP_HEADER_SIZE)
                        continue;

                clock_gettime(CLOCK_REALTIME, &now);
                int64_t t = (int64_t) now.tv_sec * NTP_NSEC_PER_SEC + now.tv_nsec + (int64_t) (offset * 1e9);

                ntp_header_decode(buf, &req);
                if (req.mode != NTP_MODE_CLIENT || mode == MODE_SILENT)
                        continue;

                h = (NTPHeader) {
                        .leap = NTP_LEAP_NONE,
                        .version = req.version,
                        .mode = NTP_MODE_SERVER,
                        .stratum = 1,
                        .poll = req.poll,
                        .precision = -20,
                        .refid = { 'T', 'E', 'S', 'T' },
                        .reference = ntp_ts_from_nsec(t - NTP_NSEC_PER_SEC),
                        .origin = req.transmit,
                        .receive = ntp_ts_from_nsec(t),
                        .transmit = ntp_ts_from_nsec(t),
                };

                switch (mode) {
                case MODE_RATE:
                case MODE_DENY:
                case MODE_RSTR:
                        h.stratum = NTP_STRATUM_KISS;
                        h.leap = NTP_LEAP_NOTINSYNC;
                        memcpy(h.refid, mode == MODE_RATE ? "RATE" : mode == MODE_DENY ? "DENY" : "RSTR", 4);
                        break;
                case MODE_UNSYNC:
                        h.stratum = NTP_STRATUM_UNSYNC;
                        h.leap = NTP_LEAP_NOTINSYNC;
                        break;
                case MODE_FAR:
                        h.root_dispersion = ntp_short_from_nsec(10 * NTP_NSEC_PER_SEC);
                        break;
                case MODE_OVERSIZED:
                        out_size = sizeof out; /* zeros after the header */
                        break;
                default:
                        break;
                }

                ntp_header_encode(&h, out);
                if (sendto(fd, out, out_size, 0, (struct sockaddr *) &from, from_len) > 0)
                        write_count(count_file, ++served);
        }

        return EXIT_SUCCESS;
}
