/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <fcntl.h>
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
