/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One scripted sequence of adjtimex() calls, with the kernel's state read back every second:
 * built against the simulation's kernel model (adjtimex-script-model, -DADJTIMEX_SCRIPT_MODEL)
 * and against the real kernel (adjtimex-script, built for the qemu guest only: it changes the
 * clock discipline of the machine it runs on, so it refuses to run without
 * --change-this-machines-clock). Both print the same lines, which the guest check compares:
 *   SECOND rc=STATE offset=NS freq=PPM16 status=0xSTATUS maxerror=US constant=TC adjtime=US at=MS
 * Each second's calls and the read happen at half past that second of CLOCK_REALTIME, away
 * from the once-a-second update at the whole second; at= is when the read really was (ms into
 * the second: a guest late by half a second read after the next update, and
 * adjtimex-script-compare.sh leaves that line out). */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/timex.h>
#include <time.h>

#ifdef ADJTIMEX_SCRIPT_MODEL
#include "sim-kclock.h"
#endif

#define NSEC_PER_SEC INT64_C(1000000000)
#define SECONDS 140

typedef struct ScriptStep {
        int second;
        struct timex t;
} ScriptStep;

/* PLL at time constant 2 from a 10 ms offset, a negative one past the interval clamp, another
 * time constant, adjtime() beside the PLL, ADJ_FREQUENCY, a step and a step back (which clear
 * the NTP state), and maxerror running out. */
static const ScriptStep script[] = {
        /* From whatever state the machine's clock is in: no slew left, no phase, frequency 0. */
        { 0, { .modes = ADJ_OFFSET_SINGLESHOT, .offset = 0 } },
        { 0, { .modes = ADJ_STATUS | ADJ_NANO | ADJ_MAXERROR | ADJ_ESTERROR | ADJ_TIMECONST | ADJ_FREQUENCY | ADJ_TICK |
                       ADJ_OFFSET,
               .status = STA_PLL, .constant = 2, .tick = 10000, .offset = 0 } },
        { 1, { .modes = ADJ_OFFSET, .offset = 10000000 } },
        { 41, { .modes = ADJ_OFFSET, .offset = -5000000 } },
        { 61, { .modes = ADJ_TIMECONST | ADJ_OFFSET, .constant = 6, .offset = 2000000 } },
        { 81, { .modes = ADJ_OFFSET_SINGLESHOT, .offset = 3000 } },
        { 101, { .modes = ADJ_FREQUENCY, .freq = 819200 } },          /* 12.5 ppm */
        { 111, { .modes = ADJ_SETOFFSET | ADJ_NANO, .time.tv_sec = 0, .time.tv_usec = 250000000 } },
        { 112, { .modes = ADJ_STATUS | ADJ_OFFSET, .status = STA_PLL, .offset = -1000000 } },
        { 113, { .modes = ADJ_SETOFFSET | ADJ_NANO, .time.tv_sec = -1, .time.tv_usec = 750000000 } },
        { 114, { .modes = ADJ_STATUS | ADJ_MAXERROR, .status = STA_PLL, .maxerror = 16000000 - 5000 } },
};

#ifdef ADJTIMEX_SCRIPT_MODEL
static KClock model;
static int64_t model_true = INT64_C(1800000000) * NSEC_PER_SEC;

static int call(struct timex *t) {
        int r = kclock_adjtimex(&model, model_true, t);

        if (r < 0) {
                errno = -r;
                return -1;
        }
        return r;
}

static int64_t realtime_now(void) {
        return kclock_realtime(&model, model_true);
}

static void wait_for_realtime(int64_t at) {
        for (int64_t now; (now = realtime_now()) < at;)
                model_true += kclock_true_span(&model, at - now);
}

static int setup(int argc, char *argv[]) {
        (void) argv;
        kclock_init(&model, model_true, model_true, 0, 0, 1);
        return argc == 1 ? 0 : -1;
}
#else
static int call(struct timex *t) {
        return adjtimex(t);
}

static int64_t realtime_now(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t) ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static void wait_for_realtime(int64_t at) {
        struct timespec ts = { .tv_sec = (time_t) (at / NSEC_PER_SEC), .tv_nsec = (long) (at % NSEC_PER_SEC) };

        while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) == EINTR)
                ;
}

static int setup(int argc, char *argv[]) {
        return argc == 2 && strcmp(argv[1], "--change-this-machines-clock") == 0 ? 0 : -1;
}
#endif

int main(int argc, char *argv[]) {
        int64_t start;
        size_t next = 0;

        if (setup(argc, argv) < 0) {
#ifdef ADJTIMEX_SCRIPT_MODEL
                fputs("usage: adjtimex-script-model\n", stderr);
#else
                fputs("usage: adjtimex-script --change-this-machines-clock (a guest's only)\n", stderr);
#endif
                return 2;
        }

        start = (realtime_now() / NSEC_PER_SEC + 1) * NSEC_PER_SEC + NSEC_PER_SEC / 2;
        for (int s = 0; s < SECONDS; s++) {
                struct timex t = {}, ss = { .modes = ADJ_OFFSET_SS_READ };
                int r;

                wait_for_realtime(start + s * NSEC_PER_SEC);
                for (; next < sizeof script / sizeof script[0] && script[next].second == s; next++) {
                        t = script[next].t;
                        if (call(&t) < 0) {
                                fprintf(stderr, "second %d: adjtimex(modes=0x%x): %s\n", s, t.modes, strerror(errno));
                                return 1;
                        }
                }
                t = (struct timex) {};
                r = call(&t);
                if (r < 0 || call(&ss) < 0) {
                        fprintf(stderr, "second %d: adjtimex(): %s\n", s, strerror(errno));
                        return 1;
                }
                printf("%d rc=%d offset=%ld freq=%ld status=0x%x maxerror=%ld constant=%ld adjtime=%ld at=%d\n",
                       s, r, (long) t.offset, (long) t.freq, (unsigned) t.status, (long) t.maxerror,
                       (long) t.constant, (long) ss.offset,
                       (int) ((realtime_now() % NSEC_PER_SEC + NSEC_PER_SEC) % NSEC_PER_SEC / 1000000));
                fflush(stdout);
        }

        /* As at boot: PLL off, unsynchronized, no frequency, no slew left. */
        struct timex reset = { .modes = ADJ_STATUS | ADJ_FREQUENCY | ADJ_MAXERROR | ADJ_ESTERROR,
                               .status = STA_UNSYNC, .maxerror = 16000000, .esterror = 16000000 };
        struct timex noslew = { .modes = ADJ_OFFSET_SINGLESHOT };
        if (call(&reset) < 0 || call(&noslew) < 0) {
                fprintf(stderr, "adjtimex() reset: %s\n", strerror(errno));
                return 1;
        }
        return 0;
}
