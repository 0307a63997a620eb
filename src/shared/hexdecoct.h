/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Lower-case hexadecimal, for state files and logs. */

#include <stdio.h>
#include <sys/types.h>

void hex_write(FILE *f, const void *data, size_t size);
/* Decodes a string of exactly 2n hex digits into at most max bytes. Returns n, or -EINVAL
 * for odd length or non-hex characters, -ENOBUFS if longer than max. */
ssize_t hex_decode(const char *s, void *out, size_t max);
