/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "nts.h"
#include "tests.h"

static void test_every_error_has_a_distinct_string(void) {
        for (int e = 0; e < _NTS_ERROR_MAX; e++) {
                const char *s = NTS_error_string((NTS_Error) e);

                ASSERT_TRUE(s);
                ASSERT_FALSE(isempty(s));
                for (int f = 0; f < e; f++)
                        ASSERT_FALSE(streq(s, NTS_error_string((NTS_Error) f)));
        }
}

static void test_error_outside_the_enum_has_no_string(void) {
        ASSERT_TRUE(NTS_error_string(_NTS_ERROR_MAX) == NULL);
        ASSERT_TRUE(NTS_error_string((NTS_Error) (_NTS_ERROR_MAX + 1)) == NULL);
        ASSERT_TRUE(NTS_error_string((NTS_Error) -1) == NULL);
}

static void test_registered_aead_ids_have_names(void) {
        ASSERT_STREQ(NTS_aead_name(15), "AEAD_AES_SIV_CMAC_256");
        ASSERT_STREQ(NTS_aead_name(16), "AEAD_AES_SIV_CMAC_384");
        ASSERT_STREQ(NTS_aead_name(17), "AEAD_AES_SIV_CMAC_512");
        ASSERT_STREQ(NTS_aead_name(30), "AEAD_AES_128_GCM_SIV");
        ASSERT_STREQ(NTS_aead_name(31), "AEAD_AES_256_GCM_SIV");
}

static void test_other_aead_ids_have_no_name(void) {
        static const uint16_t unknown[] = { 0, 1, 14, 18, 29, 32, 0x7fff, 0xffff };

        for (size_t i = 0; i < ELEMENTSOF(unknown); i++)
                ASSERT_TRUE(NTS_aead_name(unknown[i]) == NULL);
}

TEST_MAIN(TEST_CASE(test_every_error_has_a_distinct_string),
          TEST_CASE(test_error_outside_the_enum_has_no_string),
          TEST_CASE(test_registered_aead_ids_have_names),
          TEST_CASE(test_other_aead_ids_have_no_name))
