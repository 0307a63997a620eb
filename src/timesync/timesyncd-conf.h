/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* timesyncd.conf: the [Time] section of stock systemd-timesyncd 252 (timesyncd.conf(5)), plus
 * the NTS options: NTS= (also spelt SecureServers=, the name of the upstream NTS patch set,
 * pendulum-project/nts-timesyncd), NTSTrustedCertificates=, NTSBootstrap=, NTSRequired= and
 * KeyExchangeTimeoutSec= (the patch set's name). Loading never leaves the configuration half-made: whatever
 * the files say, the result has the defaults for what they do not set, the compiled-in fallback
 * servers unless FallbackNTP= was given, and poll intervals the daemon can work with. */

#include "time-util.h"

/* Defaults and limits of systemd 252 (timesyncd-manager.h, timesyncd-conf.c). */
#define TIMESYNC_ROOT_DISTANCE_MAX_USEC_DEFAULT (5 * USEC_PER_SEC)
#define TIMESYNC_POLL_INTERVAL_MIN_USEC_DEFAULT (32 * USEC_PER_SEC)
#define TIMESYNC_POLL_INTERVAL_MIN_USEC_FLOOR (16 * USEC_PER_SEC)
#define TIMESYNC_POLL_INTERVAL_MAX_USEC_DEFAULT (2048 * USEC_PER_SEC)
#define TIMESYNC_CONNECTION_RETRY_USEC_DEFAULT (30 * USEC_PER_SEC)
#define TIMESYNC_CONNECTION_RETRY_USEC_FLOOR (1 * USEC_PER_SEC)
#define TIMESYNC_SAVE_INTERVAL_USEC_DEFAULT (60 * USEC_PER_SEC)

/* KeyExchangeTimeoutSec=: one bound for a whole key exchange (connect to every address tried,
 * TLS handshake, request, response). The patch set defaults to 32 s; ours stays at 10 s, the
 * NTP reply timeout: a healthy exchange takes a few round trips (4 ms on loopback, well under
 * a second across continents), while a silent server holds up the next NTS server for the
 * whole bound. A lossy path gets its retries from the backoff instead (docs/TESTING.md: 30%
 * TCP segment loss still syncs within 13 s). Below 1 s, as in the patch set, and above an
 * hour (infinity would let one silent server stop NTS for good) the default is used. */
#define TIMESYNC_NTS_KE_TIMEOUT_USEC_DEFAULT (10 * USEC_PER_SEC)
#define TIMESYNC_NTS_KE_TIMEOUT_USEC_FLOOR (1 * USEC_PER_SEC)
#define TIMESYNC_NTS_KE_TIMEOUT_USEC_CEILING (1 * USEC_PER_HOUR)

/* NTSMaxSources=: how many NTS servers are used at once, like chrony's maxsources
 * and ntpd-rs's count; at most as many as the selection takes (NTP_SELECT_MAX). */
#define TIMESYNC_NTS_MAX_SOURCES_DEFAULT 4U
#define TIMESYNC_NTS_MAX_SOURCES_CEILING 16U

/* The standard search, relative to the root: see config_parse_standard(). */
#define TIMESYNC_CONFIG_NAME "systemd/timesyncd.conf"

typedef struct TimesyncConfig {
        /* Server names in the spelling of server-name.h, validated, in order, without
         * duplicates. */
        char **ntp_servers;             /* NTP= */
        char **fallback_servers;        /* FallbackNTP=, or DEFAULT_FALLBACK_NTP */
        char **nts_servers;             /* NTS= and SecureServers=, one list */
        /* FallbackNTS=, or DEFAULT_FALLBACK_NTS: NTS servers used where stock would use
         * FallbackNTP= (nothing else names a server, NTSRequired= is off); while it names any,
         * FallbackNTP= is not used. */
        char **fallback_nts_servers;
        /* Why NTSRequired= was turned on by the files without saying so: something meant to say
         * something about NTS and could not be taken as written, so what it meant (maybe the
         * only NTS server) is missing. The first of: an unknown key that looks like an NTS
         * setting ("Unknown key NTSServers= (did you mean NTS=?)"), an NTS setting outside
         * [Time] ("NTS= in section [time], not [Time]"), a refused value of NTSRequired=,
         * NTSBootstrap=, NTSTrustedCertificates= or NTSMinAgreeingSources=, an invalid entry of
         * NTS=, SecureServers= or FallbackNTS= ("FallbackNTS= names an invalid server"). */
        char *nts_fail_closed;
        char *nts_trusted_certificates; /* NTSTrustedCertificates=; NULL: the system's CA store */
        /* NTSTrustedCertificates= was given a value that was refused, and no valid one is in
         * effect: key exchanges are refused rather than trusting the system's CA store. */
        bool nts_trusted_certificates_invalid;
        bool nts_bootstrap;             /* NTSBootstrap=: see timesyncd-nts.c, "bootstrap" */
        /* NTSRequired=: time from NTS servers only, also while none is configured (then no
         * time at all), so that a mistyped NTS= key cannot turn into the fallback pool. */
        bool nts_required;
        usec_t nts_ke_timeout_usec;     /* KeyExchangeTimeoutSec= */
        unsigned nts_max_sources;       /* NTSMaxSources=: NTS servers used together; 1: one at a time */
        unsigned nts_min_agreeing;      /* NTSMinAgreeingSources=: 0, a majority of those that answer */
        /* NTSMinAgreeingSources= was last given a refused value: every source in use must agree. */
        bool nts_min_agreeing_invalid;
        usec_t root_distance_max_usec;
        usec_t poll_interval_min_usec;
        usec_t poll_interval_max_usec;
        usec_t connection_retry_usec;
        usec_t save_interval_usec;
        /* Stock 252: any non-empty FallbackNTP= replaces the compiled-in list, even if it
         * is emptied again later; "FallbackNTP=" alone does not. */
        bool fallback_set;
        /* FallbackNTS= was assigned, even empty: the compiled-in list is not used. */
        bool fallback_nts_set;
        /* NTS= named servers, valid or not, since it was last emptied: NTS is wanted, and a
         * typo in every name must not make the time unauthenticated. */
        bool nts_set;
} TimesyncConfig;

/* Fill c with the configuration from the standard search under root (NULL: the real root), or
 * from the one file path. c needs no preparation and must be released with
 * timesync_config_done() even on failure. A negative return says a file could not be parsed to
 * its end (already logged; stock timesyncd goes on with what it got, and so may the caller); c
 * is complete either way. An explicit path that does not exist is -ENOENT. */
int timesync_config_load(TimesyncConfig *c, const char *root);
int timesync_config_load_file(TimesyncConfig *c, const char *path);

void timesync_config_done(TimesyncConfig *c);

/* What the daemon reads: the one file path (NULL: the standard search), with a test poll
 * interval (--test-poll-interval=, 0: none) over both poll limits, and then checked
 * (timesync_config_check()). Returns as the two above. */
int timesync_config_read(TimesyncConfig *c, const char *path, usec_t test_poll_interval_usec);

/* Logs what the settings mean together that no single line says, one line per problem, and
 * returns how many were errors (settings that give no time): NTSMinAgreeingSources= that can
 * never be met (above NTSMaxSources=, or above the number of NTS servers listed), an
 * NTSTrustedCertificates= path that does not exist. Warnings: an NTS list whose servers must all
 * agree (two servers: one that fails stops synchronization). Notices: a FallbackNTP= that is
 * not used because FallbackNTS= takes its place. */
unsigned timesync_config_check(const TimesyncConfig *c);

/* What STATUS= and NTSStatus say when none of the FallbackNTS= servers answers, with one server
 * at a time and with several. */
#define FALLBACK_NTS_UNREACHABLE \
        "No FallbackNTS= server reachable (TCP port 4460 blocked? DNS?), no plain NTP: set NTS= to reachable servers"

/* Whether the configuration alone makes FallbackNTS= the NTS list, where stock would use
 * FallbackNTP=: it names servers, NTS= names none (not even an invalid one), NTP= names none
 * and NTSRequired= is off. Runtime and per-link servers, which only the daemon knows of, can
 * still take its place. */
bool timesync_config_uses_fallback_nts(const TimesyncConfig *c);

/* Whether a and b name the same servers, use as many NTS servers together and trust the same
 * certificate authorities: what decides where time comes from, and so whether a reload selects
 * servers again. */
bool timesync_config_servers_equal(const TimesyncConfig *a, const TimesyncConfig *b);

/* The known NTS key that lvalue, a key no parser knows, resembles: it begins with "NTS" or
 * "Secure" (in any case), it has "NTS" in it, or it is at most two edits (one for a three letter key) from an NTS
 * key and no closer to another key. NULL when it does not look like an NTS setting. */
const char *timesync_config_nts_key_resembled(const char *lvalue);

/* Appends the whitespace separated server names in s to *list, skipping duplicates and invalid
 * names, each said with what is wrong with it ("<filename>:<line>: " first when filename is set;
 * "Invalid <kind> server name ...", kind "NTP" or "NTS"; an error for an NTS list read from a
 * file, which fails closed, else a warning). Returns the number of invalid names. */
int timesync_config_servers_extend(char ***list, const char *s, const char *kind, const char *filename, unsigned line);
