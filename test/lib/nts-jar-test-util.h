/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A cookie jar as a key exchange at ke_realtime would fill it, for the tests of the jar and of
 * the NTS client's state file. */

#include "iovec-util.h"
#include "tests.h"
#include "timesyncd-nts-jar.h"

/* AES-SIV-CMAC-256 with fixed keys, NTP server 192.0.2.1:123, the key exchange with 192.0.2.4:4460
 * whose certificate key is 32 bytes of 0x5a, and n_cookies cookies of 100 bytes, the i-th all
 * i + 1. */
static inline void test_jar_make(NTSJar *j, size_t n_cookies, usec_t ke_realtime) {
        *j = (NTSJar) {
                .aead = NTS_AEAD_AES_SIV_CMAC_256,
                .key_size = 32,
                .ke_realtime = ke_realtime,
                .ntp_port = 123,
        };
        memset(j->c2s, 0xc2, 32);
        memset(j->s2c, 0x52, 32);
        ASSERT_OK(socket_address_from_string("192.0.2.4", 4460, &j->ke_peer));
        j->has_ke_key = true;
        memset(j->ke_key_sha256, 0x5a, sizeof j->ke_key_sha256);
        j->ntp_server = strdup("192.0.2.1");
        ASSERT_TRUE(j->ntp_server);
        for (size_t i = 0; i < n_cookies; i++) {
                uint8_t c[100];

                memset(c, (int) i + 1, sizeof c);
                ASSERT_OK(nts_jar_add_cookie(j, &IOVEC_MAKE(c, sizeof c)));
        }
}
