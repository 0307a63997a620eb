/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* NTS for a build without it (meson -Dnts=disabled): NTS= servers are still read, still
 * replace every other server, and are never contacted. A build without NTS must not turn a
 * configuration that asks for authenticated time into unauthenticated time. */

#include "log.h"
#include "timesyncd-manager.h"
#include "timesyncd-nts.h"

bool manager_nts_enabled(Manager *m) {
        return m->nts_servers || m->nts_runtime_servers || m->config.nts_set || m->config.nts_required;
}

int manager_nts_prepare(Manager *m) {
        if (!manager_nts_enabled(m))
                return 0;
        /* NTSRequired= and no server yet: nothing to load until one is set at runtime. */
        if (!m->nts_servers && !m->nts_runtime_servers && !m->config.nts_set)
                return 0;

        m->nts_unavailable = true;
        snprintf(m->nts_status, sizeof m->nts_status, "NTS unavailable: built without NTS support");
        return log_error_errno(EOPNOTSUPP, "NTS servers are configured but this build has no NTS support: "
                               "the clock is not synchronized (no fallback to unauthenticated NTP).");
}

int nts_state_new(ServerName *n, NTSState **ret) {
        NTSState *s = new0(NTSState, 1);
        if (!s)
                return -ENOMEM;
        s->name = n;
        *ret = s;
        return 0;
}

NTSState *nts_state_free(NTSState *s) {
        return mfree(s);
}

bool nts_state_backing_off(const NTSState *s) {
        return false;
}

int manager_nts_connect(Manager *m, ServerName *n) {
        return 0;
}

ssize_t manager_nts_build_request(Manager *m, uint8_t *buf, size_t size) {
        return -EOPNOTSUPP;
}

int manager_nts_verify_reply(Manager *m, const uint8_t *buf, size_t size, RefusalCause *ret_cause,
                             const char **ret_reason) {
        *ret_cause = REFUSAL_NTS_NO_AUTHENTICATOR;
        *ret_reason = "this build has no NTS support";
        return -EAGAIN;
}

int manager_nts_check_bootstrap(Manager *m, int64_t server_time_nsec, int64_t offset_nsec) {
        return -EPERM;
}

bool manager_nts_bootstrap_done(Manager *m) {
        return false;
}

const char *manager_nts_aead_name(Manager *m) {
        return NULL;
}

unsigned manager_nts_cookies(Manager *m) {
        return 0;
}

const char *manager_nts_ke_server(Manager *m) {
        return NULL;
}
