/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <limits.h>

#include "conf-files.h"
#include "conf-parser.h"
#include "fileio.h"
#include "string-util.h"
#include "strv.h"
#include "time-util.h"
#include "utf8.h"

#define COMMENTS "#;"
#define UTF8_BYTE_ORDER_MARK "\xef\xbb\xbf"

typedef struct ParseState {
        const char *filename;
        const ConfigSpec *spec;
        char *section;          /* NULL before the first header and inside unknown sections */
        char *unknown_section;  /* the unknown section we are in, "X-" ones excepted */
        bool section_ignored;   /* inside an unknown section: its keys go unmentioned */
        unsigned used;          /* assignments in a known section */
        unsigned misplaced;     /* assignments outside any section or in an unknown one */
} ParseState;

static int parse_assignment(ParseState *st, unsigned line, const char *lvalue, const char *rvalue) {
        for (const ConfigTableItem *t = st->spec->table; t->lvalue; t++) {
                if (!streq(t->section, st->section) || !streq(t->lvalue, lvalue))
                        continue;
                if (!t->parse)
                        return 0;
                return t->parse(st->filename, line, st->section, lvalue, t->ltype, rvalue, t->data,
                                st->spec->userdata);
        }

        if (startswith(lvalue, "X-"))
                return 0;
        if (st->spec->unknown) {
                int r = st->spec->unknown(st->filename, line, st->section, lvalue, st->spec->userdata);
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        log_syntax(st->filename, line, LOG_WARNING, 0, "Unknown key name '%s' in section '%s', ignoring.",
                   lvalue, st->section);
        return 0;
}

/* The known section that name is a case slip of ("time" for "Time"), or NULL. */
static const char *section_resembled(const ParseState *st, const char *name) {
        STRV_FOREACH(k, (char **) st->spec->sections)
                if (strcaseeq(*k, name))
                        return *k;
        return NULL;
}

static int parse_section_header(ParseState *st, unsigned line, const char *l) {
        size_t n = strlen(l);
        char *name;

        if (l[n - 1] != ']')
                return log_syntax(st->filename, line, LOG_ERR, EBADMSG,
                                  "Invalid section header '%s'", l);

        name = strndup(l + 1, n - 2);
        if (!name)
                return log_oom();
        if (!string_is_safe(name)) {
                free(name);
                return log_syntax(st->filename, line, LOG_ERR, EBADMSG,
                                  "Bad characters in section header '%s'", l);
        }

        st->section = mfree(st->section);
        st->unknown_section = mfree(st->unknown_section);
        if (!strv_contains((char * const *) st->spec->sections, name)) {
                const char *meant = section_resembled(st, name);

                if (meant)
                        log_syntax(st->filename, line, LOG_WARNING, 0,
                                   "Unknown section '%s' (section names are case-sensitive: did you mean [%s]?). "
                                   "Ignoring.", name, meant);
                else if (!startswith(name, "X-"))
                        log_syntax(st->filename, line, LOG_WARNING, 0,
                                   "Unknown section '%s'. Ignoring.", name);
                if (startswith(name, "X-"))
                        free(name);
                else
                        st->unknown_section = name;
                st->section_ignored = true;
                return 0;
        }

        st->section = name;
        st->section_ignored = false;
        return 0;
}

/* An assignment that is ignored for where it is: outside any section, or in an unknown one
 * ("X-" sections excepted, which are meant to be ignored). Counted for the file's summary, and
 * shown to the caller, for whom a key there may matter more than a warning says. */
static int parse_misplaced(ParseState *st, unsigned line, char *l) {
        char *e = strchr(l, '=');

        if (st->section_ignored && !st->unknown_section)
                return 0;
        st->misplaced++;
        if (!e || e == l || !st->spec->misplaced)
                return 0;

        *e = '\0';
        return st->spec->misplaced(st->filename, line, st->unknown_section, strstrip(l), st->spec->userdata);
}

/* One logical line, continuations already joined. */
static int parse_line(ParseState *st, unsigned line, char *l) {
        char *e;

        l = strstrip(l);
        if (*l == '\0')
                return 0;

        if (!utf8_is_valid(l))
                return log_syntax(st->filename, line, LOG_WARNING, EINVAL,
                                  "String is not UTF-8 clean, ignoring assignment.");

        if (*l == '[')
                return parse_section_header(st, line, l);

        if (!st->section) {
                if (!st->section_ignored)
                        log_syntax(st->filename, line, LOG_WARNING, 0,
                                   "Assignment outside of section. Ignoring.");
                return parse_misplaced(st, line, l);
        }

        e = strchr(l, '=');
        if (!e)
                return log_syntax(st->filename, line, LOG_WARNING, 0,
                                  "Missing '=', ignoring line.");
        if (e == l)
                return log_syntax(st->filename, line, LOG_WARNING, 0,
                                  "Missing key name before '=', ignoring line.");

        *e = '\0';
        st->used++;
        return parse_assignment(st, line, strstrip(l), strstrip(e + 1));
}

/* True when the line ends in a backslash that is not itself escaped by one before it. */
static bool ends_in_continuation(const char *l, size_t n) {
        size_t run = 0;

        while (run < n && l[n - 1 - run] == '\\')
                run++;
        return run % 2 == 1;
}

static bool is_comment(const char *l) {
        l = skip_leading_whitespace(l);
        return *l != '\0' && strchr(COMMENTS, *l);
}

static void parse_state_done(ParseState *st) {
        st->section = mfree(st->section);
        st->unknown_section = mfree(st->unknown_section);
}

/* A file none of whose assignments counts, such as a drop-in with a mistyped section header:
 * each line was warned about, but that the whole file is lost is easy to miss among them. */
static void parse_summarize(const ParseState *st) {
        const char *const *sections = st->spec->sections;

        if (st->misplaced == 0 || st->used > 0)
                return;
        if (sections[0] && !sections[1])
                log_warning("%s: none of its %u assignment%s is in section [%s]: the whole file is ignored.",
                            st->filename, st->misplaced, st->misplaced == 1 ? "" : "s", sections[0]);
        else
                log_warning("%s: none of its %u assignment%s is in a known section: the whole file is ignored.",
                            st->filename, st->misplaced, st->misplaced == 1 ? "" : "s");
}

/* Appends l to *continuation; the caller checked the length. */
static int continuation_append(char **continuation, const char *l) {
        size_t have = strlen(*continuation), add = strlen(l);
        char *c;

        c = realloc(*continuation, have + add + 1);
        if (!c)
                return -ENOMEM;
        memcpy(c + have, l, add + 1);
        *continuation = c;
        return 0;
}

int config_parse_stream(FILE *f, const char *filename, const ConfigSpec *spec) {
        _cleanup_(parse_state_done) ParseState st = { .filename = filename, .spec = spec };
        _cleanup_free_ char *continuation = NULL;
        unsigned line = 0;
        size_t total = 0;
        int r;

        assert(f);
        assert(filename);
        assert(spec && spec->sections && spec->table);

        for (;;) {
                _cleanup_free_ char *buf = NULL;
                char *l, *p;
                size_t n;

                r = read_line(f, LONG_LINE_MAX, &buf);
                if (r == 0)
                        break;
                if (r == -ENOBUFS)
                        return log_error_errno(r, "%s:%u: Line too long", filename, line + 1);
                if (r < 0)
                        return log_error_errno(r,
                                               "%s:%u: Error while reading configuration file: %m",
                                               filename, line + 1);
                total += (size_t) r;
                if (total > CONFIG_FILE_MAX)
                        return log_error_errno(EFBIG, "%s: File larger than %u bytes, giving up.",
                                               filename, CONFIG_FILE_MAX);
                line++;

                l = buf;
                if (line == 1)
                        l = startswith(l, UTF8_BYTE_ORDER_MARK) ?: l;

                if (is_comment(l))
                        continue;

                if (continuation) {
                        if (strlen(continuation) + strlen(l) > LONG_LINE_MAX)
                                return log_error_errno(ENOBUFS, "%s:%u: Continuation line too long",
                                                       filename, line);
                        if (continuation_append(&continuation, l) < 0)
                                return log_oom();
                        p = continuation;
                } else
                        p = l;

                n = strlen(p);
                if (ends_in_continuation(p, n)) {
                        p[n - 1] = ' ';
                        if (!continuation) {
                                continuation = strdup(p);
                                if (!continuation)
                                        return log_oom();
                        }
                        continue;
                }

                r = parse_line(&st, line, p);
                if (r < 0)
                        return log_warning_errno(r, "%s:%u: Failed to parse file: %m",
                                                 filename, line);
                continuation = mfree(continuation);
        }

        /* A backslash on the last line continues into nothing: the line still counts. */
        if (continuation) {
                r = parse_line(&st, line, continuation);
                if (r < 0)
                        return log_warning_errno(r, "%s:%u: Failed to parse file: %m",
                                                 filename, line);
        }

        parse_summarize(&st);
        return 0;
}

int config_parse_file(const char *path, const ConfigSpec *spec) {
        _cleanup_(fclosep) FILE *f = NULL;
        int r;

        assert(path);

        f = fopen(path, "re");
        if (!f) {
                if (errno == ENOENT) {
                        log_debug("Configuration file '%s' does not exist, skipping.", path);
                        return 0;
                }
                return log_error_errno(errno, "Failed to open configuration file '%s': %m", path);
        }

        r = config_parse_stream(f, path, spec);
        if (r < 0)
                return r;
        return 1;
}

int config_parse_standard(const char *root, const char *name, const ConfigSpec *spec) {
        _cleanup_free_ char *main_relative = NULL, *main_path = NULL, *dropin_dir = NULL;
        _cleanup_strv_free_ char **dropins = NULL;
        int r;

        assert(name);

        main_relative = strjoin("/etc/", name);
        if (!main_relative)
                return log_oom();
        main_path = path_prefix_root(root, main_relative);
        if (!main_path)
                return log_oom();
        dropin_dir = strjoin(name, ".d");
        if (!dropin_dir)
                return log_oom();

        r = conf_files_list_dropins(root, CONF_PATHS_STRV, dropin_dir, ".conf", &dropins);
        if (r < 0)
                return log_error_errno(r, "Failed to list drop-ins of %s: %m", name);

        r = config_parse_file(main_path, spec);
        if (r < 0)
                return r;

        STRV_FOREACH(d, dropins) {
                r = config_parse_file(*d, spec);
                if (r < 0)
                        return r;
        }

        return 0;
}

int config_parse_sec(const char *filename, unsigned line, const char *section, const char *lvalue,
                     int ltype, const char *rvalue, void *data, void *userdata) {
        usec_t *u = data, v;
        int r;

        assert(u);

        r = parse_sec(rvalue, &v);
        if (r < 0) {
                /* Quoted, so that an empty value shows as one; and what stays in effect. */
                log_syntax(filename, line, LOG_WARNING, r, "Invalid time span \"%s\" for %s=, keeping %s.",
                           rvalue, lvalue, FORMAT_TIMESPAN(*u, 1));
                return 0;
        }

        *u = v;
        return 0;
}

int config_parse_bool(const char *filename, unsigned line, const char *section, const char *lvalue,
                      int ltype, const char *rvalue, void *data, void *userdata) {
        bool *b = data;
        int r;

        assert(b);

        r = parse_boolean(rvalue);
        if (r >= 0) {
                *b = r;
                return 0;
        }

        log_syntax(filename, line, LOG_WARNING, 0, "%s=%s is not a boolean (yes or no), keeping %s.",
                   lvalue, rvalue, *b ? "yes" : "no");
        return 0;
}

int config_parse_path(const char *filename, unsigned line, const char *section, const char *lvalue,
                      int ltype, const char *rvalue, void *data, void *userdata) {
        char **path = data;

        assert(path);

        if (isempty(rvalue)) {
                *path = mfree(*path);
                return 0;
        }

        if (rvalue[0] != '/') {
                log_syntax(filename, line, LOG_WARNING, 0, "%s= path is not absolute, ignoring: %s",
                           lvalue, rvalue);
                return 0;
        }
        if (strlen(rvalue) >= PATH_MAX) {
                log_syntax(filename, line, LOG_WARNING, 0,
                           "%s= path has invalid length (%zu bytes), ignoring.", lvalue,
                           strlen(rvalue));
                return 0;
        }

        if (free_and_strdup(path, rvalue) < 0)
                return log_oom();
        return 0;
}
