/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* A fleet of NTS clients against one key-exchange pool, in simulated time: no network, no
 * daemon, a fake clock driven by a priority queue of the clients' next key exchanges. Each
 * client takes its retry, renewal and cap decisions either from timesyncd-backoff.c (the
 * jittered schedule) or from the deterministic schedule the daemon had before it (30 s
 * doubling up to 1 h; keys renewed at the first poll 7 days after the last exchange); the pool
 * counts the key exchanges that reach it per second.
 *
 * The story (docs/POOLS.md, "A fleet against one pool"):
 *   t = 0       power returns to a data centre: N machines boot within --boot-spread seconds,
 *               without keys; the pool stays unreachable for the first --outage seconds;
 *   days 6-8    the weekly renewal of the keys from that recovery;
 *   day 10      the fleet restarts (a data centre reboot) within --boot-spread seconds, warm
 *               (the state files with keys and cookies kept) or cold (state lost);
 *   day 15      the end.
 * The pool serves at most --capacity key exchanges per second and answers the others with an
 * Error record 2 (internal server error): a failure with backoff for the client.
 *
 * It runs each case, prints the figures as a Markdown table and checks them: with the jitter,
 * the peak after the recovery and the peak of the renewal fall by at least 10, and a warm
 * restart costs the pool less than 1 % of the key exchanges of a cold one. --data PREFIX also
 * writes the series that test/simulation/plot-sim-pool.sh plots. */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "string-util.h"
#include "tests.h"
#include "time-util.h"
#include "timesyncd-backoff.h"
#include "timesyncd-nts-jar.h"

#define NO_KEYS USEC_INFINITY
/* What the daemon used before the jitter, and still uses as floor and top of the ladder. */
#define RETRY_FLOOR_USEC (30 * USEC_PER_SEC)    /* ConnectionRetrySec= default */
/* The deterministic schedule renewed keys at the first request after NTS_JAR_MAX_AGE_USEC;
 * the phase of a client's polls is taken as uniform over the longest poll interval (2048 s,
 * PollIntervalMaxSec=), which spreads that wave more than a fleet polling in step would. */
#define POLL_MAX_USEC (2048 * USEC_PER_SEC)

#define DAY_SEC (24U * 3600U)
#define RESTART_SEC (10U * DAY_SEC)
#define HORIZON_SEC (15U * DAY_SEC)
#define RECOVERY_END_SEC (6U * DAY_SEC)         /* no renewal comes before this */

typedef enum Schedule {
        SCHEDULE_FIXED,                 /* the deterministic ladder and renewal */
        SCHEDULE_JITTER,                /* timesyncd-backoff.c */
        _SCHEDULE_MAX,
} Schedule;

typedef struct Params {
        unsigned n_clients;
        unsigned boot_spread_sec;
        unsigned outage_sec;
        unsigned capacity;              /* key exchanges per second; 0: no limit */
        uint64_t seed;
} Params;

typedef struct Client {
        usec_t ke_time;                 /* of the keys held; NO_KEYS: none */
        usec_t next;                    /* the next key exchange */
        unsigned failures;              /* in a row, of the deterministic schedule */
        BackoffLadder ladder;           /* the same for the jittered one */
        BackoffLimit limit;             /* of key exchanges with the pool name */
} Client;

typedef struct Run {
        const Params *p;
        Schedule schedule;
        bool warm;                      /* the restart on day 10 keeps the state files */

        Client *clients;
        uint32_t *heap;                 /* client indices, by their next key exchange */
        size_t n_heap;
        uint64_t random;                /* the clients' random source (splitmix64 state) */

        uint32_t *attempts;             /* key exchanges reaching the pool, per second */
        uint64_t second;                /* the second the pool is serving */
        unsigned served;                /* in that second */

        unsigned n_keyed;               /* clients holding keys */
        usec_t *first_keys;             /* per client: when it first got keys after the boot */
        uint64_t n_limited;             /* key exchanges the cap postponed */
        usec_t oldest_keys;             /* the largest age of keys at their renewal */
} Run;

typedef struct Figures {
        unsigned boot_peak, recovery_peak, restart_peak;        /* the largest second */
        double renewal_peak;            /* the largest minute, per second: at about one key
                                         * exchange per second the largest second measures
                                         * Poisson noise more than the schedule */
        uint64_t restart_kes, total;
        double recovery_mean;           /* per second, in the hour after the outage */
        double mean;                    /* per second, over the 15 days */
        double keyed_median, keyed_p99, keyed_all;      /* minutes after the outage by which
                                                         * that many clients had keys */
} Figures;

static uint64_t next_random(void *userdata) {
        return test_random_u64(userdata);
}

static bool earlier(const Run *r, size_t a, size_t b) {
        const Client *x = &r->clients[r->heap[a]], *y = &r->clients[r->heap[b]];

        /* Ties by index: the same order on every run. */
        return x->next < y->next || (x->next == y->next && r->heap[a] < r->heap[b]);
}

static void heap_swap(Run *r, size_t a, size_t b) {
        uint32_t t = r->heap[a];

        r->heap[a] = r->heap[b];
        r->heap[b] = t;
}

static void heap_push(Run *r, uint32_t c) {
        size_t i = r->n_heap++;

        r->heap[i] = c;
        for (; i > 0 && earlier(r, i, (i - 1) / 2); i = (i - 1) / 2)
                heap_swap(r, i, (i - 1) / 2);
}

static uint32_t heap_pop(Run *r) {
        uint32_t top = r->heap[0];
        size_t i = 0;

        r->heap[0] = r->heap[--r->n_heap];
        for (;;) {
                size_t l = 2 * i + 1, m = i;

                if (l < r->n_heap && earlier(r, l, m))
                        m = l;
                if (l + 1 < r->n_heap && earlier(r, l + 1, m))
                        m = l + 1;
                if (m == i)
                        return top;
                heap_swap(r, i, m);
                i = m;
        }
}

static usec_t uniform_sec(Run *r, unsigned spread_sec) {
        return spread_sec == 0 ? 0 : test_random_u64(&r->random) % ((usec_t) spread_sec * USEC_PER_SEC);
}

static usec_t renewal(Run *r, usec_t ke_time, usec_t now) {
        if (r->schedule == SCHEDULE_FIXED)
                return ke_time + NTS_JAR_MAX_AGE_USEC + uniform_sec(r, POLL_MAX_USEC / USEC_PER_SEC);
        return backoff_renewal_time(ke_time, now, NTS_JAR_MAX_AGE_USEC, BACKOFF_RENEW_WINDOW_USEC,
                                    next_random, &r->random);
}

static usec_t retry_delay(Run *r, Client *c, usec_t now) {
        usec_t d = RETRY_FLOOR_USEC;

        if (r->schedule == SCHEDULE_JITTER)
                /* The pool's answer to an overload is an Error record 2; an outage is no
                 * answer at all: both are BACKOFF_KE_FAILED. */
                return backoff_ke_failed(&c->ladder, BACKOFF_KE_FAILED, now, RETRY_FLOOR_USEC,
                                         BACKOFF_KE_MAX_USEC, next_random, &r->random);

        c->failures++;
        for (unsigned i = 1; i < c->failures && d < BACKOFF_KE_MAX_USEC; i++)
                d *= 2;
        return MIN(d, BACKOFF_KE_MAX_USEC);
}

/* The pool's side: unreachable during the outage, then at most capacity per second. */
static bool pool_serves(Run *r, usec_t t) {
        uint64_t sec = t / USEC_PER_SEC;

        r->attempts[sec]++;
        if (t < (usec_t) r->p->outage_sec * USEC_PER_SEC)
                return false;
        if (sec != r->second) {
                r->second = sec;
                r->served = 0;
        }
        if (r->p->capacity > 0 && r->served >= r->p->capacity)
                return false;
        r->served++;
        return true;
}

static void key_exchange(Run *r, uint32_t i) {
        Client *c = &r->clients[i];
        usec_t t = c->next, until;
        bool first;

        if (r->schedule == SCHEDULE_JITTER && !backoff_limit_take(&c->limit, t, &until, &first)) {
                r->n_limited++;
                c->next = until;
                heap_push(r, i);
                return;
        }

        if (!pool_serves(r, t)) {
                if (c->ke_time != NO_KEYS && t >= c->ke_time + NTS_JAR_MAX_AGE_USEC) {
                        c->ke_time = NO_KEYS;
                        r->n_keyed--;
                }
                c->next = t + retry_delay(r, c, t);
                heap_push(r, i);
                return;
        }

        if (c->ke_time == NO_KEYS) {
                r->n_keyed++;
                if (r->first_keys[i] == 0)
                        r->first_keys[i] = t;
        } else
                r->oldest_keys = MAX(r->oldest_keys, t - c->ke_time);
        c->ke_time = t;
        c->failures = 0;
        backoff_ke_done(&c->ladder);
        c->next = renewal(r, t, t);
        heap_push(r, i);
}

static void run_until(Run *r, usec_t end) {
        while (r->n_heap > 0 && r->clients[r->heap[0]].next < end)
                key_exchange(r, heap_pop(r));
}

/* Every client boots at start plus its share of the spread; what it knew before is in its
 * state file (warm) or gone (cold). Backoff and cap live in memory: a boot starts them anew. */
static void boot(Run *r, usec_t start, bool warm) {
        r->n_heap = 0;
        for (uint32_t i = 0; i < r->p->n_clients; i++) {
                Client *c = &r->clients[i];
                usec_t t = start + uniform_sec(r, r->p->boot_spread_sec);

                if (!warm && c->ke_time != NO_KEYS) {
                        c->ke_time = NO_KEYS;
                        r->n_keyed--;
                }
                c->failures = 0;
                backoff_ke_done(&c->ladder);
                backoff_limit_init(&c->limit, BACKOFF_LIMIT_DEFAULT, BACKOFF_LIMIT_PERIOD_USEC);
                /* Keys from the file are used until their renewal; the jittered renewal time
                 * is drawn again from what is left of the window. */
                c->next = c->ke_time != NO_KEYS && t < c->ke_time + NTS_JAR_MAX_AGE_USEC
                                  ? renewal(r, c->ke_time, t)
                                  : t;
                heap_push(r, i);
        }
}

static unsigned peak(const Run *r, unsigned from, unsigned to) {
        unsigned m = 0;

        for (unsigned s = from; s < to; s++)
                m = MAX(m, r->attempts[s]);
        return m;
}

static uint64_t sum(const Run *r, unsigned from, unsigned to) {
        uint64_t n = 0;

        for (unsigned s = from; s < to; s++)
                n += r->attempts[s];
        return n;
}

static uint64_t peak_minute(const Run *r, unsigned from, unsigned to) {
        uint64_t m = 0;

        for (unsigned s = from; s + 60 <= to; s += 60)
                m = MAX(m, sum(r, s, s + 60));
        return m;
}

static int cmp_usec(const void *a, const void *b) {
        usec_t x = *(const usec_t *) a, y = *(const usec_t *) b;

        return x < y ? -1 : x > y;
}

/* Minutes after the outage by which the given fraction of the fleet had keys. */
static double keyed_after(const Run *r, const usec_t *sorted, double fraction) {
        size_t i = (size_t) (fraction * (r->p->n_clients - 1));

        return ((double) sorted[i] / USEC_PER_SEC - r->p->outage_sec) / 60;
}

static void run(Run *r, const Params *p, Schedule schedule, bool warm, Figures *ret) {
        *r = (Run) {
                .p = p,
                .schedule = schedule,
                .warm = warm,
                .clients = calloc(p->n_clients, sizeof(Client)),
                .heap = calloc(p->n_clients, sizeof(uint32_t)),
                .attempts = calloc(HORIZON_SEC, sizeof(uint32_t)),
                .first_keys = calloc(p->n_clients, sizeof(usec_t)),
                .random = p->seed,
                .second = UINT64_MAX,
        };
        ASSERT_TRUE(r->clients && r->heap && r->attempts && r->first_keys);

        for (uint32_t i = 0; i < p->n_clients; i++)
                r->clients[i].ke_time = NO_KEYS;
        boot(r, 0, false);
        run_until(r, (usec_t) RESTART_SEC * USEC_PER_SEC);
        /* Every client had keys before the restart (else 0 sorts first and shows). */
        qsort(r->first_keys, p->n_clients, sizeof(usec_t), cmp_usec);
        boot(r, (usec_t) RESTART_SEC * USEC_PER_SEC, warm);
        run_until(r, (usec_t) HORIZON_SEC * USEC_PER_SEC);

        *ret = (Figures) {
                .boot_peak = peak(r, 0, p->outage_sec),
                .recovery_peak = peak(r, p->outage_sec, RECOVERY_END_SEC),
                .renewal_peak = (double) peak_minute(r, RECOVERY_END_SEC, RESTART_SEC) / 60,
                .restart_peak = peak(r, RESTART_SEC, RESTART_SEC + 3600),
                .restart_kes = sum(r, RESTART_SEC, RESTART_SEC + 3600),
                .total = sum(r, 0, HORIZON_SEC),
                .recovery_mean = (double) sum(r, p->outage_sec, p->outage_sec + 3600) / 3600,
                .mean = (double) sum(r, 0, HORIZON_SEC) / HORIZON_SEC,
                .keyed_median = keyed_after(r, r->first_keys, 0.5),
                .keyed_p99 = keyed_after(r, r->first_keys, 0.99),
                .keyed_all = keyed_after(r, r->first_keys, 1),
        };

        /* Only the counts per second stay for the data files. */
        r->clients = mfree(r->clients);
        r->heap = mfree(r->heap);
        r->first_keys = mfree(r->first_keys);
}

/* The series of the plot: per second for the first 80 minutes and around the restart; the
 * largest second of each minute over days 5.5 to 8 (a day of seconds is too many points). */
static void write_data(const char *prefix, Run runs[static 2][2]) {
        char path[4096];
        FILE *f;

        snprintf(path, sizeof path, "%s-recovery.dat", prefix);
        ASSERT_TRUE(f = fopen(path, "we"));
        fprintf(f, "# second\tfixed\tjitter\n");
        for (unsigned s = 0; s < 4800; s++)
                fprintf(f, "%u\t%u\t%u\n", s, runs[SCHEDULE_FIXED][1].attempts[s], runs[SCHEDULE_JITTER][1].attempts[s]);
        ASSERT_TRUE(fclose(f) == 0);

        snprintf(path, sizeof path, "%s-renewal.dat", prefix);
        ASSERT_TRUE(f = fopen(path, "we"));
        fprintf(f, "# day\tfixed (per second, mean of the minute)\tjitter\n");
        for (unsigned s = 11 * DAY_SEC / 2; s < 8 * DAY_SEC; s += 60)
                fprintf(f, "%.5f\t%.3f\t%.3f\n", (double) s / DAY_SEC,
                        (double) sum(&runs[SCHEDULE_FIXED][1], s, s + 60) / 60,
                        (double) sum(&runs[SCHEDULE_JITTER][1], s, s + 60) / 60);
        ASSERT_TRUE(fclose(f) == 0);

        snprintf(path, sizeof path, "%s-restart.dat", prefix);
        ASSERT_TRUE(f = fopen(path, "we"));
        fprintf(f, "# second after the restart\tcold\twarm\n");
        for (unsigned s = RESTART_SEC - 60; s < RESTART_SEC + 600; s++)
                fprintf(f, "%d\t%u\t%u\n", (int) s - (int) RESTART_SEC, runs[SCHEDULE_JITTER][0].attempts[s],
                        runs[SCHEDULE_JITTER][1].attempts[s]);
        ASSERT_TRUE(fclose(f) == 0);
}

static void usage(void) {
        printf("sim-pool [--clients N] [--boot-spread SEC] [--outage SEC] [--capacity PER_SEC] [--seed N]\n"
               "         [--data PREFIX]\n");
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "clients", required_argument, NULL, 'n' },
                { "boot-spread", required_argument, NULL, 'b' },
                { "outage", required_argument, NULL, 'o' },
                { "capacity", required_argument, NULL, 'c' },
                { "seed", required_argument, NULL, 's' },
                { "data", required_argument, NULL, 'd' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        Params p = {
                .n_clients = 100000,
                .boot_spread_sec = 10,
                .outage_sec = 600,
                .capacity = 2000,
                .seed = 1,
        };
        const char *data = NULL;
        static const char *const names[] = { "deterministic", "jitter" };
        Run runs[_SCHEDULE_MAX][2];
        Figures f[_SCHEDULE_MAX][2];
        bool ok = true;
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                uint64_t v = 0;

                if (!IN_SET(c, 'd', 'h', '?') && parse_unsigned(optarg, c == 's' ? UINT64_MAX : 10000000, &v) < 0) {
                        fprintf(stderr, "Invalid number for --%s: %s\n",
                                c == 'n' ? "clients" : c == 'b' ? "boot-spread" : c == 'o' ? "outage" :
                                c == 'c' ? "capacity" : "seed", optarg);
                        return EXIT_FAILURE;
                }
                switch (c) {
                case 'n': p.n_clients = (unsigned) v; break;
                case 'b': p.boot_spread_sec = (unsigned) v; break;
                case 'o': p.outage_sec = (unsigned) v; break;
                case 'c': p.capacity = (unsigned) v; break;
                case 's': p.seed = v; break;
                case 'd': data = optarg; break;
                case 'h': usage(); return EXIT_SUCCESS;
                default: usage(); return EXIT_FAILURE;
                }
        }
        if (p.n_clients == 0 || p.outage_sec >= RECOVERY_END_SEC || p.boot_spread_sec >= DAY_SEC) {
                fprintf(stderr, "--clients must be at least 1, --outage below %u s, --boot-spread below %u s\n",
                        RECOVERY_END_SEC, DAY_SEC);
                return EXIT_FAILURE;
        }

        for (Schedule s = 0; s < _SCHEDULE_MAX; s++)
                for (int warm = 0; warm < 2; warm++)
                        run(&runs[s][warm], &p, s, warm, &f[s][warm]);

        printf("%u clients, boot spread %u s, outage %u s, pool capacity %u key exchanges/s, seed %" PRIu64 "\n\n",
               p.n_clients, p.boot_spread_sec, p.outage_sec, p.capacity, p.seed);
        printf("| schedule | boot: peak /s | after the outage: peak /s | mean /s in its first hour "
               "| keys after the outage (min): 50 %% / 99 %% / all | renewal: peak /s (of a minute) "
               "| warm restart: KEs in 1 h (peak /s) | cold restart: KEs in 1 h (peak /s) | 15 days: mean /s |\n");
        printf("|---|---|---|---|---|---|---|---|---|\n");
        for (Schedule s = 0; s < _SCHEDULE_MAX; s++)
                printf("| %s | %u | %u | %.1f | %.1f / %.1f / %.1f | %.1f | %" PRIu64 " (%u) | %" PRIu64 " (%u) | %.3f |\n",
                       names[s], f[s][1].boot_peak, f[s][1].recovery_peak, f[s][1].recovery_mean,
                       f[s][1].keyed_median, f[s][1].keyed_p99, f[s][1].keyed_all, f[s][1].renewal_peak,
                       f[s][1].restart_kes, f[s][1].restart_peak, f[s][0].restart_kes, f[s][0].restart_peak,
                       f[s][1].mean);

        printf("\nWith the jitter: the peak after the outage %.1fx lower, the renewal peak %.1fx lower; "
               "%" PRIu64 " key exchanges postponed by the cap.\n",
               (double) f[SCHEDULE_FIXED][1].recovery_peak / MAX(f[SCHEDULE_JITTER][1].recovery_peak, 1U),
               f[SCHEDULE_FIXED][1].renewal_peak / MAX(f[SCHEDULE_JITTER][1].renewal_peak, 1.0 / 60),
               runs[SCHEDULE_JITTER][1].n_limited);

        if (data)
                write_data(data, runs);

        /* The checks. */
        if (f[SCHEDULE_FIXED][1].recovery_peak < 10 * f[SCHEDULE_JITTER][1].recovery_peak) {
                fprintf(stderr, "FAIL: the jitter does not cut the peak after the outage by 10\n");
                ok = false;
        }
        if (f[SCHEDULE_FIXED][1].renewal_peak < 10 * f[SCHEDULE_JITTER][1].renewal_peak) {
                fprintf(stderr, "FAIL: the jitter does not cut the peak of the renewal by 10\n");
                ok = false;
        }
        for (Schedule s = 0; s < _SCHEDULE_MAX; s++)
                if (f[s][1].restart_kes * 100 > f[s][0].restart_kes || f[s][0].restart_kes < p.n_clients) {
                        fprintf(stderr, "FAIL: %s: a warm restart costs %" PRIu64 " key exchanges, a cold one %" PRIu64 "\n",
                                names[s], f[s][1].restart_kes, f[s][0].restart_kes);
                        ok = false;
                }
        if (runs[SCHEDULE_JITTER][1].oldest_keys > NTS_JAR_MAX_AGE_USEC) {
                fprintf(stderr, "FAIL: keys renewed at an age of " USEC_FMT " s, past the limit\n",
                        runs[SCHEDULE_JITTER][1].oldest_keys / USEC_PER_SEC);
                ok = false;
        }
        if (f[SCHEDULE_JITTER][1].keyed_median < 0 || f[SCHEDULE_JITTER][1].keyed_all > 60) {
                fprintf(stderr, "FAIL: the jittered fleet is not keyed within an hour of the outage's end\n");
                ok = false;
        }

        for (Schedule s = 0; s < _SCHEDULE_MAX; s++)
                for (int warm = 0; warm < 2; warm++)
                        free(runs[s][warm].attempts);
        return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
