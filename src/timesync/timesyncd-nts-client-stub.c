/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The NTS client of a build without NTS (meson -Dnts=disabled): an NTS source exists, backs
 * off for good, and never sends anything. A build without NTS must not turn a configuration
 * that asks for authenticated time into unauthenticated time. */

#include "macro.h"
#include "timesyncd-nts-client.h"

struct NTSClient {
        char *server;
};

int nts_client_load_libraries(void) {
        return -EOPNOTSUPP;
}

int nts_client_new(const NTSClientSettings *settings, const char *server, const char *host, uint16_t port,
                   nts_client_handler_t handler, void *userdata, NTSClient **ret) {
        NTSClient *c;

        c = new0(NTSClient, 1);
        if (!c)
                return -ENOMEM;
        c->server = strdup(server);
        if (!c->server) {
                free(c);
                return -ENOMEM;
        }
        *ret = c;
        return 0;
}

NTSClient *nts_client_free(NTSClient *c) {
        if (!c)
                return NULL;
        free(c->server);
        return mfree(c);
}

NTSClientState nts_client_prepare(NTSClient *c) {
        return NTS_CLIENT_BACKING_OFF;
}

NTSClientState nts_client_state(const NTSClient *c) {
        return NTS_CLIENT_BACKING_OFF;
}

const char *nts_client_ntp_host(const NTSClient *c) {
        return NULL;
}

uint16_t nts_client_ntp_port(const NTSClient *c) {
        return 0;
}

usec_t nts_client_retry_after(const NTSClient *c) {
        return 0;
}

bool nts_client_backing_off(const NTSClient *c) {
        return false;
}

bool nts_client_awaiting_reply(const NTSClient *c) {
        return false;
}

ssize_t nts_client_seal(NTSClient *c, uint8_t *buf, size_t size) {
        return -EOPNOTSUPP;
}

int nts_client_open(NTSClient *c, const uint8_t *buf, size_t size, RefusalCause *ret_cause, const char **ret_reason) {
        *ret_cause = REFUSAL_NTS_NO_AUTHENTICATOR;
        *ret_reason = "this build has no NTS support";
        return -EAGAIN;
}

int nts_client_check_bootstrap(NTSClient *c, int64_t server_time_nsec, int64_t offset_nsec) {
        return -EPERM;
}

bool nts_client_bootstrap_done(NTSClient *c) {
        return false;
}

NTSClientBootstrap nts_client_bootstrap(const NTSClient *c) {
        return NTS_CLIENT_BOOTSTRAP_NONE;
}

const char *nts_client_server(const NTSClient *c) {
        return c->server;
}

void nts_client_get_report(const NTSClient *c, NTSClientReport *ret) {
        *ret = (NTSClientReport) {
                .server = c->server,
                .ke_address = c->server,
                .last_error = nts_client_last_error(c),
        };
}

const SocketAddress *nts_client_ke_peer(const NTSClient *c) {
        return NULL;
}

const uint8_t *nts_client_ke_key_sha256(const NTSClient *c) {
        return NULL;
}

usec_t nts_client_last_ke_realtime(const NTSClient *c) {
        return 0;
}

const char *nts_client_last_error(const NTSClient *c) {
        return "built without NTS support";
}

bool nts_client_retry_now(NTSClient *c) {
        return false;
}

bool nts_client_binding_current(NTSClient *c) {
        return true;
}

bool nts_client_last_error_logged(const NTSClient *c) {
        return false;
}

int nts_client_pool_new(NTSClientPool **ret) {
        return -EOPNOTSUPP;
}

NTSClientPool *nts_client_pool_free(NTSClientPool *p) {
        return NULL;
}

int nts_client_set_state_name(NTSClient *c, const char *name) {
        return 0;
}

int nts_client_join_pool(NTSClient *c, NTSClientPool *pool) {
        return 0;
}

const char *nts_client_pool_member(const NTSClient *c) {
        return NULL;
}

bool nts_client_pool_exhausted(const NTSClient *c) {
        return false;
}

int nts_client_pool_claim_address(NTSClient *c, const SocketAddress *a) {
        return 0;
}

bool nts_client_pool_member_failed(NTSClient *c, bool refused) {
        return false;
}
