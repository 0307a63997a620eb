/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Big-endian loads and stores at any alignment: wire formats are network byte order. */

#include <stdint.h>

static inline uint16_t unaligned_read_be16(const void *p) {
        const uint8_t *b = p;
        return (uint16_t) (((uint16_t) b[0] << 8) | b[1]);
}

static inline uint32_t unaligned_read_be32(const void *p) {
        const uint8_t *b = p;
        return ((uint32_t) b[0] << 24) | ((uint32_t) b[1] << 16) | ((uint32_t) b[2] << 8) | b[3];
}

static inline uint64_t unaligned_read_be64(const void *p) {
        const uint8_t *b = p;
        return ((uint64_t) unaligned_read_be32(b) << 32) | unaligned_read_be32(b + 4);
}

static inline void unaligned_write_be16(void *p, uint16_t v) {
        uint8_t *b = p;
        b[0] = (uint8_t) (v >> 8);
        b[1] = (uint8_t) v;
}

static inline void unaligned_write_be32(void *p, uint32_t v) {
        uint8_t *b = p;
        b[0] = (uint8_t) (v >> 24);
        b[1] = (uint8_t) (v >> 16);
        b[2] = (uint8_t) (v >> 8);
        b[3] = (uint8_t) v;
}

static inline void unaligned_write_be64(void *p, uint64_t v) {
        uint8_t *b = p;
        unaligned_write_be32(b, (uint32_t) (v >> 32));
        unaligned_write_be32(b + 4, (uint32_t) v);
}
