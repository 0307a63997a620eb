/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A streaming writer of one JSON document (RFC 8259) to a FILE, for machine-readable output of
 * tools: objects, arrays, strings, integers, exact decimal fractions, booleans and null,
 * indented by two spaces. Members take a key; values inside arrays and the top value take
 * NULL. Strings that are not valid UTF-8 have their non-ASCII bytes replaced by U+FFFD, so the
 * document stays valid whatever a server sent. */

#include <stdio.h>

#include "macro.h"

typedef struct JsonWriter {
        FILE *f;
        unsigned depth;
        bool need_comma;        /* a value precedes at the current depth */
} JsonWriter;

#define JSON_WRITER_INIT(file) ((JsonWriter) { .f = (file) })

void json_begin_object(JsonWriter *w, const char *key);
void json_end_object(JsonWriter *w);
void json_begin_array(JsonWriter *w, const char *key);
void json_end_array(JsonWriter *w);

/* s NULL writes null. */
void json_write_string(JsonWriter *w, const char *key, const char *s);
void json_write_integer(JsonWriter *w, const char *key, int64_t v);
/* v / 10^decimals, exactly: (-1500, 3) writes -1.500. decimals at most 18. */
void json_write_decimal(JsonWriter *w, const char *key, int64_t v, unsigned decimals);
void json_write_bool(JsonWriter *w, const char *key, bool b);
void json_write_null(JsonWriter *w, const char *key);
