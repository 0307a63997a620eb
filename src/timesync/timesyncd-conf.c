/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <ctype.h>
#include <limits.h>
#include <unistd.h>

#include "conf-parser.h"
#include "server-name.h"
#include "string-util.h"
#include "strv.h"
#include "timesyncd-conf.h"

typedef enum ServerListType {
        SERVER_LIST_NTP,
        SERVER_LIST_FALLBACK,
        SERVER_LIST_NTS,
        SERVER_LIST_FALLBACK_NTS,
} ServerListType;

/* The keys of [Time] that concern NTS, first the one a typo most likely meant. */
static const char *const nts_keys[] = {
        "NTS", "SecureServers", "FallbackNTS", "NTSTrustedCertificates", "NTSBootstrap", "NTSRequired",
        "KeyExchangeTimeoutSec", "NTSMaxSources", "NTSMinAgreeingSources",
};
static const char *const other_keys[] = {
        "NTP", "Servers", "FallbackNTP", "RootDistanceMaxSec", "PollIntervalMinSec", "PollIntervalMaxSec",
        "ConnectionRetrySec", "SaveIntervalSec",
};

static const char *const timesync_sections[] = { "Time", NULL };

int timesync_config_servers_extend(char ***list, const char *s, const char *kind, const char *filename, unsigned line) {
        _cleanup_strv_free_ char **words = NULL;
        bool nts = streq(kind, "NTS");
        unsigned invalid = 0;
        int r;

        assert(list);
        assert(s);
        assert(kind);

        words = strv_split_whitespace(s);
        if (!words)
                return log_oom();

        STRV_FOREACH(w, words) {
                const char *why = server_name_invalid_reason(*w, nts);

                if (why) {
                        invalid++;
                        /* A server missing from an NTS list in a file gives the others more
                         * say, or leaves FallbackNTP= as the only list: fail closed. */
                        if (nts && filename)
                                log_syntax(filename, line, LOG_ERR, 0,
                                           "Invalid NTS server name or address, ignoring: %s (%s); time comes only "
                                           "from NTS servers, as with NTSRequired=yes.", *w, why);
                        else if (filename)
                                log_syntax(filename, line, LOG_WARNING, 0,
                                           "Invalid %s server name or address, ignoring: %s (%s).", kind, *w, why);
                        else
                                log_warning("Invalid %s server name or address, ignoring: %s (%s).", kind, *w, why);
                        continue;
                }
                if (strv_contains(*list, *w))
                        continue;

                r = strv_extend(list, *w);
                if (r < 0)
                        return log_oom();
        }

        return (int) invalid;
}

/* Something in the files meant to say something about NTS and could not be taken as written:
 * what it meant is missing, so time comes only from NTS servers, as with NTSRequired=yes
 * (timesync_config_finish()). The first reason is kept, for NTSStatus and STATUS=. Takes
 * reason, which may be NULL for want of memory. */
static int config_fail_closed(TimesyncConfig *c, char *reason) {
        assert(c);

        if (!reason)
                return log_oom();
        if (c->nts_fail_closed)
                free(reason);
        else
                c->nts_fail_closed = reason;
        return 0;
}

/* A key that may have been NTSTrustedCertificates= is lost: unless a valid value is in effect,
 * key exchanges are refused rather than trusting every authority of the system's store. */
static void config_lose_trust(TimesyncConfig *c, const char *known) {
        if (streq(known, "NTSTrustedCertificates") && !c->nts_trusted_certificates)
                c->nts_trusted_certificates_invalid = true;
}

/* Edit distance (insertions, deletions, substitutions and swaps of two neighbours: "NST" is
 * one from "NTS"), letters compared without case. Keys longer than 32 are no typo of ours. */
static size_t edit_distance(const char *a, const char *b) {
        size_t la = strlen(a), lb = strlen(b), d[33][33];

        if (la > 32 || lb > 32)
                return SIZE_MAX;
        for (size_t i = 0; i <= la; i++)
                d[i][0] = i;
        for (size_t j = 0; j <= lb; j++)
                d[0][j] = j;
        for (size_t i = 1; i <= la; i++)
                for (size_t j = 1; j <= lb; j++) {
                        int ca = tolower((unsigned char) a[i - 1]), cb = tolower((unsigned char) b[j - 1]);

                        d[i][j] = MIN(MIN(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + (ca == cb ? 0 : 1));
                        if (i > 1 && j > 1 && ca == tolower((unsigned char) b[j - 2]) &&
                            tolower((unsigned char) a[i - 2]) == cb)
                                d[i][j] = MIN(d[i][j], d[i - 2][j - 2] + 1);
                }
        return d[la][lb];
}

static bool startswith_no_case(const char *s, const char *prefix) {
        for (; *prefix; s++, prefix++)
                if (tolower((unsigned char) *s) != tolower((unsigned char) *prefix))
                        return false;
        return true;
}

const char *timesync_config_nts_key_resembled(const char *lvalue) {
        const char *best = NULL;
        size_t best_d = SIZE_MAX, other_d = SIZE_MAX;

        assert(lvalue);

        for (size_t i = 0; i < ELEMENTSOF(nts_keys); i++) {
                size_t d = edit_distance(lvalue, nts_keys[i]);

                if (d < best_d) {
                        best_d = d;
                        best = nts_keys[i];
                }
        }
        for (size_t i = 0; i < ELEMENTSOF(other_keys); i++)
                other_d = MIN(other_d, edit_distance(lvalue, other_keys[i]));

        if (startswith_no_case(lvalue, "NTS") || startswith_no_case(lvalue, "Secure") || strstr(lvalue, "NTS")) {
                /* Far from every key ("NTSServers"): the longest key it begins with. */
                if (best_d > 2)
                        for (size_t i = 0; i < ELEMENTSOF(nts_keys); i++)
                                if (startswith_no_case(lvalue, nts_keys[i]) &&
                                    (best_d > 2 || strlen(nts_keys[i]) > strlen(best))) {
                                        best = nts_keys[i];
                                        best_d = 0;
                                }
                return best;
        }
        /* A three letter key one edit from NTS is a typo of it; "NTQ" is not far from NTP
         * either, and then NTS wins: in doubt, fail closed. */
        if (best_d <= (strlen(best) <= 3 ? 1U : 2U) && best_d <= other_d)
                return best;
        return NULL;
}

/* An NTS setting that is lost: an unknown key of [Time] that looks like one (misplaced false),
 * or an NTS key outside [Time], in a drop-in whose header is mistyped or missing (section: the
 * unknown one, NULL for none). What it meant to set is missing, and it may have been the only
 * NTS server or the CA: fail closed as NTSRequired=yes does. 1 when lvalue is such a key, else
 * 0; -ENOMEM. */
static int config_nts_key_lost(TimesyncConfig *c, const char *filename, unsigned line, const char *section,
                               const char *lvalue, bool misplaced) {
        const char *known;
        char *reason;
        int r;

        assert(c);

        known = timesync_config_nts_key_resembled(lvalue);
        if (!known)
                return 0;

        if (misplaced) {
                log_syntax(filename, line, LOG_ERR, 0,
                           "NTS setting %s= is %s%s%s, not in [Time], and ignored: time comes only from NTS "
                           "servers, as with NTSRequired=yes.", lvalue, section ? "in section [" : "outside any section",
                           strempty(section), section ? "]" : "");
                reason = section ? strjoin(lvalue, "= in section [", section, "], not [Time]")
                                 : strjoin(lvalue, "= outside section [Time]");
        } else {
                log_syntax(filename, line, LOG_ERR, 0,
                           "Unknown key name '%s' in section '%s' looks like an NTS setting (did you mean %s=?): "
                           "time comes only from NTS servers, as with NTSRequired=yes.",
                           lvalue, section, known);
                reason = strjoin("Unknown key ", lvalue, "= (did you mean ", known, "=?)");
        }
        config_lose_trust(c, known);
        r = config_fail_closed(c, reason);
        return r < 0 ? r : 1;
}

static int config_parse_unknown(const char *filename, unsigned line, const char *section, const char *lvalue,
                                void *userdata) {
        return config_nts_key_lost(userdata, filename, line, section, lvalue, false);
}

/* The parser already said that the line, and maybe the whole file, is ignored. */
static int config_parse_misplaced(const char *filename, unsigned line, const char *section, const char *lvalue,
                                  void *userdata) {
        int r = config_nts_key_lost(userdata, filename, line, section, lvalue, true);

        return MIN(r, 0);
}

static int config_parse_servers(const char *filename, unsigned line, const char *section,
                                const char *lvalue, int ltype, const char *rvalue, void *data,
                                void *userdata) {
        TimesyncConfig *c = userdata;
        char ***list = data;
        bool nts;
        int r;

        assert(c);
        assert(list);

        /* Unlike FallbackNTP=, an empty FallbackNTS= is a setting: no NTS fallback. */
        if (ltype == SERVER_LIST_FALLBACK_NTS)
                c->fallback_nts_set = true;

        if (isempty(rvalue)) {
                *list = strv_free(*list);
                if (ltype == SERVER_LIST_NTS)
                        c->nts_set = false;
                return 0;
        }

        if (ltype == SERVER_LIST_FALLBACK)
                c->fallback_set = true;
        if (ltype == SERVER_LIST_NTS)
                c->nts_set = true;

        nts = IN_SET(ltype, SERVER_LIST_NTS, SERVER_LIST_FALLBACK_NTS);
        r = timesync_config_servers_extend(list, rvalue, nts ? "NTS" : "NTP", filename, line);
        if (r > 0 && nts)
                return config_fail_closed(c, strjoin(lvalue, "= names an invalid server"));
        return r < 0 ? r : 0;
}

/* Time spans with a range: PollIntervalMinSec=, ConnectionRetrySec=, KeyExchangeTimeoutSec=. */
typedef enum TimeSpanRange {
        TIME_SPAN_POLL_INTERVAL_MIN,
        TIME_SPAN_CONNECTION_RETRY,
        TIME_SPAN_NTS_KE_TIMEOUT,
} TimeSpanRange;

static const struct {
        usec_t min, max, fallback;
} time_span_ranges[] = {
        [TIME_SPAN_POLL_INTERVAL_MIN] = { TIMESYNC_POLL_INTERVAL_MIN_USEC_FLOOR, USEC_INFINITY,
                                          TIMESYNC_POLL_INTERVAL_MIN_USEC_DEFAULT },
        [TIME_SPAN_CONNECTION_RETRY] = { TIMESYNC_CONNECTION_RETRY_USEC_FLOOR, USEC_INFINITY,
                                         TIMESYNC_CONNECTION_RETRY_USEC_DEFAULT },
        [TIME_SPAN_NTS_KE_TIMEOUT] = { TIMESYNC_NTS_KE_TIMEOUT_USEC_FLOOR, TIMESYNC_NTS_KE_TIMEOUT_USEC_CEILING,
                                       TIMESYNC_NTS_KE_TIMEOUT_USEC_DEFAULT },
};

/* Stock checks the range once every file is read, and a value outside it gives the default.
 * Checking each assignment gives the same result (the last assignment decides), and the
 * warning can say which file and line, and what the value was. */
static int config_parse_sec_in_range(const char *filename, unsigned line, const char *section,
                                     const char *lvalue, int ltype, const char *rvalue, void *data,
                                     void *userdata) {
        typeof(time_span_ranges[0]) range = time_span_ranges[ltype];
        usec_t *u = data, v;

        assert(u);
        assert(ltype >= 0 && (size_t) ltype < ELEMENTSOF(time_span_ranges));

        if (parse_sec(rvalue, &v) < 0)
                return config_parse_sec(filename, line, section, lvalue, 0, rvalue, data, userdata);

        if (v < range.min || v > range.max) {
                log_syntax(filename, line, LOG_WARNING, 0, "%s=%s is %s %s, using the default %s.", lvalue,
                           rvalue, v < range.min ? "below" : "above",
                           FORMAT_TIMESPAN(v < range.min ? range.min : range.max, 1),
                           FORMAT_TIMESPAN(range.fallback, 1));
                v = range.fallback;
        }

        *u = v;
        return 0;
}

static int config_parse_trusted_certificates(const char *filename, unsigned line, const char *section,
                                             const char *lvalue, int ltype, const char *rvalue, void *data,
                                             void *userdata) {
        TimesyncConfig *c = userdata;
        char **path = data;

        assert(c);
        assert(path);

        if (isempty(rvalue) || (rvalue[0] == '/' && strlen(rvalue) < PATH_MAX)) {
                c->nts_trusted_certificates_invalid = false;
                return config_parse_path(filename, line, section, lvalue, ltype, rvalue, data, userdata);
        }

        /* A typo must not widen the trust to every authority of the system store. A refused
         * value after a valid one keeps that one, as for any option. */
        c->nts_trusted_certificates_invalid = !*path;
        log_syntax(filename, line, LOG_ERR, 0, "%s=%s is not an absolute path: %s, and time comes only from NTS "
                   "servers, as with NTSRequired=yes.", lvalue, rvalue[0] == '/' ? "(too long)" : rvalue,
                   *path ? "keeping the one before" :
                           "key exchanges are refused rather than trusting the system's certificate authorities");
        return config_fail_closed(c, strjoin(lvalue, "= is not an absolute path"));
}

/* NTSRequired= and NTSBootstrap=: a value that is not a boolean is read the safe way (ltype: 1
 * for yes, 0 for no), not kept: NTSRequired=ture must not leave plain NTP in use. */
static int config_parse_nts_bool(const char *filename, unsigned line, const char *section, const char *lvalue,
                                 int ltype, const char *rvalue, void *data, void *userdata) {
        TimesyncConfig *c = userdata;
        bool *b = data;
        int r;

        assert(c);
        assert(b);

        r = parse_boolean(rvalue);
        if (r >= 0) {
                *b = r;
                return 0;
        }

        *b = ltype;
        log_syntax(filename, line, LOG_ERR, 0, "%s=%s is not a boolean (yes or no): using %s, and time comes only "
                   "from NTS servers, as with NTSRequired=yes.", lvalue, rvalue, ltype ? "yes" : "no");
        return config_fail_closed(c, strjoin(lvalue, "=", rvalue, " is not a boolean"));
}

/* NTSMaxSources= (ltype 1: at least one) and NTSMinAgreeingSources= (ltype 0: empty means the
 * default, a majority), both at most TIMESYNC_NTS_MAX_SOURCES_CEILING. A value that does not
 * parse or is out of range keeps what was there, with a warning that says so; for
 * NTSMinAgreeingSources=, whose misreading would let fewer sources decide, every source in use
 * must agree instead, and time comes only from NTS servers (timesync_config_finish()). */
static int config_parse_sources(const char *filename, unsigned line, const char *section, const char *lvalue,
                                int ltype, const char *rvalue, void *data, void *userdata) {
        TimesyncConfig *c = userdata;
        unsigned *n = data;
        uint64_t v;

        assert(c);
        assert(n);

        if (ltype == 0 && isempty(rvalue)) {
                *n = 0;
                c->nts_min_agreeing_invalid = false;
                return 0;
        }
        if (parse_unsigned(rvalue, TIMESYNC_NTS_MAX_SOURCES_CEILING, &v) >= 0 && v >= 1) {
                *n = (unsigned) v;
                if (ltype == 0)
                        c->nts_min_agreeing_invalid = false;
                return 0;
        }
        if (ltype == 1) {
                log_syntax(filename, line, LOG_WARNING, 0, "%s=%s is not a number from 1 to %u, keeping %u.",
                           lvalue, rvalue, TIMESYNC_NTS_MAX_SOURCES_CEILING, *n);
                return 0;
        }

        c->nts_min_agreeing_invalid = true;
        log_syntax(filename, line, LOG_ERR, 0,
                   "%s=%s is not a number from 1 to %u or empty: every NTS source in use must agree, and time "
                   "comes only from NTS servers, as with NTSRequired=yes.", lvalue, rvalue,
                   TIMESYNC_NTS_MAX_SOURCES_CEILING);
        return config_fail_closed(c, strjoin(lvalue, "=", rvalue, " is not a number"));
}

static void timesync_config_init(TimesyncConfig *c) {
        *c = (TimesyncConfig) {
                .root_distance_max_usec = TIMESYNC_ROOT_DISTANCE_MAX_USEC_DEFAULT,
                .poll_interval_min_usec = TIMESYNC_POLL_INTERVAL_MIN_USEC_DEFAULT,
                .poll_interval_max_usec = TIMESYNC_POLL_INTERVAL_MAX_USEC_DEFAULT,
                .connection_retry_usec = TIMESYNC_CONNECTION_RETRY_USEC_DEFAULT,
                .save_interval_usec = TIMESYNC_SAVE_INTERVAL_USEC_DEFAULT,
                .nts_bootstrap = true,
                .nts_ke_timeout_usec = TIMESYNC_NTS_KE_TIMEOUT_USEC_DEFAULT,
                .nts_max_sources = TIMESYNC_NTS_MAX_SOURCES_DEFAULT,
        };
}

/* The NTS list that the configuration alone makes the one in use: its key, how many servers it
 * names, whether pools bring more, and how many of its servers are used together. */
typedef struct NTSListInUse {
        const char *key;
        char **servers;
        size_t listed, used;
        bool pools;
} NTSListInUse;

static bool config_nts_list_in_use(const TimesyncConfig *c, NTSListInUse *ret) {
        ServerNameKind kind;

        *ret = (NTSListInUse) {};
        if (c->nts_servers) {
                ret->key = "NTS=";
                ret->servers = c->nts_servers;
        } else if (timesync_config_uses_fallback_nts(c)) {
                ret->key = "FallbackNTS=";
                ret->servers = c->fallback_nts_servers;
        } else
                return false;

        STRV_FOREACH(s, ret->servers)
                if (server_name_parse_nts(*s, &kind, NULL, NULL) >= 0 && kind != SERVER_NAME_ONE)
                        ret->pools = true;
        ret->listed = strv_length(ret->servers);
        ret->used = MIN(ret->listed, (size_t) c->nts_max_sources);
        return true;
}

/* NTSMinAgreeingSources= that makes every source in use agree, for a refused value. */
static unsigned timesync_config_nts_all_agree(const TimesyncConfig *c) {
        NTSListInUse l;

        if (config_nts_list_in_use(c, &l) && !l.pools && l.used > 0)
                return (unsigned) l.used;
        return c->nts_max_sources;
}

/* What stock timesyncd does after parsing; here also after a failed parse, so that a broken
 * drop-in cannot leave a poll interval the daemon would spin on. */
static int timesync_config_finish(TimesyncConfig *c) {
        int r;

        if (!c->fallback_set) {
                r = timesync_config_servers_extend(&c->fallback_servers, DEFAULT_FALLBACK_NTP, "NTP", NULL, 0);
                if (r < 0)
                        return r;
        }
        if (!c->fallback_nts_set) {
                r = timesync_config_servers_extend(&c->fallback_nts_servers, DEFAULT_FALLBACK_NTS, "NTS", NULL, 0);
                if (r < 0)
                        return r;
        }
        /* Also over an NTSRequired=no read after it: the key meant something about NTS. */
        if (c->nts_fail_closed)
                c->nts_required = true;
        if (c->nts_min_agreeing_invalid)
                c->nts_min_agreeing = timesync_config_nts_all_agree(c);

        /* The single-valued ranges were checked as they were read (config_parse_sec_in_range()). */
        if (c->poll_interval_max_usec < c->poll_interval_min_usec) {
                usec_t m = c->poll_interval_min_usec > USEC_INFINITY / 32
                                   ? USEC_INFINITY
                                   : c->poll_interval_min_usec * 32;

                m = MAX(TIMESYNC_POLL_INTERVAL_MAX_USEC_DEFAULT, m);
                log_warning("PollIntervalMaxSec=%s is smaller than PollIntervalMinSec=%s, using %s.",
                            FORMAT_TIMESPAN(c->poll_interval_max_usec, 1),
                            FORMAT_TIMESPAN(c->poll_interval_min_usec, 1), FORMAT_TIMESPAN(m, 1));
                c->poll_interval_max_usec = m;
        }

        return 0;
}

static int timesync_config_parse(TimesyncConfig *c, const char *root, const char *path) {
#define T(key, parser, ltype, field) { "Time", key, parser, ltype, &c->field }
        const ConfigTableItem table[] = {
                T("NTP", config_parse_servers, SERVER_LIST_NTP, ntp_servers),
                /* Stock's parser still reads this old spelling of NTP= (on Debian 12 to
                 * testing): the same list, appended in the order read. */
                T("Servers", config_parse_servers, SERVER_LIST_NTP, ntp_servers),
                T("FallbackNTP", config_parse_servers, SERVER_LIST_FALLBACK, fallback_servers),
                T("FallbackNTS", config_parse_servers, SERVER_LIST_FALLBACK_NTS, fallback_nts_servers),
                T("RootDistanceMaxSec", config_parse_sec, 0, root_distance_max_usec),
                T("PollIntervalMinSec", config_parse_sec_in_range, TIME_SPAN_POLL_INTERVAL_MIN,
                  poll_interval_min_usec),
                T("PollIntervalMaxSec", config_parse_sec, 0, poll_interval_max_usec),
                T("ConnectionRetrySec", config_parse_sec_in_range, TIME_SPAN_CONNECTION_RETRY,
                  connection_retry_usec),
                T("SaveIntervalSec", config_parse_sec, 0, save_interval_usec),
                T("NTS", config_parse_servers, SERVER_LIST_NTS, nts_servers),
                /* The upstream patch set's name: the same list, so both spellings append to
                 * it in the order read, and an empty assignment of either empties it. */
                T("SecureServers", config_parse_servers, SERVER_LIST_NTS, nts_servers),
                T("NTSTrustedCertificates", config_parse_trusted_certificates, 0, nts_trusted_certificates),
                T("NTSBootstrap", config_parse_nts_bool, 0, nts_bootstrap),
                T("NTSRequired", config_parse_nts_bool, 1, nts_required),
                T("KeyExchangeTimeoutSec", config_parse_sec_in_range, TIME_SPAN_NTS_KE_TIMEOUT,
                  nts_ke_timeout_usec),
                T("NTSMaxSources", config_parse_sources, 1, nts_max_sources),
                T("NTSMinAgreeingSources", config_parse_sources, 0, nts_min_agreeing),
                {}
        };
#undef T
        const ConfigSpec spec = {
                .sections = timesync_sections,
                .table = table,
                .unknown = config_parse_unknown,
                .misplaced = config_parse_misplaced,
                .userdata = c,
        };
        int r, q;

        timesync_config_init(c);

        if (path) {
                r = config_parse_file(path, &spec);
                if (r == 0)
                        r = log_error_errno(ENOENT, "Configuration file '%s' does not exist.",
                                            path);
        } else
                r = config_parse_standard(root, TIMESYNC_CONFIG_NAME, &spec);

        q = timesync_config_finish(c);
        return r < 0 ? r : q;
}

int timesync_config_load(TimesyncConfig *c, const char *root) {
        assert(c);
        return timesync_config_parse(c, root, NULL);
}

int timesync_config_load_file(TimesyncConfig *c, const char *path) {
        assert(c);
        assert(path);
        return timesync_config_parse(c, NULL, path);
}

int timesync_config_read(TimesyncConfig *c, const char *path, usec_t test_poll_interval_usec) {
        int r;

        r = path ? timesync_config_load_file(c, path) : timesync_config_load(c, NULL);
        if (test_poll_interval_usec > 0)
                c->poll_interval_min_usec = c->poll_interval_max_usec = test_poll_interval_usec;
        if (r != -ENOENT || !path)
                (void) timesync_config_check(c);
        return r;
}

static unsigned config_check_agreement(const TimesyncConfig *c) {
        unsigned min = c->nts_min_agreeing;
        NTSListInUse l;
        size_t needed;

        /* A refused value was said where it was read, with what it became. One server at a
         * time (policy_wanted()) is its own majority: no agreement to speak of. */
        if (c->nts_min_agreeing_invalid || !config_nts_list_in_use(c, &l) ||
            !(l.pools || (l.listed >= 2 && c->nts_max_sources >= 2)))
                return 0;
        if (min > c->nts_max_sources) {
                log_error("NTSMinAgreeingSources=%u is above NTSMaxSources=%u: it can never be met, and the clock "
                          "would never be set.", min, c->nts_max_sources);
                return 1;
        }
        if (l.pools)
                return 0;
        if (min > l.used) {
                log_error("NTSMinAgreeingSources=%u is more than the %zu NTS server%s of %s used together: it can "
                          "never be met, and the clock would never be set.", min, l.used, l.used == 1 ? "" : "s",
                          l.key);
                return 1;
        }

        /* "Only 1 of 2 NTS sources agree, 2 needed": a silent server still counts. */
        needed = MAX(l.used / 2 + 1, (size_t) min);
        if (l.used == 2 && needed == 2)
                log_warning("%s names 2 NTS servers, used together: both must agree, so one that fails or cannot "
                            "be reached stops synchronization. Name three or more to survive one failure.", l.key);
        else if (l.used > 2 && needed >= l.used)
                log_warning("%s names %zu NTS servers, used together, and NTSMinAgreeingSources=%u: all must "
                            "agree, so one that fails or cannot be reached stops synchronization.",
                            l.key, l.used, min);
        return 0;
}

unsigned timesync_config_check(const TimesyncConfig *c) {
        unsigned errors;

        assert(c);

        errors = config_check_agreement(c);

        if (c->nts_trusted_certificates && access(c->nts_trusted_certificates, F_OK) < 0) {
                log_error_errno(errno, "NTSTrustedCertificates=%s: %m: every NTS key exchange would fail.",
                                c->nts_trusted_certificates);
                errors++;
        }

        /* Stock's FallbackNTP= in an image or drop-in silently replaced by the NTS fallback. */
        if (c->fallback_set && c->fallback_servers && timesync_config_uses_fallback_nts(c))
                log_notice("FallbackNTP=%s%s is not used: FallbackNTS= takes its place where nothing else names a "
                           "server (NTS servers only). An empty \"FallbackNTS=\" line uses FallbackNTP= instead.",
                           c->fallback_servers[0], c->fallback_servers[1] ? " ..." : "");
        return errors;
}

bool timesync_config_uses_fallback_nts(const TimesyncConfig *c) {
        assert(c);
        return c->fallback_nts_servers && !c->nts_set && !c->ntp_servers && !c->nts_required;
}

bool timesync_config_servers_equal(const TimesyncConfig *a, const TimesyncConfig *b) {
        return strv_equal(a->ntp_servers, b->ntp_servers) && a->nts_max_sources == b->nts_max_sources &&
               strv_equal(a->fallback_servers, b->fallback_servers) &&
               strv_equal(a->nts_servers, b->nts_servers) && a->nts_set == b->nts_set &&
               strv_equal(a->fallback_nts_servers, b->fallback_nts_servers) &&
               a->nts_required == b->nts_required &&
               streq_ptr(a->nts_trusted_certificates, b->nts_trusted_certificates) &&
               a->nts_trusted_certificates_invalid == b->nts_trusted_certificates_invalid;
}

void timesync_config_done(TimesyncConfig *c) {
        if (!c)
                return;
        c->ntp_servers = strv_free(c->ntp_servers);
        c->fallback_servers = strv_free(c->fallback_servers);
        c->nts_servers = strv_free(c->nts_servers);
        c->fallback_nts_servers = strv_free(c->fallback_nts_servers);
        c->nts_fail_closed = mfree(c->nts_fail_closed);
        c->nts_trusted_certificates = mfree(c->nts_trusted_certificates);
}
