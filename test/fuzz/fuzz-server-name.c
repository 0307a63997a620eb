/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Any string as a server name: accepted ones must split into a non-empty host that is itself
 * valid, and a port that was spelled out. */

#include "server-name.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *s = NULL, *host = NULL;
        uint16_t port;

        s = strndup((const char *) data, size);
        if (!s)
                return 0;

        if (server_name_parse(s, &host, &port) < 0)
                return 0;

        assert_se(!isempty(host));
        assert_se(strlen(host) <= strlen(s));
        assert_se(server_name_is_valid(host));
        assert_se(port == 0 || strrchr(s, ':'));
        return 0;
}
