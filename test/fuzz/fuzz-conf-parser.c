/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Any bytes as a timesyncd.conf: the parser must survive them, and what it stores must satisfy
 * the rules its parsers promise (valid server names, absolute paths). */

#include <stdio.h>

#include "conf-parser.h"
#include "server-name.h"
#include "strv.h"
#include "timesyncd-conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int parse_servers(const char *filename, unsigned line, const char *section,
                         const char *lvalue, int ltype, const char *rvalue, void *data,
                         void *userdata) {
        char ***list = data;

        if (isempty(rvalue)) {
                *list = strv_free(*list);
                return 0;
        }
        return timesync_config_servers_extend(list, rvalue, "NTP", filename, line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_strv_free_ char **servers = NULL;
        _cleanup_free_ char *path = NULL;
        usec_t interval = 0;
        static const char *const sections[] = { "Time", NULL };
        const ConfigTableItem table[] = {
                { "Time", "NTP", parse_servers, 0, &servers },
                { "Time", "PollIntervalMinSec", config_parse_sec, 0, &interval },
                { "Time", "NTSTrustedCertificates", config_parse_path, 0, &path },
                {}
        };
        const ConfigSpec spec = { .sections = sections, .table = table };
        FILE *f;

        if (size == 0)
                return 0;

        f = fmemopen((void *) data, size, "r");
        if (!f)
                return 0;
        (void) config_parse_stream(f, "fuzz.conf", &spec);
        fclose(f);

        STRV_FOREACH(s, servers)
                assert_se(server_name_is_valid(*s));
        assert_se(!path || path[0] == '/');
        return 0;
}
