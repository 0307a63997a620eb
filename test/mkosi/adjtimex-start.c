/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The start of the simulation's scenario test-sim-kernel-clock-50ms-start-settles-within-the-
 * guest-bounds on the qemu guest's own kernel: the kernel's discipline as at boot (PLL off,
 * unsynchronized, no phase, no adjtime() slew left, frequency 0, as the simulation's model
 * starts), then the clock stepped by OFFSET seconds (ADJ_SETOFFSET: atomic, no time lost
 * between reading the clock and setting it). Built for the guest only by test/mkosi/run.sh:
 * it changes the clock of the machine it runs on, so it refuses to run without
 * --change-this-machines-clock. Prints the kernel's state after it (adjtimex-read's lines). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timex.h>

#define NSEC_PER_SEC 1000000000L

static int call(struct timex *t, const char *what) {
        int r = adjtimex(t);

        if (r < 0)
                fprintf(stderr, "adjtimex (%s): %s\n", what, strerror(errno));
        return r;
}

int main(int argc, char *argv[]) {
        struct timex slew = { .modes = ADJ_OFFSET_SINGLESHOT, .offset = 0 };
        struct timex reset = {
                .modes = ADJ_STATUS | ADJ_NANO | ADJ_FREQUENCY | ADJ_OFFSET | ADJ_MAXERROR | ADJ_ESTERROR,
                .status = STA_UNSYNC,
                .maxerror = 16000000,
                .esterror = 16000000,
        };
        struct timex step = { .modes = ADJ_SETOFFSET | ADJ_NANO };
        double offset;
        long ns;
        char *end;
        int state;

        if (argc != 3 || strcmp(argv[1], "--change-this-machines-clock") != 0) {
                fputs("usage: adjtimex-start --change-this-machines-clock OFFSET_S\n", stderr);
                return 2;
        }
        offset = strtod(argv[2], &end);
        if (*end != '\0' || offset <= -1 || offset >= 1) {
                fputs("adjtimex-start: OFFSET_S is a number of seconds within +-1\n", stderr);
                return 2;
        }
        ns = (long) (offset * 1e9 + (offset < 0 ? -0.5 : 0.5));
        /* timeval with tv_usec in nanoseconds (ADJ_NANO), its fraction positive */
        step.time.tv_sec = ns < 0 ? -1 : 0;
        step.time.tv_usec = ns < 0 ? ns + NSEC_PER_SEC : ns;

        if (call(&slew, "no adjtime() slew") < 0 || call(&reset, "discipline as at boot") < 0 ||
            call(&step, "step") < 0)
                return 1;

        reset = (struct timex) { .modes = 0 };
        state = call(&reset, "read");
        if (state < 0)
                return 1;
        printf("state=%d\nstatus=0x%x\noffset=%ld\nfreq=%ld\nmaxerror=%ld\nesterror=%ld\ntick=%ld\n",
               state, (unsigned) reset.status, (long) reset.offset, (long) reset.freq,
               (long) reset.maxerror, (long) reset.esterror, (long) reset.tick);
        return 0;
}
