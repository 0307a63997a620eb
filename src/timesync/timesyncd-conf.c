/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <ctype.h>

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
        int r;

        assert(list);
        assert(s);
        assert(kind);

        words = strv_split_whitespace(s);
        if (!words)
                return log_oom();

        STRV_FOREACH(w, words) {
                if (streq(kind, "NTS") ? !server_name_is_valid_nts(*w) : !server_name_is_valid(*w)) {
                        if (filename)
                                log_syntax(filename, line, LOG_WARNING, 0,
                                           "Invalid %s server name or address, ignoring: %s", kind, *w);
                        else
                                log_warning("Invalid %s server name or address, ignoring: %s", kind, *w);
                        continue;
                }
                if (strv_contains(*list, *w))
                        continue;

                r = strv_extend(list, *w);
                if (r < 0)
                        return log_oom();
        }

        return 0;
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

/* An unknown key that looks like an NTS setting: what it meant to set is missing, and it may
 * have been the only NTS server. Fail closed as NTSRequired=yes does. */
static int config_parse_unknown(const char *filename, unsigned line, const char *section, const char *lvalue,
                                void *userdata) {
        TimesyncConfig *c = userdata;
        const char *known;

        assert(c);

        known = timesync_config_nts_key_resembled(lvalue);
        if (!known)
                return 0;

        log_syntax(filename, line, LOG_ERR, 0,
                   "Unknown key name '%s' in section '%s' looks like an NTS setting (did you mean %s=?): "
                   "time comes only from NTS servers, as with NTSRequired=yes.",
                   lvalue, section, known);
        if (!c->nts_fail_closed) {
                c->nts_fail_closed = strjoin("Unknown key ", lvalue, "= (did you mean ", known, "=?)");
                if (!c->nts_fail_closed)
                        return log_oom();
        }
        return 1;
}

static int config_parse_servers(const char *filename, unsigned line, const char *section,
                                const char *lvalue, int ltype, const char *rvalue, void *data,
                                void *userdata) {
        TimesyncConfig *c = userdata;
        char ***list = data;

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

        return timesync_config_servers_extend(list, rvalue,
                                              IN_SET(ltype, SERVER_LIST_NTS, SERVER_LIST_FALLBACK_NTS) ? "NTS" : "NTP",
                                              filename, line);
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
        int r;

        assert(c);
        assert(path);

        r = config_parse_path(filename, line, section, lvalue, ltype, rvalue, data, userdata);
        if (r < 0)
                return r;
        /* A typo must not widen the trust to every authority of the system store. A refused
         * value after a valid one keeps that one, as for any option. */
        c->nts_trusted_certificates_invalid = !*path && !isempty(rvalue);
        return 0;
}

/* NTSMaxSources= (ltype 1: at least one) and NTSMinAgreeingSources= (ltype 0: empty means the
 * default, a majority), both at most TIMESYNC_NTS_MAX_SOURCES_CEILING. A value that does not
 * parse or is out of range keeps what was there, with a warning that says so. */
static int config_parse_sources(const char *filename, unsigned line, const char *section, const char *lvalue,
                                int ltype, const char *rvalue, void *data, void *userdata) {
        unsigned *n = data;
        uint64_t v;

        assert(n);

        if (ltype == 0 && isempty(rvalue)) {
                *n = 0;
                return 0;
        }
        if (parse_unsigned(rvalue, TIMESYNC_NTS_MAX_SOURCES_CEILING, &v) < 0 || v < 1) {
                log_syntax(filename, line, LOG_WARNING, 0,
                           "%s=%s is not a number from 1 to %u%s, keeping %u.", lvalue, rvalue,
                           TIMESYNC_NTS_MAX_SOURCES_CEILING, ltype == 0 ? " or empty" : "", *n);
                return 0;
        }
        *n = (unsigned) v;
        return 0;
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
                T("NTSBootstrap", config_parse_bool, 0, nts_bootstrap),
                T("NTSRequired", config_parse_bool, 0, nts_required),
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
        return r;
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
