/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <dirent.h>
#include <stdio.h>
#include <sys/types.h>

#include "macro.h"

DEFINE_TRIVIAL_CLEANUP_FUNC_VOID(FILE *, fclose);
DEFINE_TRIVIAL_CLEANUP_FUNC_VOID(DIR *, closedir);

/* Longest line a configuration file may have, like systemd's LONG_LINE_MAX. */
#define LONG_LINE_MAX (1U * 1024U * 1024U)

/* Reads one line without its terminator. "\n", "\r\n", a lone "\r" and NUL all end a line, so a
 * stray NUL byte cannot hide the rest of a line from a reader that uses C strings. Returns the
 * number of bytes consumed (0 at end of file), -ENOBUFS when the line is longer than max, or
 * -errno on a read error. *ret is always a NUL-terminated heap string on success. */
int read_line(FILE *f, size_t max, char **ret);

/* Reads fd to its end into a NUL-terminated heap buffer; -EFBIG if it holds more than max
 * bytes. *ret_size (optional) excludes the terminator. */
int read_full_fd(int fd, size_t max, char **ret, size_t *ret_size);

/* fsync()s the directory that contains path, so that a rename into it is durable. */
int fsync_parent_dir(const char *path);

/* Writes size bytes of data to path with mode, through path.tmp (a fresh inode, never one a
 * link points at), fsync() and a rename: a crash leaves the old file or the new one, never a
 * truncated one. A leftover path.tmp of a write cut short is removed first. Returns 0, or a
 * negative errno and in *ret_step (optional) what failed on path.tmp: "remove the leftover",
 * "create", "write", "sync" or "rename" (NULL for -ENOMEM). A failure to sync the directory
 * after the rename is logged at debug level and ignored: the new file is in place. */
int write_file_atomic(const char *path, const void *data, size_t size, mode_t mode, const char **ret_step);
