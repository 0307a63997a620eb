/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The state file of an NTS client: a cookie is sent only while no file lists it. The file is
 * written at a clean stop only, and removed for good when it is loaded, before any of its
 * cookies goes: while the client runs, no file lists any of its cookies, so a poll needs no
 * write and no crash can make a start send one again (docs/NTS.md, "Cookie persistence"). */

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "log.h"
#include "string-util.h"
#include "timesyncd-nts-client-internal.h"

int nts_client_set_state_name(NTSClient *c, const char *name) {
        assert(c);
        assert(!c->jar_loaded);

        return free_and_strdup(&c->state_name, name);
}

static const char *nts_client_state_name(const NTSClient *c) {
        return c->state_name ?: c->server;
}

/* A failure of the state file: a warning, unless the last warning was for the same error (a
 * read-only directory fails the removal at start and the write at stop alike). */
_printf_(3, 4)
static void nts_client_state_failed(NTSClient *c, int error, const char *format, ...) {
        int level = error == c->state_error ? LOG_DEBUG : LOG_WARNING;
        va_list ap;

        c->state_error = error;
        if (log_get_max_level() < level)
                return;
        va_start(ap, format);
        (void) log_internalv(level, 0, __FILE__, __LINE__, __func__, format, ap);
        va_end(ap);
}

/* At a clean stop, or when the server goes away: the unspent cookies, for the next start to
 * resume without a key exchange. Only then (see NTSClient.jar): a crash loses the cookies,
 * never resends one. */
void nts_client_save(NTSClient *c) {
        char reason[NTS_JAR_REASON_MAX] = "";
        int r;

        /* No state directory or file name (logged at load), or keys from a bootstrap exchange,
         * which are only good for one step of the clock. */
        if (!c->state_path || c->bootstrap || !nts_jar_usable(&c->jar))
                return;

        r = nts_jar_save(&c->jar, nts_client_state_name(c), c->state_path, reason, sizeof reason);
        if (r < 0) {
                nts_client_state_failed(c, r, "Failed to save NTS cookies to %s: %s. The next start needs a key "
                                        "exchange.", c->state_path, reason);
                return;
        }
        log_debug("Saved %zu NTS cookies of %s to %s.", c->jar.n_cookies, c->server, c->state_path);
}

/* The state file, chosen once: none without a state directory, or when the server's name makes
 * a file name longer than NAME_MAX. */
static void nts_client_find_path(NTSClient *c) {
        _cleanup_free_ char *name = NULL, *legacy = NULL, *legacy_path = NULL;
        const char *dir = c->settings->state_dir;
        int r;

        if (!dir)
                return;

        r = nts_jar_file_name(nts_client_state_name(c), &name);
        if (r == -ENAMETOOLONG) {
                log_notice("NTS cookies of %s are not kept across restarts: a file name for it would be longer "
                           "than %u bytes.", c->server, (unsigned) NAME_MAX);
                return;
        }
        if (r < 0 || asprintf(&c->state_path, "%s/%s", dir, name) < 0) {
                c->state_path = NULL;
                log_oom();
                return;
        }

        /* A state file under the legacy name (nts_jar_legacy_file_name(), which differs for a
         * bracketed IPv6 address) is not read (a key exchange replaces it, once) but removed, so
         * that its keys do not stay on disk: under the current names it can be no other
         * server's. */
        if (!c->state_name && nts_jar_legacy_file_name(c->server, &legacy) >= 0 && !streq(legacy, name) &&
            asprintf(&legacy_path, "%s/%s", dir, legacy) >= 0 && unlink(legacy_path) >= 0)
                log_debug("Removed %s, the NTS state file of %s under its legacy name.", legacy_path,
                          c->server);
}

/* The keys loaded into the jar are bound to what is trusted now, and to the key exchange as it
 * would be made now: otherwise they are dropped with the file, and the reason logged. */
static bool nts_client_binding_usable(NTSClient *c) {
        char reason[NTS_JAR_REASON_MAX] = "";
        NTSJarBinding now;
        const char *why;
        int r;

        r = nts_client_binding(c, &now);
        if (r < 0) {
                log_notice_errno(r, "Discarding NTS state file %s: cannot tell what its keys would be bound to "
                                 "now (%m); running a new key exchange.", c->state_path);
                why = "";
        } else {
                why = nts_jar_binding_mismatch(&c->jar, &now);
                if (!why)
                        return true;
                log_info("Not resuming NTS with %s from %s: %s; running a new key exchange.", c->server,
                         c->state_path, why);
        }

        nts_client_forget_keys(c);
        r = nts_jar_remove(c->state_path, reason, sizeof reason);
        if (r < 0)
                nts_client_state_failed(c, r, "Failed to remove the NTS state file %s: %s.", c->state_path, reason);
        return false;
}

void nts_client_load(NTSClient *c) {
        char reason[NTS_JAR_REASON_MAX] = "";
        NTSJar jar = {};
        int r;

        if (c->jar_loaded)
                return;
        c->jar_loaded = true;

        nts_client_find_path(c);
        if (!c->state_path)
                return;

        r = nts_jar_load(c->state_path, nts_client_state_name(c), now(CLOCK_REALTIME), &jar, reason, sizeof reason);
        if (r == -ENOENT)
                return;
        if (r < 0) {
                log_notice_errno(r, "Discarding NTS state file %s: %s", c->state_path, reason);
                (void) unlink(c->state_path);
                return;
        }

        nts_jar_done(&c->jar);
        c->jar = jar;
        if (!nts_client_binding_usable(c))
                return;
        r = nts_client_make_contexts(c);
        if (r < 0) {
                log_notice_errno(r, "Discarding NTS state file %s: %m", c->state_path);
                nts_client_forget_keys(c);
                return;
        }

        /* The one write of a start: from now on the cookies are in memory only, and the file is
         * written again at a clean stop. A crash in between loses them (one key exchange
         * replaces them), never sends one twice. If the file stays, its cookies stay unsent. */
        r = nts_jar_remove(c->state_path, reason, sizeof reason);
        if (r < 0) {
                nts_client_state_failed(c, r, "Not using the %zu NTS cookies of %s: %s. A cookie goes out only once no "
                                        "file lists it (each cookie only once, RFC 8915 section 5.7, also after a "
                                        "crash): a key exchange replaces them, after every start until the file "
                                        "can be removed.", c->jar.n_cookies, c->state_path, reason);
                nts_client_forget_keys(c);
                return;
        }

        nts_client_schedule_renewal(c);
        nts_client_remember_peer(c);
        nts_client_enter(c, NTS_CLIENT_READY);
        log_info("Resuming NTS with %s: %zu cookies from %s, no key exchange needed.",
                 c->server, c->jar.n_cookies, c->state_path);
        if (log_get_max_level() >= LOG_DEBUG) {
                char addr[SOCKET_ADDRESS_STRING_MAX], key[2 * 4 + sizeof "..."] = "";

                /* The first bytes tell keys apart in a log; the rest adds nothing. */
                if (c->has_ke_key)
                        snprintf(key, sizeof key, "%02x%02x%02x%02x...", c->ke_key_sha256[0], c->ke_key_sha256[1],
                                 c->ke_key_sha256[2], c->ke_key_sha256[3]);
                log_debug("NTS keys of %s are from the key exchange with %s, key SHA-256 %s.", c->server,
                          nts_client_ke_peer(c) ? socket_address_to_string(&c->ke_peer, addr) : "(not recorded)",
                          c->has_ke_key ? key : "(not recorded)");
        }
}
