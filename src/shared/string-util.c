/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdarg.h>

#include "string-util.h"

char *endswith(const char *s, const char *suffix) {
        size_t n = strlen(s), m = strlen(suffix);

        if (m > n || !streq(s + n - m, suffix))
                return NULL;
        return (char *) s + n - m;
}

char *strstrip(char *s) {
        char *e;

        s = skip_leading_whitespace(s);
        for (e = s + strlen(s); e > s && strchr(WHITESPACE, e[-1]); e--)
                ;
        *e = '\0';
        return s;
}

char *strjoin_sentinel(const char *first, ...) {
        va_list ap;
        size_t n = 0;
        char *r, *p;

        va_start(ap, first);
        for (const char *s = first; s; s = va_arg(ap, const char *))
                n += strlen(s);
        va_end(ap);

        r = malloc(n + 1);
        if (!r)
                return NULL;

        p = r;
        va_start(ap, first);
        for (const char *s = first; s; s = va_arg(ap, const char *))
                p = stpcpy(p, s);
        va_end(ap);

        return r;
}

int parse_unsigned(const char *s, uint64_t max, uint64_t *ret) {
        uint64_t v = 0;
        bool too_big = false;

        assert(s);

        if (*s == '\0')
                return -EINVAL;
        for (; *s; s++) {
                if (*s < '0' || *s > '9')
                        return -EINVAL;
                /* Keep reading after an overflow: "99999999999999999999x" is not a number at all. */
                if (v > (UINT64_MAX - (uint64_t) (*s - '0')) / 10)
                        too_big = true;
                else
                        v = v * 10 + (uint64_t) (*s - '0');
        }
        if (too_big || v > max)
                return -ERANGE;

        if (ret)
                *ret = v;
        return 0;
}

int free_and_strdup(char **p, const char *s) {
        char *copy = NULL;

        assert(p);

        if (s) {
                copy = strdup(s);
                if (!copy)
                        return -ENOMEM;
        }
        free(*p);
        *p = copy;
        return 0;
}

bool string_is_safe(const char *s) {
        for (; *s; s++)
                if ((unsigned char) *s < ' ' || *s == 0x7f || strchr("\\\"'", *s))
                        return false;
        return true;
}

int parse_boolean(const char *s) {
        static const char *const yes[] = { "1", "yes", "y", "true", "t", "on" };
        static const char *const no[] = { "0", "no", "n", "false", "f", "off" };

        assert(s);

        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                if (strcaseeq(s, yes[i]))
                        return 1;
        for (size_t i = 0; i < ELEMENTSOF(no); i++)
                if (strcaseeq(s, no[i]))
                        return 0;
        return -EINVAL;
}
