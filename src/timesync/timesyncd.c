/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <getopt.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <systemd/sd-daemon.h>

#include "log.h"
#include "string-util.h"
#include "strv.h"
#include "timesyncd-conf.h"
#include "timesyncd-bus.h"
#include "timesyncd-manager.h"

#define TIMESYNC_USER "systemd-timesync"

static bool arg_observe = false;
static const char *arg_config_file = NULL;
static const char *arg_state_dir = "/var/lib/systemd/timesync";
/* The cookie jars are not in stock systemd-timesyncd's directory: its package deletes that
 * directory when it is purged, also after this daemon replaced it (docs/DEBIAN.md). */
#define NTS_STATE_DIR_DEFAULT "/var/lib/timesyncd-nts"
static const char *arg_nts_state_dir = NULL;
static bool arg_state_dir_set = false;
static const char *arg_runtime_dir = "/run/systemd/timesync";
static usec_t arg_test_poll_interval = 0;
static bool arg_test_fake_clock = false;
static int64_t arg_test_clock_offset_nsec = 0;
static bool arg_validate = false;

static void help(void) {
        printf("%s [OPTIONS...]\n\n"
               "Synchronizes the system clock with NTP servers, authenticated with NTS where\n"
               "NTS= servers are configured.\n\n"
               "  -h --help             Show this help\n"
               "     --version          Show package version\n"
               "     --observe          Measure and report, never change the clock; runs\n"
               "                        without any capability\n"
               "     --config=FILE      Read only FILE instead of timesyncd.conf and drop-ins\n"
               "     --validate         Read the configuration, print what is in effect and\n"
               "                        every notice and warning, and exit: non-zero on errors\n"
               "                        (settings that give no time, or not the time meant).\n"
               "                        Touches nothing (no bus, no state, no network)\n"
               "     --state-dir=DIR    Keep the clock file in DIR (default %s)\n"
               "     --nts-state-dir=DIR\n"
               "                        Keep the NTS cookie jars in DIR (default %s, or\n"
               "                        the --state-dir= DIR when only that one is given)\n"
               "     --runtime-dir=DIR  Write the 'synchronized' flag in DIR (default %s)\n"
               "     --test-poll-interval=TIME\n"
               "                        With --observe only: poll every TIME (e.g. 250ms),\n"
               "                        below the 16 s floor, for soak tests and benchmarks\n"
               "     --test-clock-offset=[-]TIME\n"
               "                        With --observe only: steer a fake clock that starts\n"
               "                        TIME off the system clock; SIGUSR1 moves it by TIME\n"
               "                        again, as a program setting the clock would\n",
               program_invocation_short_name, arg_state_dir, NTS_STATE_DIR_DEFAULT, arg_runtime_dir);
}

static int parse_argv(int argc, char *argv[]) {
        enum {
                ARG_VERSION = 0x100,
                ARG_OBSERVE,
                ARG_CONFIG,
                ARG_STATE_DIR,
                ARG_NTS_STATE_DIR,
                ARG_RUNTIME_DIR,
                ARG_TEST_POLL_INTERVAL,
                ARG_TEST_CLOCK_OFFSET,
                ARG_VALIDATE,
        };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "observe", no_argument, NULL, ARG_OBSERVE },
                { "config", required_argument, NULL, ARG_CONFIG },
                { "state-dir", required_argument, NULL, ARG_STATE_DIR },
                { "nts-state-dir", required_argument, NULL, ARG_NTS_STATE_DIR },
                { "runtime-dir", required_argument, NULL, ARG_RUNTIME_DIR },
                { "test-poll-interval", required_argument, NULL, ARG_TEST_POLL_INTERVAL },
                { "test-clock-offset", required_argument, NULL, ARG_TEST_CLOCK_OFFSET },
                { "validate", no_argument, NULL, ARG_VALIDATE },
                {}
        };
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("timesyncd-nts %s (NTS %s)\n", PROJECT_VERSION, HAVE_NTS ? "+" : "-");
                        return 0;
                case ARG_OBSERVE:
                        arg_observe = true;
                        break;
                case ARG_CONFIG:
                        arg_config_file = optarg;
                        break;
                case ARG_STATE_DIR:
                        arg_state_dir = optarg;
                        arg_state_dir_set = true;
                        break;
                case ARG_NTS_STATE_DIR:
                        arg_nts_state_dir = optarg;
                        break;
                case ARG_RUNTIME_DIR:
                        arg_runtime_dir = optarg;
                        break;
                case ARG_TEST_POLL_INTERVAL:
                        if (parse_sec(optarg, &arg_test_poll_interval) < 0 ||
                            arg_test_poll_interval < 10 * USEC_PER_MSEC ||
                            arg_test_poll_interval == USEC_INFINITY)
                                return log_error_errno(EINVAL, "Invalid --test-poll-interval=: %s", optarg);
                        break;
                case ARG_TEST_CLOCK_OFFSET: {
                        bool negative = optarg[0] == '-';
                        usec_t u;

                        /* Bounded so that the nanoseconds and the fake clock cannot overflow. */
                        if (parse_sec(optarg + negative, &u) < 0 || u > 100 * USEC_PER_YEAR)
                                return log_error_errno(EINVAL, "Invalid --test-clock-offset=: %s", optarg);
                        arg_test_clock_offset_nsec = (negative ? -1 : 1) * (int64_t) u * 1000;
                        arg_test_fake_clock = true;
                        break;
                }
                case ARG_VALIDATE:
                        arg_validate = true;
                        break;
                case '?':
                        return -EINVAL;
                default:
                        assert_not_reached();
                }

        if (optind < argc)
                return log_error_errno(EINVAL, "%s takes no arguments.", program_invocation_short_name);

        /* One directory given for the state keeps all of it there (tests, --observe runs). */
        if (!arg_nts_state_dir)
                arg_nts_state_dir = arg_state_dir_set ? arg_state_dir : NTS_STATE_DIR_DEFAULT;

        /* A poll interval below the floor would hammer a real server and, on a real clock,
         * steer it from too few samples: only a measuring daemon may have one. */
        if (arg_test_poll_interval > 0 && !arg_observe)
                return log_error_errno(EINVAL, "--test-poll-interval= requires --observe.");
        /* The fake clock replaces the observe backend: it is what keeps the real one untouched. */
        if (arg_test_fake_clock && !arg_observe)
                return log_error_errno(EINVAL, "--test-clock-offset= requires --observe.");

        return 1;
}

static int prepare_dir(const char *path, uid_t uid, gid_t gid) {
        struct stat st;

        if (mkdir(path, 0755) < 0 && errno != EEXIST)
                return log_error_errno(errno, "Failed to create %s: %m", path);
        /* Already the user's: left alone, which works on a read-only file system too (the
         * daemon then runs without saving its state, and says so). */
        if (uid == 0 || (stat(path, &st) >= 0 && st.st_uid == uid && st.st_gid == gid))
                return 0;
        if (chown(path, uid, gid) < 0)
                return log_error_errno(errno, "Failed to hand %s to %s: %m", path, TIMESYNC_USER);
        return 0;
}

/* Keeps CAP_SYS_TIME only (none with --observe) and, when started as root, becomes the
 * systemd-timesync user if it exists. The bounding set is emptied too, so not even a
 * bug followed by an exec could regain anything. */
static int drop_privileges(bool keep_sys_time) {
        struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
        struct passwd *pw = NULL;
        int r;

        if (geteuid() == 0) {
                pw = getpwnam(TIMESYNC_USER);
                if (pw) {
                        r = prepare_dir(arg_state_dir, pw->pw_uid, pw->pw_gid);
                        if (r < 0)
                                return r;
                        r = prepare_dir(arg_nts_state_dir, pw->pw_uid, pw->pw_gid);
                        if (r < 0)
                                return r;
                        r = prepare_dir(arg_runtime_dir, pw->pw_uid, pw->pw_gid);
                        if (r < 0)
                                return r;
                } else
                        log_debug("User %s does not exist, staying root with reduced capabilities.",
                                  TIMESYNC_USER);

                for (unsigned long cap = 0; cap <= CAP_LAST_CAP; cap++)
                        if (!(keep_sys_time && cap == CAP_SYS_TIME) &&
                            prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
                                return log_error_errno(errno, "Failed to drop capability bounding set: %m");

                if (pw) {
                        if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
                                return log_error_errno(errno, "Failed to keep capabilities: %m");
                        if (setgroups(0, NULL) < 0 ||
                            setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) < 0 ||
                            setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) < 0)
                                return log_error_errno(errno, "Failed to become user %s: %m", TIMESYNC_USER);
                }
        }

        if (keep_sys_time) {
                data[CAP_TO_INDEX(CAP_SYS_TIME)].effective = CAP_TO_MASK(CAP_SYS_TIME);
                data[CAP_TO_INDEX(CAP_SYS_TIME)].permitted = CAP_TO_MASK(CAP_SYS_TIME);
        }
        if (syscall(SYS_capset, &header, data) < 0)
                return log_error_errno(errno, "Failed to drop privileges: %m");

        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return log_error_errno(errno, "Failed to set no_new_privs: %m");

        return 0;
}

static void print_list(const char *key, char **l) {
        printf("%s=", key);
        STRV_FOREACH(i, l)
                printf("%s%s", i == l ? "" : " ", *i);
        printf("\n");
}

/* --validate: the configuration the daemon would read, as it would take it, and nothing else.
 * Notices, warnings and errors go to stderr as the daemon logs them, one line per problem; the
 * settings in effect to stdout, one per line, in the file's syntax. Errors: a file that could
 * not be read to its end, anything that fails closed (an unknown key that looks like an NTS
 * setting, a refused value of an NTS setting, an NTS key outside [Time]), NTS= without a valid
 * server, NTSRequired=yes without an NTS server, what timesync_config_check() finds: each
 * leaves the daemon without time, or without the time meant. */
static int run_validate(void) {
        _cleanup_(timesync_config_done) TimesyncConfig c = {};
        _cleanup_free_ char *forced = NULL;
        unsigned errors, warnings;
        const char *source;
        int r;

        if (log_get_max_level() < LOG_NOTICE)
                log_set_max_level(LOG_NOTICE);
        log_set_target(LOG_TARGET_CONSOLE);

        r = timesync_config_read(&c, arg_config_file, 0);

        printf("[Time]\n");
        print_list("NTP", c.ntp_servers);
        print_list("FallbackNTP", c.fallback_servers);
        print_list("FallbackNTS", c.fallback_nts_servers);
        print_list("NTS", c.nts_servers);
        printf("NTSTrustedCertificates=%s\n", strempty(c.nts_trusted_certificates));
        printf("NTSBootstrap=%s\n", c.nts_bootstrap ? "yes" : "no");
        printf("NTSRequired=%s\n", c.nts_required ? "yes" : "no");
        printf("KeyExchangeTimeoutSec=%s\n", FORMAT_TIMESPAN(c.nts_ke_timeout_usec, 1));
        printf("NTSMaxSources=%u\n", c.nts_max_sources);
        if (c.nts_min_agreeing > 0)
                printf("NTSMinAgreeingSources=%u\n", c.nts_min_agreeing);
        else
                printf("NTSMinAgreeingSources=\n");
        printf("RootDistanceMaxSec=%s\n", FORMAT_TIMESPAN(c.root_distance_max_usec, 1));
        printf("PollIntervalMinSec=%s\n", FORMAT_TIMESPAN(c.poll_interval_min_usec, 1));
        printf("PollIntervalMaxSec=%s\n", FORMAT_TIMESPAN(c.poll_interval_max_usec, 1));
        printf("ConnectionRetrySec=%s\n", FORMAT_TIMESPAN(c.connection_retry_usec, 1));
        printf("SaveIntervalSec=%s\n", FORMAT_TIMESPAN(c.save_interval_usec, 1));

        if (c.nts_set && !c.nts_servers)
                log_error("NTS= names no valid server: the clock would not be synchronized.");
        if (c.nts_trusted_certificates_invalid)
                log_error("NTSTrustedCertificates= was refused: every key exchange would fail.");
        /* The daemon says it as it starts (nts_missing()); where the files forced it, the line
         * that did is the error. */
        if (c.nts_required && !c.nts_set && !c.nts_fail_closed)
                log_error("NTSRequired=yes and no NTS= server: the clock would not be synchronized (FallbackNTS= "
                          "is not used with NTSRequired=yes), unless NTS servers are set at runtime.");

        /* Runtime and per-link servers come on top of this at run time. */
        if (c.nts_servers)
                source = "NTS= (NTS only)";
        else if (c.nts_set)
                source = "nothing: NTS= names no valid server (runtime NTS servers only)";
        else if (c.nts_fail_closed) {
                forced = strjoin("nothing: NTS only (", c.nts_fail_closed,
                                 ") and no NTS= server (runtime NTS servers only)");
                source = forced ?: "nothing: NTS only";
        } else if (c.nts_required)
                source = "nothing: NTSRequired=yes and no NTS= server (runtime NTS servers only)";
        else if (c.ntp_servers)
                source = "NTP= (plain NTP, unauthenticated)";
        else if (timesync_config_uses_fallback_nts(&c))
                source = "FallbackNTS= (NTS only), unless the network names NTP servers";
        else
                source = "FallbackNTP= (plain NTP, unauthenticated), unless the network names NTP servers";
        printf("# Time from: %s\n", source);

        errors = log_get_count(LOG_ERR);
        warnings = log_get_count(LOG_WARNING) - errors;
        if (r < 0 && errors == 0)
                errors = 1;
        fprintf(stderr, "%u error%s, %u warning%s.\n", errors, errors == 1 ? "" : "s", warnings,
                warnings == 1 ? "" : "s");
        return errors > 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* SIGTERM, SIGINT and SIGHUP are blocked from the first instruction of ours that runs, before
 * main() and before any thread exists (each thread inherits the mask: the resolver's), and stay
 * blocked: the event loop takes them from a signalfd (manager_add_signals()), which also reads
 * one that arrived meanwhile. Blocked any later, a SIGTERM before the loop is set up would kill
 * the daemon by default action (exit status 143), a window that the sanitizers' slower start
 * widens. What remains is the dynamic loader and the sanitizer runtime before any code of ours: the test
 * library waits for the mask in /proc/PID/status (wait_signals_blocked). */
static void stop_signals_mask(int how) {
        sigset_t ss;

        sigemptyset(&ss);
        sigaddset(&ss, SIGTERM);
        sigaddset(&ss, SIGINT);
        sigaddset(&ss, SIGHUP);
        (void) sigprocmask(how, &ss, NULL);
}

__attribute__((constructor)) static void block_stop_signals_early(void) {
        stop_signals_mask(SIG_BLOCK);
}

int main(int argc, char *argv[]) {
        _cleanup_(manager_freep) Manager *m = NULL;
        int r;

        /* Again, should a constructor of a library have unblocked them. */
        stop_signals_mask(SIG_BLOCK);
        log_parse_environment();

        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;

        /* No event loop here: Ctrl-C must work, also on a --config= that blocks (a FIFO). */
        if (arg_validate) {
                stop_signals_mask(SIG_UNBLOCK);
                return run_validate();
        }

        umask(0022);
        /* libssl writes to the KE socket with write(): a peer that hangs up must give EPIPE,
         * not kill the daemon. */
        (void) signal(SIGPIPE, SIG_IGN);

        r = manager_new(&m, &(ManagerOptions) {
                        .observe = arg_observe,
                        .config_file = arg_config_file,
                        .state_dir = arg_state_dir,
                        .nts_state_dir = arg_nts_state_dir,
                        .runtime_dir = arg_runtime_dir,
                        .test_poll_interval_usec = arg_test_poll_interval,
                        .test_fake_clock = arg_test_fake_clock,
                        .test_clock_offset_nsec = arg_test_clock_offset_nsec,
                });
        if (r < 0)
                return EXIT_FAILURE;

        /* Configuration is read first, as the invoking user: --config may point anywhere. */
        r = manager_load_config(m);
        if (r < 0)
                return EXIT_FAILURE;

        r = drop_privileges(!arg_observe);
        if (r < 0)
                return EXIT_FAILURE;

        if (arg_observe)
                log_info("Observe mode: measuring only, the system clock is never changed.");

        r = manager_bus_connect(m);
        if (r < 0)
                return EXIT_FAILURE;

        r = manager_start(m);
        if (r < 0)
                return EXIT_FAILURE;

        manager_notify_ready(m);

        r = sd_event_loop(manager_event(m));
        if (r < 0) {
                log_error_errno(r, "Event loop failed: %m");
                return EXIT_FAILURE;
        }

        (void) sd_notify(false, "STOPPING=1\nSTATUS=Shutting down...");
        if (manager_synchronized(m))
                manager_save_clock(m);
        manager_save_frequency(m);

        return EXIT_SUCCESS;
}
