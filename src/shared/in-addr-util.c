/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <arpa/inet.h>

#include "in-addr-util.h"

size_t family_address_size(int family) {
        switch (family) {
        case AF_INET:
                return sizeof(struct in_addr);
        case AF_INET6:
                return sizeof(struct in6_addr);
        default:
                return 0;
        }
}

int in_addr_from_string(int family, const char *s, union in_addr_union *ret) {
        union in_addr_union u = {};

        assert(s);

        if (!address_family_is_ip(family))
                return -EAFNOSUPPORT;
        if (inet_pton(family, s, &u) <= 0)
                return -EINVAL;

        if (ret)
                *ret = u;
        return 0;
}

int in_addr_from_string_auto(const char *s, int *ret_family, union in_addr_union *ret) {
        static const int families[] = { AF_INET, AF_INET6 };

        assert(s);

        for (size_t i = 0; i < ELEMENTSOF(families); i++)
                if (in_addr_from_string(families[i], s, ret) >= 0) {
                        if (ret_family)
                                *ret_family = families[i];
                        return 0;
                }

        return -EINVAL;
}

const char *in_addr_to_string(int family, const union in_addr_union *u, char *buf, size_t size) {
        assert(u);
        assert(buf);

        if (!address_family_is_ip(family))
                return NULL;
        return inet_ntop(family, u, buf, (socklen_t) size);
}

bool in_addr_is_null(int family, const union in_addr_union *u) {
        static const union in_addr_union null = {};

        assert(u);
        return in_addr_equal(family, u, &null);
}

bool in_addr_equal(int family, const union in_addr_union *a, const union in_addr_union *b) {
        size_t n = family_address_size(family);

        assert(a);
        assert(b);
        return n > 0 && memcmp(a, b, n) == 0;
}
