/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Prints the kernel clock discipline state without changing it: adjtimex() with modes = 0 is a
 * pure read. Tests snapshot this before and after a run to prove nothing touched the clock. */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/timex.h>

int main(int argc, char *argv[]) {
        struct timex tx = { .modes = 0 };
        int state;

        (void) argv;
        if (argc != 1) {
                fputs("usage: adjtimex-read (no arguments; read-only)\n", stderr);
                return 2;
        }

        state = adjtimex(&tx);
        if (state < 0) {
                fprintf(stderr, "adjtimex: %s\n", strerror(errno));
                return 1;
        }

        printf("state=%d\nstatus=0x%x\noffset=%ld\nfreq=%ld\nmaxerror=%ld\nesterror=%ld\ntick=%ld\n",
               state, (unsigned) tx.status, (long) tx.offset, (long) tx.freq,
               (long) tx.maxerror, (long) tx.esterror, (long) tx.tick);
        return 0;
}
