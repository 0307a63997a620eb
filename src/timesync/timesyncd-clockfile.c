/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "log.h"
#include "timesyncd-clockfile.h"

int clock_file_restore(ClockBackend *b, const char *path, time_t floor, struct timespec *ret_floor) {
        struct timespec now, target = { .tv_sec = floor };
        struct stat st;
        int r;

        assert(b);
        assert(path);

        if (stat(path, &st) >= 0) {
                if (st.st_mtim.tv_sec > target.tv_sec ||
                    (st.st_mtim.tv_sec == target.tv_sec && st.st_mtim.tv_nsec > target.tv_nsec))
                        target = st.st_mtim;
        } else if (errno != ENOENT)
                return log_warning_errno(errno, "Failed to stat clock file %s: %m", path);

        if (ret_floor)
                *ret_floor = target;

        r = clock_backend_now(b, &now);
        if (r < 0)
                return r;

        if (now.tv_sec > target.tv_sec || (now.tv_sec == target.tv_sec && now.tv_nsec >= target.tv_nsec))
                return 0;

        log_info("System clock is behind the last recorded time, advancing it to %jd.%09ld.",
                 (intmax_t) target.tv_sec, target.tv_nsec);
        r = clock_backend_set(b, &target);
        if (r < 0)
                return log_warning_errno(r, "Failed to advance the system clock: %m");
        return 1;
}

int clock_file_save(const char *path, const struct timespec *ts) {
        _cleanup_close_ int fd = -EBADF;
        struct timespec times[2];

        assert(path);
        assert(ts);

        times[0] = times[1] = *ts;

        /* After every sync: one system call while the file exists, three only to create it.
         * Never through a symbolic link: one put in its place gets the time itself. */
        if (utimensat(AT_FDCWD, path, times, AT_SYMLINK_NOFOLLOW) >= 0)
                return 0;
        if (errno != ENOENT)
                return -errno;

        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW, 0644);
        if (fd < 0)
                return -errno;
        if (futimens(fd, times) < 0)
                return -errno;

        return 0;
}

static int64_t timespec_to_nsec(const struct timespec *ts) {
        return (int64_t) ts->tv_sec * INT64_C(1000000000) + ts->tv_nsec;
}

static void clock_floor_raise(ClockFloor *f, const char *path, const char *source) {
        struct stat st;

        if (!path)
                return;
        if (stat(path, &st) < 0) {
                if (errno != ENOENT)
                        log_debug_errno(errno, "Failed to stat %s, not counting it as a floor: %m", path);
                return;
        }
        if (timespec_to_nsec(&st.st_mtim) > f->nsec) {
                f->nsec = timespec_to_nsec(&st.st_mtim);
                f->source = source;
        }
}

void clock_floor_read(ClockFloor *ret, const char *clock_file, time_t build_time, const char *epoch_file) {
        assert(ret);

        *ret = (ClockFloor) {
                .nsec = (int64_t) build_time * INT64_C(1000000000),
                .source = "build time",
        };
        clock_floor_raise(ret, clock_file, "clock file");
        clock_floor_raise(ret, epoch_file, epoch_file);
}

ClockFloorVerdict clock_floor_verdict(const ClockFloor *f, int64_t realtime_nsec, int64_t boottime_nsec) {
        int64_t boot_moment;

        assert(f);

        /* Before a time known to have passed. */
        if (realtime_nsec < f->nsec)
                return CLOCK_FLOOR_BEHIND;

        /* Moved forward since boot by more than it ran: set by an RTC, a person or another
         * program. A correct clock after a reboot is here too, by the time the machine was
         * down: the clock file is written before it goes down. */
        boot_moment = realtime_nsec - boottime_nsec;
        if (boot_moment > f->nsec + CLOCK_FLOOR_SLACK_NSEC)
                return CLOCK_FLOOR_PAST;

        /* We set it there ourselves, whenever we started. */
        if (f->advanced)
                return CLOCK_FLOOR_ADVANCED;

        /* Someone set it there: PID 1 does so in the first seconds of a boot. A floor recorded
         * later than that (a clock file written by an earlier instance in this boot, a build or
         * an epoch file newer than the boot) is no evidence: a correct clock reads the same. */
        if (f->nsec - boot_moment > CLOCK_FLOOR_EARLY_BOOT_NSEC)
                return CLOCK_FLOOR_LATE;

        return CLOCK_FLOOR_EARLY_BOOT;
}

void clock_floor_describe(const ClockFloor *f, ClockFloorVerdict v, int64_t realtime_nsec, int64_t boottime_nsec,
                          char *buf, size_t size) {
        time_t t = (time_t) (f->nsec / INT64_C(1000000000));
        int64_t boot_moment = realtime_nsec - boottime_nsec;
        char date[32];
        struct tm tm;

        assert(buf);

        if (!gmtime_r(&t, &tm) || strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", &tm) == 0)
                snprintf(date, sizeof date, "@%jd", (intmax_t) t);

        switch (v) {
        case CLOCK_FLOOR_BEHIND:
                snprintf(buf, size, "the clock reads %jd s before its floor (%s, %s)",
                         (intmax_t) ((f->nsec - realtime_nsec) / INT64_C(1000000000)), f->source, date);
                break;
        case CLOCK_FLOOR_ADVANCED:
                snprintf(buf, size, "the daemon advanced the clock to its floor (%s, %s) at start", f->source, date);
                break;
        case CLOCK_FLOOR_EARLY_BOOT:
                snprintf(buf, size, "the clock reads as set to its floor (%s, %s) %jd s after boot",
                         f->source, date, (intmax_t) ((f->nsec - boot_moment) / INT64_C(1000000000)));
                break;
        case CLOCK_FLOOR_PAST:
                snprintf(buf, size, "the clock reads %jd s later than its floor (%s, %s) plus the time since boot, "
                         "so it did not start from the floor",
                         (intmax_t) ((boot_moment - f->nsec) / INT64_C(1000000000)), f->source, date);
                break;
        case CLOCK_FLOOR_LATE:
                snprintf(buf, size, "its floor (%s, %s) lies %jd s after the moment of boot by this clock, "
                         "later than early boot, so the clock did not start from it",
                         f->source, date, (intmax_t) ((f->nsec - boot_moment) / INT64_C(1000000000)));
                break;
        default:
                assert_not_reached();
        }
}
