/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The clock file: its modification time records "the clock was at least here", so a machine
 * without a working RTC does not boot into 1970 (or into a date before this program was
 * built), which would also make every TLS certificate look not yet valid. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "timesyncd-clock.h"

/* systemd's PID 1 advances the clock early in boot to the latest of its build time, this
 * file's mtime and (in newer systemd) the clock file's mtime. */
#define CLOCK_EPOCH_FILE "/usr/lib/clock-epoch"

/* Reads the mtime of path (a missing file counts as the epoch) and, if the backend's clock
 * is behind max(mtime, floor), advances the clock to it. Returns 1 if the clock was advanced,
 * 0 if not, negative errno on failure. ret_floor, if set, receives the floor used. */
int clock_file_restore(ClockBackend *b, const char *path, time_t floor, struct timespec *ret_floor);

/* Creates path if needed and sets its mtime to ts, atomically enough for a timestamp. */
int clock_file_save(const char *path, const struct timespec *ts);

/* The NTS bootstrap (docs/NTS.md, "Bootstrap with a wrong clock") may move only a clock that is
 * known to be behind: one that still reads as the floor put it at boot. The floor is the
 * latest time that the tools which set the clock at boot know to have passed: the clock
 * file's mtime, this program's build time, CLOCK_EPOCH_FILE's mtime. */
typedef struct ClockFloor {
        int64_t nsec;                   /* CLOCK_REALTIME */
        const char *source;             /* "clock file", "build time" or CLOCK_EPOCH_FILE */
        bool advanced;                  /* this daemon advanced the clock to it at start */
} ClockFloor;

/* Reads the floor. A file that cannot be read does not count (nothing says that time passed). */
void clock_floor_read(ClockFloor *ret, const char *clock_file, time_t build_time, const char *epoch_file);

typedef enum ClockFloorVerdict {
        /* evidence that the clock is behind */
        CLOCK_FLOOR_BEHIND,             /* it reads earlier than the floor */
        CLOCK_FLOOR_ADVANCED,           /* the daemon advanced it to the floor, it ran freely since */
        CLOCK_FLOOR_EARLY_BOOT,         /* it reads as set to the floor early in boot (PID 1), and ran freely since */
        /* no evidence */
        CLOCK_FLOOR_PAST,               /* it reads later than the floor plus the time since boot */
        CLOCK_FLOOR_LATE,               /* the floor lies later after boot than early boot ends */
} ClockFloorVerdict;

/* A clock that was set to the floor F at boot time b0 and ran freely since reads
 * F + (boottime - b0), since CLOCK_REALTIME and CLOCK_BOOTTIME run at the same rate (the
 * kernel slews and sleeps both alike): its "boot moment" realtime - boottime is F - b0. That
 * is within CLOCK_FLOOR_SLACK_NSEC (reading the two clocks one after the other; a leap second)
 * after F, and for a floor applied by PID 1 at most CLOCK_FLOOR_EARLY_BOOT_NSEC before it. */
#define CLOCK_FLOOR_SLACK_NSEC (INT64_C(1) * 1000000000)
#define CLOCK_FLOOR_EARLY_BOOT_NSEC (INT64_C(60) * 1000000000)

ClockFloorVerdict clock_floor_verdict(const ClockFloor *f, int64_t realtime_nsec, int64_t boottime_nsec);

static inline bool clock_floor_is_evidence(ClockFloorVerdict v) {
        return v <= CLOCK_FLOOR_EARLY_BOOT;
}

/* One clause for the log: what the verdict found, with the numbers behind it. */
void clock_floor_describe(const ClockFloor *f, ClockFloorVerdict v, int64_t realtime_nsec, int64_t boottime_nsec,
                          char *buf, size_t size);
