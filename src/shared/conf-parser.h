/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Configuration files in the syntax of systemd.syntax(7), read and diagnosed like systemd 252:
 *
 *   [Section] headers; Key=Value assignments; blank lines; lines whose first non-blank character
 *   is '#' or ';' are comments; whitespace around keys and values is dropped; a line ending in an
 *   odd number of backslashes continues on the next line (the backslash becomes a space, comment
 *   lines in between are skipped). Unknown sections and keys ("X-" prefixed ones silently), lines
 *   without '=', and assignments before any section are warned about as "file:line: ..." and
 *   skipped; an unknown section that differs from a known one only in case names that one. A
 *   file none of whose assignments is in a known section is said to be ignored as a whole. A
 *   value a parser callback rejects is warned about by the callback and skipped.
 *
 *   What makes systemd give up on a file, and with it on every file after it, does here too: a
 *   malformed section header, a line that is not UTF-8, a line longer than LONG_LINE_MAX, a read
 *   error, a file that cannot be opened for a reason other than not existing. So does a file
 *   longer than CONFIG_FILE_MAX (systemd has no such limit; it keeps /dev/zero from looping). */

#include <stdio.h>

#include "log.h"

#define CONFIG_FILE_MAX (4U * 1024U * 1024U)

/* Logs "<filename>:<line>: <message>" and evaluates to -abs(error), 0 for error 0. */
#define log_syntax(filename, line, level, error, fmt, ...)                                     \
        log_full_errno((level), (error), "%s:%u: " fmt, (filename), (line), ##__VA_ARGS__)

/* Called for each assignment of a known key. Returns 0 after warning about a bad value (the
 * value is then ignored), negative only for failures that must stop parsing (-ENOMEM). */
typedef int (*ConfigParserCallback)(const char *filename, unsigned line, const char *section,
                                    const char *lvalue, int ltype, const char *rvalue,
                                    void *data, void *userdata);

typedef struct ConfigTableItem {
        const char *section;
        const char *lvalue;
        ConfigParserCallback parse;
        int ltype;              /* passed to parse as is */
        void *data;             /* passed to parse as is */
} ConfigTableItem;

/* Called for a key that no table item names, in a known section ("X-" keys excepted). Returns
 * 1 when it said what it had to say, 0 for the generic "Unknown key name" warning, negative
 * only for failures that must stop parsing. */
typedef int (*ConfigUnknownCallback)(const char *filename, unsigned line, const char *section,
                                     const char *lvalue, void *userdata);

typedef struct ConfigSpec {
        const char *const *sections;    /* NULL-terminated: the sections that exist */
        const ConfigTableItem *table;   /* ends with an item whose lvalue is NULL */
        ConfigUnknownCallback unknown;  /* optional */
        /* Optional: called, after the warning, for each key that is ignored because it is outside
         * any section (section NULL) or in an unknown one ("X-" sections excepted). Returns 0, or
         * negative for failures that must stop parsing. */
        ConfigUnknownCallback misplaced;
        void *userdata;
} ConfigSpec;

/* Parses an open stream; filename is only used in messages. */
int config_parse_stream(FILE *f, const char *filename, const ConfigSpec *spec);

/* Parses one file: 1 when parsed, 0 when it does not exist, negative errno on failure (already
 * logged). */
int config_parse_file(const char *path, const ConfigSpec *spec);

/* systemd's standard search for the configuration of a daemon, name being e.g.
 * "systemd/timesyncd.conf": first <root>/etc/<name>, then every <name>.d/ "*.conf" drop-in of
 * CONF_PATHS_STRV under root (see conf-files.h), in file name order, so later assignments win.
 * root NULL means the real root. Stops at the first file that fails, like systemd. */
int config_parse_standard(const char *root, const char *name, const ConfigSpec *spec);

/* data: usec_t*; a time span (parse_sec()). A value that does not parse is warned about with
 * the key, the value in quotes and the span kept ("file:line: Invalid time span "5x" for
 * Key=, keeping 32s."). */
int config_parse_sec(const char *filename, unsigned line, const char *section, const char *lvalue,
                     int ltype, const char *rvalue, void *data, void *userdata);
/* data: bool*; yes/no, true/false, on/off, 1/0 (case-insensitive). Anything else is warned about
 * with the value kept ("file:line: Key=ture is not a boolean (yes or no), keeping no."). */
int config_parse_bool(const char *filename, unsigned line, const char *section, const char *lvalue,
                      int ltype, const char *rvalue, void *data, void *userdata);
/* data: char**; an absolute path, or empty to reset to NULL. */
int config_parse_path(const char *filename, unsigned line, const char *section, const char *lvalue,
                      int ltype, const char *rvalue, void *data, void *userdata);
