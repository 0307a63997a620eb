/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Settings for sources that a unit test makes and never starts. */

#include <systemd/sd-event.h>

#include "timesyncd-source.h"

/* Stock's poll interval bounds (32 s to 2048 s) and retry time (30 s), on event; nts: for NTS
 * sources (NULL: plain ones only). */
static inline SourceSettings test_source_settings(sd_event *event, const NTSClientSettings *nts) {
        return (SourceSettings) {
                .event = event,
                .poll_interval_min_usec = 32 * USEC_PER_SEC,
                .poll_interval_max_usec = 2048 * USEC_PER_SEC,
                .retry_usec = 30 * USEC_PER_SEC,
                .nts = nts,
        };
}
