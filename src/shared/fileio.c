/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "fileio.h"

int read_line(FILE *f, size_t max, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t n = 0, allocated = 0, consumed = 0;

        assert(f);
        assert(ret);

        for (;;) {
                int c;

                errno = 0;
                c = getc_unlocked(f);
                if (c == EOF) {
                        if (ferror(f))
                                return errno > 0 ? -errno : -EIO;
                        break;
                }
                consumed++;

                if (c == '\n' || c == '\0')
                        break;
                if (c == '\r') {
                        c = getc_unlocked(f);
                        if (c == '\n')
                                consumed++;
                        else if (c != EOF)
                                ungetc(c, f);
                        break;
                }

                if (n >= max)
                        return -ENOBUFS;
                if (n + 2 > allocated) {
                        size_t a = MAX(allocated * 2, (size_t) 128);
                        char *b = realloc(buf, a);

                        if (!b)
                                return -ENOMEM;
                        buf = b;
                        allocated = a;
                }
                buf[n++] = (char) c;
        }

        if (!buf) {
                buf = strdup("");
                if (!buf)
                        return -ENOMEM;
        } else
                buf[n] = '\0';

        *ret = TAKE_PTR(buf);
        return consumed > INT32_MAX ? INT32_MAX : (int) consumed;
}
