/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The mock server's NTP side: answers NTS-protected client requests on a UDP socket with the
 * keys from the request's cookie, well or broken as the sabotage mode says. */

#include "mock-server.h"

int mock_ntp_listen(MockServer *s, int fd);
