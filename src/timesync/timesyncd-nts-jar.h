/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What one NTS-KE gave us for one server: the AEAD, the two keys, the negotiated NTP server
 * and the cookies, kept first-in first-out and spent one per request (RFC 8915 section 5.7:
 * never reuse a cookie). Saved to the state directory so that a restart resumes without a
 * new key exchange; the file holds keys, so it is 0600, written atomically (temporary file,
 * fsync, rename), removed durably (unlink, fsync of the directory) before any cookie it lists
 * may be sent, and anything odd in it makes the whole file be ignored. */

#include <stdint.h>
#include <sys/uio.h>

#include "nts.h"
#include "socket-address.h"
#include "time-util.h"

#define NTS_JAR_KEY_SHA256_SIZE 32

/* What a jar is bound to: what the key exchange that filled it trusted, and what shaped its
 * request. Keys got under other settings are not used: a narrowed NTSTrustedCertificates=
 * must not leave a server in use, for up to NTS_JAR_MAX_AGE_USEC, whose certificate would no
 * longer verify. */
typedef struct NTSJarBinding {
        /* NTS_tls_trust_sha256(): NTSTrustedCertificates= (path and content) or the system's
         * store (its paths and content) */
        uint8_t trust_sha256[NTS_JAR_KEY_SHA256_SIZE];
        /* the KE server's name (as verified and sent as SNI), its port and the AEAD offer */
        uint8_t ke_sha256[NTS_JAR_KEY_SHA256_SIZE];
} NTSJarBinding;

typedef struct NTSJar {
        NTS_AEADAlgorithm aead;
        uint8_t c2s[NTS_MAX_AEAD_KEY_SIZE], s2c[NTS_MAX_AEAD_KEY_SIZE];
        size_t key_size;
        char *ntp_server;               /* negotiated; NULL: the KE server's host */
        uint16_t ntp_port;              /* negotiated; 0: 123 */
        usec_t ke_realtime;             /* when the key exchange happened (CLOCK_REALTIME) */
        /* Which server the key exchange reached, for one server, one vote after a restart: the
         * address that answered (family 0: unknown), and the SHA-256 of its certificate's
         * SubjectPublicKeyInfo. */
        SocketAddress ke_peer;
        bool has_ke_key;
        uint8_t ke_key_sha256[NTS_JAR_KEY_SHA256_SIZE];
        NTSJarBinding binding;
        struct iovec cookies[NTS_MAX_COOKIES];
        size_t n_cookies;
} NTSJar;

/* Keys and cookies older than this are not used, neither loaded from the file nor kept by a
 * running daemon: servers rotate their keys and would only NAK, and a new key exchange checks
 * the server's certificate again (chrony's ntsrefresh does the same, every 4 weeks). */
#define NTS_JAR_MAX_AGE_USEC (7 * USEC_PER_DAY)

void nts_jar_done(NTSJar *j);
/* Appends a copy; the oldest cookie is dropped when the jar is full. */
int nts_jar_add_cookie(NTSJar *j, const struct iovec *cookie);
/* Takes the oldest cookie out (ownership to the caller); -ENOENT when empty. */
int nts_jar_pop_cookie(NTSJar *j, struct iovec *ret);
bool nts_jar_usable(const NTSJar *j);
/* The key exchange is more than NTS_JAR_MAX_AGE_USEC before now_realtime, or more than a day
 * after it (a clock set back since: the age is unknown). */
bool nts_jar_expired(const NTSJar *j, usec_t now_realtime);

/* Why a jar may not be used under the binding of now: NULL when it may, otherwise a clause for
 * a log line (the trust is named first when both changed). */
const char *nts_jar_binding_mismatch(const NTSJar *j, const NTSJarBinding *now);

/* Text form: "key=value" lines, binary values in hex. */
int nts_jar_to_string(const NTSJar *j, const char *server, char **ret);
/* Refuses (-EBADMSG) anything malformed (numbers are decimal digits only; ke-address an IPv4
 * or IPv6 literal, with ke-port and only with it; ke-key-sha256, trust-sha256 and ke-sha256 32
 * bytes), a key given twice, a file for another server, or an unknown AEAD. reason (may be
 * NULL) then gets, in a few words for a log line, which key or line is wrong; secrets are
 * never copied into it. A file without its binding (trust-sha256 and ke-sha256: written by an
 * earlier version) is refused with -ENOKEY: keys whose trust is unknown are not used. */
int nts_jar_from_string(const char *s, const char *server, NTSJar *ret, char *reason, size_t reason_size);

/* Writes the file atomically (temporary file, fsync, rename). On failure, reason (may be NULL)
 * says which step failed and why. */
int nts_jar_save(const NTSJar *j, const char *server, const char *path, char *reason, size_t reason_size);
/* Removes the file for good before a cookie it lists may be sent: unlink() and an fsync() of
 * the directory, without which a power cut could bring the name back. 0 also when there is no
 * file; on failure, reason (may be NULL) says which step failed and why. */
int nts_jar_remove(const char *path, char *reason, size_t reason_size);
/* -ENOENT if there is no file. Otherwise, on failure, reason (may be NULL) says what is wrong:
 * -ESTALE: keys older than NTS_JAR_MAX_AGE_USEC at now_realtime, or from the future; -EPERM:
 * owned by another user or readable by others; -EBADMSG: not a regular file, too big, or
 * malformed; -ENOKEY: without its binding. A FIFO in its place is refused, never waited on.
 * Whether the binding is that of now is the caller's question (nts_jar_binding_mismatch()). */
int nts_jar_load(const char *path, const char *server, usec_t now_realtime, NTSJar *ret, char *reason,
                 size_t reason_size);

/* Room for any reason above. */
#define NTS_JAR_REASON_MAX 256

/* The file name (without directory) of the state of an NTS-KE server: "nts-NAME.jar" with NAME
 * escaped so that the mapping is injective (see the .c file). -ENAMETOOLONG when it would be
 * longer than NAME_MAX: then that server's state is not saved. */
int nts_jar_file_name(const char *server, char **ret);
/* The legacy name of a state file, which installed systems may still have: every character
 * outside [A-Za-z0-9.-] becomes '_'. It is injective only as long as no server name contains
 * '_', and differs from nts_jar_file_name() for a bracketed IPv6 address ("[::1]:4460"). */
int nts_jar_legacy_file_name(const char *server, char **ret);
