/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Replays inputs through a libFuzzer entry point without libFuzzer: each argument is a file,
 * or a directory whose regular files are all replayed. Used to run the seed corpora as
 * regression tests in builds without -Dfuzz=true. */

#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>

#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

DEFINE_TRIVIAL_CLEANUP_FUNC_VOID(FILE *, fclose)
DEFINE_TRIVIAL_CLEANUP_FUNC_VOID(DIR *, closedir)

static int replay_file(const char *path) {
        _cleanup_free_ uint8_t *data = NULL;
        _cleanup_(fclosep) FILE *f = NULL;
        long size;

        f = fopen(path, "re");
        if (!f)
                return -errno;

        if (fseek(f, 0, SEEK_END) < 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0)
                return -errno;

        data = malloc(MAX((size_t) size, (size_t) 1));
        if (!data)
                return -ENOMEM;

        if (fread(data, 1, (size_t) size, f) != (size_t) size)
                return -EIO;

        printf("%s (%ld bytes)\n", path, size);
        (void) LLVMFuzzerTestOneInput(data, (size_t) size);
        return 1;
}

static int replay_dir(const char *path) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int n = 0, r;

        d = opendir(path);
        if (!d)
                return -errno;

        while ((de = readdir(d))) {
                _cleanup_free_ char *p = NULL;
                struct stat st;

                if (de->d_name[0] == '.')
                        continue;
                if (asprintf(&p, "%s/%s", path, de->d_name) < 0)
                        return -ENOMEM;
                if (stat(p, &st) < 0 || !S_ISREG(st.st_mode))
                        continue;

                r = replay_file(p);
                if (r < 0)
                        return r;
                n++;
        }

        return n;
}

int main(int argc, char *argv[]) {
        int n = 0;

        for (int i = 1; i < argc; i++) {
                struct stat st;
                int r;

                if (stat(argv[i], &st) < 0) {
                        fprintf(stderr, "%s: %m\n", argv[i]);
                        return EXIT_FAILURE;
                }

                r = S_ISDIR(st.st_mode) ? replay_dir(argv[i]) : replay_file(argv[i]);
                if (r < 0) {
                        fprintf(stderr, "%s: %s\n", argv[i], strerror(-r));
                        return EXIT_FAILURE;
                }
                n += r;
        }

        /* An empty corpus would make the regression test pass without testing anything. */
        if (n == 0) {
                fprintf(stderr, "No inputs given.\n");
                return EXIT_FAILURE;
        }

        printf("%d inputs replayed\n", n);
        return EXIT_SUCCESS;
}
