/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stddef.h>

#include "timesyncd-bus-property.h"

static const char *const names_by_bit[_BUS_PROPERTY_MAX] = {
        "ServerName", "ServerAddress", "NTPMessage", "PollIntervalUSec", "Frequency", "NTSAuthenticated",
        "NTSKeyExchangeServer", "NTSAEAD", "NTSCookies", "NTSKeyExchangeFailures", "NTSLastKeyExchangeTimestamp",
        "NTSStatus",
};

const char *bus_property_name(unsigned p) {
        for (unsigned i = 0; i < _BUS_PROPERTY_MAX; i++)
                if (p == 1U << i)
                        return names_by_bit[i];
        return NULL;
}

unsigned bus_property_names(unsigned mask, const char *names[static _BUS_PROPERTY_MAX + 1]) {
        unsigned n = 0;

        for (unsigned i = 0; i < _BUS_PROPERTY_MAX; i++)
                if (mask & (1U << i))
                        names[n++] = names_by_bit[i];
        names[n] = NULL;
        return n;
}
