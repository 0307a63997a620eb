/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "hexdecoct.h"
#include "macro.h"

void hex_write(FILE *f, const void *data, size_t size) {
        static const char digits[] = "0123456789abcdef";
        const uint8_t *p = data;
        char chunk[128];
        size_t n = 0;

        /* The cookie jar is written before every few requests: one fprintf() per byte made
         * this the largest part of a poll's CPU time (callgrind), a table and fwrite() not. */
        for (size_t i = 0; i < size; i++) {
                chunk[n++] = digits[p[i] >> 4];
                chunk[n++] = digits[p[i] & 0xf];
                if (n == sizeof(chunk)) {
                        fwrite(chunk, 1, n, f);
                        n = 0;
                }
        }
        if (n > 0)
                fwrite(chunk, 1, n, f);
}

static int unhex(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -EINVAL;
}

ssize_t hex_decode(const char *s, void *out, size_t max) {
        size_t l = strlen(s);
        uint8_t *o = out;

        if (l % 2 != 0)
                return -EINVAL;
        if (l / 2 > max)
                return -ENOBUFS;

        for (size_t i = 0; i < l / 2; i++) {
                int hi = unhex(s[2 * i]), lo = unhex(s[2 * i + 1]);
                if (hi < 0 || lo < 0)
                        return -EINVAL;
                o[i] = (uint8_t) (hi << 4 | lo);
        }
        return (ssize_t) (l / 2);
}
