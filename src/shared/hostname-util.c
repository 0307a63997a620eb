/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <arpa/inet.h>
#include <netinet/in.h>

#include "hostname-util.h"
#include "macro.h"

#define DNS_LABEL_MAX 63
#define DNS_NAME_MAX 253

bool ip_address_is_valid(const char *s, size_t n) {
        char text[INET6_ADDRSTRLEN];
        struct in6_addr a;

        assert(s || n == 0);

        if (n == 0 || n >= sizeof(text) || memchr(s, 0, n))
                return false;

        memcpy(text, s, n);
        text[n] = 0;

        /* inet_pton() takes neither zone indices nor the octal and short forms of inet_aton(). */
        return inet_pton(AF_INET, text, &a) == 1 || inet_pton(AF_INET6, text, &a) == 1;
}

static bool char_is_alpha(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool char_is_digit(char c) {
        return c >= '0' && c <= '9';
}

bool dns_name_is_valid(const char *s, size_t n) {
        size_t label_start = 0, last_label = 0;

        assert(s || n == 0);

        if (n > 0 && s[n - 1] == '.')
                n--;
        if (n == 0 || n > DNS_NAME_MAX)
                return false;

        for (size_t i = 0; i <= n; i++) {
                if (i == n || s[i] == '.') {
                        size_t len = i - label_start;

                        if (len == 0 || len > DNS_LABEL_MAX)
                                return false;
                        if (s[label_start] == '-' || s[i - 1] == '-')
                                return false;

                        last_label = label_start;
                        label_start = i + 1;
                        continue;
                }

                if (!char_is_alpha(s[i]) && !char_is_digit(s[i]) && s[i] != '-')
                        return false;
        }

        return char_is_alpha(s[last_label]);
}
