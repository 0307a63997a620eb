/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* LD_PRELOAD that runs the real, unchanged systemd-timesyncd in simulated time against
 * simulated NTS servers (docs/ARCHITECTURE.md, "The daemon in simulated time").
 *
 * Time: CLOCK_MONOTONIC, CLOCK_BOOTTIME and CLOCK_REALTIME (and their variants) are virtual.
 * Timerfds are eventfds that this file makes readable when their clock reaches the deadline.
 * When the daemon waits in epoll and nothing is ready, virtual time jumps to the next deadline
 * of a timer, a packet in flight or a scenario event: a day passes in a few thousand jumps.
 *
 * Clock: the daemon runs without CAP_SYS_TIME, on one of two clocks. By default with --observe
 * --test-clock-offset=: it steers a fake clock of its own (virtual CLOCK_REALTIME plus an
 * offset) and logs each step and slew; every clock write (adjtimex(), ntp_adjtime(),
 * clock_adjtime() with modes, clock_settime(), settimeofday(), adjtime(), also as raw system
 * calls) is a tripwire: refused with EPERM, recorded and counted in the end line's
 * clock_writes=. With SIM_CLOCK=kernel on its kernel clock backend: every clock call is
 * answered by the model of the kernel's discipline (sim-kclock.c), whose clocks the daemon's
 * are, and its capset() that would keep CAP_SYS_TIME is made without it. Each time virtual
 * time has moved, a line "sim: at SECONDS s" goes to stderr before the daemon runs on, so that
 * its log lines can be placed in simulated time (sim.sh).
 *
 * Network: NTS servers (the mock server's KE and NTP sides, test/tools/mock-server/mock-*.c) run inside
 * this process on loopback sockets, serviced from the daemon's own epoll_wait(). A connect()
 * to 127.0.0.1:PORT, PORT a server's port in the scenario, goes to that server's listening
 * socket; its NTP packets both ways are held for the simulated delay, or dropped. The servers
 * also answer plain NTP (no extension fields) sent with sendto() to 127.0.0.(i+1):123 for server
 * i, the answer coming from there: the stock daemon, which cannot name a port, compared with
 * ours by bench/accuracy.sh.
 *
 * The scenario comes from the environment (see parse_server() and docs/ARCHITECTURE.md):
 *   SIM_SERVERS     servers: "port=P,offset=S,freq=PPM,delay=S,jitter=S,oneway=S,expjitter=S,
 *                   asym=S,loss=P,down=A-B,rotate=S,nak=A-B,jump=T:S,hold=T:S,ntp_port=P,
 *                   cookie_key=FILE" separated by ';'; times in seconds of simulated time; a
 *                   packet's one-way delay is delay/2 + jitter * U(0,1) + oneway + expjitter *
 *                   Exp(1), plus asym on the way back, and hold's S from its second T on
 *                   (packet_delay()); ntp_port= (default: a free one) is where
 *                   its NTP side listens and what its key exchange names, cookie_key= the file of
 *                   its cookie key (made if missing; default: a new key): a run that restarts
 *                   with a kept state directory meets the server its cookies are from;
 *                   claim=I: its key exchange names the NTP port of server I (from 0, in this
 *                   list) instead of its own, whose requests then reach server I
 *   SIM_DURATION    simulated seconds; then the daemon gets SIGTERM
 *   SIM_DRIFT       the daemon's oscillator error in ppm: its CLOCK_REALTIME runs away from
 *                   true time at that rate
 *   SIM_CLOCK       "kernel": the model answers the clock calls (default: the tripwire)
 *   SIM_CLOCK_ERROR the model's CLOCK_REALTIME minus true time at the start, in seconds
 *   SIM_WANDER      the model's oscillator: the standard deviation of its change per second
 *   SIM_KCLOCK_TRACE seconds between the model's trace lines in the record (default 1; 0: none)
 *   SIM_CLOCK_JUMP  "T:S": at T another program steps the model's clock by S seconds
 *   SIM_SUSPEND     "T:D": at T the machine sleeps for D seconds (the model's MONOTONIC stops)
 *   SIM_START       true time at the start, in seconds since the epoch
 *   SIM_SEED        the seed of every random choice (losses, jitter, the daemon's getrandom())
 *   SIM_RECORD      file for the record of requests, replies, refused clock writes and the
 *                   final state
 *   SIM_CERT, SIM_KEY  the servers' certificate chain and key (PEM) */

#include <dlfcn.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/timex.h>
#include <linux/capability.h>
#include <linux/sockios.h>

#include "log.h"
#include "mock-ke.h"
#include "mock-ntp.h"
#include "mock-server.h"
#include "nts-crypto.h"
#include "sim-kclock.h"

#define NSEC_PER_SEC INT64_C(1000000000)
#define SIM_MAX_FD 4096
#define SIM_MAX_SERVERS 8
#define NEVER INT64_MAX
#define SIM_MONOTONIC_START (INT64_C(1000) * NSEC_PER_SEC)
#define SIM_BOOTTIME_AHEAD (INT64_C(5) * NSEC_PER_SEC)

/* What this object puts in front of libc (the build hides everything else, sim-preload.sym
 * keeps the linked code inside). */
#define SIM_EXPORT __attribute__((visibility("default")))

typedef struct VTimer {
        bool used;
        bool server;                    /* a servers' timer: on true time */
        bool cancel_on_set;             /* TFD_TIMER_CANCEL_ON_SET: fires at a clock step */
        clockid_t clock;
        int64_t expiry;                 /* on its clock; NEVER: disarmed */
        int64_t interval;
} VTimer;

typedef struct Packet {
        struct Packet *next;
        int64_t due;                    /* virtual CLOCK_MONOTONIC */
        int fd;
        int server;                     /* index; the direction is from_server */
        bool from_server;
        struct sockaddr_storage dst;
        socklen_t dst_len;
        size_t len;
        uint8_t data[];
} Packet;

typedef struct SimServer {
        MockServer m;
        uint16_t port;                  /* the port the daemon's configuration names */
        uint16_t ke_port, ntp_port;     /* where it really listens on 127.0.0.1 */
        int claim;                      /* claim=: the server whose NTP port its key exchange names; -1: its own */
        double offset, freq_ppm, delay, jitter, loss;
        double oneway, expjitter, asym; /* per direction: oneway + expjitter * Exp(1), the
                                         * server's answers asym longer */
        double down_from, down_to;      /* an outage: no KE, no NTP answers */
        double nak_from, nak_to;        /* answers every NTP request with an NTS NAK */
        double leap_from, leap_to;      /* leap=A-B: announces a leap second insertion */
        double rotate;                  /* the server's cookie key changes every so many seconds */
        double jump_at, jump;           /* from jump_at on, its time is jump seconds further off */
        double hold_at, hold;           /* from hold_at on, its replies are held hold seconds more
                                         * (one way: an attacker on the path delaying them) */
        char *cookie_key;               /* the file of its first cookie key, made if missing */
        double next_rotate;
        bool down;
        unsigned n_requests, n_dropped, n_ke_connects, n_rotations;
        double last_request;
} SimServer;

/* The real functions. */
static int (*real_epoll_pwait)(int, struct epoll_event *, int, int, const sigset_t *);
static int (*real_clock_gettime)(clockid_t, struct timespec *);
static int (*real_close)(int);
static int (*real_connect)(int, const struct sockaddr *, socklen_t);
static ssize_t (*real_send)(int, const void *, size_t, int);
static ssize_t (*real_recv)(int, void *, size_t, int);
static ssize_t (*real_sendmsg)(int, const struct msghdr *, int);
static ssize_t (*real_sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
static ssize_t (*real_recvmsg)(int, struct msghdr *, int);
static int (*real_accept4)(int, struct sockaddr *, socklen_t *, int);
static int (*real_pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static long (*real_syscall)(long, ...);
static int (*real_timerfd_create)(clockid_t, int);
static int (*real_timerfd_settime)(int, int, const struct itimerspec *, struct itimerspec *);
static int (*real_timerfd_gettime)(int, struct itimerspec *);

static bool sim_on;                     /* SIM_DURATION set: this process is simulated */
static bool servers_up;                 /* the servers are listening */
static bool ended;                      /* SIGTERM sent at the end of the scenario */
static unsigned in_server;              /* > 0 while servers run: they see true time */

/* Virtual time. True time (CLOCK_REALTIME as the servers see it) is v_mono + true_minus_mono;
 * the daemon's CLOCK_REALTIME is that plus drift_error (its fake clock adds its own offset). */
static int64_t v_mono, t0_mono, end_mono;
static int64_t boot_minus_mono, true_minus_mono;
static double drift_error;              /* nanoseconds, fractional: the drift accumulates */
static double drift_ppm;

/* SIM_CLOCK=kernel: the daemon runs on its kernel clock backend and the model answers every
 * clock call; its CLOCK_REALTIME, MONOTONIC and BOOTTIME are the model's (drift_error stays 0). */
static bool kclock_on;
static KClock kclock;
static unsigned kclock_steps_seen;      /* the model's steps that cancelled timers already */
static double kclock_trace_every;       /* seconds between trace lines; 0: none */
static double kclock_traced;            /* the simulated time of the last trace line */
static bool cap_sys_time_pretended;     /* the daemon asked to keep CAP_SYS_TIME and was told so */
static double clock_jump_at = -1, clock_jump; /* SIM_CLOCK_JUMP: another program steps the clock */
static double suspend_at = -1, suspend_for;  /* SIM_SUSPEND: the machine sleeps */

static unsigned n_clock_writes;         /* refused: the daemon must never try one */
static int64_t marked_mono = -1;        /* the virtual time of the last "sim: at" line */

static VTimer timers[SIM_MAX_FD];
static int8_t fd_server[SIM_MAX_FD];    /* a daemon UDP socket connected to server i: i + 1 */
static bool fd_plain[SIM_MAX_FD];       /* a daemon UDP socket that sent plain NTP with sendto() */
static bool fd_ke[SIM_MAX_FD];          /* a TCP connection of a key exchange, either end */
static Packet *packets;

static SimServer servers[SIM_MAX_SERVERS];
static size_t n_servers;
static sd_event *server_event;
static SSL_CTX *server_tls;

static FILE *record;
static uint64_t prng_net, prng_random;

/* Name resolution runs getaddrinfo() in a thread that then wakes the event loop with a send()
 * (src/shared/resolve-util.c): virtual time stands still from the thread's creation to that
 * send(), or to the thread's end. */
static atomic_uint threads_started, threads_notified;
static _Thread_local bool resolver_thread;
/* The stock daemon's resolver (sd-resolve) keeps worker threads that wait for queries in
 * recv() and answer with sendmsg(): such a thread counts as done when it first waits, and a
 * query the main thread sends them (send() or sendmsg() on an unnamed local datagram socket,
 * a socketpair: nothing else of either daemon does that) counts as pending until a worker that
 * got one waits again. Counted at the send, not when a worker gets it: the workers may not
 * even wait yet. */
static _Thread_local enum { WORKER_NONE, WORKER_IDLE, WORKER_WORKING } worker_state;
static _Thread_local bool sim_thread;
static atomic_uint queries_pending;

static uint64_t splitmix64(uint64_t *s) {
        uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

static double prng_uniform(void) {
        return (double) (splitmix64(&prng_net) >> 11) / (double) (UINT64_C(1) << 53);
}

static double elapsed(void) {
        return (double) (v_mono - t0_mono) / 1e9;
}

static void sim_record(const char *fmt, ...) _printf_(1, 2);
static void sim_record(const char *fmt, ...) {
        va_list ap;

        if (!record)
                return;
        fprintf(record, "%.6f ", elapsed());
        va_start(ap, fmt);
        vfprintf(record, fmt, ap);
        va_end(ap);
        fputc('\n', record);
        fflush(record);
}

/* Saturates: a timer armed for the largest time_t never expires. */
static int64_t ts_to_ns(const struct timespec *ts) {
        if (ts->tv_sec >= INT64_MAX / NSEC_PER_SEC - 1)
                return NEVER;
        if (ts->tv_sec <= INT64_MIN / NSEC_PER_SEC + 1)
                return INT64_MIN;
        return (int64_t) ts->tv_sec * NSEC_PER_SEC + ts->tv_nsec;
}

static struct timespec ns_to_ts(int64_t ns) {
        return (struct timespec) { .tv_sec = (time_t) (ns / NSEC_PER_SEC), .tv_nsec = (long) (ns % NSEC_PER_SEC) };
}

static int64_t now_true(void) {
        return v_mono + true_minus_mono;
}

/* CLOCK_REALTIME as the daemon sees it, or as the servers do (true time). */
static int64_t realtime_as(bool server) {
        if (server)
                return now_true();
        if (kclock_on)
                return kclock_realtime(&kclock, now_true());
        return now_true() + (int64_t) llround(drift_error);
}

static int64_t now_realtime(void) {
        return realtime_as(in_server);
}

static bool clock_virtual(clockid_t c) {
        switch (c) {
        case CLOCK_REALTIME:
        case CLOCK_REALTIME_COARSE:
        case CLOCK_REALTIME_ALARM:
        case CLOCK_TAI:
        case CLOCK_MONOTONIC:
        case CLOCK_MONOTONIC_COARSE:
        case CLOCK_MONOTONIC_RAW:
        case CLOCK_BOOTTIME:
        case CLOCK_BOOTTIME_ALARM:
                return true;
        default:
                return false;
        }
}

/* The monotonic clocks run at the disciplined rate under the kernel model, as on Linux, where
 * the NTP frequency and slews move MONOTONIC and BOOTTIME; MONOTONIC_RAW is the oscillator. */
static int64_t clock_now_as(clockid_t c, bool server) {
        int64_t mono = v_mono;

        if (kclock_on && !server) {
                if (c == CLOCK_BOOTTIME || c == CLOCK_BOOTTIME_ALARM)
                        return t0_mono + boot_minus_mono + kclock_boottime(&kclock, now_true());
                mono = t0_mono + (c == CLOCK_MONOTONIC_RAW ? kclock_raw(&kclock, now_true())
                                                           : kclock_monotonic(&kclock, now_true()));
        }
        switch (c) {
        case CLOCK_REALTIME:
        case CLOCK_REALTIME_COARSE:
        case CLOCK_REALTIME_ALARM:
                return realtime_as(server);
        case CLOCK_TAI:
                return realtime_as(server) + 37 * NSEC_PER_SEC;
        case CLOCK_BOOTTIME:
        case CLOCK_BOOTTIME_ALARM:
                return mono + boot_minus_mono;
        default:
                return mono;
        }
}

static int64_t clock_now(clockid_t c) {
        return clock_now_as(c, in_server);
}

static int64_t timer_now(const VTimer *t) {
        return clock_now_as(t->clock, t->server);
}

static void *next_symbol(const char *name) {
        void *p = dlsym(RTLD_NEXT, name);

        if (!p) {
                fprintf(stderr, "sim: no %s to wrap\n", name);
                abort();
        }
        return p;
}

static double env_double(const char *name, double def) {
        const char *v = getenv(name);

        return v ? strtod(v, NULL) : def;
}

/* The real functions. Called from the constructor, and from the wrappers that another
 * library's constructor may call before it ran (the stock daemon's libcap-ng closes a file
 * and asks for its capabilities from its own). */
static void sim_symbols(void) {
        if (real_syscall)
                return;
        real_epoll_pwait = next_symbol("epoll_pwait");
        real_clock_gettime = next_symbol("clock_gettime");
        real_close = next_symbol("close");
        real_connect = next_symbol("connect");
        real_send = next_symbol("send");
        real_recv = next_symbol("recv");
        real_sendmsg = next_symbol("sendmsg");
        real_sendto = next_symbol("sendto");
        real_recvmsg = next_symbol("recvmsg");
        real_pthread_create = next_symbol("pthread_create");
        real_accept4 = next_symbol("accept4");
        real_timerfd_create = next_symbol("timerfd_create");
        real_timerfd_settime = next_symbol("timerfd_settime");
        real_timerfd_gettime = next_symbol("timerfd_gettime");
        /* Last: the guard above. */
        real_syscall = next_symbol("syscall");
}

__attribute__((constructor)) static void sim_init(void) {
        const char *p;

        sim_symbols();

        /* Only the process the driver means: not a helper it runs, should one inherit this. */
        p = getenv("SIM_DURATION");
        if (!p)
                return;
        sim_on = true;

        /* The clocks start at the same values in every run: sd-event places a timer within its
         * accuracy by the clock's absolute value, so a start taken from the real clocks would
         * make two runs of one seed differ. True time starts at SIM_START (seconds since the
         * epoch; the driver's real time, so that the test certificates are valid). */
        v_mono = t0_mono = SIM_MONOTONIC_START;
        boot_minus_mono = SIM_BOOTTIME_AHEAD;
        true_minus_mono = (int64_t) env_double("SIM_START", 1.8e9) * NSEC_PER_SEC - v_mono;
        end_mono = t0_mono + (int64_t) (strtod(p, NULL) * 1e9);
        drift_ppm = env_double("SIM_DRIFT", 0);
        prng_net = prng_random = (uint64_t) env_double("SIM_SEED", 1);
        prng_random ^= UINT64_C(0x5851f42d4c957f2d);
        p = getenv("SIM_CLOCK");
        kclock_on = p && streq(p, "kernel");
        if (kclock_on) {
                kclock_init(&kclock, now_true(), now_true() + (int64_t) llround(env_double("SIM_CLOCK_ERROR", 0) * 1e9),
                            drift_ppm, env_double("SIM_WANDER", 0), prng_net);
                kclock_trace_every = env_double("SIM_KCLOCK_TRACE", 1);
                kclock_traced = -1;
                p = getenv("SIM_CLOCK_JUMP");
                if (p && *p && (sscanf(p, "%lf:%lf", &clock_jump_at, &clock_jump) != 2 || clock_jump_at < 0)) {
                        fprintf(stderr, "sim: bad SIM_CLOCK_JUMP '%s'\n", p);
                        abort();
                }
                p = getenv("SIM_SUSPEND");
                if (p && *p && (sscanf(p, "%lf:%lf", &suspend_at, &suspend_for) != 2 || suspend_at < 0 || suspend_for <= 0)) {
                        fprintf(stderr, "sim: bad SIM_SUSPEND '%s'\n", p);
                        abort();
                }
        }

        p = getenv("SIM_RECORD");
        if (p) {
                record = fopen(p, "we");
                if (!record)
                        fprintf(stderr, "sim: cannot write %s: %m\n", p);
        }
        if (kclock_on)
                sim_record("start drift_ppm=%+.3f clock=kernel wander=%g clock_error=%+.9f", drift_ppm,
                           kclock.wander, kclock_offset(&kclock));
        else
                sim_record("start drift_ppm=%+.3f", drift_ppm);
}

static void kclock_trace(void) {
        sim_record("kclock offset=%+.9f freq=%+.6f rate=%+.6f phase=%+.9f state=%s",
                   kclock_offset(&kclock), kclock_freq_ppm(&kclock), kclock_rate_ppm(&kclock),
                   kclock_phase(&kclock), kclock_state_name(&kclock));
}

static void timers_clock_was_set(void);

/* Under the kernel model, time passes a trace interval at a time, with a line for each. */
static void kclock_advance_to(int64_t t) {
        if (kclock_trace_every > 0)
                for (;;) {
                        double next = kclock_traced < 0 ? 0 : kclock_traced + kclock_trace_every;
                        int64_t at = t0_mono + (int64_t) llround(next * 1e9);

                        if (at > t)
                                break;
                        v_mono = MAX(v_mono, at);
                        kclock_advance(&kclock, now_true());
                        kclock_traced = next;
                        kclock_trace();
                }
        v_mono = t;
        kclock_advance(&kclock, now_true());
        /* A leap second is a clock change too. */
        timers_clock_was_set();
}

/* Time passes: the daemon's clock drifts. */
static void advance_to(int64_t t) {
        if (t <= v_mono)
                return;
        if (kclock_on) {
                kclock_advance_to(t);
                return;
        }
        drift_error += (double) (t - v_mono) * drift_ppm * 1e-6;
        v_mono = t;
}

static void timer_signal(int fd, uint64_t n) {
        ssize_t l = write(fd, &n, sizeof n);

        if (l != (ssize_t) sizeof n)
                fprintf(stderr, "sim: cannot signal timer fd %d: %m\n", fd);
}

static int max_timer_fd = -1;

static void fire_timers(void) {
        for (int fd = 0; fd <= max_timer_fd; fd++) {
                VTimer *t = &timers[fd];
                int64_t now;
                uint64_t n = 1;

                if (!t->used || t->expiry == NEVER)
                        continue;
                now = timer_now(t);
                if (now < t->expiry)
                        continue;
                if (t->interval > 0) {
                        n += (uint64_t) ((now - t->expiry) / t->interval);
                        t->expiry += (int64_t) n * t->interval;
                } else
                        t->expiry = NEVER;
                timer_signal(fd, n);
        }
}

/* The kernel makes every TFD_TIMER_CANCEL_ON_SET timer readable when CLOCK_REALTIME is set
 * (clock_was_set()): at once, so that a timer the daemon arms after its own step is not hit. */
static void timers_clock_was_set(void) {
        if (!kclock_on || kclock.n_steps == kclock_steps_seen)
                return;
        kclock_steps_seen = kclock.n_steps;
        for (int fd = 0; fd <= max_timer_fd; fd++) {
                VTimer *t = &timers[fd];

                if (!t->used || t->server || !t->cancel_on_set)
                        continue;
                t->cancel_on_set = false;
                t->expiry = NEVER;
                timer_signal(fd, 1);
        }
}

static bool in_window(double t, double from, double to) {
        return from >= 0 && t >= from && t < to;
}

static SimServer *server_of_port(uint16_t port) {
        for (size_t i = 0; i < n_servers; i++)
                if (servers[i].port == port)
                        return &servers[i];
        return NULL;
}

static bool server_ntp_fd(int fd, size_t *ret) {
        for (size_t i = 0; i < n_servers; i++)
                if (servers[i].m.ntp_fd == fd) {
                        *ret = i;
                        return true;
                }
        return false;
}

/* The one-way delay of a packet: half the round trip plus a uniform jitter (delay=, jitter=),
 * plus a base delay and an exponential jitter (oneway=, expjitter=: chrony's clknetsim's model),
 * plus asym= on the way back, and hold= from its second on (an attacker on the path holding the
 * answers back). The exponential draw only when asked for, so that the existing
 * scenarios see the random stream they always saw. */
static int64_t packet_delay(const SimServer *s, bool from_server) {
        double d = s->delay / 2 + s->jitter * prng_uniform() + s->oneway;

        if (s->expjitter > 0)
                d += s->expjitter * -log1p(-prng_uniform());
        if (from_server)
                d += s->asym;
        if (from_server && s->hold_at >= 0 && elapsed() >= s->hold_at)
                d += s->hold;
        return (int64_t) (d * 1e9);
}

static void packet_queue(int fd, int server, bool from_server, const void *buf, size_t len,
                         const struct sockaddr *dst, socklen_t dst_len, int64_t delay) {
        Packet *p = malloc(offsetof(Packet, data) + len), **q;

        if (!p) {
                fprintf(stderr, "sim: out of memory, packet dropped\n");
                return;
        }
        *p = (Packet) { .due = v_mono + delay, .fd = fd, .server = server, .from_server = from_server, .len = len };
        memcpy(p->data, buf, len);
        if (dst && dst_len <= sizeof p->dst) {
                memcpy(&p->dst, dst, dst_len);
                p->dst_len = dst_len;
        }
        /* In order of arrival; equal times keep the order of sending. */
        for (q = &packets; *q && (*q)->due <= p->due; q = &(*q)->next)
                ;
        p->next = *q;
        *q = p;
}

/* The daemon's UDP socket whose address a server's answer goes to; -1 if it is closed. */
static int daemon_fd_of(const struct sockaddr_storage *dst, socklen_t dst_len) {
        for (int fd = 0; fd < SIM_MAX_FD; fd++) {
                struct sockaddr_storage a;
                socklen_t l = sizeof a;

                if (!(fd_server[fd] || fd_plain[fd]) || getsockname(fd, (struct sockaddr *) &a, &l) < 0 || l != dst_len)
                        continue;
                if (memcmp(&a, dst, l) == 0)
                        return fd;
                /* A socket bound to any address (the stock daemon's) gets its answers on
                 * loopback's. */
                if (fd_plain[fd] && a.ss_family == AF_INET &&
                    ((struct sockaddr_in *) &a)->sin_addr.s_addr == htonl(INADDR_ANY) &&
                    ((struct sockaddr_in *) &a)->sin_port == ((const struct sockaddr_in *) dst)->sin_port)
                        return fd;
        }
        return -1;
}

/* Loopback hands a datagram over within send() unless the kernel defers its receive work
 * under load: then the receiver is waited for (in real time, bounded) before the simulation
 * goes on, so that virtual time never runs past a packet that is still on its way. */
static void wait_readable(int fd) {
        struct pollfd p = { .fd = fd, .events = POLLIN };

        if (fd >= 0 && poll(&p, 1, 2000) == 0)
                fprintf(stderr, "sim: a packet delivered on loopback did not arrive within 2 s\n");
}

static bool deliver_packets(void) {
        bool any = false;

        while (packets && packets->due <= v_mono) {
                Packet *p = packets;
                ssize_t l;

                packets = p->next;
                if (p->from_server || p->dst_len > 0)
                        l = real_sendto(p->fd, p->data, p->len, MSG_DONTWAIT, (struct sockaddr *) &p->dst, p->dst_len);
                else
                        l = real_send(p->fd, p->data, p->len, MSG_DONTWAIT);
                if (l < 0)
                        fprintf(stderr, "sim: delivering a packet failed: %m\n");
                else
                        wait_readable(p->from_server ? daemon_fd_of(&p->dst, p->dst_len) : servers[p->server].m.ntp_fd);
                free(p);
                any = true;
        }
        return any;
}

/* Whether bytes of a key exchange are still on their way: a connection not yet established, or
 * data that the other end has not acknowledged (on loopback it acknowledges on receipt). */
static bool tcp_in_flight(void) {
        for (int fd = 0; fd < SIM_MAX_FD; fd++) {
                struct tcp_info ti;
                socklen_t l = sizeof ti;
                int outq = 0;

                if (!fd_ke[fd])
                        continue;
                if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &l) < 0)
                        continue;
                if (ti.tcpi_state == TCP_SYN_SENT || ti.tcpi_state == TCP_SYN_RECV)
                        return true;
                if (ti.tcpi_state == TCP_ESTABLISHED && ioctl(fd, SIOCOUTQ, &outq) == 0 && outq > 0)
                        return true;
        }
        return false;
}

/* Outages, NAK windows and key changes as the scenario says, at their times. */
static bool apply_events(void) {
        double t = elapsed();
        bool any = false;

        /* Another program sets the clock, as date(1) would: a step the daemon did not make. */
        if (clock_jump_at >= 0 && t >= clock_jump_at) {
                double before = kclock_offset(&kclock);

                clock_jump_at = -1;
                assert_se(kclock_settime(&kclock, now_true(), kclock_realtime(&kclock, now_true()) +
                                                              (int64_t) llround(clock_jump * 1e9)) == 0);
                sim_record("clock-jump %+.6f offset=%+.6f", kclock_offset(&kclock) - before, kclock_offset(&kclock));
                timers_clock_was_set();
                any = true;
        }
        /* The machine sleeps: nothing runs, true time goes on, the daemon's MONOTONIC stops
         * (sim-kclock.h). What was in flight arrives at the resume. */
        if (suspend_at >= 0 && t >= suspend_at) {
                int64_t sleep = (int64_t) llround(suspend_for * 1e9);

                suspend_at = -1;
                sim_record("suspend %.3f", suspend_for);
                kclock_suspend(&kclock, now_true(), sleep);
                kclock_advance_to(v_mono + sleep);
                sim_record("resume offset=%+.6f", kclock_offset(&kclock));
                any = true;
        }

        for (size_t i = 0; i < n_servers; i++) {
                SimServer *s = &servers[i];
                bool down = in_window(t, s->down_from, s->down_to);
                Sabotage nak = in_window(t, s->nak_from, s->nak_to) ? SABOTAGE_NAK : SABOTAGE_NONE;
                unsigned leap = in_window(t, s->leap_from, s->leap_to) ? NTP_LEAP_PLUSSEC : NTP_LEAP_NONE;

                if (down != s->down) {
                        s->down = down;
                        sim_record("server %zu %s", i, down ? "down" : "up");
                        any = true;
                }
                if (leap != s->m.leap) {
                        s->m.leap = leap;
                        sim_record("server %zu leap %s", i, leap ? "insert" : "none");
                        any = true;
                }
                if (nak != s->m.sabotage) {
                        s->m.sabotage = nak;
                        sim_record("server %zu sabotage %s", i, sabotage_to_string(nak));
                        any = true;
                }
                if (s->rotate > 0 && t >= s->next_rotate) {
                        mock_cookie_key_done(&s->m.key);
                        if (mock_cookie_key_load(NULL, &s->m.key) < 0) {
                                fprintf(stderr, "sim: cannot make a new cookie key\n");
                                abort();
                        }
                        s->n_rotations++;
                        s->next_rotate += s->rotate;
                        sim_record("server %zu cookie key changed", i);
                        any = true;
                }
                /* An authentic server with a frequency error serves a time that runs away; one
                 * that turns liar (or is set right) jumps. */
                s->m.time_offset_nsec = (int64_t) ((s->offset + s->freq_ppm * 1e-6 * t +
                                                    (s->jump_at >= 0 && t >= s->jump_at ? s->jump : 0)) * 1e9);
        }
        return any;
}

static int64_t next_event(void) {
        double t = elapsed(), next = clock_jump_at > t ? clock_jump_at : INFINITY;

        if (suspend_at > t && suspend_at < next)
                next = suspend_at;

        for (size_t i = 0; i < n_servers; i++) {
                const SimServer *s = &servers[i];
                const double times[] = { s->down_from, s->down_to, s->nak_from, s->nak_to, s->leap_from, s->leap_to,
                                         s->rotate > 0 ? s->next_rotate : -1 };

                for (size_t j = 0; j < ELEMENTSOF(times); j++)
                        if (times[j] > t && times[j] < next)
                                next = times[j];
        }
        return isinf(next) ? NEVER : t0_mono + (int64_t) ceil(next * 1e9);
}

static int64_t next_deadline(void) {
        int64_t next = next_event();

        for (int fd = 0; fd <= max_timer_fd; fd++) {
                const VTimer *t = &timers[fd];
                int64_t at;

                if (!t->used || t->expiry == NEVER)
                        continue;
                /* On the simulation's time line; on a clock that runs at another rate the estimate
                 * is checked again when it comes. */
                at = t->expiry - timer_now(t);
                if (kclock_on && !t->server && at > 0)
                        at = kclock_true_span(&kclock, MIN(at, NEVER / 4));
                at = at > NEVER - v_mono ? NEVER : v_mono + at;
                next = MIN(next, MAX(at, v_mono + 1));
        }
        /* A leap second changes the clock: the daemon's clock-change watch wakes it then. */
        if (kclock_on && kclock_next_leap(&kclock) != INT64_MAX) {
                int64_t left = kclock_next_leap(&kclock) * NSEC_PER_SEC - kclock_realtime(&kclock, now_true());

                next = MIN(next, v_mono + MAX(kclock_true_span(&kclock, left), INT64_C(0)) + 1);
        }
        if (packets)
                next = MIN(next, packets->due);
        if (!ended)
                next = MIN(next, end_mono);
        return next;
}

static bool run_servers(void) {
        bool any = false;
        int r;

        in_server++;
        while ((r = sd_event_run(server_event, 0)) > 0)
                any = true;
        in_server--;
        if (r < 0) {
                fprintf(stderr, "sim: the servers' event loop failed: %s\n", strerror(-r));
                abort();
        }
        return any;
}

static void service(void) {
        for (;;) {
                bool any;

                fire_timers();
                any = deliver_packets();
                any = apply_events() || any;
                any = run_servers() || any;
                if (!any)
                        return;
        }
}

/* On *port, or on a free port if it is 0; *port is then the port. */
static int listen_on(int type, uint16_t *port) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(*port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof sa;
        int fd;

        fd = socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0 ||
            (type == SOCK_STREAM && listen(fd, SOMAXCONN) < 0) ||
            getsockname(fd, (struct sockaddr *) &sa, &len) < 0) {
                fprintf(stderr, "sim: cannot listen on loopback: %m\n");
                abort();
        }
        *port = ntohs(sa.sin_port);
        return fd;
}

static bool parse_window(const char *v, double *from, double *to) {
        return sscanf(v, "%lf-%lf", from, to) == 2 && *from >= 0 && *to > *from;
}

/* One server: "port=P" and any of offset=, freq=, delay=, jitter=, oneway=, expjitter=, asym=,
 * loss=, down=A-B, nak=A-B, rotate=, jump=T:S, hold=T:S, ntp_port=, cookie_key=, claim=; a
 * mistake aborts the run, loudly. */
static void parse_server(char *spec, SimServer *s) {
        char *save = NULL;

        *s = (SimServer) { .down_from = -1, .down_to = -1, .nak_from = -1, .nak_to = -1, .leap_from = -1, .leap_to = -1,
                           .last_request = -1 };
        s->jump_at = s->hold_at = -1;
        s->claim = -1;
        for (char *kv = strtok_r(spec, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
                char *v = strchr(kv, '=');
                bool ok = true;

                if (!v)
                        ok = false;
                else {
                        *v++ = '\0';
                        if (streq(kv, "port"))
                                s->port = (uint16_t) strtoul(v, NULL, 10);
                        else if (streq(kv, "ntp_port"))
                                s->ntp_port = (uint16_t) strtoul(v, NULL, 10);
                        else if (streq(kv, "claim"))
                                ok = sscanf(v, "%d", &s->claim) == 1 && s->claim >= 0 && s->claim < SIM_MAX_SERVERS;
                        else if (streq(kv, "cookie_key"))
                                ok = (s->cookie_key = strdup(v)) != NULL;
                        else if (streq(kv, "offset"))
                                s->offset = strtod(v, NULL);
                        else if (streq(kv, "freq"))
                                s->freq_ppm = strtod(v, NULL);
                        else if (streq(kv, "delay"))
                                s->delay = strtod(v, NULL);
                        else if (streq(kv, "jitter"))
                                s->jitter = strtod(v, NULL);
                        else if (streq(kv, "oneway"))
                                s->oneway = strtod(v, NULL);
                        else if (streq(kv, "expjitter"))
                                s->expjitter = strtod(v, NULL);
                        else if (streq(kv, "asym"))
                                s->asym = strtod(v, NULL);
                        else if (streq(kv, "loss"))
                                s->loss = strtod(v, NULL);
                        else if (streq(kv, "rotate"))
                                s->rotate = s->next_rotate = strtod(v, NULL);
                        else if (streq(kv, "down"))
                                ok = parse_window(v, &s->down_from, &s->down_to);
                        else if (streq(kv, "leap"))
                                ok = parse_window(v, &s->leap_from, &s->leap_to);
                        else if (streq(kv, "nak"))
                                ok = parse_window(v, &s->nak_from, &s->nak_to);
                        else if (streq(kv, "jump"))
                                ok = sscanf(v, "%lf:%lf", &s->jump_at, &s->jump) == 2 && s->jump_at >= 0;
                        else if (streq(kv, "hold"))
                                ok = sscanf(v, "%lf:%lf", &s->hold_at, &s->hold) == 2 && s->hold_at >= 0 && s->hold >= 0;
                        else
                                ok = false;
                }
                if (!ok) {
                        fprintf(stderr, "sim: bad server setting '%s' in SIM_SERVERS\n", kv);
                        abort();
                }
        }
        if (s->port == 0) {
                fprintf(stderr, "sim: a server in SIM_SERVERS has no port=\n");
                abort();
        }
}

static void servers_start(void) {
        const char *cert = getenv("SIM_CERT"), *key = getenv("SIM_KEY"), *list = getenv("SIM_SERVERS");
        char *copy, *save = NULL;
        int r;

        servers_up = true;
        if (!list)
                return;
        if (!cert || !key) {
                fprintf(stderr, "sim: SIM_SERVERS needs SIM_CERT and SIM_KEY\n");
                abort();
        }
        /* The mock server's own messages (one per key exchange) would drown the daemon's. */
        log_set_max_level(LOG_WARNING);

        in_server++;
        assert_se(sd_event_new(&server_event) >= 0);
        /* The context reads the ALPN behaviour at every handshake: it must outlive this call. */
        static const ServerALPN alpn = SERVER_ALPN_NTSKE;
        r = server_tls_ctx_new(&(ServerTLSOptions) { .cert_chain = cert, .key = key, .alpn = &alpn },
                               &server_tls);
        if (r < 0) {
                fprintf(stderr, "sim: cannot set up TLS with %s: %s\n", cert, strerror(-r));
                abort();
        }

        copy = strdup(list);
        assert_se(copy);
        for (char *spec = strtok_r(copy, ";", &save); spec; spec = strtok_r(NULL, ";", &save)) {
                SimServer *s;

                if (n_servers >= SIM_MAX_SERVERS) {
                        fprintf(stderr, "sim: more than %d servers\n", SIM_MAX_SERVERS);
                        abort();
                }
                s = &servers[n_servers++];
                parse_server(spec, s);
                s->m.event = server_event;
                s->m.tls = server_tls;
                s->m.alpn = SERVER_ALPN_NTSKE;
                s->m.aead[s->m.n_aead++] = NTS_AEAD_AES_SIV_CMAC_256;
                s->m.ke_fd = listen_on(SOCK_STREAM, &s->ke_port);
                s->m.ntp_fd = listen_on(SOCK_DGRAM, &s->ntp_port);
                s->m.ntp_port = s->ntp_port;
                s->m.plain_ntp = true;
                if (mock_cookie_key_load(s->cookie_key, &s->m.key) < 0 ||
                    mock_ke_listen(&s->m, s->m.ke_fd) < 0 ||
                    mock_ntp_listen(&s->m, s->m.ntp_fd) < 0) {
                        fprintf(stderr, "sim: cannot start server %zu\n", n_servers - 1);
                        abort();
                }
                sim_record("server %zu port=%u offset=%+.6f freq=%+.3f delay=%.6f jitter=%.6f loss=%.3f "
                           "oneway=%.6f expjitter=%.6f asym=%.6f", n_servers - 1, s->port, s->offset, s->freq_ppm,
                           s->delay, s->jitter, s->loss, s->oneway, s->expjitter, s->asym);
        }
        free(copy);
        /* Once every server listens: a claim names another's port. */
        for (size_t i = 0; i < n_servers; i++)
                if (servers[i].claim >= 0) {
                        if ((size_t) servers[i].claim >= n_servers) {
                                fprintf(stderr, "sim: server %zu claims server %d, which is not listed\n", i,
                                        servers[i].claim);
                                abort();
                        }
                        servers[i].m.ntp_port = servers[servers[i].claim].ntp_port;
                }
        in_server--;
}

/* Whether CAP_SYS_TIME is in any of this process's capability sets, as the kernel says. */
static const char *has_cap_sys_time(void) {
        char line[256];
        FILE *f = fopen("/proc/self/status", "re");
        bool has = false, read_any = false;

        if (!f)
                return "unknown";
        while (fgets(line, sizeof line, f)) {
                unsigned long long v;

                if ((sscanf(line, "CapPrm: %llx", &v) == 1 || sscanf(line, "CapEff: %llx", &v) == 1 ||
                     sscanf(line, "CapBnd: %llx", &v) == 1)) {
                        read_any = true;
                        has = has || (v >> CAP_SYS_TIME) & 1;
                }
        }
        fclose(f);
        return !read_any ? "unknown" : has ? "yes" : "no";
}

static void sim_end(void) {
        ended = true;
        for (size_t i = 0; i < n_servers; i++) {
                const SimServer *s = &servers[i];

                sim_record("server %zu requests=%u dropped=%u ke_connects=%u ke_sessions=%u answered=%u naks=%u "
                           "key_changes=%u plain=%u", i, s->n_requests, s->n_dropped, s->n_ke_connects,
                           s->m.n_ke_sessions, s->m.n_ntp_requests, s->m.n_ntp_naks, s->n_rotations,
                           s->m.n_ntp_plain);
        }
        if (kclock_on)
                sim_record("end drift_error=%+.9f clock_writes=%u cap_sys_time=%s kclock_offset=%+.9f kclock_freq=%+.6f "
                           "kclock_state=%s cap_sys_time_pretended=%s",
                           drift_error / 1e9, n_clock_writes, has_cap_sys_time(), kclock_offset(&kclock),
                           kclock_freq_ppm(&kclock), kclock_state_name(&kclock), cap_sys_time_pretended ? "yes" : "no");
        else
                sim_record("end drift_error=%+.9f clock_writes=%u cap_sys_time=%s",
                           drift_error / 1e9, n_clock_writes, has_cap_sys_time());
        (void) kill(getpid(), SIGTERM);
}

/* Whether a resolver thread is still working; then the daemon's epoll is waited on in real
 * time until its answer arrives. */
static bool threads_busy(void) {
        return atomic_load(&threads_started) != atomic_load(&threads_notified) ||
               atomic_load(&queries_pending) > 0;
}

static int sim_epoll_run(int epfd, struct epoll_event *ev, int n, int64_t timeout, const sigset_t *mask) {
        static unsigned tcp_waits;
        int64_t until;

        until = timeout < 0 ? NEVER : v_mono + timeout;
        for (;;) {
                int64_t next;
                int r;

                service();
                r = real_epoll_pwait(epfd, ev, n, 0, mask);
                if (r != 0 || v_mono >= until)
                        return r;
                if (threads_busy()) {
                        /* A millisecond at a time: the thread counts itself done only after
                         * its send(), which may already have woken this loop. */
                        r = real_epoll_pwait(epfd, ev, n, 1, mask);
                        if (r != 0)
                                return r;
                        continue;
                }
                if (tcp_in_flight()) {
                        if (++tcp_waits <= 2000) {
                                r = real_epoll_pwait(epfd, ev, n, 1, mask);
                                if (r != 0)
                                        return r;
                                continue;
                        }
                        if (tcp_waits == 2001)
                                fprintf(stderr, "sim: key exchange data still unacknowledged after 2 s, time goes on\n");
                } else
                        tcp_waits = 0;
                next = MIN(next_deadline(), until);
                if (next >= end_mono && !ended) {
                        advance_to(end_mono);
                        sim_end();
                        continue;
                }
                if (next == NEVER)
                        /* After the end nothing is left to simulate: the daemon is told to
                         * stop, and waited for in real time. */
                        return real_epoll_pwait(epfd, ev, n, 1000, mask);
                /* Time goes on after the end too, should the daemon wait for a timer as it
                 * stops. */
                advance_to(next);
        }
}

/* The daemon's log has no times of its own: whatever it writes from here on happens at this
 * moment of simulated time, until its next wait. */
static void mark_time(void) {
        if (v_mono == marked_mono)
                return;
        marked_mono = v_mono;
        fprintf(stderr, "sim: at %.6f s\n", elapsed());
}

static int sim_epoll(int epfd, struct epoll_event *ev, int n, int64_t timeout, const sigset_t *mask) {
        int r;

        if (!sim_on || in_server)
                return real_epoll_pwait(epfd, ev, n, timeout < 0 ? -1 : (int) ((timeout + 999999) / 1000000), mask);
        if (!servers_up)
                servers_start();

        r = sim_epoll_run(epfd, ev, n, timeout, mask);
        mark_time();
        return r;
}

SIM_EXPORT int epoll_wait(int epfd, struct epoll_event *ev, int n, int timeout) {
        return sim_epoll(epfd, ev, n, timeout < 0 ? -1 : (int64_t) timeout * 1000000, NULL);
}

SIM_EXPORT int epoll_pwait(int epfd, struct epoll_event *ev, int n, int timeout, const sigset_t *mask) {
        return sim_epoll(epfd, ev, n, timeout < 0 ? -1 : (int64_t) timeout * 1000000, mask);
}

SIM_EXPORT int epoll_pwait2(int epfd, struct epoll_event *ev, int n, const struct timespec *t, const sigset_t *mask) {
        return sim_epoll(epfd, ev, n, t ? ts_to_ns(t) : -1, mask);
}

SIM_EXPORT int clock_gettime(clockid_t c, struct timespec *ts) {
        if (!sim_on || !clock_virtual(c))
                return real_clock_gettime(c, ts);
        *ts = ns_to_ts(clock_now(c));
        return 0;
}

SIM_EXPORT int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
        struct timespec ts;

        if (tz)
                memset(tz, 0, sizeof(struct timezone));
        assert_se(clock_gettime(CLOCK_REALTIME, &ts) == 0);
        *tv = (struct timeval) { .tv_sec = ts.tv_sec, .tv_usec = ts.tv_nsec / 1000 };
        return 0;
}

SIM_EXPORT time_t time(time_t *ret) {
        struct timespec ts;

        assert_se(clock_gettime(CLOCK_REALTIME, &ts) == 0);
        if (ret)
                *ret = ts.tv_sec;
        return ts.tv_sec;
}

SIM_EXPORT int timerfd_create(clockid_t c, int flags) {
        int fd;

        if (!sim_on || !clock_virtual(c))
                return real_timerfd_create(c, flags);
        /* Always non-blocking: nothing here could wake a blocking read() in virtual time. */
        fd = eventfd(0, EFD_NONBLOCK | (flags & TFD_CLOEXEC ? EFD_CLOEXEC : 0));
        if (fd < 0)
                return -1;
        if (fd >= SIM_MAX_FD) {
                (void) real_close(fd);
                errno = EMFILE;
                return -1;
        }
        timers[fd] = (VTimer) { .used = true, .server = in_server > 0, .clock = c, .expiry = NEVER };
        max_timer_fd = MAX(max_timer_fd, fd);
        return fd;
}

static void timer_drain(int fd) {
        uint64_t v;

        (void) read(fd, &v, sizeof v);
}

static struct itimerspec timer_get(const VTimer *t) {
        struct itimerspec its = { .it_interval = ns_to_ts(t->interval) };

        if (t->expiry != NEVER)
                its.it_value = ns_to_ts(MAX(t->expiry - clock_now(t->clock), INT64_C(1)));
        return its;
}

SIM_EXPORT int timerfd_settime(int fd, int flags, const struct itimerspec *new, struct itimerspec *old) {
        VTimer *t;
        int64_t value;

        if (fd < 0 || fd >= SIM_MAX_FD || !timers[fd].used)
                return real_timerfd_settime(fd, flags, new, old);
        if (!new) {
                errno = EFAULT;
                return -1;
        }
        t = &timers[fd];
        if (old)
                *old = timer_get(t);
        timer_drain(fd);
        value = ts_to_ns(&new->it_value);
        t->interval = ts_to_ns(&new->it_interval);
        /* Armed, even for the largest time (which never expires). */
        t->cancel_on_set = (flags & TFD_TIMER_CANCEL_ON_SET) && (flags & TFD_TIMER_ABSTIME) && value != 0 &&
                           (t->clock == CLOCK_REALTIME || t->clock == CLOCK_REALTIME_ALARM);
        if (value == 0 || value == NEVER)
                t->expiry = NEVER;
        else if (flags & TFD_TIMER_ABSTIME)
                t->expiry = value;
        else
                t->expiry = clock_now(t->clock) + MIN(value, NEVER / 2);
        return 0;
}

SIM_EXPORT int timerfd_gettime(int fd, struct itimerspec *cur) {
        if (fd < 0 || fd >= SIM_MAX_FD || !timers[fd].used)
                return real_timerfd_gettime(fd, cur);
        if (!cur) {
                errno = EFAULT;
                return -1;
        }
        *cur = timer_get(&timers[fd]);
        return 0;
}

SIM_EXPORT int close(int fd) {
        sim_symbols();
        if (fd >= 0 && fd < SIM_MAX_FD) {
                timers[fd] = (VTimer) {};
                fd_ke[fd] = false;
                if (fd_server[fd] || fd_plain[fd]) {
                        /* Its packets in flight die with it, as a socket's would. */
                        for (Packet **p = &packets; *p;)
                                if (!(*p)->from_server && (*p)->fd == fd) {
                                        Packet *dead = *p;

                                        *p = dead->next;
                                        free(dead);
                                } else
                                        p = &(*p)->next;
                        fd_server[fd] = 0;
                        fd_plain[fd] = false;
                }
        }
        return real_close(fd);
}

/* A KE connection to a server of the scenario goes to where it listens, or is refused while it
 * is down; a UDP socket connected to a server's NTP port is remembered for send(). */
SIM_EXPORT int connect(int fd, const struct sockaddr *sa, socklen_t len) {
        const struct sockaddr_in *in = (const struct sockaddr_in *) sa;
        struct sockaddr_in to;
        int type = 0;
        socklen_t tl = sizeof type;

        if (!sim_on || !sa || sa->sa_family != AF_INET || len < sizeof *in ||
            in->sin_addr.s_addr != htonl(INADDR_LOOPBACK) || fd < 0 || fd >= SIM_MAX_FD ||
            getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0)
                return real_connect(fd, sa, len);

        if (type == SOCK_STREAM) {
                SimServer *s = server_of_port(ntohs(in->sin_port));

                if (!s)
                        return real_connect(fd, sa, len);
                s->n_ke_connects++;
                sim_record("ke-connect server %zu%s", (size_t) (s - servers), s->down ? " refused" : "");
                if (s->down) {
                        errno = ECONNREFUSED;
                        return -1;
                }
                to = *in;
                to.sin_port = htons(s->ke_port);
                fd_ke[fd] = true;
                return real_connect(fd, (struct sockaddr *) &to, sizeof to);
        }

        fd_server[fd] = 0;
        for (size_t i = 0; i < n_servers; i++)
                if (servers[i].ntp_port == ntohs(in->sin_port))
                        fd_server[fd] = (int8_t) (i + 1);
        return real_connect(fd, sa, len);
}

/* The servers' end of a key exchange connection. */
SIM_EXPORT int accept4(int fd, struct sockaddr *sa, socklen_t *len, int flags) {
        int r = real_accept4(fd, sa, len, flags);

        if (r >= 0 && r < SIM_MAX_FD && sim_on && in_server)
                fd_ke[r] = true;
        return r;
}

/* The daemon's request to server s: counted, recorded, then lost or on its way. TO: where a
 * plain request goes (NULL: the socket is connected to the server). */
static ssize_t request_send(int fd, SimServer *s, const void *buf, size_t len, const struct sockaddr *to, socklen_t to_len) {
        double t = elapsed();

        s->n_requests++;
        sim_record("request server %zu interval=%.3f", (size_t) (s - servers),
                   s->last_request < 0 ? 0.0 : t - s->last_request);
        s->last_request = t;
        if (s->down || prng_uniform() < s->loss) {
                s->n_dropped++;
                return (ssize_t) len;
        }
        packet_queue(fd, (int) (s - servers), false, buf, len, to, to_len, packet_delay(s, false));
        return (ssize_t) len;
}

static bool socketpair_datagram(int fd) {
        int domain = 0, type = 0;
        socklen_t l = sizeof domain, tl = sizeof type;
        struct sockaddr_storage peer;
        socklen_t pl = sizeof peer;

        return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &l) == 0 && domain == AF_UNIX &&
               getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 && type == SOCK_DGRAM &&
               getpeername(fd, (struct sockaddr *) &peer, &pl) == 0 && pl <= sizeof(sa_family_t);
}

static void resolver_query_sent(int fd) {
        if (sim_on && !sim_thread && atomic_load(&threads_started) > 0 && socketpair_datagram(fd))
                atomic_fetch_add(&queries_pending, 1);
}

SIM_EXPORT ssize_t sendmsg(int fd, const struct msghdr *mh, int flags) {
        resolver_query_sent(fd);
        return real_sendmsg(fd, mh, flags);
}

/* A thread of the simulated process that waits for work: see worker_state. */
SIM_EXPORT ssize_t recv(int fd, void *buf, size_t len, int flags) {
        ssize_t l;

        if (sim_on && sim_thread) {
                if (resolver_thread) {
                        resolver_thread = false;
                        atomic_fetch_add(&threads_notified, 1);
                } else if (worker_state == WORKER_WORKING && atomic_load(&queries_pending) > 0)
                        atomic_fetch_sub(&queries_pending, 1);
                worker_state = WORKER_IDLE;
        }
        l = real_recv(fd, buf, len, flags);
        if (sim_on && sim_thread && l > 0)
                worker_state = WORKER_WORKING;
        return l;
}

SIM_EXPORT ssize_t send(int fd, const void *buf, size_t len, int flags) {
        SimServer *s;

        if (resolver_thread) {
                ssize_t l = real_send(fd, buf, len, flags);

                /* The answer is in the socket before the main thread counts it as arrived. */
                resolver_thread = false;
                atomic_fetch_add(&threads_notified, 1);
                return l;
        }
        resolver_query_sent(fd);
        if (!sim_on || fd < 0 || fd >= SIM_MAX_FD || !fd_server[fd])
                return real_send(fd, buf, len, flags);

        s = &servers[fd_server[fd] - 1];
        return request_send(fd, s, buf, len, NULL, 0);
}

/* The NTP side of server i, for a plain NTP request sent to it with sendto(). */
static struct sockaddr_in server_ntp_address(size_t i) {
        return (struct sockaddr_in) { .sin_family = AF_INET, .sin_port = htons(servers[i].ntp_port),
                                      .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
}

/* Where a client without NTS (the stock daemon, which cannot name a port) sends plain NTP:
 * 127.0.0.(i+1):123 is server i. */
static struct sockaddr_in plain_server_address(size_t i) {
        return (struct sockaddr_in) { .sin_family = AF_INET, .sin_port = htons(123),
                                      .sin_addr.s_addr = htonl(INADDR_LOOPBACK + (uint32_t) i) };
}

static bool plain_server_of(const struct sockaddr *sa, socklen_t len, size_t *ret) {
        const struct sockaddr_in *in = (const struct sockaddr_in *) sa;

        if (!sa || sa->sa_family != AF_INET || len < sizeof *in || in->sin_port != htons(123))
                return false;
        for (size_t i = 0; i < n_servers; i++)
                if (in->sin_addr.s_addr == plain_server_address(i).sin_addr.s_addr) {
                        *ret = i;
                        return true;
                }
        return false;
}

SIM_EXPORT ssize_t sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *dst, socklen_t dst_len) {
        size_t i;

        if (sim_on && !in_server && fd >= 0 && fd < SIM_MAX_FD && plain_server_of(dst, dst_len, &i)) {
                struct sockaddr_in to = server_ntp_address(i);

                fd_plain[fd] = true;
                return request_send(fd, &servers[i], buf, len, (struct sockaddr *) &to, sizeof to);
        }
        if (!sim_on || !in_server || !server_ntp_fd(fd, &i))
                return real_sendto(fd, buf, len, flags, dst, dst_len);
        sim_record("reply server %zu", i);
        packet_queue(fd, (int) i, true, buf, len, dst, dst_len, packet_delay(&servers[i], true));
        return (ssize_t) len;
}

/* Receive timestamps are the kernel's, in real time: they become virtual. */
SIM_EXPORT ssize_t recvmsg(int fd, struct msghdr *mh, int flags) {
        ssize_t l = real_recvmsg(fd, mh, flags);

        if (l < 0 || !sim_on)
                return l;
        /* A plain answer comes from where the request went. */
        if (fd >= 0 && fd < SIM_MAX_FD && fd_plain[fd] && mh->msg_name && mh->msg_namelen >= sizeof(struct sockaddr_in))
                for (size_t i = 0; i < n_servers; i++) {
                        struct sockaddr_in from = server_ntp_address(i);

                        if (memcmp(mh->msg_name, &from, sizeof from) == 0) {
                                from = plain_server_address(i);
                                memcpy(mh->msg_name, &from, sizeof from);
                        }
                }
        if (!mh->msg_control)
                return l;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
                if (c->cmsg_level != SOL_SOCKET)
                        continue;
                if (c->cmsg_type == SCM_TIMESTAMPNS && c->cmsg_len >= CMSG_LEN(sizeof(struct timespec))) {
                        struct timespec ts = ns_to_ts(now_realtime());
                        memcpy(CMSG_DATA(c), &ts, sizeof ts);
                } else if (c->cmsg_type == SCM_TIMESTAMP && c->cmsg_len >= CMSG_LEN(sizeof(struct timeval))) {
                        struct timespec ts = ns_to_ts(now_realtime());
                        struct timeval tv = { .tv_sec = ts.tv_sec, .tv_usec = ts.tv_nsec / 1000 };
                        memcpy(CMSG_DATA(c), &tv, sizeof tv);
                }
        }
        return l;
}

typedef struct ThreadStart {
        void *(*routine)(void *);
        void *arg;
} ThreadStart;

static void *thread_trampoline(void *p) {
        ThreadStart start = *(ThreadStart *) p;
        void *r;

        free(p);
        sim_thread = true;
        resolver_thread = true;
        r = start.routine(start.arg);
        if (resolver_thread) {
                resolver_thread = false;
                atomic_fetch_add(&threads_notified, 1);
        }
        return r;
}

SIM_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*routine)(void *), void *arg) {
        ThreadStart *start;
        int r;

        if (!sim_on)
                return real_pthread_create(thread, attr, routine, arg);
        start = malloc(sizeof *start);
        if (!start)
                return ENOMEM;
        *start = (ThreadStart) { .routine = routine, .arg = arg };
        atomic_fetch_add(&threads_started, 1);
        r = real_pthread_create(thread, attr, thread_trampoline, start);
        if (r != 0) {
                free(start);
                atomic_fetch_add(&threads_notified, 1);
        }
        return r;
}

/* The daemon's random choices (jitter, nonces) follow the seed; TLS keys do too, which is
 * harmless for a test and keeps one seed one run. */
SIM_EXPORT ssize_t getrandom(void *buf, size_t n, unsigned flags) {
        uint8_t *p = buf;

        (void) flags;
        if (!sim_on)
                return (ssize_t) real_syscall(SYS_getrandom, buf, n, flags);
        for (size_t i = 0; i < n; i += 8) {
                uint64_t v = splitmix64(&prng_random);
                memcpy(p + i, &v, MIN(n - i, sizeof v));
        }
        return (ssize_t) n;
}

/* The tripwire: a clock write that would reach the kernel (from a daemon in observe mode, or
 * one the model does not answer) is a bug. Refused, whatever the process's capabilities, and
 * counted for the end line. */
static int clock_write_refused(const char *call) {
        n_clock_writes++;
        sim_record("clock-write %s refused", call);
        fprintf(stderr, "sim: %s() would change the clock, refused\n", call);
        errno = EPERM;
        return -1;
}

/* Reading the kernel's clock state (modes 0, or adjtime()'s read) changes nothing. */
static bool timex_reads_only(const struct timex *t) {
        return t && (t->modes == 0 || t->modes == ADJ_OFFSET_SS_READ);
}

/* Under the kernel model every clock call, a read too, is the model's: the daemon never meets
 * the real kernel's clock. What a call changed goes to the record: "step DELTA offset=OFFSET"
 * (OFFSET: CLOCK_REALTIME minus true time after it), "slew OFFSET tc=TC", "frequency PPM",
 * "adjtime OFFSET" (seconds, ppm). */
static int kclock_call(const char *call, struct timex *t) {
        unsigned modes;
        double before;
        int r;

        if (!t) {
                errno = EFAULT;
                return -1;
        }
        modes = t->modes;
        before = kclock_offset(&kclock);
        r = kclock_adjtimex(&kclock, now_true(), t);
        if (r < 0) {
                sim_record("%s modes=0x%x failed: %s", call, modes, strerror(-r));
                errno = -r;
                return -1;
        }
        if ((modes & ADJ_OFFSET_SINGLESHOT) == ADJ_OFFSET_SINGLESHOT) {
                if (modes != ADJ_OFFSET_SS_READ)
                        sim_record("adjtime %+.6f", (double) t->offset / 1e6);
        } else {
                if (modes & ADJ_SETOFFSET)
                        sim_record("step %+.6f offset=%+.6f", kclock_offset(&kclock) - before, kclock_offset(&kclock));
                if ((modes & ADJ_OFFSET) && (t->status & STA_PLL))
                        sim_record("slew %+.6f tc=%ld", kclock_phase(&kclock), t->constant);
                if (modes & ADJ_FREQUENCY)
                        sim_record("frequency %+.6f", kclock_freq_ppm(&kclock));
        }
        timers_clock_was_set();
        return r;
}

static int kclock_set(const char *call, int64_t ns) {
        double before = kclock_offset(&kclock);
        int r = kclock_settime(&kclock, now_true(), ns);

        if (r < 0) {
                errno = -r;
                return -1;
        }
        sim_record("step %+.6f offset=%+.6f by=%s", kclock_offset(&kclock) - before, kclock_offset(&kclock), call);
        timers_clock_was_set();
        return 0;
}

SIM_EXPORT int adjtimex(struct timex *t) {
        if (sim_on && kclock_on)
                return kclock_call("adjtimex", t);
        if (timex_reads_only(t))
                return (int) real_syscall(SYS_adjtimex, t);
        return clock_write_refused("adjtimex");
}

SIM_EXPORT int ntp_adjtime(struct timex *t) {
        if (sim_on && kclock_on)
                return kclock_call("ntp_adjtime", t);
        if (timex_reads_only(t))
                return (int) real_syscall(SYS_adjtimex, t);
        return clock_write_refused("ntp_adjtime");
}

SIM_EXPORT int clock_adjtime(clockid_t c, struct timex *t) {
        if (sim_on && kclock_on) {
                /* Only CLOCK_REALTIME has a discipline (dynamic clocks, PTP, are not simulated). */
                if (c != CLOCK_REALTIME) {
                        errno = EOPNOTSUPP;
                        return -1;
                }
                return kclock_call("clock_adjtime", t);
        }
        if (timex_reads_only(t))
                return (int) real_syscall(SYS_clock_adjtime, c, t);
        return clock_write_refused("clock_adjtime");
}

/* glibc's adjtime(): the singleshot form of adjtimex() in µs. */
SIM_EXPORT int adjtime(const struct timeval *delta, struct timeval *old) {
        struct timex t = { .modes = delta ? ADJ_OFFSET_SINGLESHOT : ADJ_OFFSET_SS_READ };
        int r;

        if (!sim_on || !kclock_on) {
                if (delta)
                        return clock_write_refused("adjtime");
                r = (int) real_syscall(SYS_adjtimex, &t);
        } else {
                if (delta) {
                        if (delta->tv_sec > LONG_MAX / 1000000 - 1 || delta->tv_sec < LONG_MIN / 1000000 + 1) {
                                errno = EINVAL;
                                return -1;
                        }
                        t.offset = delta->tv_sec * 1000000 + delta->tv_usec;
                }
                r = kclock_call("adjtime", &t);
        }
        if (r < 0)
                return -1;
        if (old)
                *old = (struct timeval) { .tv_sec = t.offset / 1000000, .tv_usec = t.offset % 1000000 };
        return 0;
}

SIM_EXPORT int clock_settime(clockid_t c, const struct timespec *ts) {
        if (sim_on && kclock_on) {
                if (c != CLOCK_REALTIME || ts->tv_nsec < 0 || ts->tv_nsec >= NSEC_PER_SEC) {
                        errno = EINVAL;
                        return -1;
                }
                return kclock_set("clock_settime", ts_to_ns(ts));
        }
        return clock_write_refused("clock_settime");
}

SIM_EXPORT int settimeofday(const struct timeval *tv, const struct timezone *tz) {
        /* The time zone of settimeofday() is not modelled: it stays a tripwire. */
        if (sim_on && kclock_on && tv && !tz) {
                if (tv->tv_usec < 0 || tv->tv_usec >= 1000000) {
                        errno = EINVAL;
                        return -1;
                }
                return kclock_set("settimeofday", (int64_t) tv->tv_sec * NSEC_PER_SEC + tv->tv_usec * 1000);
        }
        return clock_write_refused("settimeofday");
}

/* The privilege drop of a daemon that may set the clock (timesyncd.c's drop_privileges()) keeps
 * CAP_SYS_TIME in its permitted and effective sets. Under the kernel model the process never
 * had it (sim.sh starts it without, and the end line says so): the request is made without
 * CAP_SYS_TIME, which drops everything else as asked, and the daemon is told it succeeded. */
static int sim_capset(cap_user_header_t h, const cap_user_data_t d) {
        struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
        unsigned i = CAP_TO_INDEX(CAP_SYS_TIME);
        uint32_t bit = CAP_TO_MASK(CAP_SYS_TIME);

        if (!sim_on || !kclock_on || !h || !d || h->version != _LINUX_CAPABILITY_VERSION_3 ||
            !((d[i].permitted | d[i].effective | d[i].inheritable) & bit))
                return (int) real_syscall(SYS_capset, h, d);
        memcpy(data, d, sizeof data);
        data[i].permitted &= ~bit;
        data[i].effective &= ~bit;
        data[i].inheritable &= ~bit;
        if (real_syscall(SYS_capset, h, data) < 0)
                return -1;
        cap_sys_time_pretended = true;
        sim_record("capset CAP_SYS_TIME kept in pretence, dropped in fact");
        return 0;
}

/* glibc's system call wrapper (no header declares it). */
int capset(cap_user_header_t h, const cap_user_data_t d);
SIM_EXPORT int capset(cap_user_header_t h, const cap_user_data_t d) {
        return sim_capset(h, d);
}

/* Raw system calls: clock changes meet the tripwire; the event loop's epoll_pwait2() and clock
 * reads are simulated like the library calls. */
SIM_EXPORT long syscall(long nr, ...) {
        long a[6];
        va_list ap;

        sim_symbols();
        va_start(ap, nr);
        for (size_t i = 0; i < ELEMENTSOF(a); i++)
                a[i] = va_arg(ap, long);
        va_end(ap);

        switch (nr) {
        case SYS_adjtimex:
                return adjtimex((struct timex *) a[0]);
        case SYS_clock_adjtime:
                return clock_adjtime((clockid_t) a[0], (struct timex *) a[1]);
        case SYS_clock_settime:
                return clock_settime((clockid_t) a[0], (const struct timespec *) a[1]);
        case SYS_settimeofday:
                return settimeofday((const struct timeval *) a[0], (const struct timezone *) a[1]);
        case SYS_capset:
                return sim_capset((cap_user_header_t) a[0], (const cap_user_data_t) a[1]);
        case SYS_clock_gettime:
                return clock_gettime((clockid_t) a[0], (struct timespec *) a[1]);
        case SYS_epoll_pwait2:
                return epoll_pwait2((int) a[0], (struct epoll_event *) a[1], (int) a[2],
                                    (const struct timespec *) a[3], (const sigset_t *) a[4]);
        case SYS_getrandom:
                return getrandom((void *) a[0], (size_t) a[1], (unsigned) a[2]);
        }
        return real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
