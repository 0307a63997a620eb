/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Helpers for tests that need files: a private temporary tree, files written into it, and the
 * log output of the code under test captured for assertions. */

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "log.h"
#include "string-util.h"
#include "tests.h"

/* A fresh directory under $TMPDIR (or /tmp); the caller frees the name after test_rm_rf(). */
static inline char *test_tmpdir_new(void) {
        const char *base = getenv("TMPDIR") ?: "/tmp";
        char *d = strjoin(base, "/timesyncd-test-XXXXXX");

        ASSERT_TRUE(d);
        ASSERT_TRUE(mkdtemp(d));
        return d;
}

static inline int test_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path) < 0 ? -errno : 0;
}

static inline void test_rm_rf(const char *dir) {
        ASSERT_OK(nftw(dir, test_rm_one, 16, FTW_DEPTH | FTW_PHYS));
}

/* mkdir -p for every parent of root/relative. */
static inline void test_mkdir_parents(const char *root, const char *relative) {
        char *path = strjoin(root, "/", relative);

        ASSERT_TRUE(path);
        for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
                *p = '\0';
                ASSERT_TRUE(mkdir(path, 0755) == 0 || errno == EEXIST);
                *p = '/';
        }
        free(path);
}

/* Writes size bytes (which may contain NULs) to root/relative, creating parent directories;
 * returns the full path, to be freed. */
static inline char *test_write_file_bytes(const char *root, const char *relative, const char *data,
                                          size_t size) {
        char *path = strjoin(root, "/", relative);
        FILE *f;

        ASSERT_TRUE(path);
        test_mkdir_parents(root, relative);
        f = fopen(path, "we");
        ASSERT_TRUE(f);
        ASSERT_EQ(fwrite(data, 1, size, f), size);
        ASSERT_EQ(fclose(f), 0);
        return path;
}

static inline void test_write_file(const char *root, const char *relative, const char *text) {
        free(test_write_file_bytes(root, relative, text, strlen(text)));
}

static inline void test_symlink(const char *target, const char *root, const char *relative) {
        char *path = strjoin(root, "/", relative);

        ASSERT_TRUE(path);
        test_mkdir_parents(root, relative);
        ASSERT_OK(symlink(target, path));
        free(path);
}

typedef struct LogCapture {
        int saved_stderr;
        int fd;
        int saved_level;
        LogTarget saved_target;
} LogCapture;

/* From here on, log messages of level info and up go to a memory file instead of stderr. */
static inline void log_capture_start(LogCapture *c) {
        fflush(stderr);
        c->saved_level = log_get_max_level();
        c->saved_target = log_get_target();
        c->fd = memfd_create("log-capture", MFD_CLOEXEC);
        ASSERT_TRUE(c->fd >= 0);
        c->saved_stderr = dup(STDERR_FILENO);
        ASSERT_TRUE(c->saved_stderr >= 0);
        ASSERT_TRUE(dup2(c->fd, STDERR_FILENO) >= 0);
        log_set_target(LOG_TARGET_CONSOLE);
        log_set_max_level(LOG_INFO);
}

/* Restores stderr and returns everything logged since log_capture_start(), also echoed to the
 * real stderr so a failing test shows it. */
static inline char *log_capture_stop(LogCapture *c) {
        off_t size;
        char *buf;

        fflush(stderr);
        size = lseek(c->fd, 0, SEEK_END);
        ASSERT_TRUE(size >= 0);
        buf = calloc(1, (size_t) size + 1);
        ASSERT_TRUE(buf);
        ASSERT_EQ(pread(c->fd, buf, (size_t) size, 0), size);

        ASSERT_TRUE(dup2(c->saved_stderr, STDERR_FILENO) >= 0);
        safe_close(c->saved_stderr);
        safe_close(c->fd);
        log_set_target(c->saved_target);
        log_set_max_level(c->saved_level);

        fputs(buf, stderr);
        return buf;
}

#define ASSERT_CONTAINS(haystack, needle)                                                      \
        do {                                                                                   \
                const char *_h = (haystack), *_n = (needle);                                   \
                if (!strstr(_h, _n)) {                                                         \
                        fprintf(stderr, "%s:%i: \"%s\" not found in:\n%s\n", __FILE__,          \
                                __LINE__, _n, _h);                                             \
                        abort();                                                               \
                }                                                                              \
        } while (false)

#define ASSERT_NOT_CONTAINS(haystack, needle)                                                  \
        do {                                                                                   \
                const char *_h = (haystack), *_n = (needle);                                   \
                if (strstr(_h, _n)) {                                                          \
                        fprintf(stderr, "%s:%i: \"%s\" unexpectedly found in:\n%s\n",          \
                                __FILE__, __LINE__, _n, _h);                                   \
                        abort();                                                               \
                }                                                                              \
        } while (false)
