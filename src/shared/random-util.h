/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/* Fill buf with bytes from the kernel CSPRNG (getrandom()); never blocks the event loop for
 * long: falls back to GRND_INSECURE before the pool is initialized (early boot, no RTC). */
int random_bytes(void *buf, size_t n);
