/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <inttypes.h>

#include "json-writer.h"
#include "utf8.h"

static void json_write_raw_string(FILE *f, const char *s) {
        bool valid = utf8_is_valid(s);

        fputc('"', f);
        for (const unsigned char *p = (const unsigned char *) s; *p; p++)
                switch (*p) {
                case '"':
                        fputs("\\\"", f);
                        break;
                case '\\':
                        fputs("\\\\", f);
                        break;
                case '\n':
                        fputs("\\n", f);
                        break;
                case '\t':
                        fputs("\\t", f);
                        break;
                default:
                        /* RFC 8259 section 7: control characters must be escaped. */
                        if (*p < 0x20 || *p == 0x7f)
                                fprintf(f, "\\u%04x", *p);
                        else if (*p >= 0x80 && !valid)
                                fputs("\\ufffd", f);
                        else
                                fputc(*p, f);
                }
        fputc('"', f);
}

/* Separator, indentation and key of the next value. */
static void json_next(JsonWriter *w, const char *key) {
        assert(w);
        assert(w->f);

        if (w->need_comma)
                fputc(',', w->f);
        if (w->depth > 0)
                fprintf(w->f, "\n%*s", (int) (2 * w->depth), "");
        if (key) {
                json_write_raw_string(w->f, key);
                fputs(": ", w->f);
        }
        w->need_comma = true;
}

static void json_open(JsonWriter *w, const char *key, char c) {
        json_next(w, key);
        fputc(c, w->f);
        w->depth++;
        w->need_comma = false;
}

static void json_close(JsonWriter *w, char c) {
        assert(w->depth > 0);

        w->depth--;
        /* An empty container stays on one line. */
        if (w->need_comma)
                fprintf(w->f, "\n%*s", (int) (2 * w->depth), "");
        fputc(c, w->f);
        w->need_comma = true;
        if (w->depth == 0)
                fputc('\n', w->f);
}

void json_begin_object(JsonWriter *w, const char *key) {
        json_open(w, key, '{');
}

void json_end_object(JsonWriter *w) {
        json_close(w, '}');
}

void json_begin_array(JsonWriter *w, const char *key) {
        json_open(w, key, '[');
}

void json_end_array(JsonWriter *w) {
        json_close(w, ']');
}

void json_write_string(JsonWriter *w, const char *key, const char *s) {
        if (!s) {
                json_write_null(w, key);
                return;
        }
        json_next(w, key);
        json_write_raw_string(w->f, s);
}

void json_write_integer(JsonWriter *w, const char *key, int64_t v) {
        json_next(w, key);
        fprintf(w->f, "%" PRId64, v);
}

void json_write_decimal(JsonWriter *w, const char *key, int64_t v, unsigned decimals) {
        uint64_t scale = 1, a;

        assert(decimals <= 18);

        for (unsigned i = 0; i < decimals; i++)
                scale *= 10;
        /* Through unsigned, so that INT64_MIN has a magnitude. */
        a = v < 0 ? -(uint64_t) v : (uint64_t) v;

        json_next(w, key);
        fprintf(w->f, "%s%" PRIu64, v < 0 ? "-" : "", a / scale);
        if (decimals > 0)
                fprintf(w->f, ".%0*" PRIu64, (int) decimals, a % scale);
}

void json_write_bool(JsonWriter *w, const char *key, bool b) {
        json_next(w, key);
        fputs(b ? "true" : "false", w->f);
}

void json_write_null(JsonWriter *w, const char *key) {
        json_next(w, key);
        fputs("null", w->f);
}
