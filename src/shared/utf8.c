/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "utf8.h"

/* Length of the sequence a lead byte starts, 0 for a byte that cannot start one. */
static size_t utf8_sequence_length(unsigned char c) {
        if (c < 0x80)
                return 1;
        if (c >= 0xc2 && c <= 0xdf)
                return 2;
        if (c >= 0xe0 && c <= 0xef)
                return 3;
        if (c >= 0xf0 && c <= 0xf4)
                return 4;
        return 0;
}

bool utf8_is_valid(const char *s) {
        const unsigned char *p = (const unsigned char *) s;

        while (*p) {
                size_t n = utf8_sequence_length(*p);
                uint32_t cp;

                if (n == 0)
                        return false;
                if (n == 1) {
                        p++;
                        continue;
                }

                cp = *p & (0x7f >> n);
                for (size_t i = 1; i < n; i++) {
                        if ((p[i] & 0xc0) != 0x80)
                                return false;   /* also catches the NUL terminator */
                        cp = (cp << 6) | (p[i] & 0x3f);
                }

                if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
                    (cp >= 0xd800 && cp <= 0xdfff))
                        return false;
                p += n;
        }

        return true;
}
