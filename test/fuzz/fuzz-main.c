/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Replays inputs through a fuzzer without libFuzzer: each argument is a file, or a directory
 * whose files are all fed to LLVMFuzzerTestOneInput() once. This lets every build run the seed
 * corpora as regression tests. */

#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>

#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
        _cleanup_free_ uint8_t *buf = NULL;
        size_t size = 0, allocated = 0;
        FILE *f;

        f = fopen(path, "re");
        if (!f) {
                fprintf(stderr, "Failed to open %s: %m\n", path);
                return -errno;
        }
        for (;;) {
                if (size == allocated) {
                        size_t a = MAX(allocated * 2, (size_t) 4096);
                        uint8_t *b = realloc(buf, a);

                        if (!b) {
                                fclose(f);
                                return -ENOMEM;
                        }
                        buf = b;
                        allocated = a;
                }
                size_t n = fread(buf + size, 1, allocated - size, f);
                size += n;
                if (n == 0)
                        break;
        }
        fclose(f);

        printf("%s (%zu bytes)\n", path, size);
        (void) LLVMFuzzerTestOneInput(buf, size);
        return 0;
}

static int run_path(const char *path) {
        struct stat st;
        DIR *d;
        struct dirent *de;
        int r = 0;

        if (stat(path, &st) < 0) {
                fprintf(stderr, "Failed to stat %s: %m\n", path);
                return -errno;
        }
        if (!S_ISDIR(st.st_mode))
                return run_file(path);

        d = opendir(path);
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                char child[PATH_MAX];

                if (de->d_name[0] == '.')
                        continue;
                snprintf(child, sizeof child, "%s/%s", path, de->d_name);
                if (run_file(child) < 0)
                        r = -EIO;
        }
        closedir(d);
        return r;
}

int main(int argc, char *argv[]) {
        int r = 0;

        for (int i = 1; i < argc; i++)
                if (run_path(argv[i]) < 0)
                        r = -EIO;

        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
