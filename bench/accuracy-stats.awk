# SPDX-License-Identifier: LGPL-2.1-or-later
# The statistics of one run of bench/accuracy.sh (docs/ACCURACY.md), chrony's way: from a trace
# of "SECONDS OFFSET_S RATE_PPM" lines, one a simulated second (OFFSET_S: the daemon's clock minus
# true time; RATE_PPM: its total rate error, the kernel's frequency and slewing included), prints
#   RMS_S MAX_S FREQ_RMS_PPM SETTLE_S
# RMS and maximum of |OFFSET_S| and the RMS of RATE_PPM over the window from <= SECONDS < to,
# and SETTLE_S, the last second of the whole trace whose |OFFSET_S| exceeded bound (0 if none:
# a run that never settled shows the time of its last sample).
#   awk -v from=3600 -v to=86400 -v bound=0.001 -f accuracy-stats.awk TRACE
# Lines of another shape are skipped; a window without samples is an error.
BEGIN {
        if (from == "" || to == "" || bound == "") {
                print "accuracy-stats.awk: from, to and bound are required" > "/dev/stderr"
                exit 2
        }
        from += 0; to += 0; bound += 0
}
NF == 3 && $1 ~ /^[0-9.]+$/ {
        t = $1 + 0; o = $2 + 0; r = $3 + 0
        a = o < 0 ? -o : o
        if (a > bound)
                settle = t
        if (t < from || t >= to)
                next
        n++
        sum_o2 += o * o
        sum_r2 += r * r
        if (a > max)
                max = a
}
END {
        if (n == 0) {
                printf "accuracy-stats.awk: no sample in [%g, %g)\n", from, to > "/dev/stderr"
                exit 1
        }
        printf "%.9f\t%.9f\t%.6f\t%d\n", sqrt(sum_o2 / n), max, sqrt(sum_r2 / n), settle
}
