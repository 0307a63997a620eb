/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/* Fill buf with bytes from the kernel CSPRNG (getrandom()); never blocks the event loop for
 * long: falls back to GRND_INSECURE before the pool is initialized (early boot, no RTC). */
int random_bytes(void *buf, size_t n);

/* The same bytes, served from a pool that one getrandom() call refills every 1 KiB: for the
 * small per-packet draws (Unique Identifiers, nonces, transmit timestamps), where a system
 * call each costs as much as a third of the packet's AES-SIV. Used bytes are wiped from the
 * pool, a fork() empties it, and before the kernel's pool is initialized every call goes to
 * random_bytes(). Not thread-safe: the event loop's thread only. */
int random_bytes_pooled(void *buf, size_t n);
