/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "hostname-util.h"

static bool is_alnum(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool hostname_is_valid(const char *s) {
        size_t len, label = 0;
        bool last_label_numeric = true;

        assert(s);

        len = strlen(s);
        if (len > 0 && s[len - 1] == '.')
                len--;
        if (len == 0 || len > HOSTNAME_MAX)
                return false;

        for (size_t i = 0; i < len; i++) {
                char c = s[i];

                if (c == '.') {
                        if (label == 0 || s[i - 1] == '-')
                                return false;
                        label = 0;
                        last_label_numeric = true;
                        continue;
                }

                if (c == '-') {
                        if (label == 0)
                                return false;
                        last_label_numeric = false;
                } else if (!is_alnum(c))
                        return false;
                else if (c < '0' || c > '9')
                        last_label_numeric = false;

                if (++label > HOSTNAME_LABEL_MAX)
                        return false;
        }

        return label > 0 && s[len - 1] != '-' && !last_label_numeric;
}
