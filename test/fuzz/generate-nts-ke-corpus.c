/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Writes the seed corpora of fuzz-nts-ke-response (answers shaped like chrony's and NTPsec's,
 * and one for each way an answer can be refused) and fuzz-nts-ke-request (our requests and
 * broken ones). Run by hand after changing it:
 *     build/test/fuzz/generate-nts-ke-corpus test/fuzz/corpus */

#include <fcntl.h>
#include <stdio.h>

#include "iovec-util.h"
#include "macro.h"
#include "nts-server-ke.h"

static uint8_t buf[NTS_KE_MAX_MESSAGE_SIZE * 2];

static int write_file(const char *dir, const char *subdir, const char *name, const void *data, size_t size) {
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -EBADF;

        if (asprintf(&path, "%s/%s/%s", dir, subdir, name) < 0)
                return -ENOMEM;
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        if (write(fd, data, size) != (ssize_t) size)
                return -EIO;
        return 0;
}

static int write_seed(const char *dir, const char *name, const NTSServerKEResponse *r, size_t cut) {
        ssize_t n;

        n = nts_server_ke_encode_response(buf, sizeof(buf), r);
        if (n < 0)
                return (int) n;
        return write_file(dir, "fuzz-nts-ke-response", name, buf, (size_t) n - MIN(cut, (size_t) n));
}

static int write_request(const char *dir, const char *name, const NTS_AEADAlgorithm *aead, size_t n_aead,
                         char *const *deny, size_t n_deny) {
        ssize_t n;

        n = NTS_encode_request(buf, sizeof(buf), aead, n_aead, deny, n_deny);
        if (n < 0)
                return (int) n;
        return write_file(dir, "fuzz-nts-ke-request", name, buf, (size_t) n);
}

/* Our request with one more record before End of Message, or after it. */
static int write_request_with(const char *dir, const char *name, uint16_t type, bool critical,
                              bool after_end) {
        static const NTS_AEADAlgorithm aead[] = { NTS_AEAD_AES_SIV_CMAC_256 };
        struct iovec out = IOVEC_MAKE(buf, sizeof(buf));
        ssize_t n;
        int k;

        n = NTS_encode_request(buf, sizeof(buf), aead, ELEMENTSOF(aead), NULL, 0);
        if (n < 0)
                return (int) n;
        if (!after_end)
                n -= NTS_KE_RECORD_HEADER_SIZE;
        iovec_inc(&out, (size_t) n);

        k = NTS_record_append(&out, type, critical, "\0\0", 2);
        if (k < 0)
                return k;
        if (!after_end) {
                k = NTS_record_append(&out, NTS_KE_RECORD_END_OF_MESSAGE, true, NULL, 0);
                if (k < 0)
                        return k;
        }
        return write_file(dir, "fuzz-nts-ke-request", name, buf, sizeof(buf) - out.iov_len);
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
                fprintf(stderr, "Usage: %s CORPUS-DIRECTORY\n", argv[0]);
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
        /* A key-exchange pool's answer: the member, its port, and its Keep Alive passed on. */
        r = CHRONY, r.server = "member-1.pool.test", r.port = 123, r.keep_alive = true;
        k = k < 0 ? k : write_seed(argv[1], "pool-member", &r, 0);

        static const NTS_AEADAlgorithm all[] = {
                NTS_AEAD_AES_SIV_CMAC_256, NTS_AEAD_AES_SIV_CMAC_384, NTS_AEAD_AES_SIV_CMAC_512,
                NTS_AEAD_AES_128_GCM_SIV, NTS_AEAD_AES_256_GCM_SIV,
        };
        /* A pool's earlier Server records: a name, an IPv4 and an IPv6 address. */
        char *deny[] = { (char *) "member-1.pool.test", (char *) "192.0.2.7", (char *) "2001:db8::7" };
        k = k < 0 ? k : write_request(argv[1], "request-siv-256", all, 1, NULL, 0);
        k = k < 0 ? k : write_request(argv[1], "request-all", all, ELEMENTSOF(all), NULL, 0);
        k = k < 0 ? k : write_request(argv[1], "request-gcm-siv", all + 3, 1, NULL, 0);
        k = k < 0 ? k : write_request(argv[1], "request-deny-one", all, 1, deny, 1);
        k = k < 0 ? k : write_request(argv[1], "request-deny-three", all, ELEMENTSOF(all), deny, ELEMENTSOF(deny));
        k = k < 0 ? k : write_request_with(argv[1], "request-deny-critical", NTS_KE_RECORD_NTP_SERVER_DENY, true,
                                           false);
        k = k < 0 ? k : write_request_with(argv[1], "request-unknown-critical", 0x1234, true, false);
        k = k < 0 ? k : write_request_with(argv[1], "request-unknown-noncritical", 0x1234, false, false);
        k = k < 0 ? k : write_request_with(argv[1], "request-port", NTS_KE_RECORD_PORT, false, false);
        k = k < 0 ? k : write_request_with(argv[1], "request-error", NTS_KE_RECORD_ERROR, true, false);
        k = k < 0 ? k : write_request_with(argv[1], "request-second-aead", NTS_KE_RECORD_AEAD_ALGORITHM,
                                           true, false);
        k = k < 0 ? k : write_request_with(argv[1], "request-data-after-end", NTS_KE_RECORD_PORT,
                                           false, true);

        if (k < 0) {
                fprintf(stderr, "Failed to write the corpus: %s\n", strerror(-k));
                return EXIT_FAILURE;
        }
        return EXIT_SUCCESS;
}
