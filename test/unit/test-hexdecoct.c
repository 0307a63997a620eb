/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdlib.h>

#include "hexdecoct.h"
#include "tests.h"

static char *hex_of(const void *data, size_t size) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        ASSERT_TRUE(f);
        hex_write(f, data, size);
        ASSERT_EQ(fclose(f), 0);
        ASSERT_EQ(len, 2 * size);
        return buf;
}

/* Every byte value, lower case, two digits each. */
static void test_write_every_byte_value(void) {
        uint8_t all[256];
        char *s;

        for (size_t i = 0; i < sizeof all; i++)
                all[i] = (uint8_t) i;
        s = hex_of(all, sizeof all);
        ASSERT_TRUE(strncmp(s, "000102030405060708090a0b0c0d0e0f10", 34) == 0);
        ASSERT_STREQ(s + 2 * 250, "fafbfcfdfeff");
        free(s);

        s = hex_of(all, 0);
        ASSERT_STREQ(s, "");
        free(s);
}

/* Lengths around the writer's internal chunk (64 bytes) survive a round trip. */
static void test_round_trip_across_chunk_sizes(void) {
        uint8_t in[300], out[300];

        for (size_t i = 0; i < sizeof in; i++)
                in[i] = (uint8_t) (i * 37 + 11);
        for (size_t n = 0; n <= sizeof in; n++) {
                char *s = hex_of(in, n);

                ASSERT_EQ(hex_decode(s, out, sizeof out), (ssize_t) n);
                ASSERT_TRUE(memcmp(in, out, n) == 0);
                free(s);
        }
}

static void test_decode_refuses_bad_input(void) {
        uint8_t out[4];

        ASSERT_EQ(hex_decode("abc", out, sizeof out), -EINVAL);
        ASSERT_EQ(hex_decode("zz", out, sizeof out), -EINVAL);
        ASSERT_EQ(hex_decode("0011223344", out, sizeof out), -ENOBUFS);
        ASSERT_EQ(hex_decode("A0ff", out, sizeof out), 2);
        ASSERT_EQ(out[0], 0xa0);
        ASSERT_EQ(out[1], 0xff);
}

TEST_MAIN(TEST_CASE(test_write_every_byte_value),
          TEST_CASE(test_round_trip_across_chunk_sizes),
          TEST_CASE(test_decode_refuses_bad_input));
