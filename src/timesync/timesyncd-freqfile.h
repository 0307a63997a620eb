/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The frequency file: the oscillator's frequency the clock's discipline learned, kept in the
 * state directory across reboots (the kernel forgets it), so that the next boot starts with it
 * instead of 0. One line, the frequency in ppm ("-20.013\n"). Written at most once an hour and
 * at stop, never per poll; a file that does not parse or holds an absurd frequency is refused
 * with a log line. */

/* The kernel's range (ADJ_FREQUENCY): a file beyond it was not written by us. */
#define FREQ_FILE_MAX_PPM 500.0

/* Parses the file's text; -EINVAL when it is not one finite number within the range. */
int freq_file_parse(const char *text, double *ret_ppm);
/* 1 and *ret_ppm when path holds a usable frequency, 0 when there is no file, a negative errno
 * (logged) when it cannot be read or is refused. */
int freq_file_load(const char *path, double *ret_ppm);
/* Writes it through a temporary file and a rename: a reader sees the old file or the new. */
int freq_file_save(const char *path, double ppm);
