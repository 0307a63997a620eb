/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One server, one vote, for the set of sources (docs/ARCHITECTURE.md, "Several
 * sources"): what a source's events told of which server it is goes to the set
 * (timesyncd-source-identity, source_set_identify()), and the log says once which sources were
 * merged and why, and which name one NTP address without being one server (a conflict). */

#include <stdbool.h>

#include "timesyncd-policy.h"

/* After s reported its address or new keys: records which server s is (its NTP address, the
 * key-exchange server and certificate key of its last key exchange; what is not known now
 * keeps what was known before). Returns true when which sources are duplicates changed: the
 * set needs judging again. */
bool policy_identify(Policy *pol, Source *s);

/* "NTS sources B and A name one NTP address 192.0.2.1" of e, which is in conflict with a
 * source listed before it. */
const char *policy_conflict_describe(Policy *pol, const SourceSetEntry *e, char *buf, size_t size);
/* That of the first source in conflict, for NTSStatus; "" when there is none. */
const char *policy_conflict(Policy *pol, char *buf, size_t size);
