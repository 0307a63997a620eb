/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fake-adjtimex.so (LD_PRELOAD): the kernel's clock state as a test wants it, for a program that
 * only reads it (systemd-time-wait-sync). A read (modes 0) returns the real kernel's answer with
 * STA_UNSYNC cleared while the file $FAKE_ADJTIMEX_SYNCED exists and set while it does not (the
 * return value TIME_OK or TIME_ERROR to match). Any call that would change something is refused
 * with EPERM, never passed on, and noted in $FAKE_ADJTIMEX_SYNCED.writes for the test to see. */

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/timex.h>
#include <unistd.h>

int adjtimex(struct timex *tx) {
        static int (*real)(struct timex *);
        const char *flag = getenv("FAKE_ADJTIMEX_SYNCED");
        char note[4096];
        int r;

        if (!flag) {
                errno = EINVAL;
                return -1;
        }
        if (tx->modes != 0) {
                snprintf(note, sizeof note, "%s.writes", flag);
                int fd = open(note, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
                if (fd >= 0) {
                        dprintf(fd, "modes=0x%x\n", tx->modes);
                        close(fd);
                }
                errno = EPERM;
                return -1;
        }
        if (!real)
                real = (int (*)(struct timex *)) dlsym(RTLD_NEXT, "adjtimex");
        if (!real) {
                errno = ENOSYS;
                return -1;
        }
        r = real(tx);
        if (r < 0)
                return r;
        if (access(flag, F_OK) == 0) {
                tx->status &= ~STA_UNSYNC;
                return TIME_OK;
        }
        tx->status |= STA_UNSYNC;
        return TIME_ERROR;
}
