/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Setup shared by the tests that run TLS against the test PKI (test-nts-tls, test-mock-server):
 * a fresh temporary directory with the certificates of test/tools/fixtures/make-certs.sh (path in
 * TEST_MAKE_CERTS, set by meson) in certs_dir below it, SIGPIPE ignored so that a dead peer is
 * an error return rather than a signal, libssl loaded. */

#include <signal.h>
#include <stdio.h>

#include "ssl-util.h"
#include "tests.h"

/* dir/name in one of a few rotating static buffers: valid until eight more calls. */
static inline const char *test_path(const char *dir, const char *name) {
        static char buf[8][256];
        static unsigned n;
        char *p = buf[n++ % ELEMENTSOF(buf)];

        snprintf(p, sizeof(buf[0]), "%s/%s", dir, name);
        return p;
}

static inline void test_tls_setup(char *dir_template, const char *certs_dir) {
        char cmd[1024];

        ASSERT_TRUE(signal(SIGPIPE, SIG_IGN) != SIG_ERR);
        ASSERT_TRUE(mkdtemp(dir_template));
        snprintf(cmd, sizeof(cmd), "bash '%s' '%s/%s'", TEST_MAKE_CERTS, dir_template, certs_dir);
        ASSERT_EQ(system(cmd), 0);
        ASSERT_OK(dlopen_libssl(LOG_ERR));
}

static inline void test_tls_cleanup(const char *dir) {
        char cmd[1024];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        ASSERT_EQ(system(cmd), 0);
}
