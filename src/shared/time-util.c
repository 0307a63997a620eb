/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/timerfd.h>

#include "string-util.h"
#include "time-util.h"

typedef struct TimeUnit {
        const char *name;
        usec_t usec;
} TimeUnit;

/* The unit names systemd.time(7) documents. Matching picks the longest name, so the order does
 * not matter ("ms" beats "m", "min" beats "m"). */
static const TimeUnit parse_units[] = {
        { "usec", 1 },
        { "us", 1 },
        { "\xce\xbcs", 1 },     /* "μs", GREEK SMALL LETTER MU */
        { "\xc2\xb5s", 1 },     /* "µs", MICRO SIGN */
        { "msec", USEC_PER_MSEC },
        { "ms", USEC_PER_MSEC },
        { "seconds", USEC_PER_SEC },
        { "second", USEC_PER_SEC },
        { "sec", USEC_PER_SEC },
        { "s", USEC_PER_SEC },
        { "minutes", USEC_PER_MINUTE },
        { "minute", USEC_PER_MINUTE },
        { "min", USEC_PER_MINUTE },
        { "m", USEC_PER_MINUTE },
        { "hours", USEC_PER_HOUR },
        { "hour", USEC_PER_HOUR },
        { "hr", USEC_PER_HOUR },
        { "h", USEC_PER_HOUR },
        { "days", USEC_PER_DAY },
        { "day", USEC_PER_DAY },
        { "d", USEC_PER_DAY },
        { "weeks", USEC_PER_WEEK },
        { "week", USEC_PER_WEEK },
        { "w", USEC_PER_WEEK },
        { "months", USEC_PER_MONTH },
        { "month", USEC_PER_MONTH },
        { "M", USEC_PER_MONTH },
        { "years", USEC_PER_YEAR },
        { "year", USEC_PER_YEAR },
        { "y", USEC_PER_YEAR },
};

/* The units format_timespan() prints, largest first; parse_sec() reads all of them back. */
static const TimeUnit format_units[] = {
        { "y", USEC_PER_YEAR },
        { "month", USEC_PER_MONTH },
        { "w", USEC_PER_WEEK },
        { "d", USEC_PER_DAY },
        { "h", USEC_PER_HOUR },
        { "min", USEC_PER_MINUTE },
        { "s", USEC_PER_SEC },
        { "ms", USEC_PER_MSEC },
        { "us", 1 },
};

usec_t now(clockid_t clock) {
        struct timespec ts;

        assert_se(clock_gettime(clock, &ts) == 0);
        return timespec_load(&ts);
}

usec_t timespec_load(const struct timespec *ts) {
        assert(ts);

        if (ts->tv_sec < 0 || ts->tv_nsec < 0)
                return USEC_INFINITY;
        if ((usec_t) ts->tv_sec >
            (USEC_INFINITY - (usec_t) ts->tv_nsec / NSEC_PER_USEC) / USEC_PER_SEC)
                return USEC_INFINITY;

        return (usec_t) ts->tv_sec * USEC_PER_SEC + (usec_t) ts->tv_nsec / NSEC_PER_USEC;
}

struct timespec *timespec_store(struct timespec *ts, usec_t u) {
        assert(ts);

        /* time_t is signed; whatever it cannot hold is stored as "unset". */
        const usec_t time_t_max = ((usec_t) 1 << (sizeof(time_t) * 8 - 1)) - 1;
        if (u == USEC_INFINITY || u / USEC_PER_SEC > time_t_max) {
                ts->tv_sec = (time_t) -1;
                ts->tv_nsec = -1L;
                return ts;
        }

        ts->tv_sec = (time_t) (u / USEC_PER_SEC);
        ts->tv_nsec = (long) ((u % USEC_PER_SEC) * NSEC_PER_USEC);
        return ts;
}

/* Length of the longest unit name s starts with, 0 if none; the unit goes to *ret. */
static size_t match_unit(const char *s, usec_t *ret) {
        size_t best = 0;

        for (size_t i = 0; i < ELEMENTSOF(parse_units); i++) {
                size_t n = strlen(parse_units[i].name);

                if (n > best && strneq(s, parse_units[i].name, n)) {
                        best = n;
                        *ret = parse_units[i].usec;
                }
        }

        return best;
}

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

/* One "<number>[.<fraction>][ ]<unit>" term starting at *p; adds its value to *sum. */
static int parse_term(const char **p, usec_t *sum) {
        const char *s = *p, *frac = NULL, *after;
        usec_t whole = 0, unit = USEC_PER_SEC, k;
        size_t n_frac = 0, n;

        if (*s == '-')
                return -ERANGE;

        for (; is_digit(*s); s++) {
                if (whole > (USEC_INFINITY - 9) / 10)
                        return -ERANGE;
                whole = whole * 10 + (usec_t) (*s - '0');
        }
        if (*s == '.') {
                frac = ++s;
                while (is_digit(*s))
                        s++;
                n_frac = (size_t) (s - frac);
                /* "5." and "5.sec" are typos, not five seconds. */
                if (n_frac == 0)
                        return -EINVAL;
        } else if (s == *p)
                return -EINVAL;

        after = skip_leading_whitespace(s);
        n = match_unit(after, &unit);
        if (n > 0)
                s = after + n;
        else if (after == s && *s != '\0')
                /* "12.34.56" or "5x": junk glued to the number. */
                return -EINVAL;

        /* whole * unit may be as large as the largest finite value, never more. */
        if (whole > USEC_INFINITY / unit)
                return -ERANGE;
        k = whole * unit;
        if (k >= USEC_INFINITY - *sum)
                return -ERANGE;
        *sum += k;

        /* Each fraction digit is worth a tenth of the previous one; digits below a
         * microsecond count for nothing. */
        usec_t m = unit;
        for (size_t i = 0; i < n_frac; i++) {
                m /= 10;
                k = (usec_t) (frac[i] - '0') * m;
                if (k >= USEC_INFINITY - *sum)
                        return -ERANGE;
                *sum += k;
        }

        *p = s;
        return 0;
}

int parse_sec(const char *s, usec_t *ret) {
        const char *p, *e;
        usec_t sum = 0;
        bool something = false;
        int r;

        assert(s);

        p = skip_leading_whitespace(s);
        e = startswith(p, "infinity");
        if (e) {
                if (*skip_leading_whitespace(e) != '\0')
                        return -EINVAL;
                if (ret)
                        *ret = USEC_INFINITY;
                return 0;
        }

        for (;;) {
                p = skip_leading_whitespace(p);
                if (*p == '\0')
                        break;

                r = parse_term(&p, &sum);
                if (r < 0)
                        return r;
                something = true;
        }

        if (!something)
                return -EINVAL;

        if (ret)
                *ret = sum;
        return 0;
}

/* How many decimal digits a power of ten has after the leading 1 (1000 -> 3); for other values
 * the number of divisions by ten that leave more than 1. */
static int decimal_exponent(usec_t v) {
        int n = 0;

        for (; v > 1; v /= 10)
                n++;
        return n;
}

static void copy_truncated(char *buf, size_t size, const char *s) {
        size_t n = MIN(strlen(s), size - 1);

        memcpy(buf, s, n);
        buf[n] = '\0';
}

char *format_timespan(char *buf, size_t size, usec_t t, usec_t accuracy) {
        size_t used = 0;

        assert(buf);
        assert(size > 0);

        if (t == USEC_INFINITY) {
                copy_truncated(buf, size, "infinity");
                return buf;
        }
        if (t == 0) {
                copy_truncated(buf, size, "0");
                return buf;
        }
        if (accuracy == 0)
                accuracy = 1;

        buf[0] = '\0';
        for (size_t i = 0; i < ELEMENTSOF(format_units) && t > 0; i++) {
                const TimeUnit *u = format_units + i;
                usec_t whole, rest;
                int k, decimals;

                if (used > 0 && t < accuracy)
                        break;
                if (t < u->usec)
                        continue;
                if (used + 1 >= size)
                        break;

                whole = t / u->usec;
                rest = t % u->usec;
                decimals = decimal_exponent(u->usec) - decimal_exponent(accuracy);

                if (t < USEC_PER_MINUTE && rest > 0 && decimals > 0) {
                        /* Short spans read better as one decimal number: "1.500s". */
                        for (int d = decimal_exponent(accuracy); d > 0; d--)
                                rest /= 10;
                        k = snprintf(buf + used, size - used, "%s" USEC_FMT ".%0*" PRIu64 "%s",
                                     used > 0 ? " " : "", whole, decimals, rest, u->name);
                        t = 0;
                } else {
                        k = snprintf(buf + used, size - used, "%s" USEC_FMT "%s",
                                     used > 0 ? " " : "", whole, u->name);
                        t = rest;
                }

                if (k < 0)
                        break;
                used += MIN((size_t) k, size - 1 - used);
        }

        buf[used] = '\0';
        return buf;
}

char *format_timestamp(char *buf, size_t size, usec_t t) {
        time_t sec;
        struct tm tm;

        assert(buf);
        assert(size > 0);

        sec = (time_t) (t / USEC_PER_SEC);
        if (t == 0 || t == USEC_INFINITY || (usec_t) sec != t / USEC_PER_SEC || !localtime_r(&sec, &tm) ||
            strftime(buf, size, "%a %Y-%m-%d %H:%M:%S %Z", &tm) == 0)
                copy_truncated(buf, size, "n/a");
        return buf;
}

int timerfd_arm_clock_change(int fd) {
        /* The largest time_t: a timer that never expires, whatever the clock says. */
        struct itimerspec its = {
                .it_value.tv_sec = (time_t) ((UINTMAX_C(1) << (sizeof(time_t) * CHAR_BIT - 1)) - 1),
        };

        if (timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &its, NULL) < 0)
                return -errno;
        return 0;
}
