/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* systemd-time-wait-sync: waits until the system clock is synchronized, then exits 0, so that
 * systemd-time-wait-sync.service completes and time-sync.target is reached. Synchronized means
 * either of:
 *  - the flag file "synchronized" exists in the runtime directory (/run/systemd/timesync):
 *    systemd-timesyncd creates it at its first synchronization;
 *  - the kernel no longer marks the clock unsynchronized (STA_UNSYNC clear in adjtimex()'s
 *    status), which is what other NTP daemons (chronyd, ntpd) leave behind.
 * The flag's directory is watched with inotify (its nearest existing ancestor while it does not
 * exist yet, as at an early boot), a timerfd with TFD_TIMER_CANCEL_ON_SET wakes us when the
 * clock is set, and the kernel's state is read again every KERNEL_RECHECK_SEC as well: a daemon
 * that slews the clock and clears STA_UNSYNC sends no event at all. Reading adjtimex() with
 * modes 0 changes nothing and needs no capability; this program never sets the clock. */

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/timerfd.h>
#include <sys/timex.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"
#include "string-util.h"
#include "time-util.h"

#define KERNEL_RECHECK_SEC 5

static const char *arg_runtime_dir = "/run/systemd/timesync";

/* The kernel's view: > 0 synchronized, 0 not, < 0 error (logged once by the caller). A pure
 * read: modes = 0. */
static int kernel_synchronized(void) {
        struct timex tx = { .modes = 0 };

        if (adjtimex(&tx) < 0)
                return -errno;
        return !(tx.status & STA_UNSYNC);
}

/* Watches DIR for the flag, or the nearest ancestor of DIR that exists (to learn when the next
 * component appears). Replaces the previous watch *wd. Returns 0, or < 0 when nothing could be
 * watched: the periodic check still sees the flag then. */
static int watch_flag_dir(int ifd, const char *dir, int *wd) {
        _cleanup_free_ char *p = strdup(dir);
        int w;

        if (!p)
                return -ENOMEM;
        for (;;) {
                w = inotify_add_watch(ifd, p, IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF |
                                                     IN_ONLYDIR);
                if (w >= 0)
                        break;
                if (!IN_SET(errno, ENOENT, ENOTDIR))
                        return -errno;
                /* One component up; "/" always exists. */
                char *slash = strrchr(p, '/');
                if (!slash)
                        return -ENOENT;
                if (slash == p) {
                        if (p[1] == '\0')
                                return -ENOENT;
                        p[1] = '\0';
                } else
                        *slash = '\0';
        }
        if (*wd >= 0 && *wd != w)
                (void) inotify_rm_watch(ifd, *wd);
        *wd = w;
        return 0;
}

static void drain(int fd) {
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

        while (read(fd, buf, sizeof buf) > 0)
                ;
}

static void help(void) {
        printf("%s [OPTIONS...]\n\n"
               "Wait until the system clock is synchronized: systemd-timesyncd's flag file\n"
               "exists, or the kernel no longer marks the clock unsynchronized.\n\n"
               "  -h --help            Show this help\n"
               "     --version         Show package version\n"
               "     --runtime-dir=DIR Look for the 'synchronized' flag in DIR (default %s)\n",
               program_invocation_short_name, arg_runtime_dir);
}

static int parse_argv(int argc, char *argv[]) {
        enum { ARG_VERSION = 0x100, ARG_RUNTIME_DIR };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "runtime-dir", required_argument, NULL, ARG_RUNTIME_DIR },
                {}
        };
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("systemd-time-wait-sync (timesyncd-nts) %s\n", PROJECT_VERSION);
                        return 0;
                case ARG_RUNTIME_DIR:
                        if (optarg[0] != '/')
                                return log_error_errno(EINVAL, "--runtime-dir= needs an absolute path, not '%s'.",
                                                       optarg);
                        arg_runtime_dir = optarg;
                        break;
                case '?':
                        return -EINVAL;
                default:
                        assert_not_reached();
                }
        if (optind < argc)
                return log_error_errno(EINVAL, "%s takes no arguments.", program_invocation_short_name);
        return 1;
}

static int run(void) {
        _cleanup_close_ int ifd = -EBADF, tfd = -EBADF;
        _cleanup_free_ char *flag = NULL;
        bool watch_failed = false, kernel_failed = false, said_waiting = false;
        int wd = -1, r;

        flag = strjoin(arg_runtime_dir, "/synchronized");
        if (!flag)
                return log_oom();

        ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (ifd < 0)
                return log_error_errno(errno, "Failed to create an inotify instance: %m");
        tfd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
        if (tfd < 0)
                return log_error_errno(errno, "Failed to create a timerfd: %m");
        r = timerfd_arm_clock_change(tfd);
        if (r < 0)
                return log_error_errno(r, "Failed to arm the clock change timerfd: %m");

        for (;;) {
                /* The watch before the look, so that a flag made in between is not missed. */
                r = watch_flag_dir(ifd, arg_runtime_dir, &wd);
                if (r < 0 && !watch_failed) {
                        log_warning_errno(r, "Cannot watch %s, looking for %s every %d s instead: %m",
                                          arg_runtime_dir, flag, KERNEL_RECHECK_SEC);
                        watch_failed = true;
                }

                if (access(flag, F_OK) >= 0) {
                        log_info("The system clock is synchronized (%s exists).", flag);
                        return 0;
                }

                r = kernel_synchronized();
                if (r > 0) {
                        log_info("The system clock is synchronized (the kernel reports it synchronized).");
                        return 0;
                }
                if (r < 0 && !kernel_failed) {
                        log_warning_errno(r, "Cannot read the kernel's clock state (adjtimex), waiting for %s only: %m",
                                          flag);
                        kernel_failed = true;
                }

                log_debug("Not synchronized yet: no %s, the kernel %s.", flag,
                          r < 0 ? "cannot tell" : "marks the clock unsynchronized");
                if (!said_waiting) {
                        log_info("Waiting for the system clock to be synchronized: %s to appear, or the kernel to "
                                 "report it synchronized.", flag);
                        said_waiting = true;
                }

                struct pollfd p[] = {
                        { .fd = ifd, .events = POLLIN },
                        { .fd = tfd, .events = POLLIN },
                };
                if (poll(p, ELEMENTSOF(p), KERNEL_RECHECK_SEC * 1000) < 0) {
                        if (errno == EINTR)
                                continue;
                        return log_error_errno(errno, "poll() failed: %m");
                }
                if (p[0].revents & POLLIN)
                        drain(ifd);
                if (p[1].revents & POLLIN) {
                        /* ECANCELED: the clock was set; the timer must be armed again. */
                        drain(tfd);
                        log_debug("The system clock was set.");
                        r = timerfd_arm_clock_change(tfd);
                        if (r < 0)
                                return log_error_errno(r, "Failed to arm the clock change timerfd again: %m");
                }
        }
}

int main(int argc, char *argv[]) {
        int r;

        log_parse_environment();
        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        return run() < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
