/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdio.h>
#include <string.h>

#include "in-addr-util.h"
#include "log.h"
#include "timesyncd-messages.h"
#include "timesyncd-policy.h"
#include "timesyncd-policy-vote.h"

/* The parts of a conflict of claims of e, which is in conflict with a source listed before
 * it: that source's name, and in ip the NTP address both name ("?" if it cannot be written). */
static const char *policy_conflict_parts(Policy *pol, const SourceSetEntry *e, char ip[static IN_ADDR_TO_STRING_MAX]) {
        const SourceSetEntry *with = source_set_find(&pol->set, e->conflict_with);

        assert(with);
        if (!in_addr_to_string(e->identity.ntp_family, &e->identity.ntp_address, ip, IN_ADDR_TO_STRING_MAX))
                strcpy(ip, "?");
        return pol->ctx.sources->name(with->source);
}

/* The warning of a conflict of claims, with the fields an alert on its MESSAGE_ID needs: e's
 * source, the other one, and the NTP address both name. */
static void policy_log_conflict(Policy *pol, const SourceSetEntry *e) {
        char text[256], ip[IN_ADDR_TO_STRING_MAX];
        const char *other = policy_conflict_parts(pol, e, ip);

        log_struct(LOG_WARNING, TIMESYNC_MESSAGE_NTS_CONFLICT,
                   ((const char *const[]) { "NTS_SERVER", pol->ctx.sources->name(e->source),
                                            "NTS_OTHER_SERVER", other, "NTP_ADDRESS", ip, NULL }),
                   "%s, though their key-exchange servers and certificate keys differ: one of them "
                   "claims a server that is not its own; not merged, each keeps its vote.",
                   policy_conflict_describe(pol, e, text, sizeof text));
}

bool policy_identify(Policy *pol, Source *s) {
        SourceSetEntry *e = source_set_find(&pol->set, s);
        const void *before[NTP_SELECT_MAX], *conflict_before[NTP_SELECT_MAX];
        ServerName *n = pol->ctx.lists->find_source(pol->ctx.servers, s);
        SourceIdentity id;

        if (!e)
                return false;

        /* A source between two lookups of its NTP server has no address for a while; it is
         * still the server it was (and may still have a candidate). */
        id = e->identity;
        id.ke_pool = n && n->kind == SERVER_NAME_KE_POOL ? n : NULL;
        pol->ctx.sources->identify(s, &id);

        for (size_t i = 0; i < pol->set.n_entries; i++) {
                before[i] = pol->set.entries[i].duplicate_of;
                conflict_before[i] = pol->set.entries[i].conflict_with;
        }
        if (!source_set_identify(&pol->set, s, &id))
                return false;

        /* Once per merge: a duplicate stays one until it or its twin changes address. */
        for (size_t i = 0; i < pol->set.n_entries; i++) {
                const SourceSetEntry *d = &pol->set.entries[i];
                const SourceSetEntry *of = d->duplicate_of ? source_set_find(&pol->set, d->duplicate_of) : NULL;
                char why[SOURCE_IDENTITY_REASON_MAX];

                if (!of || d->duplicate_of == before[i])
                        continue;
                log_notice("NTS source %s is the same server as %s (%s); it counts once.",
                           pol->ctx.sources->name(d->source), pol->ctx.sources->name(of->source),
                           source_identity_reason(&of->identity, d->duplicate_why, why));
        }
        /* Once per conflict: one of the two key-exchange servers names an NTP server that is not
         * its own, by mistake or to take the other's vote away. */
        for (size_t i = 0; i < pol->set.n_entries; i++) {
                const SourceSetEntry *d = &pol->set.entries[i];

                if (d->conflict_with && d->conflict_with != conflict_before[i])
                        policy_log_conflict(pol, d);
        }
        return true;
}

const char *policy_conflict_describe(Policy *pol, const SourceSetEntry *e, char *buf, size_t size) {
        char ip[IN_ADDR_TO_STRING_MAX];
        const char *other = policy_conflict_parts(pol, e, ip);

        (void) snprintf(buf, size, "NTS sources %s and %s name one NTP address %s", pol->ctx.sources->name(e->source),
                        other, ip);
        return buf;
}

const char *policy_conflict(Policy *pol, char *buf, size_t size) {
        buf[0] = '\0';
        for (size_t i = 0; i < pol->set.n_entries; i++)
                if (pol->set.entries[i].conflict_with)
                        return policy_conflict_describe(pol, &pol->set.entries[i], buf, size);
        return buf;
}
