/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <limits.h>
#include <stdio.h>

#include "log.h"
#include "timesyncd-messages.h"
#include "timesyncd-nts-client-internal.h"

/* Bootstrap with a wrong clock (docs/NTS.md has the reasoning).
 *
 * A machine without a working RTC starts at a floor: the clock file's time, this build's time
 * or systemd's epoch file. The certificate of an NTS-KE server issued after that looks "not
 * yet valid": without help, such a machine can never get authenticated time. The way out, for
 * a clock known to be wrong and nothing else:
 *  - only when the policy of the settings allows it (the daemon's, manager_nts_bootstrap_allowed():
 *    NTSBootstrap= is on, nothing synchronized the clock, and for a clock that is behind, it
 *    still reads as its floor put it at boot: "unsynchronized" alone is true at every boot,
 *    also of a correct clock);
 *  - only for a certificate refused for its validity period: not yet valid (FORWARD), or, if
 *    the policy allows that too, expired (BACKWARD: the daemon allows it only where the
 *    agreement of several sources decides, since an expired certificate is what an attacker
 *    holding an old key would show a correctly set clock);
 *  - the key exchange is repeated without validity checks (everything else is checked), and
 *    time from those keys is used only if it lies within the validity period of the whole
 *    chain and moves the clock that way;
 *  - once the clock took that time, the keys are dropped and the key exchange is repeated
 *    with every check, now against the corrected clock; the keys are never saved.
 * Returns true when the exchange is to be repeated that way. Otherwise, when the policy
 * refused with a reason, reason gets the refusal for the failure's reason. */
bool nts_client_may_bootstrap(NTSClient *c, const NTS_KEResult *result, char *reason, size_t size) {
        const char *short_reason = NULL, *validity;
        NTSClientBootstrap direction;
        char why[256];

        if (result->stage != NTS_KE_STAGE_TLS || c->bootstrap_attempt || !c->settings->bootstrap_allowed)
                return false;
        if (result->cert_time_failure == NTS_TLS_CERT_NOT_YET_VALID) {
                direction = NTS_CLIENT_BOOTSTRAP_FORWARD;
                validity = "is not yet valid";
        } else if (result->cert_time_failure == NTS_TLS_CERT_EXPIRED) {
                direction = NTS_CLIENT_BOOTSTRAP_BACKWARD;
                validity = "has expired";
        } else
                return false;

        if (c->settings->bootstrap_allowed(c->settings->bootstrap_userdata, direction, why, sizeof why,
                                           &short_reason)) {
                log_notice("The certificate of %s %s by our clock, which is not synchronized and %s (%s): "
                           "bootstrapping (its time is used only within the certificate's validity period, and "
                           "only %s).", c->server, validity,
                           direction == NTS_CLIENT_BOOTSTRAP_FORWARD ? "behind" : "may be ahead", why,
                           direction == NTS_CLIENT_BOOTSTRAP_FORWARD ? "forward" : "backward");
                c->bootstrap_attempt = direction;
                return true;
        }
        if (!short_reason)
                return false;

        /* Each retry of the key exchange meets the same refusal: one warning. */
        log_full(c->bootstrap_refusal_logged ? LOG_DEBUG : LOG_WARNING,
                 "Bootstrap with %s refused: its certificate %s by our clock, and %s.", c->server, validity, why);
        c->bootstrap_refusal_logged = true;
        snprintf(reason, size, "%s; no bootstrap: %s", result->reason, short_reason);
        return false;
}


int nts_client_check_bootstrap(NTSClient *c, int64_t server_time_nsec, int64_t offset_nsec) {
        int64_t nb, na;
        bool forward;
        usec_t t;

        assert(c);

        if (!c->bootstrap)
                return 0;

        nb = (int64_t) c->chain_valid_from * NTP_NSEC_PER_SEC;
        na = (int64_t) c->chain_valid_until * NTP_NSEC_PER_SEC;
        forward = c->bootstrap == NTS_CLIENT_BOOTSTRAP_FORWARD;
        if (server_time_nsec >= nb && server_time_nsec <= na && (forward ? offset_nsec > 0 : offset_nsec < 0))
                return 0;

        log_warning("Refusing bootstrap time from %s: it %s; dropping the server.", c->server,
                    server_time_nsec < nb || server_time_nsec > na ?
                    "lies outside the validity period of its certificate chain" :
                    forward ? "would move the clock backwards" : "would move the clock forward");
        nts_client_forget_keys(c);
        /* The same exchange would give the same time: at the top of the ladder. */
        t = now(CLOCK_BOOTTIME);
        c->ke_retry_after = t + backoff_ke_failed(&c->ke_ladder, BACKOFF_KE_REFUSED, t, c->settings->retry_usec,
                                                  BACKOFF_KE_MAX_USEC, backoff_random, NULL);
        if (c->ke_failures < UINT_MAX)
                c->ke_failures++;
        nts_client_enter(c, NTS_CLIENT_BACKING_OFF);
        snprintf(c->last_error, sizeof c->last_error, "bootstrap time refused");
        c->last_error_logged = false;
        nts_client_report(c, NTS_CLIENT_EVENT_BOOTSTRAP_REFUSED);
        return -EPERM;
}

bool nts_client_bootstrap_done(NTSClient *c) {
        assert(c);

        if (!c->bootstrap)
                return false;

        log_struct(LOG_NOTICE, TIMESYNC_MESSAGE_NTS_BOOTSTRAP, ((const char *const[]) { "NTS_SERVER", c->server, NULL }),
                   "Bootstrap: the clock took the time of %s; repeating the key exchange with full certificate checks.",
                   c->server);
        nts_client_forget_keys(c);
        (void) nts_client_start_ke(c);
        return true;
}

NTSClientBootstrap nts_client_bootstrap(const NTSClient *c) {
        return c->bootstrap;
}
