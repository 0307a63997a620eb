/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The only code that may change the system clock, behind one narrow interface, so that
 * --observe and the tests can swap in backends that provably cannot:
 *   kernel   adjtimex()/clock_settime(): the real thing
 *   observe  reads the kernel state (adjtimex modes 0), logs what it would do, changes nothing
 *   fake     a simulated clock in memory for unit tests (clock file logic, clock jumps)
 */

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "time-util.h"

typedef enum ClockBackendType {
        CLOCK_BACKEND_KERNEL,
        CLOCK_BACKEND_OBSERVE,
        CLOCK_BACKEND_FAKE,
        _CLOCK_BACKEND_MAX,
} ClockBackendType;

/* One decision of the manager, applied in one call. */
typedef struct ClockAdjustment {
        int64_t offset_nsec;    /* measured offset: positive means our clock is behind */
        bool step;              /* step instead of slewing through the kernel PLL */
        int leap;               /* NTP leap indicator of the server (ntp-packet.h NTP_LEAP_*) */
        int poll_log2;          /* current poll interval, sets the PLL time constant */
        int64_t max_error_nsec; /* root distance, for the kernel's maxerror/esterror */
} ClockAdjustment;

typedef struct ClockState {
        bool synchronized;      /* kernel STA_UNSYNC clear */
        int64_t frequency;      /* kernel frequency offset, scaled ppm (2^-16 ppm) as adjtimex reports */
        int64_t offset_nsec;    /* remaining PLL offset */
} ClockState;

typedef struct ClockBackend ClockBackend;

int clock_backend_new(ClockBackendType type, ClockBackend **ret);
ClockBackend *clock_backend_free(ClockBackend *b);
ClockBackendType clock_backend_type(const ClockBackend *b);
const char *clock_backend_type_to_string(ClockBackendType t);

/* The kernel PLL time constant for a poll interval of 2^poll_log2 seconds (nanosecond mode). */
long clock_backend_pll_time_constant(int poll_log2);

/* Applies an adjustment. Returns 1 when it changed the (kernel or fake) clock, with
 * ret_state (may be NULL) the state after the change, as the adjusting call reported it; 0 in
 * observe mode, where nothing changed and ret_state is left alone; or a negative errno
 * (-EPERM without CAP_SYS_TIME). */
int clock_backend_adjust(ClockBackend *b, const ClockAdjustment *a, ClockState *ret_state);
/* The longest poll interval the clock's discipline is locked for (timesyncd-discipline.h):
 * the sources' poll intervals grow no further. USEC_INFINITY where nothing is disciplined
 * (observe mode, the fake clock). */
usec_t clock_backend_poll_interval_max(const ClockBackend *b);
/* A frequency (ppm) learned before this boot (timesyncd-freqfile.h): the discipline starts
 * from it when it finds the kernel's frequency untouched (0, as after a boot), and the first
 * frequency it fits itself replaces it either way. */
void clock_backend_seed_frequency(ClockBackend *b, double ppm);
/* The frequency (ppm) the discipline fitted to its samples, worth keeping for the next boot;
 * false before it has one (or where nothing is disciplined). */
bool clock_backend_frequency_learned(const ClockBackend *b, double *ret_ppm);
/* Reads the kernel discipline state; never changes it. */
int clock_backend_get_state(ClockBackend *b, ClockState *ret);
/* CLOCK_REALTIME of this backend (the fake one has its own). */
int clock_backend_now(ClockBackend *b, struct timespec *ret);
/* Sets CLOCK_REALTIME, used only to advance a clock that is behind the clock file. */
int clock_backend_set(ClockBackend *b, const struct timespec *ts);

/* Fake backend only: move its clock and inspect what was done to it. */
void clock_backend_fake_set_now(ClockBackend *b, const struct timespec *ts);
unsigned clock_backend_fake_steps(const ClockBackend *b);
/* Makes the fake clock run: CLOCK_REALTIME plus offset_nsec, steps and sets move the offset.
 * This is the daemon's --test-clock-offset=: a wrong clock it may correct, on a machine whose
 * own clock must not be touched. */
void clock_backend_fake_follow(ClockBackend *b, int64_t offset_nsec);
/* Moves the running fake clock by nsec, as another program setting the clock would. */
void clock_backend_fake_jump(ClockBackend *b, int64_t nsec);
int64_t clock_backend_fake_offset(const ClockBackend *b);
unsigned clock_backend_fake_slews(const ClockBackend *b);
