/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The clock file: its modification time records "the clock was at least here", so a machine
 * without a working RTC does not boot into 1970 (or into a date before this program was
 * built), which would also make every TLS certificate look not yet valid. */

#include <time.h>

#include "timesyncd-clock.h"

/* Reads the mtime of path (a missing file counts as the epoch) and, if the backend's clock
 * is behind max(mtime, floor), advances the clock to it. Returns 1 if the clock was advanced,
 * 0 if not, negative errno on failure. ret_floor, if set, receives the floor used. */
int clock_file_restore(ClockBackend *b, const char *path, time_t floor, struct timespec *ret_floor);

/* Creates path if needed and sets its mtime to ts, atomically enough for a timestamp. */
int clock_file_save(const char *path, const struct timespec *ts);
