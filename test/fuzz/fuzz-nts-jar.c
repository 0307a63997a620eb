/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Any bytes as an NTS state file (nts_jar_from_string()): a refusal comes with a reason that is
 * safe to log; an accepted file gives a usable jar whose text form parses back to the same jar. */

#include "fuzz.h"
#include "iovec-util.h"
#include "string-util.h"
#include "timesyncd-nts-jar.h"

#define SERVER "ntp.example.org:4460"

static void assert_same_jar(const NTSJar *a, const NTSJar *b) {
        assert_se(a->aead == b->aead);
        assert_se(a->key_size == b->key_size);
        assert_se(memcmp(a->c2s, b->c2s, a->key_size) == 0);
        assert_se(memcmp(a->s2c, b->s2c, a->key_size) == 0);
        assert_se(streq_ptr(a->ntp_server, b->ntp_server));
        assert_se(a->ntp_port == b->ntp_port);
        assert_se(a->ke_realtime == b->ke_realtime);
        assert_se(a->ke_peer.sa.ss_family == b->ke_peer.sa.ss_family);
        assert_se(a->ke_peer.sa.ss_family == AF_UNSPEC || socket_address_equal(&a->ke_peer, &b->ke_peer));
        assert_se(a->has_ke_key == b->has_ke_key);
        assert_se(memcmp(a->ke_key_sha256, b->ke_key_sha256, sizeof a->ke_key_sha256) == 0);
        assert_se(memcmp(&a->binding, &b->binding, sizeof a->binding) == 0);
        assert_se(a->n_cookies == b->n_cookies);
        for (size_t i = 0; i < a->n_cookies; i++)
                assert_se(iovec_equal(&a->cookies[i], &b->cookies[i]));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *s = NULL, *text = NULL;
        char reason[NTS_JAR_REASON_MAX] = "";
        NTSJar j = {}, k = {};
        int r;

        /* The loader refuses bigger files before parsing. */
        if (size > 64 * 1024)
                return 0;
        s = strndup((const char *) data, size);
        if (!s)
                return 0;

        r = nts_jar_from_string(s, SERVER, &j, reason, sizeof reason);
        if (r < 0) {
                assert_se(IN_SET(r, -EBADMSG, -ENOKEY, -ENOMEM));
                /* Printable ASCII only: a value copied from the file cannot forge a log line. */
                assert_se(r == -ENOMEM || !isempty(reason));
                for (const char *c = reason; *c; c++)
                        assert_se(*c >= ' ' && *c <= '~');
                return 0;
        }

        assert_se(j.key_size > 0);
        assert_se(j.n_cookies <= NTS_MAX_COOKIES);
        if (nts_jar_to_string(&j, SERVER, &text) >= 0) {
                assert_se(nts_jar_from_string(text, SERVER, &k, NULL, 0) >= 0);
                assert_same_jar(&j, &k);
                nts_jar_done(&k);
        }
        nts_jar_done(&j);
        return 0;
}
