/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Runs the mock NTS server (test/tools/mock-server/nts-mock-server) on loopback with a fresh
 * test PKI, and drives our client modules against it: shared by the integration test and
 * tools/nts-demo. */

#include <sys/types.h>

#include "nts-ke-client.h"
#include "nts-crypto.h"
#include "nts-ntp-client.h"

typedef struct MockProcess {
        pid_t pid;
        uint16_t ke_port;
        uint16_t ntp_port;
        SocketAddress ke_address;
} MockProcess;

/* Makes a temporary directory with the test PKI (test/tools/fixtures/make-certs.sh); *ret is
 * its path. mock_certs_remove() deletes it again. */
int mock_certs_make(char **ret);
void mock_certs_remove(char *dir);

/* Whether the mock server implements the sabotage mode (from its --help text). */
bool mock_server_has_mode(const char *mode);

typedef struct MockOptions {
        const char *sabotage;           /* --sabotage= mode; NULL: none, a correct server */
        const char *address;            /* where it listens; NULL: 127.0.0.1 */
        const char *ntp_server;         /* sent as Server Negotiation; NULL: no such record */
        const char *keys_file;          /* --keys-file=: the cookie key, shared with pool members */
        char *const *pool_args;         /* --pool-member= and the like, NULL-terminated: the mock
                                         * is a key-exchange pool, with no NTP port of its own to
                                         * announce */
} MockOptions;

/* Starts the mock server with free ports and waits for its READY line. */
int mock_server_start(const char *certs, const MockOptions *o, MockProcess *ret);
void mock_server_stop(MockProcess *s);

/* Starts test/tools/mock-server/ntp-test-server on 127.0.0.1 with a free port in mode (normal,
 * rate, deny, rstr, unsync, silent, far) and waits for its READY line. Stop it with
 * mock_server_stop(). */
int ntp_test_server_start(const char *mode, MockProcess *ret);

/* Runs one KE session against the given addresses on a private sd-event loop. Returns 0 with
 * *ret set (check (*ret)->error), or a negative errno when the session could not start. */
int harness_run_ke(const SocketAddress *addresses, size_t n_addresses, const char *hostname,
                   const char *ca_file, usec_t timeout_usec, NTS_KEResult **ret);

/* The NTP server a KE result points to: the negotiated address (an IP literal or a name that
 * resolves) or else the KE server's address, with the negotiated port or 123. */
int harness_ntp_address(const NTS_KEResult *r, SocketAddress *ret);

/* Keys of a KE result as AEAD contexts. */
int harness_aead_contexts(const NTS_KEResult *r, NTS_AEADContext **ret_c2s,
                          NTS_AEADContext **ret_s2c);

DEFINE_TRIVIAL_CLEANUP_FUNC_VOID(char *, mock_certs_remove);
DEFINE_TRIVIAL_CLEANUP_FUNC(NTS_AEADContext *, NTS_aead_free);
