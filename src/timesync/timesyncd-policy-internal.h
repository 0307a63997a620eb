/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the policy's files share (timesyncd-policy.c, timesyncd-policy-walk.c): the mode a set
 * runs in, decided once at its start (policy_start()), and called where a set of one differs
 * from a set of several, so that no function asks which one it is. */

#include "macro.h"
#include "timesyncd-policy.h"

struct PolicyMode {
        PolicyRun run;
        /* Starts the sources of a fresh set. */
        void (*start)(Policy *pol, PolicyDecision *out);
        /* What a source of the set reported, before what every set does with it; returns true
         * when nothing else is to be done. */
        bool (*on_event)(Policy *pol, Source *s, SourceEvent e, PolicyDecision *out);
        /* The selected source became s (NULL: none); d: the judgement that chose it, or NULL. */
        void (*selected)(Policy *pol, Source *s, const SourceSetDecision *d, PolicyDecision *out);
        /* Before a judgement: what the selection is to require. */
        void (*judging)(Policy *pol, SourceSetPolicy *p);
        /* After a judgement: what is selected and said. */
        void (*judged)(Policy *pol, const SourceSetDecision *d, PolicyDecision *out);
        /* The clock is to follow d: what out says of the agreement. */
        void (*steering)(Policy *pol, const SourceSetDecision *d, PolicyDecision *out);
        /* The clock took time that came with bootstrap keys. */
        void (*bootstrapped)(Policy *pol, const PolicyDecision *d);
        bool (*uses_list)(const Policy *pol, ServerType t);
        /* Whether an NTS event that is no failure changes what Sources shows. */
        bool (*nts_event_changes_sources)(SourceEvent e);
        bool steer_changes_sources;     /* a step changes what Sources shows */
        bool clears_nts_status;         /* NTSStatus is the set's, and goes when it stops */
        bool notifies_contact;          /* STATUS= says which server was contacted */
};

extern const PolicyMode policy_vote_mode;
extern const PolicyMode policy_walk_mode;

/* STATUS= says what format says. */
_printf_(2, 3) void policy_notify(PolicyDecision *out, const char *format, ...);
/* The selected source changes: stock's ServerName, ServerAddress and NTPMessage describe it. */
void policy_select(Policy *pol, Source *s, const SourceSetDecision *d, PolicyDecision *out);
/* NTSStatus becomes text; returns true when it changes. */
bool policy_set_nts_status(Policy *pol, const char *text, PolicyDecision *out);
/* A source joins the set: what was logged of it before does not count. */
void policy_verdict_logged_forget(Policy *pol, const Source *s);
