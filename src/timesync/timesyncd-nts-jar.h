/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What one NTS-KE gave us for one server: the AEAD, the two keys, the negotiated NTP server
 * and the cookies, kept first-in first-out and spent one per request (RFC 8915 section 5.7:
 * never reuse a cookie). Saved to the state directory so that a restart resumes without a
 * new key exchange; the file holds keys, so it is 0600, written atomically (temporary file,
 * fsync, rename), and anything odd in it makes the whole file be ignored. */

#include <stdint.h>
#include <sys/uio.h>

#include "nts.h"
#include "time-util.h"

typedef struct NTSJar {
        NTS_AEADAlgorithm aead;
        uint8_t c2s[NTS_MAX_AEAD_KEY_SIZE], s2c[NTS_MAX_AEAD_KEY_SIZE];
        size_t key_size;
        char *ntp_server;               /* negotiated; NULL: the KE server's host */
        uint16_t ntp_port;              /* negotiated; 0: 123 */
        usec_t ke_realtime;             /* when the key exchange happened (CLOCK_REALTIME) */
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

/* Text form: "key=value" lines, binary values in hex. */
int nts_jar_to_string(const NTSJar *j, const char *server, char **ret);
/* Refuses (-EBADMSG) anything malformed, a file for another server, or an unknown AEAD. */
int nts_jar_from_string(const char *s, const char *server, NTSJar *ret);

int nts_jar_save(const NTSJar *j, const char *server, const char *path);
/* -ENOENT if there is no file; -ESTALE if it is older than NTS_JAR_MAX_AGE_USEC at now_realtime. */
int nts_jar_load(const char *path, const char *server, usec_t now_realtime, NTSJar *ret);
