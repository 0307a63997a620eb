/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Properties of the manager's D-Bus object, as bits: a decision (timesyncd-policy.h,
 * timesyncd-nts.h) says which changed, and the manager emits one PropertiesChanged for them. */

typedef enum BusProperty {
        BUS_PROPERTY_SERVER_NAME = 1U << 0,
        BUS_PROPERTY_SERVER_ADDRESS = 1U << 1,
        BUS_PROPERTY_NTP_MESSAGE = 1U << 2,
        BUS_PROPERTY_POLL_INTERVAL = 1U << 3,
        BUS_PROPERTY_FREQUENCY = 1U << 4,
        BUS_PROPERTY_NTS_AUTHENTICATED = 1U << 5,
        BUS_PROPERTY_NTS_KE_SERVER = 1U << 6,
        BUS_PROPERTY_NTS_AEAD = 1U << 7,
        BUS_PROPERTY_NTS_COOKIES = 1U << 8,
        BUS_PROPERTY_NTS_KE_FAILURES = 1U << 9,
        BUS_PROPERTY_NTS_LAST_KE = 1U << 10,
        BUS_PROPERTY_NTS_STATUS = 1U << 11,
        _BUS_PROPERTY_MAX = 12,
} BusProperty;

/* What describes the selected source: stock's ServerName, ServerAddress, NTPMessage, and the
 * NTS properties. */
#define BUS_PROPERTIES_SELECTED                                                                    \
        (BUS_PROPERTY_SERVER_NAME | BUS_PROPERTY_SERVER_ADDRESS | BUS_PROPERTY_NTP_MESSAGE |      \
         BUS_PROPERTY_POLL_INTERVAL | BUS_PROPERTY_NTS_AUTHENTICATED | BUS_PROPERTY_NTS_KE_SERVER | \
         BUS_PROPERTY_NTS_AEAD | BUS_PROPERTY_NTS_COOKIES)

/* The D-Bus name of a property bit (one bit set); NULL for anything else. */
const char *bus_property_name(unsigned p);
/* The names of the bits of mask, in bit order, into names (room for _BUS_PROPERTY_MAX + 1),
 * NULL-terminated. Returns how many. */
unsigned bus_property_names(unsigned mask, const char *names[static _BUS_PROPERTY_MAX + 1]);
