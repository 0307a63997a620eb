/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

#include "macro.h"

DEFINE_TRIVIAL_CLEANUP_FUNC_VOID(FILE *, fclose);

/* Longest line a configuration file may have, like systemd's LONG_LINE_MAX. */
#define LONG_LINE_MAX (1U * 1024U * 1024U)

/* Reads one line without its terminator. "\n", "\r\n", a lone "\r" and NUL all end a line, so a
 * stray NUL byte cannot hide the rest of a line from a reader that uses C strings. Returns the
 * number of bytes consumed (0 at end of file), -ENOBUFS when the line is longer than max, or
 * -errno on a read error. *ret is always a NUL-terminated heap string on success. */
int read_line(FILE *f, size_t max, char **ret);
