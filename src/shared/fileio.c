/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "fileio.h"
#include "log.h"

int read_line(FILE *f, size_t max, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t n = 0, allocated = 0, consumed = 0;

        assert(f);
        assert(ret);

        for (;;) {
                int c;

                errno = 0;
                c = getc_unlocked(f);
                if (c == EOF) {
                        if (ferror(f))
                                return errno > 0 ? -errno : -EIO;
                        break;
                }
                consumed++;

                if (c == '\n' || c == '\0')
                        break;
                if (c == '\r') {
                        c = getc_unlocked(f);
                        if (c == '\n')
                                consumed++;
                        else if (c != EOF)
                                ungetc(c, f);
                        break;
                }

                if (n >= max)
                        return -ENOBUFS;
                if (n + 2 > allocated) {
                        size_t a = MAX(allocated * 2, (size_t) 128);
                        char *b = realloc(buf, a);

                        if (!b)
                                return -ENOMEM;
                        buf = b;
                        allocated = a;
                }
                buf[n++] = (char) c;
        }

        if (!buf) {
                buf = strdup("");
                if (!buf)
                        return -ENOMEM;
        } else
                buf[n] = '\0';

        *ret = TAKE_PTR(buf);
        return consumed > INT32_MAX ? INT32_MAX : (int) consumed;
}

int read_full_fd(int fd, size_t max, char **ret, size_t *ret_size) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, allocated = 0;

        assert(fd >= 0);
        assert(ret);

        for (;;) {
                ssize_t l;

                if (size == allocated) {
                        size_t n = MIN(MAX(allocated * 2, (size_t) 4096), max + 1);
                        char *p;

                        if (n <= allocated)
                                return -EFBIG;
                        p = realloc(buf, n + 1);
                        if (!p)
                                return -ENOMEM;
                        buf = p;
                        allocated = n;
                }

                l = read(fd, buf + size, allocated - size);
                if (l < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (l == 0)
                        break;
                size += (size_t) l;
                if (size > max)
                        return -EFBIG;
        }

        buf[size] = '\0';
        if (ret_size)
                *ret_size = size;
        *ret = TAKE_PTR(buf);
        return 0;
}

int fsync_parent_dir(const char *path) {
        _cleanup_free_ char *dir = NULL;
        _cleanup_close_ int fd = -EBADF;
        char *slash;

        assert(path);

        dir = strdup(path);
        if (!dir)
                return -ENOMEM;
        slash = strrchr(dir, '/');
        if (!slash)
                return -EINVAL;
        if (slash == dir)
                slash[1] = '\0';
        else
                *slash = '\0';

        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fsync(fd) < 0)
                return -errno;
        return 0;
}

static int write_file_atomic_fail(const char *tmp, const char *step, int r, const char **ret_step) {
        (void) unlink(tmp);
        if (ret_step)
                *ret_step = step;
        return r;
}

int write_file_atomic(const char *path, const void *data, size_t size, mode_t mode, const char **ret_step) {
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = -EBADF;
        size_t done = 0;
        int r;

        assert(path);
        assert(data || size == 0);

        if (ret_step)
                *ret_step = NULL;
        if (asprintf(&tmp, "%s.tmp", path) < 0)
                return -ENOMEM;

        /* A temporary file is only there when an earlier write was cut short: removed then, not
         * before every write. */
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
        if (fd < 0 && errno == EEXIST) {
                if (unlink(tmp) < 0) {
                        if (ret_step)
                                *ret_step = "remove the leftover";
                        return -errno;
                }
                fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
        }
        if (fd < 0) {
                if (ret_step)
                        *ret_step = "create";
                return -errno;
        }

        while (done < size) {
                ssize_t l = write(fd, (const char *) data + done, size - done);
                if (l < 0)
                        return write_file_atomic_fail(tmp, "write", -errno, ret_step);
                done += (size_t) l;
        }
        /* The rename must not reach the disk before the data. */
        if (fsync(fd) < 0)
                return write_file_atomic_fail(tmp, "sync", -errno, ret_step);
        if (rename(tmp, path) < 0)
                return write_file_atomic_fail(tmp, "rename", -errno, ret_step);

        /* Without this the rename itself may be lost in a power cut. */
        r = fsync_parent_dir(path);
        if (r < 0)
                log_debug_errno(r, "Failed to sync directory of %s, ignoring: %m", path);
        return 0;
}
