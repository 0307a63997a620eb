/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* main() for fuzzers built without libFuzzer: runs LLVMFuzzerTestOneInput() once over every
 * file given, or every file in every directory given. Fails when nothing was run. */

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "fuzz.h"
#include "macro.h"

static int run_file(int dir_fd, const char *path) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ uint8_t *buf = NULL;
        struct stat st;
        size_t n = 0;

        fd = openat(dir_fd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0)
                return -errno;

        /* A fresh allocation of exactly the input's size, so that ASan sees overreads. */
        buf = malloc(MAX((size_t) st.st_size, (size_t) 1));
        if (!buf)
                return -ENOMEM;
        while (n < (size_t) st.st_size) {
                ssize_t l = read(fd, buf + n, (size_t) st.st_size - n);
                if (l < 0)
                        return -errno;
                if (l == 0)
                        break;
                n += (size_t) l;
        }

        (void) LLVMFuzzerTestOneInput(buf, n);
        return 0;
}

static int run_dir(const char *path, size_t *count) {
        DIR *d;
        struct dirent *de;
        int r = 0;

        d = opendir(path);
        if (!d)
                return -errno;

        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                r = run_file(dirfd(d), de->d_name);
                if (r < 0) {
                        fprintf(stderr, "%s/%s: %s\n", path, de->d_name, strerror(-r));
                        break;
                }
                (*count)++;
        }

        closedir(d);
        return r;
}

int main(int argc, char *argv[]) {
        size_t count = 0;
        struct stat st;
        int r;

        for (int i = 1; i < argc; i++) {
                if (stat(argv[i], &st) < 0) {
                        fprintf(stderr, "%s: %m\n", argv[i]);
                        return EXIT_FAILURE;
                }
                if (S_ISDIR(st.st_mode))
                        r = run_dir(argv[i], &count);
                else {
                        r = run_file(AT_FDCWD, argv[i]);
                        if (r >= 0)
                                count++;
                }
                if (r < 0) {
                        fprintf(stderr, "%s: %s\n", argv[i], strerror(-r));
                        return EXIT_FAILURE;
                }
        }

        printf("%zu inputs run\n", count);
        return count > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
