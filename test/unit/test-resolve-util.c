/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* resolve-util's rules that need no resolver: which errors it reports as what, and when a name
 * without an address is asked again per family to learn whether its validation failed (resolved
 * 252 answers NoSuchRR for both families when the A records fail DNSSEC and AAAA validates
 * empty, and DnssecFailed for A alone). The whole path against resolved and the signed zone is
 * test/integration/dns/test-daemon-resolved.sh. */

#include <errno.h>
#include <sys/socket.h>

#include "resolve-util.h"
#include "tests.h"

static void test_no_address_for_both_families_is_asked_again_per_family(void) {
        static const struct {
                const char *what;
                int family, asked;
                bool no_such_rr, validate;
                int next;
        } table[] = {
                { "both families, none: ask for IPv4", AF_UNSPEC, AF_UNSPEC, true, true, AF_INET },
                { "IPv4 none either: ask for IPv6", AF_UNSPEC, AF_INET, true, true, AF_INET6 },
                { "IPv6 none either: no such host name", AF_UNSPEC, AF_INET6, true, true, AF_UNSPEC },
                { "a name that does not exist is final", AF_UNSPEC, AF_UNSPEC, false, true, AF_UNSPEC },
                { "another error is final", AF_UNSPEC, AF_INET, false, true, AF_UNSPEC },
                { "without validation nothing can fail it", AF_UNSPEC, AF_UNSPEC, true, false, AF_UNSPEC },
                { "one family asked: resolved said why already", AF_INET, AF_INET, true, true, AF_UNSPEC },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                printf("  %s\n", table[i].what);
                ASSERT_EQ(resolved_hostname_probe(table[i].family, table[i].asked, table[i].no_such_rr,
                                                  table[i].validate),
                          table[i].next);
        }
}

static void test_errors_are_told_as_what_they_are(void) {
        ASSERT_STREQ(resolve_error_string(-EBADMSG), "DNSSEC validation failed");
        ASSERT_STREQ(resolve_error_string(-ENOENT), "no such host name");
        ASSERT_STREQ(resolve_error_string(-EAGAIN), "temporary failure in name resolution");
}

TEST_MAIN(TEST_CASE(test_no_address_for_both_families_is_asked_again_per_family),
          TEST_CASE(test_errors_are_told_as_what_they_are));
