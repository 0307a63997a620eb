/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Small string helpers with systemd's names and meanings. */

#include "macro.h"

#define WHITESPACE " \t\n\r"

/* s + strlen(prefix) when s starts with prefix, NULL otherwise. */
static inline char *startswith(const char *s, const char *prefix) {
        size_t n = strlen(prefix);

        return strneq(s, prefix, n) ? (char *) s + n : NULL;
}

/* Pointer to where suffix starts in s, NULL if s does not end with it. */
char *endswith(const char *s, const char *suffix) _pure_;

/* Equal strings, or both NULL. */
static inline bool streq_ptr(const char *a, const char *b) {
        return a && b ? streq(a, b) : a == b;
}

static inline char *skip_leading_whitespace(const char *s) {
        return (char *) s + strspn(s, WHITESPACE);
}

/* Removes leading and trailing whitespace in place; returns the new start. */
char *strstrip(char *s);

/* Concatenates the arguments up to the NULL; NULL on allocation failure. */
char *strjoin_sentinel(const char *first, ...) _sentinel_;
#define strjoin(first, ...) strjoin_sentinel((first), __VA_ARGS__, NULL)

/* Replaces *p with a copy of s (NULL frees it); -ENOMEM on failure, *p unchanged then. */
int free_and_strdup(char **p, const char *s);

/* 1 for "1", "yes", "y", "true", "t", "on", 0 for their opposites (any case), -EINVAL for
 * anything else: the booleans systemd accepts in configuration and environment variables. */
int parse_boolean(const char *s) _pure_;

/* A decimal number as this project writes one: digits only (no sign, blank, prefix or suffix,
 * so "15junk", "+15", " 15" and "" are refused) and at most max. -EINVAL for anything that is
 * not such a number, -ERANGE for one above max. */
int parse_unsigned(const char *s, uint64_t max, uint64_t *ret);

/* No control characters, quotes or backslashes: safe to print and to use as a name. */
bool string_is_safe(const char *s) _pure_;
