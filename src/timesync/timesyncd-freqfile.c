/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "log.h"
#include "timesyncd-freqfile.h"

/* A frequency and a newline, with room to spare: a larger file is not ours. */
#define FREQ_FILE_SIZE_MAX 64

int freq_file_parse(const char *text, double *ret_ppm) {
        char *end;
        double f;

        assert(text);
        assert(ret_ppm);

        if (!*text || strchr(" \t\n", *text))
                return -EINVAL;
        errno = 0;
        f = strtod(text, &end);
        if (errno != 0 || end == text || !isfinite(f) || fabs(f) > FREQ_FILE_MAX_PPM)
                return -EINVAL;
        if (*end == '\n')
                end++;
        if (*end)
                return -EINVAL;
        *ret_ppm = f;
        return 0;
}

int freq_file_load(const char *path, double *ret_ppm) {
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r;

        assert(path);
        assert(ret_ppm);

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        if (fd < 0) {
                if (errno == ENOENT)
                        return 0;
                return log_warning_errno(errno, "Failed to open frequency file %s, starting without it: %m", path);
        }
        r = read_full_fd(fd, FREQ_FILE_SIZE_MAX, &text, NULL);
        if (r < 0)
                return log_warning_errno(r, "Failed to read frequency file %s, starting without it: %m", path);
        r = freq_file_parse(text, ret_ppm);
        if (r < 0)
                return log_warning_errno(r, "Frequency file %s does not hold a frequency within +-%.0f ppm, ignoring it.",
                                         path, FREQ_FILE_MAX_PPM);
        return 1;
}

int freq_file_save(const char *path, double ppm) {
        char text[FREQ_FILE_SIZE_MAX];
        int n;

        assert(path);

        if (!isfinite(ppm) || fabs(ppm) > FREQ_FILE_MAX_PPM)
                return -EINVAL;
        n = snprintf(text, sizeof text, "%.4f\n", ppm);
        return write_file_atomic(path, text, (size_t) n, 0644, NULL);
}
