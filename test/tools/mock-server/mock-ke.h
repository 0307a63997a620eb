/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The mock server's NTS-KE side: accepts TCP connections on a listening socket, runs TLS, reads
 * a request and answers it, well or broken as the sabotage mode says. */

#include "mock-server.h"

int mock_ke_listen(MockServer *s, int fd);
void mock_ke_close_all(MockServer *s);
