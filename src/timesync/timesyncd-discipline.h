/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The clock's discipline: offset and frequency estimated from the samples by a weighted linear
 * regression, as chrony does, with the kernel's PLL integrator kept out of the loop. The
 * kernel is given the frequency directly (ADJ_FREQUENCY) and the offset only as a phase to slew
 * (ADJ_OFFSET with STA_FREQHOLD), so a large start is never wound into the frequency. Pure
 * arithmetic, no I/O: the kernel clock backend feeds it and writes what it returns. Times and
 * offsets are in nanoseconds; a positive offset means the clock is behind. */

#include <stdbool.h>
#include <stdint.h>

#define DISCIPLINE_SAMPLES_MAX 64
/* The kernel's frequency range (ADJ_FREQUENCY), in nanoseconds per second (ppb). */
#define DISCIPLINE_FREQ_MAX_PPB 500000.0

typedef struct DisciplineSample {
        double t;       /* s since the history began, the daemon's monotonic clock */
        double x;       /* s: the offset the clock would show without any of our corrections */
        double w;       /* weight: 1 / error bound squared */
} DisciplineSample;

typedef struct Discipline {
        DisciplineSample samples[DISCIPLINE_SAMPLES_MAX];
        unsigned n, next;
        bool running;           /* a sample was taken since the history began */
        int64_t t0_nsec;        /* when the history began */
        double t_last;          /* s: the last sample */
        double phase_last;      /* s: the phase handed to the kernel then */
        double freq;            /* s/s: the frequency set then (and now) */
        double correction;      /* s: what we moved the clock by since the history began */
        double interval_max;    /* s: the longest poll interval the estimate is locked for */
        double freq_error;      /* s/s: the standard error of the fitted frequency; 0: not fitted */
} Discipline;

typedef struct DisciplineOutput {
        int64_t offset_nsec;    /* phase for the kernel to slew */
        double freq_ppb;        /* frequency for the kernel */
} DisciplineOutput;

/* Starts over with the frequency the kernel has now (what an earlier run learned). */
void discipline_init(Discipline *d, double freq_ppb);
/* Forgets the samples, keeps the frequency: after a step, a suspend or a foreign clock jump
 * the samples no longer lie on one line with the new ones. */
void discipline_reset(Discipline *d);
/* A sample: measured offset at time now, the phase the kernel still had to slew (of what it
 * was last given), the share of it the kernel slews each second (0: unknown) and the
 * sample's error bound (root distance). */
void discipline_sample(Discipline *d, int64_t now_nsec, int64_t offset_nsec, int64_t phase_left_nsec,
                       double phase_share, int64_t error_nsec, DisciplineOutput *ret);
/* The standard error (ppb) of the frequency fitted to the samples at the last one; 0 while the
 * frequency is not fitted but the one set. */
double discipline_freq_error_ppb(const Discipline *d);
/* How many samples the estimate rests on. */
unsigned discipline_samples(const Discipline *d);
/* The longest poll interval (s) the loop is locked for after the last sample: over it, the
 * error of the fitted frequency moves the clock by less than a share of one sample's noise.
 * 0 until the estimate rests on enough samples. */
double discipline_poll_interval_max(const Discipline *d);
