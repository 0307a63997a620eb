/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdio.h>

#include "log.h"
#include "mock-pool.h"

static int parse_port(const char *s, uint16_t *ret) {
        unsigned long v;
        char *end;

        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno != 0 || end == s || *end || v == 0 || v > UINT16_MAX)
                return -EINVAL;
        *ret = (uint16_t) v;
        return 0;
}

int mock_pool_add_member(MockPool *p, char *s) {
        MockPoolMember m = {};
        char *colon;

        if (p->n_members >= MOCK_POOL_MAX_MEMBERS)
                return log_error_errno(E2BIG, "More than %u pool members.", MOCK_POOL_MAX_MEMBERS);

        if (s[0] == '[') {
                char *close = strchr(s, ']');
                if (!close || (close[1] != 0 && (close[1] != ':' || parse_port(close + 2, &m.port) < 0)))
                        return log_error_errno(EINVAL, "Invalid --pool-member=%s", s);
                *close = 0;
                m.name = s + 1;
        } else {
                colon = strchr(s, ':');
                if (colon && !strchr(colon + 1, ':')) {
                        if (parse_port(colon + 1, &m.port) < 0)
                                return log_error_errno(EINVAL, "Invalid --pool-member=%s", s);
                        *colon = 0;
                }
                m.name = s;
        }
        if (isempty(m.name) || strlen(m.name) > NTS_MAX_SERVER_NAME_SIZE)
                return log_error_errno(EINVAL, "Invalid pool member name: '%s'", m.name);

        p->members[p->n_members++] = m;
        return 0;
}

int mock_pool_set_sequence(MockPool *p, const char *s) {
        const char *w = s;

        p->n_sequence = 0;
        while (*w) {
                unsigned long v;
                char *end;

                if (p->n_sequence >= MOCK_POOL_MAX_SEQUENCE)
                        return log_error_errno(E2BIG, "--pool-sequence= longer than %u.", MOCK_POOL_MAX_SEQUENCE);
                errno = 0;
                v = strtoul(w, &end, 10);
                if (errno != 0 || end == w || (*end && *end != ',') || v >= MOCK_POOL_MAX_MEMBERS)
                        return log_error_errno(EINVAL, "Invalid --pool-sequence=%s", s);
                p->sequence[p->n_sequence++] = v;
                w = *end ? end + 1 : end;
        }
        return p->n_sequence > 0 ? 0 : log_error_errno(EINVAL, "Empty --pool-sequence=");
}

int mock_pool_check(MockPool *p) {
        if (p->n_members == 0) {
                if (p->n_sequence > 0 || p->ignore_deny)
                        return log_error_errno(EINVAL, "--pool-sequence= and --pool-ignore-deny need --pool-member=.");
                return 0;
        }

        if (p->n_sequence == 0) {
                for (size_t i = 0; i < p->n_members; i++)
                        p->sequence[i] = i;
                p->n_sequence = p->n_members;
        }
        for (size_t i = 0; i < p->n_sequence; i++)
                if (p->sequence[i] >= p->n_members)
                        return log_error_errno(EINVAL, "--pool-sequence= names member %zu of %zu.",
                                               p->sequence[i], p->n_members);
        return 0;
}

const MockPoolMember *mock_pool_pick(MockPool *p, const NTSServerKERequest *req, bool *ret_denied) {
        size_t start = p->step++ % p->n_sequence;
        const MockPoolMember *m;

        assert(p->n_members > 0);

        for (size_t k = 0; !p->ignore_deny && k < p->n_sequence; k++) {
                m = &p->members[p->sequence[(start + k) % p->n_sequence]];
                if (!nts_server_ke_request_denies(req, m->name)) {
                        log_info("KE: pool member %s (%zu denied)", m->name, req->n_denied);
                        *ret_denied = false;
                        return m;
                }
        }

        m = &p->members[p->sequence[start]];
        *ret_denied = nts_server_ke_request_denies(req, m->name);
        if (p->ignore_deny)
                log_info("KE: pool member %s (%zu denied, ignored%s)", m->name, req->n_denied,
                         *ret_denied ? ": it is one of them" : "");
        else
                log_info("KE: pool member %s (%zu denied: every member, giving one anyway)", m->name,
                         req->n_denied);
        return m;
}
