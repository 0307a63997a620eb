/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Writes the seed corpus of fuzz-nts-extfields to DIR: responses sealed with the fuzzer's
 * fixed key for the fuzzer's fixed UID, honest ones and one of each sabotage, so that the
 * fuzzer starts deep inside the verification path. Nonces are random: every run writes
 * different, equally valid seeds. */

#include <stdio.h>
#include <syslog.h>

#include "fuzz-nts-extfields.h"
#include "iovec-util.h"
#include "log.h"
#include "ntp-packet.h"
#include "nts-server-ef.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(NTS_AEADContext *, NTS_aead_free);

static int write_seed(const char *dir, const char *name, const uint8_t *p, size_t n) {
        _cleanup_free_ char *path = NULL;
        FILE *f;
        bool ok;

        if (asprintf(&path, "%s/%s", dir, name) < 0)
                return log_oom();

        f = fopen(path, "we");
        if (!f)
                return log_error_errno(errno, "Failed to open %s: %m", path);
        ok = fwrite(p, 1, n, f) == n;
        if (fclose(f) != 0 || !ok)
                return log_error_errno(EIO, "Failed to write %s: %m", path);
        return 0;
}

int main(int argc, char *argv[]) {
        _cleanup_(NTS_aead_freep) NTS_AEADContext *s2c = NULL;
        uint8_t header[NTP_HEADER_SIZE], cookies[NTS_MAX_COOKIES][100], odd[13], buf[NTS_MAX_PACKET_SIZE];
        struct iovec cookie_iov[NTS_MAX_COOKIES];
        NTS_Query q;
        ssize_t n;
        int r;

        if (argc != 2) {
                fprintf(stderr, "Usage: %s DIR\n", argv[0]);
                return EXIT_FAILURE;
        }

        r = fuzz_nts_state(&q, &s2c);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the AEAD: %m"), EXIT_FAILURE;

        NTPHeader h = {
                .version = NTP_VERSION,
                .mode = NTP_MODE_SERVER,
                .stratum = 1,
                .refid = { 'G', 'P', 'S', 0 },
        };
        ntp_header_encode(&h, header);

        for (size_t i = 0; i < NTS_MAX_COOKIES; i++) {
                memset(cookies[i], 'a' + (int) i, sizeof(cookies[i]));
                cookie_iov[i] = IOVEC_MAKE(cookies[i], sizeof(cookies[i]));
        }
        memset(odd, 'z', sizeof(odd));

        static const struct {
                const char *name;
                NTSServerSabotage sabotage;
                size_t n_cookies;
                bool odd_cookie;
        } seeds[] = {
                { "honest-1-cookie", NTS_SERVER_HONEST, 1 },
                { "honest-8-cookies", NTS_SERVER_HONEST, NTS_MAX_COOKIES },
                { "honest-short-cookie", NTS_SERVER_HONEST, 1, true },
                { "nak", NTS_SERVER_NAK, 0 },
                { "cookies-outside", NTS_SERVER_COOKIES_OUTSIDE, 2 },
                { "no-authenticator", NTS_SERVER_NO_AUTHENTICATOR, 2 },
                { "wrong-uid", NTS_SERVER_WRONG_UID, 2 },
                { "corrupt-authenticator", NTS_SERVER_CORRUPT_AUTHENTICATOR, 2 },
        };

        for (size_t i = 0; i < ELEMENTSOF(seeds); i++) {
                NTSServerResponse resp = {
                        .header = header,
                        .uid = IOVEC_MAKE(q.uid, sizeof(q.uid)),
                        .cookies = seeds[i].odd_cookie ? &IOVEC_MAKE(odd, sizeof(odd)) : cookie_iov,
                        .n_cookies = seeds[i].n_cookies,
                        .s2c = s2c,
                        .sabotage = seeds[i].sabotage,
                };

                n = nts_server_build_response(&resp, buf, sizeof(buf));
                if (n < 0)
                        return log_error_errno((int) n, "Failed to build %s: %m", seeds[i].name), EXIT_FAILURE;
                r = write_seed(argv[1], seeds[i].name, buf, (size_t) n);
                if (r < 0)
                        return EXIT_FAILURE;
        }

        return EXIT_SUCCESS;
}
