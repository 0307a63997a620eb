/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Writes the seed corpus of fuzz-nts-ke-response: answers shaped like chrony's and NTPsec's,
 * and one for each way an answer can be refused. Run once by hand after changing it:
 *     build/test/fuzz/generate-nts-ke-corpus test/fuzz/corpus/fuzz-nts-ke-response */

#include <fcntl.h>
#include <stdio.h>

#include "macro.h"
#include "nts-server-ke.h"

static uint8_t buf[NTS_KE_MAX_MESSAGE_SIZE * 2];

static int write_seed(const char *dir, const char *name, const NTSServerKEResponse *r, size_t cut) {
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -EBADF;
        ssize_t n;

        n = nts_server_ke_encode_response(buf, sizeof(buf), r);
        if (n < 0)
                return (int) n;
        n -= (ssize_t) MIN(cut, (size_t) n);

        if (asprintf(&path, "%s/%s", dir, name) < 0)
                return -ENOMEM;
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        if (write(fd, buf, (size_t) n) != n)
                return -EIO;
        return 0;
}

#define CHRONY NTS_SERVER_KE_RESPONSE_DEFAULT(NTS_AEAD_ID_AES_SIV_CMAC_256)

#define NTPSEC                                                                                 \
        ((NTSServerKEResponse) {                                                               \
                .aead = NTS_AEAD_ID_AES_SIV_CMAC_256,                                          \
                .n_cookies = NTS_MAX_COOKIES,                                                  \
                .cookie_size = 104,                                                            \
                .error_code = -1,                                                              \
                .warning_code = -1,                                                            \
        })

int main(int argc, char *argv[]) {
        NTSServerKEResponse r;
        int k = 0;

        if (argc != 2) {
                fprintf(stderr, "Usage: %s DIRECTORY\n", argv[0]);
                return EXIT_FAILURE;
        }

        r = CHRONY, r.port = 11123;
        k = k < 0 ? k : write_seed(argv[1], "chrony-port", &r, 0);
        r = CHRONY, r.server = "ntp.example.com", r.port = 123;
        k = k < 0 ? k : write_seed(argv[1], "chrony-server-name", &r, 0);
        r = CHRONY, r.server = "2001:db8::123";
        k = k < 0 ? k : write_seed(argv[1], "chrony-server-ipv6", &r, 0);
        r = CHRONY, r.server = "192.0.2.123";
        k = k < 0 ? k : write_seed(argv[1], "chrony-server-ipv4", &r, 0);
        r = CHRONY, r.aead = NTS_AEAD_ID_AES_128_GCM_SIV;
        k = k < 0 ? k : write_seed(argv[1], "chrony-gcm-siv", &r, 0);
        r = CHRONY, r.aead_empty = true;
        k = k < 0 ? k : write_seed(argv[1], "chrony-no-common-aead", &r, 0);
        r = CHRONY, r.error_code = NTS_KE_ERROR_BAD_REQUEST, r.omit_next_protocol = true, r.omit_aead = true,
                r.n_cookies = 0;
        k = k < 0 ? k : write_seed(argv[1], "chrony-error-bad-request", &r, 0);
        r = CHRONY, r.port = 11123;
        k = k < 0 ? k : write_seed(argv[1], "chrony-truncated", &r, 10);

        r = NTPSEC;
        k = k < 0 ? k : write_seed(argv[1], "ntpsec", &r, 0);
        r = NTPSEC, r.aead = NTS_AEAD_ID_AES_SIV_CMAC_512;
        k = k < 0 ? k : write_seed(argv[1], "ntpsec-siv-512", &r, 0);

        r = CHRONY, r.warning_code = 1;
        k = k < 0 ? k : write_seed(argv[1], "warning", &r, 0);
        r = CHRONY, r.unknown_critical = true;
        k = k < 0 ? k : write_seed(argv[1], "unknown-critical", &r, 0);
        r = CHRONY, r.unknown_noncritical = true;
        k = k < 0 ? k : write_seed(argv[1], "unknown-noncritical", &r, 0);
        r = CHRONY, r.aead = NTS_AEAD_ID_AES_SIV_CMAC_384;
        k = k < 0 ? k : write_seed(argv[1], "aead-not-offered", &r, 0);
        r = CHRONY, r.omit_next_protocol = true;
        k = k < 0 ? k : write_seed(argv[1], "no-next-protocol", &r, 0);
        r = CHRONY, r.empty_next_protocol = true;
        k = k < 0 ? k : write_seed(argv[1], "empty-next-protocol", &r, 0);
        r = CHRONY, r.n_cookies = 0;
        k = k < 0 ? k : write_seed(argv[1], "no-cookies", &r, 0);
        r = CHRONY, r.n_cookies = 12, r.cookie_size = 40;
        k = k < 0 ? k : write_seed(argv[1], "twelve-cookies", &r, 0);
        r = CHRONY, r.n_cookies = 2, r.cookie_size = NTS_MAX_COOKIE_SIZE + 1;
        k = k < 0 ? k : write_seed(argv[1], "oversized-cookie", &r, 0);
        r = CHRONY, r.n_cookies = 17, r.cookie_size = 1000;
        k = k < 0 ? k : write_seed(argv[1], "too-long", &r, 0);
        r = CHRONY, r.port = 4123, r.duplicate_port = true;
        k = k < 0 ? k : write_seed(argv[1], "duplicate-port", &r, 0);
        r = CHRONY, r.data_after_end = true;
        k = k < 0 ? k : write_seed(argv[1], "data-after-end", &r, 0);

        if (k < 0) {
                fprintf(stderr, "Failed to write the corpus: %s\n", strerror(-k));
                return EXIT_FAILURE;
        }
        return EXIT_SUCCESS;
}
