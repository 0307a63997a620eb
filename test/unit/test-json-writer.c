/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "json-writer.h"
#include "tests.h"

/* Runs write() on a writer over a memory stream and returns what it wrote. */
static char *capture(void (*write)(JsonWriter *w)) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f;

        f = open_memstream(&buf, &size);
        ASSERT_TRUE(f);
        JsonWriter w = JSON_WRITER_INIT(f);
        write(&w);
        ASSERT_EQ(w.depth, 0);
        ASSERT_EQ(fclose(f), 0);
        return buf;
}

static void write_nested(JsonWriter *w) {
        json_begin_object(w, NULL);
        json_write_string(w, "name", "ntp.test");
        json_write_integer(w, "port", 4460);
        json_begin_array(w, "sizes");
        json_write_integer(w, NULL, 100);
        json_write_integer(w, NULL, 104);
        json_end_array(w);
        json_begin_array(w, "empty");
        json_end_array(w);
        json_write_bool(w, "ok", true);
        json_write_null(w, "error");
        json_end_object(w);
}

static void test_members_are_separated_and_indented(void) {
        _cleanup_free_ char *s = capture(write_nested);

        ASSERT_STREQ(s, "{\n"
                        "  \"name\": \"ntp.test\",\n"
                        "  \"port\": 4460,\n"
                        "  \"sizes\": [\n"
                        "    100,\n"
                        "    104\n"
                        "  ],\n"
                        "  \"empty\": [],\n"
                        "  \"ok\": true,\n"
                        "  \"error\": null\n"
                        "}\n");
}

static void write_escapes(JsonWriter *w) {
        json_begin_array(w, NULL);
        json_write_string(w, NULL, "a\"b\\c\nd\te\x01");
        json_write_string(w, NULL, "caf\xc3\xa9");
        json_write_string(w, NULL, "bad \xff\xfe");
        json_write_string(w, NULL, NULL);
        json_end_array(w);
}

static void test_strings_are_escaped_and_invalid_utf8_replaced(void) {
        _cleanup_free_ char *s = capture(write_escapes);

        ASSERT_STREQ(s, "[\n"
                        "  \"a\\\"b\\\\c\\nd\\te\\u0001\",\n"
                        "  \"caf\xc3\xa9\",\n"
                        "  \"bad \\ufffd\\ufffd\",\n"
                        "  null\n"
                        "]\n");
}

static void write_decimals(JsonWriter *w) {
        json_begin_array(w, NULL);
        json_write_decimal(w, NULL, -1500, 3);
        json_write_decimal(w, NULL, 12, 9);
        json_write_decimal(w, NULL, 7, 0);
        json_write_decimal(w, NULL, INT64_MIN, 9);
        json_end_array(w);
}

static void test_decimals_are_exact(void) {
        _cleanup_free_ char *s = capture(write_decimals);

        ASSERT_STREQ(s, "[\n"
                        "  -1.500,\n"
                        "  0.000000012,\n"
                        "  7,\n"
                        "  -9223372036.854775808\n"
                        "]\n");
}

TEST_MAIN(TEST_CASE(test_members_are_separated_and_indented),
          TEST_CASE(test_strings_are_escaped_and_invalid_utf8_replaced),
          TEST_CASE(test_decimals_are_exact));
