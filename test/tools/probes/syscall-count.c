/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * syscall-count PID: counts the system calls of every thread of PID until SIGINT or SIGTERM,
 * then detaches and prints "syscalls=N top=NAME:COUNT,..." (most frequent first; x86-64
 * numbers where the name is not in the table below). The qemu guest of the mkosi suite has no strace (and its images are reused between
 * runs): this is the part of `strace -c -f -p PID` that the per-poll comparison with stock
 * needs. It only observes: every stop is resumed at once, and a signal meant for the tracee is
 * passed on.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/wait.h>

#define MAX_NR 1024
#define MAX_TASKS 256

/* x86-64 numbers of the calls a daemon of this kind makes; the others are printed as numbers. */
static const char *const syscall_names[MAX_NR] = {
        [0] = "read", [1] = "write", [2] = "open", [3] = "close", [4] = "stat", [5] = "fstat",
        [6] = "lstat", [7] = "poll", [8] = "lseek", [9] = "mmap", [10] = "mprotect",
        [11] = "munmap", [12] = "brk", [13] = "rt_sigaction", [14] = "rt_sigprocmask",
        [15] = "rt_sigreturn", [16] = "ioctl", [17] = "pread64", [18] = "pwrite64", [19] = "readv",
        [20] = "writev", [21] = "access", [22] = "pipe", [23] = "select", [24] = "sched_yield",
        [25] = "mremap", [28] = "madvise", [32] = "dup", [33] = "dup2", [35] = "nanosleep",
        [39] = "getpid", [41] = "socket", [42] = "connect", [43] = "accept", [44] = "sendto",
        [45] = "recvfrom", [46] = "sendmsg", [47] = "recvmsg", [48] = "shutdown", [49] = "bind",
        [50] = "listen", [51] = "getsockname", [52] = "getpeername", [53] = "socketpair",
        [54] = "setsockopt", [55] = "getsockopt", [56] = "clone", [57] = "fork", [59] = "execve",
        [60] = "exit", [61] = "wait4", [62] = "kill", [63] = "uname", [72] = "fcntl",
        [74] = "fsync", [75] = "fdatasync", [77] = "ftruncate", [79] = "getcwd", [82] = "rename",
        [83] = "mkdir", [87] = "unlink", [89] = "readlink", [96] = "gettimeofday", [102] = "getuid",
        [104] = "getgid", [107] = "geteuid", [108] = "getegid", [110] = "getppid", [137] = "statfs",
        [138] = "fstatfs", [157] = "prctl", [159] = "adjtimex", [186] = "gettid", [201] = "time",
        [202] = "futex", [217] = "getdents64", [228] = "clock_gettime", [229] = "clock_getres",
        [230] = "clock_nanosleep", [231] = "exit_group", [232] = "epoll_wait", [233] = "epoll_ctl",
        [234] = "tgkill", [253] = "inotify_add_watch", [254] = "inotify_rm_watch", [257] = "openat",
        [262] = "newfstatat", [263] = "unlinkat", [264] = "renameat", [267] = "readlinkat",
        [269] = "faccessat", [270] = "pselect6", [271] = "ppoll", [280] = "utimensat",
        [281] = "epoll_pwait", [282] = "signalfd", [283] = "timerfd_create", [284] = "eventfd",
        [286] = "timerfd_settime", [287] = "timerfd_gettime", [288] = "accept4",
        [289] = "signalfd4", [290] = "eventfd2", [291] = "epoll_create1", [292] = "dup3",
        [293] = "pipe2", [294] = "inotify_init1", [299] = "recvmmsg", [302] = "prlimit64",
        [305] = "clock_adjtime", [307] = "sendmmsg", [316] = "renameat2", [318] = "getrandom",
        [332] = "statx", [334] = "rseq", [435] = "clone3", [436] = "close_range",
        [439] = "faccessat2", [441] = "epoll_pwait2",
};

static volatile sig_atomic_t stop;
static uint64_t counts[MAX_NR];
static pid_t tasks[MAX_TASKS];
static size_t n_tasks;

static void on_signal(int sig) {
        (void) sig;
        stop = 1;
}

static void add_task(pid_t tid) {
        for (size_t i = 0; i < n_tasks; i++)
                if (tasks[i] == tid)
                        return;
        if (n_tasks < MAX_TASKS)
                tasks[n_tasks++] = tid;
}

static void drop_task(pid_t tid) {
        for (size_t i = 0; i < n_tasks; i++)
                if (tasks[i] == tid) {
                        tasks[i] = tasks[--n_tasks];
                        return;
                }
}

/* Every thread of the process, seized and set running to its next system call. */
static int attach_all(pid_t pid) {
        char path[64];
        struct dirent *de;
        DIR *d;

        snprintf(path, sizeof(path), "/proc/%d/task", (int) pid);
        d = opendir(path);
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                pid_t tid = (pid_t) atoi(de->d_name);

                if (tid <= 0)
                        continue;
                /* A thread that ended meanwhile is simply not counted. */
                if (ptrace(PTRACE_SEIZE, tid, NULL,
                           (void *) (long) (PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE)) < 0)
                        continue;
                add_task(tid);
                /* SEIZE does not stop it: interrupt once, so that PTRACE_SYSCALL applies. */
                (void) ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
        }
        closedir(d);
        return n_tasks > 0 ? 0 : -ESRCH;
}

/* Each thread interrupted and let go; a signal caught in its stop is delivered. */
static void detach_all(void) {
        while (n_tasks > 0) {
                pid_t tid = tasks[n_tasks - 1];
                int status, sig = 0;

                if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0) {
                        n_tasks--;
                        continue;
                }
                if (waitpid(tid, &status, __WALL) < 0 || !WIFSTOPPED(status)) {
                        n_tasks--;
                        continue;
                }
                if (WSTOPSIG(status) != (SIGTRAP | 0x80) && (status >> 16) == 0 && WSTOPSIG(status) != SIGTRAP)
                        sig = WSTOPSIG(status);
                (void) ptrace(PTRACE_DETACH, tid, NULL, (void *) (long) sig);
                n_tasks--;
        }
}

static int by_count(const void *a, const void *b) {
        uint64_t ca = counts[*(const int *) a], cb = counts[*(const int *) b];
        return ca < cb ? 1 : ca > cb ? -1 : 0;
}

int main(int argc, char *argv[]) {
        struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: waitpid() returns */
        uint64_t total = 0;
        int order[MAX_NR];
        pid_t pid;

        if (argc != 2 || (pid = (pid_t) atoi(argv[1])) <= 0) {
                fprintf(stderr, "usage: %s PID\n", argv[0]);
                return 2;
        }
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        if (attach_all(pid) < 0) {
                fprintf(stderr, "syscall-count: cannot trace %d: %m\n", (int) pid);
                return 1;
        }

        while (!stop && n_tasks > 0) {
                struct __ptrace_syscall_info info;
                int status, sig = 0;
                pid_t tid = waitpid(-1, &status, __WALL);

                if (tid < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                if (WIFEXITED(status) || WIFSIGNALED(status)) {
                        drop_task(tid);
                        continue;
                }
                if (!WIFSTOPPED(status))
                        continue;
                if (WSTOPSIG(status) == (SIGTRAP | 0x80)) {
                        if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, (void *) sizeof(info), &info) > 0 &&
                            info.op == PTRACE_SYSCALL_INFO_ENTRY) {
                                total++;
                                if (info.entry.nr < MAX_NR)
                                        counts[info.entry.nr]++;
                        }
                } else if ((status >> 16) == PTRACE_EVENT_CLONE) {
                        unsigned long child;

                        /* The new thread inherits the tracing; it starts with a stop of its own. */
                        if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &child) == 0)
                                add_task((pid_t) child);
                } else if ((status >> 16) == 0 && WSTOPSIG(status) != SIGTRAP)
                        sig = WSTOPSIG(status); /* a signal for the tracee: passed on */
                else
                        add_task(tid);
                (void) ptrace(PTRACE_SYSCALL, tid, NULL, (void *) (long) sig);
        }
        detach_all();

        for (int i = 0; i < MAX_NR; i++)
                order[i] = i;
        qsort(order, MAX_NR, sizeof(order[0]), by_count);
        printf("syscalls=%llu top=", (unsigned long long) total);
        for (int i = 0; i < 6 && counts[order[i]] > 0; i++) {
                if (syscall_names[order[i]])
                        printf("%s%s:%llu", i ? "," : "", syscall_names[order[i]], (unsigned long long) counts[order[i]]);
                else
                        printf("%s%d:%llu", i ? "," : "", order[i], (unsigned long long) counts[order[i]]);
        }
        printf("\n");
        return 0;
}
