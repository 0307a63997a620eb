/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The policy's view of the real sources (PolicySourceOps, timesyncd-policy.h): each entry is the
 * timesyncd-source (or NTS client) function of its name; and of the real server lists and their
 * pools (PolicyListOps), each entry the timesyncd-server, timesyncd-nts or timesyncd-pool
 * function that reads the names' sources or pools. The only file of the policy that calls into
 * a source or a pool or asks the lists about one; the others go through the tables in their
 * PolicyContext, so that a unit test can put fakes in their place. */

#include "timesyncd-nts-client.h"
#include "timesyncd-nts.h"
#include "timesyncd-policy.h"

static int policy_source_make(ServerName *n, const PolicyContext *ctx) {
        return server_name_source(n, ctx->source_settings, ctx->source_handler, ctx->userdata);
}

static bool policy_source_nts(const Source *s) {
        return source_nts(s);
}

static const char *policy_source_ke_error(const Source *s, bool *ret_logged) {
        NTSClient *c = source_nts(s);

        *ret_logged = c && nts_client_last_error_logged(c);
        return c ? nts_client_last_error(c) : NULL;
}

static bool policy_source_ke_pool_exhausted(const Source *s) {
        return nts_client_pool_exhausted(source_nts(s));
}

static void policy_source_identify(const Source *s, SourceIdentity *id) {
        NTSClient *c = source_nts(s);

        if (source_address(s))
                source_identity_set_ntp_address(id, source_address(s));
        if (c && nts_client_ke_peer(c))
                source_identity_set_ke_address(id, nts_client_ke_peer(c));
        if (c && nts_client_ke_key_sha256(c))
                source_identity_set_key(id, nts_client_ke_key_sha256(c));
}

const PolicySourceOps policy_source_ops = {
        .make = policy_source_make,
        .name = source_name,
        .state = source_state,
        .address = source_address,
        .sample = source_sample,
        .poll_interval = source_poll_interval,
        .last_error = source_last_error,
        .silent = source_silent,
        .failures = source_failures,
        .stalled = source_stalled,
        .nts = policy_source_nts,
        .ke_error = policy_source_ke_error,
        .ke_pool_exhausted = policy_source_ke_pool_exhausted,
        .identify = policy_source_identify,
        .start = source_start,
        .keep_trying = source_keep_trying,
        .stop = source_stop,
        .sample_used = source_sample_used,
        .clock_stepped = source_clock_stepped,
        .sample_stepped = source_sample_stepped,
        .poll_limits_changed = source_poll_limits_changed,
        .poll_interval_locked = source_set_poll_interval_locked,
        .set_unused = source_set_unused,
};

static int policy_pool_make(ServerName *n, const PolicyContext *ctx) {
        return server_name_pool(n, ctx->pool_settings, ctx->source_handler, ctx->pool_handler, ctx->userdata);
}

const PolicyListOps policy_list_ops = {
        .next = server_next,
        .usable = server_name_usable,
        .all_refuse = nts_all_refuse,
        .earliest_retry = nts_earliest_retry,
        .find_source = server_lists_find_source,
        .pool_make = policy_pool_make,
        .pool_start = pool_start,
        .pool_stop = pool_stop,
        .pool_started = pool_started,
        .pool_stalled = pool_stalled,
        .pool_last_error = pool_last_error,
        .pool_n_sources = pool_n_sources,
        .pool_source = pool_source,
        .pool_has_source = pool_has_source,
        .pool_source_retired = pool_source_retired,
        .pool_source_event = pool_source_event,
};
