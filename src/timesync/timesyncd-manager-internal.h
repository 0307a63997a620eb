/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What timesyncd-manager.c decides and applies, visible to its unit test only; the public
 * interface is timesyncd-manager.h. */

#include "timesyncd-clock.h"
#include "timesyncd-manager.h"
#include "timesyncd-nts.h"
#include "timesyncd-several.h"
#include "timesyncd-source.h"

/* The PLL's poll exponent for an interval (log2 seconds, at most 30). */
int manager_poll_log2(usec_t interval);
/* Apply a decision of the several-sources policy or of the NTS glue. */
void manager_several_apply(Manager *m, const SeveralDecision *d);
void manager_nts_apply(Manager *m, const NTSDecision *d);
