/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Syntax checks for host names and numeric addresses received as text from a peer. The input
 * is a length-bounded buffer that need not be NUL-terminated; an embedded NUL makes it
 * invalid. */

#include <stdbool.h>
#include <stddef.h>

/* IPv4 dotted-quad ("192.0.2.1") or IPv6 text ("2001:db8::1"), without zone index. */
bool ip_address_is_valid(const char *s, size_t n);

/* A DNS host name (RFC 1123 section 2.1): labels of 1-63 letters, digits and hyphens, not
 * starting or ending with a hyphen, separated by dots, an optional trailing dot, at most 253
 * characters without it. The last label must begin with a letter, so that a malformed
 * numeric address ("1.2.3", "1.2.3.256") is not taken for a name that a resolver would then
 * read as a legacy inet_aton() address. */
bool dns_name_is_valid(const char *s, size_t n);
