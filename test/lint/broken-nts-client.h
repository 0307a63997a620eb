/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A header that declares a function the stub does not define: check-nts-client-stub.sh must
 * refuse it. */
int nts_client_load_libraries(void);
const char *nts_client_server(const NTSClient *c);
int nts_client_only_in_the_real_client(NTSClient *c);
