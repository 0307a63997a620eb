/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* NULL-terminated arrays of heap strings ("strv"), the way systemd passes string lists. A NULL
 * strv is the empty list everywhere. */

#include "macro.h"

char **strv_free(char **l);
DEFINE_TRIVIAL_CLEANUP_FUNC(char **, strv_free);
#define _cleanup_strv_free_ _cleanup_(strv_freep)

size_t strv_length(char * const *l) _pure_;
bool strv_contains(char * const *l, const char *s) _pure_;
bool strv_equal(char * const *a, char * const *b) _pure_;

/* Appends a copy of value; -ENOMEM on failure with *l unchanged. */
int strv_extend(char ***l, const char *value);
/* Appends value itself, taking ownership on success only. */
int strv_push(char ***l, char *value);

/* Words separated by runs of whitespace; an empty or all-blank s gives an empty (non-NULL) strv.
 * NULL on allocation failure. */
char **strv_split_whitespace(const char *s);

/* Sorts in strcmp() order. */
char **strv_sort(char **l);

#define STRV_FOREACH(s, l) for (char * const *s = (l); s && *s; s++)
