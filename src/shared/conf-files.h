/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Finding drop-in files the way systemd does (systemd 252 conf-files.c semantics): every
 * "*<suffix>" file of every directory, sorted by file name alone, where a name found in a more
 * local directory hides the same name in the less local ones. A drop-in is disabled by putting an
 * empty file or a symlink to /dev/null with its name in a more local directory. */

#include "macro.h"

/* Where systemd looks for configuration, most local first (CONF_PATHS on merged /usr, which
 * Debian 12 is). */
#define CONF_PATHS_STRV ((const char *const[]) { "/etc", "/run", "/usr/local/lib", "/usr/lib", NULL })

/* root + path; root NULL, "" or "/" means the real root. NULL on allocation failure. */
char *path_prefix_root(const char *root, const char *path);

/* Lists the files <root><dir>/<subdir>/NAME<suffix> over dirs (most local first) into *ret,
 * sorted by NAME. Hidden files (".foo.conf") and anything that is not a regular file or a symlink
 * are skipped; a missing or unreadable directory counts as empty. */
int conf_files_list_dropins(const char *root, const char *const *dirs, const char *subdir,
                            const char *suffix, char ***ret);
