/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* timesync-sources: the time sources of a running systemd-timesyncd, read from its "Sources"
 * D-Bus property, as `chronyc sources` and `chronyc -N authdata` show chronyd's: a table for a
 * person, --json for a script, --openmetrics for node_exporter's textfile collector, and
 * --check (--wait) for a monitoring system that only reads an exit status. Reading a property
 * needs no privileges (the bus policy lets everybody talk to org.freedesktop.timesync1), and
 * the tool changes nothing. The JSON keeps every key of the property as it is, so that keys
 * added later come through. */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <systemd/sd-bus.h>

#include "json-writer.h"
#include "log.h"
#include "string-util.h"
#include "strv.h"
#include "time-util.h"

#define SOURCE_KEYS_MAX 64U

typedef struct Value {
        char key[48];
        char type;                      /* 's', 'b', 'u', 't', 'x' or 'i'; 0: other, skipped */
        char *string;
        int64_t integer;                /* b, u, i, x; t when it fits */
        uint64_t unsigned_integer;      /* t */
} Value;

typedef struct SourceInfo {
        Value values[SOURCE_KEYS_MAX];
        size_t n_values;
} SourceInfo;

typedef enum OutputMode {
        OUTPUT_TABLE,
        OUTPUT_JSON,
        OUTPUT_OPENMETRICS,
        OUTPUT_PROMETHEUS,
        OUTPUT_CHECK,
        OUTPUT_RETRY,
} OutputMode;

/* The exit status of --check and --wait, for a monitoring system. 1 and 2 keep the meaning
 * they have without --check (the daemon could not be asked, usage error). */
enum {
        CHECK_NTS = 0,          /* a source is selected and it is an NTS source */
        CHECK_NO_DAEMON = 1,    /* no system bus, no daemon, or no Sources property */
        CHECK_PLAIN_NTP = 3,    /* a source is selected, but its time is not authenticated */
        CHECK_UNSYNCHRONIZED = 4, /* no source is selected */
};

static OutputMode arg_output = OUTPUT_TABLE;
static bool arg_wait = false;
static usec_t arg_wait_usec = USEC_INFINITY;

static void source_info_done(SourceInfo *s) {
        for (size_t i = 0; i < s->n_values; i++)
                free(s->values[i].string);
        s->n_values = 0;
}

static const Value *source_value(const SourceInfo *s, const char *key) {
        for (size_t i = 0; i < s->n_values; i++)
                if (streq(s->values[i].key, key))
                        return &s->values[i];
        return NULL;
}

static const char *source_string(const SourceInfo *s, const char *key) {
        const Value *v = source_value(s, key);
        return v && v->type == 's' ? v->string : "";
}

static bool source_has(const SourceInfo *s, const char *key) {
        return source_value(s, key);
}

static int64_t source_integer(const SourceInfo *s, const char *key) {
        const Value *v = source_value(s, key);
        return v ? v->integer : 0;
}

static uint64_t source_unsigned(const SourceInfo *s, const char *key) {
        const Value *v = source_value(s, key);
        return v ? (v->type == 't' ? v->unsigned_integer : (uint64_t) MAX(v->integer, INT64_C(0))) : 0;
}

/* One {sv} entry; a value of a type this tool does not know is skipped. */
static int read_entry(sd_bus_message *m, SourceInfo *s) {
        const char *key, *contents, *str;
        Value *v;
        char type;
        int r;

        r = sd_bus_message_read(m, "s", &key);
        if (r < 0)
                return r;
        r = sd_bus_message_peek_type(m, &type, &contents);
        if (r < 0)
                return r;
        if (type != 'v' || !contents || strlen(contents) != 1 || !strchr("sbutxi", contents[0]) ||
            s->n_values >= SOURCE_KEYS_MAX || strlen(key) >= sizeof s->values[0].key)
                return sd_bus_message_skip(m, "v");

        r = sd_bus_message_enter_container(m, 'v', contents);
        if (r < 0)
                return r;
        v = &s->values[s->n_values];
        *v = (Value) { .type = contents[0] };
        strcpy(v->key, key);

        switch (v->type) {
        case 's':
                r = sd_bus_message_read(m, "s", &str);
                if (r >= 0 && !(v->string = strdup(str)))
                        r = -ENOMEM;
                break;
        case 'b': {
                int b;
                r = sd_bus_message_read(m, "b", &b);
                v->integer = !!b;
                break;
        }
        case 'u': {
                uint32_t u;
                r = sd_bus_message_read(m, "u", &u);
                v->integer = u;
                break;
        }
        case 'i': {
                int32_t i;
                r = sd_bus_message_read(m, "i", &i);
                v->integer = i;
                break;
        }
        case 't':
                r = sd_bus_message_read(m, "t", &v->unsigned_integer);
                v->integer = (int64_t) MIN(v->unsigned_integer, (uint64_t) INT64_MAX);
                break;
        case 'x':
                r = sd_bus_message_read(m, "x", &v->integer);
                break;
        }
        if (r < 0)
                return r;
        s->n_values++;
        return sd_bus_message_exit_container(m);
}

static int read_sources(sd_bus_message *m, SourceInfo **ret, size_t *ret_n) {
        SourceInfo *sources = NULL;
        size_t n = 0;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "a{sv}");
        if (r < 0)
                return r;
        for (;;) {
                SourceInfo *a;

                r = sd_bus_message_enter_container(m, 'a', "{sv}");
                if (r < 0)
                        goto fail;
                if (r == 0)
                        break;
                a = reallocarray(sources, n + 1, sizeof *sources);
                if (!a) {
                        r = -ENOMEM;
                        goto fail;
                }
                sources = a;
                sources[n++] = (SourceInfo) {};
                while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                        r = read_entry(m, &sources[n - 1]);
                        if (r < 0)
                                goto fail;
                        r = sd_bus_message_exit_container(m);
                        if (r < 0)
                                goto fail;
                }
                if (r < 0)
                        goto fail;
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        goto fail;
        }
        r = sd_bus_message_exit_container(m);
        if (r < 0)
                goto fail;

        *ret = sources;
        *ret_n = n;
        return 0;

fail:
        for (size_t i = 0; i < n; i++)
                source_info_done(&sources[i]);
        free(sources);
        return r;
}

/* ---- output ---- */

/* "NTS" or "none", as chronyc authdata's Mode: whether the time of the source is authenticated. */
static const char *source_authentication(const SourceInfo *s) {
        return source_integer(s, "NTS") ? "NTS" : "none";
}

static void print_json(const SourceInfo *sources, size_t n) {
        JsonWriter w = JSON_WRITER_INIT(stdout);

        json_begin_array(&w, NULL);
        for (size_t i = 0; i < n; i++) {
                json_begin_object(&w, NULL);
                for (size_t k = 0; k < sources[i].n_values; k++) {
                        const Value *v = &sources[i].values[k];

                        if (v->type == 's')
                                json_write_string(&w, v->key, v->string);
                        else if (v->type == 'b')
                                json_write_bool(&w, v->key, v->integer);
                        else
                                json_write_integer(&w, v->key, v->integer);
                }
                /* Not a key of the property: what the table's Auth column says, for a script. */
                if (!source_has(&sources[i], "Authentication"))
                        json_write_string(&w, "Authentication", source_authentication(&sources[i]));
                json_end_object(&w);
        }
        json_end_array(&w);
        fputc('\n', stdout);
}

/* A source that is failing: backing off after a failure, refusing service, an NTS source whose
 * last key exchange failed (it waits idle for the retry, State says "idle"), or one that was
 * stopped after it failed and did not answer since (one server at a time: the next one took
 * over, or all wait). */
static bool source_failing(const SourceInfo *s) {
        const char *state = source_string(s, "State");

        return streq(state, "backing-off") || streq(state, "failed") ||
               (source_integer(s, "NTS") && source_unsigned(s, "KeyExchangeFailures") > 0) ||
               (streq(state, "idle") && !isempty(source_string(s, "LastError")) &&
                source_unsigned(s, "LastErrorTimestamp") >= source_unsigned(s, "LastSampleTimestamp"));
}

/* The mark before each source, as chronyc's: * selected, + agrees and is combined, x a
 * falseticker, ? no majority to judge by, = a duplicate (the same server as one listed before
 * it), - not usable now, blank not in use. The daemon calls a source it does not count
 * "unused" also while that source is failing (an NTS server whose key exchange failed, waiting
 * for the retry); that one is not usable now, not merely unused. */
static char verdict_mark(const SourceInfo *s) {
        const char *verdict = source_string(s, "Verdict");

        return streq(verdict, "selected") ? '*' :
               streq(verdict, "truechimer") ? '+' :
               streq(verdict, "falseticker") ? 'x' :
               streq(verdict, "undecided") ? '?' :
               streq(verdict, "duplicate") ? '=' :
               streq(verdict, "unused") && !source_failing(s) ? ' ' : '-';
}

/* A span of seconds, compactly: "12s", "5m", "3h", "2d". */
static const char *format_seconds(uint64_t s, char buf[static 16]) {
        if (s < 120)
                snprintf(buf, 16, "%" PRIu64 "s", s);
        else if (s < 2 * 3600)
                snprintf(buf, 16, "%" PRIu64 "m", s / 60);
        else if (s < 2 * 86400)
                snprintf(buf, 16, "%" PRIu64 "h", s / 3600);
        else
                snprintf(buf, 16, "%" PRIu64 "d", s / 86400);
        return buf;
}

/* How long ago a realtime timestamp (microseconds) was. */
static const char *format_ago(uint64_t then_usec, usec_t now_usec, char buf[static 16]) {
        if (then_usec == 0)
                return strcpy(buf, "-");
        return format_seconds(now_usec > then_usec ? (now_usec - then_usec) / USEC_PER_SEC : 0, buf);
}

/* The last error with how long ago it came, and whether a sample came since (the error was
 * overcome): "cannot resolve ... (3m ago)", "... (3m ago, before the last sample)". */
static const char *format_last_error(const SourceInfo *s, usec_t now_usec, char *buf, size_t size) {
        uint64_t at = source_unsigned(s, "LastErrorTimestamp"), sample = source_unsigned(s, "LastSampleTimestamp");
        const char *error = source_string(s, "LastError");
        char ago[16];

        if (isempty(error))
                return "-";
        if (at == 0)
                return error;
        snprintf(buf, size, "%s (%s ago%s)", error, format_ago(at, now_usec, ago),
                 sample > at ? ", before the last sample" : "");
        return buf;
}

/* The sources in a conflict of claims (ConflictWith): their key-exchange servers name one NTP
 * address, though they are not one server. One of each two claims a server that is not its
 * own; which one, nothing here can tell. */
static void print_conflicts(const SourceInfo *sources, size_t n) {
        bool any = false;

        for (size_t i = 0; i < n; i++) {
                const SourceInfo *s = &sources[i];
                const char *with = source_string(s, "ConflictWith"), *address = source_string(s, "Address");

                if (isempty(with))
                        continue;
                if (!any)
                        printf("\nConflicting claims: NTS sources whose key-exchange servers (other addresses, other "
                               "certificate keys) name one NTP address; one of the two claims a server that is not "
                               "its own, and each keeps its vote:\n");
                any = true;
                printf("  %-28s polls %s; %s names that NTP address too\n", source_string(s, "Name"),
                       isempty(address) ? "-" : address, with);
        }
}

static void print_table(const SourceInfo *sources, size_t n, char * const *not_started) {
        usec_t t = now(CLOCK_REALTIME);
        bool nts = false;
        char ago[16], poll[16], offset[32], rd[32], stratum[8];

        if (n == 0 && strv_length(not_started) == 0) {
                printf("No time sources.\n");
                return;
        }

        /* The offset's sign is stated in the header: the source's clock minus ours, as RFC 5905
         * defines the offset (and ntpq shows it); chronyc sources shows the opposite sign. */
        printf("S %-28s %-24s %-4s %-12s %2s %6s %5s %14s %12s\n", "Name", "Address", "Auth", "State", "St", "Poll",
               "Last", "Source-local", "Root dist.");
        for (size_t i = 0; i < n; i++) {
                const SourceInfo *s = &sources[i];
                const char *address = source_string(s, "Address");

                if (source_has(s, "OffsetNSec")) {
                        snprintf(stratum, sizeof stratum, "%" PRIu64, source_unsigned(s, "Stratum"));
                        snprintf(offset, sizeof offset, "%+.6fs", (double) source_integer(s, "OffsetNSec") / 1e9);
                        snprintf(rd, sizeof rd, "%.6fs", (double) source_integer(s, "RootDistanceNSec") / 1e9);
                } else {
                        strcpy(stratum, "-");
                        strcpy(offset, "-");
                        strcpy(rd, "-");
                }
                printf("%c %-28s %-24s %-4s %-12s %2s %6s %5s %14s %12s\n", verdict_mark(s), source_string(s, "Name"),
                       isempty(address) ? "-" : address, source_authentication(s), source_string(s, "State"), stratum,
                       format_seconds(source_unsigned(s, "PollIntervalUSec") / USEC_PER_SEC, poll),
                       format_ago(source_unsigned(s, "LastSampleTimestamp"), t, ago), offset, rd);
                nts = nts || source_integer(s, "NTS");
        }
        /* Listed, but without a source yet: the daemon has nothing of them to show. */
        STRV_FOREACH(name, not_started)
                printf("  %-28s %-24s %-4s %-12s %2s %6s %5s %14s %12s\n", *name, "-", "NTS", "not started", "-", "-",
                       "-", "-", "-");
        if (strv_length(not_started) > 0)
                printf("not started: an NTS server of the list in use that no source polls yet (beyond "
                       "NTSMaxSources=, or not tried yet)\n");
        printf("S: * selected, + agrees, x falseticker, ? undecided (no majority), = duplicate, "
               "- not usable now\n"
               "Source-local: the source's clock minus the local clock (+: the source is ahead)\n");

        if (!nts)
                return;
        printf("\n%-28s %-28s %-22s %7s %8s %7s  %s\n", "NTS source", "Key exchange", "AEAD", "Cookies", "KE fails",
               "Last KE", "Last error");
        for (size_t i = 0; i < n; i++) {
                const SourceInfo *s = &sources[i];
                char error[512];

                if (!source_integer(s, "NTS"))
                        continue;
                printf("%-28s %-28s %-22s %7" PRIu64 " %8" PRIu64 " %7s  %s\n", source_string(s, "Name"),
                       source_string(s, "KeyExchangeServer"),
                       isempty(source_string(s, "AEAD")) ? "-" : source_string(s, "AEAD"),
                       source_unsigned(s, "Cookies"), source_unsigned(s, "KeyExchangeFailures"),
                       format_ago(source_unsigned(s, "LastKeyExchangeTimestamp"), t, ago),
                       format_last_error(s, t, error, sizeof error));
        }
        print_conflicts(sources, n);
}

/* ---- OpenMetrics ---- */

/* A label value as the text format wants it: backslash, double quote and newline escaped. */
static void print_label_value(const char *v) {
        for (; *v; v++)
                if (*v == '\\')
                        fputs("\\\\", stdout);
                else if (*v == '"')
                        fputs("\\\"", stdout);
                else if (*v == '\n')
                        fputs("\\n", stdout);
                else
                        fputc(*v, stdout);
}

typedef enum MetricType {
        METRIC_GAUGE,
        METRIC_COUNTER,         /* only grows while the source lives: samples end in _total */
        METRIC_INFO,            /* value 1, the facts in labels: the sample ends in _info */
} MetricType;

typedef struct Metric {
        const char *name;       /* the family, without the unit's suffix */
        MetricType type;
        const char *unit;       /* "seconds" or NULL; part of the name, as OpenMetrics asks */
        const char *help;
        const char *key;        /* of the Sources property: a source without it has no sample */
        unsigned decimals;      /* the value is in 10^-decimals of the unit (NSec: 9) */
        /* The value of one source; NULL: the key's number. */
        int64_t (*value)(const SourceInfo *s);
} Metric;

static int64_t m_one(const SourceInfo *s) {
        return 1;
}

static int64_t m_selected(const SourceInfo *s) {
        return streq(source_string(s, "Verdict"), "selected");
}

/* It answered, and it is not failing now. */
static int64_t m_reachable(const SourceInfo *s) {
        return source_has(s, "OffsetNSec") && !source_failing(s);
}

static int64_t m_nts(const SourceInfo *s) {
        return !!source_integer(s, "NTS");
}

/* Its key-exchange server names an NTP address that another source's, a different one, names too. */
static int64_t m_conflict(const SourceInfo *s) {
        return !isempty(source_string(s, "ConflictWith"));
}

static const Metric metrics[] = {
        { "timesyncd_source", METRIC_INFO, NULL,
          "A time source of systemd-timesyncd: the facts about it that rarely change are in the labels",
          .value = m_one },
        { "timesyncd_source_selected", METRIC_GAUGE, NULL, "1 when the source is the selected one",
          .value = m_selected },
        { "timesyncd_source_reachable", METRIC_GAUGE, NULL, "1 when the source answered and is not failing now",
          .value = m_reachable },
        { "timesyncd_source_nts", METRIC_GAUGE, NULL, "1 when the time of the source is authenticated with NTS",
          .value = m_nts },
        { "timesyncd_source_offset", METRIC_GAUGE, "seconds",
          "The clock of the source minus the local clock, from its last answer", "OffsetNSec", 9 },
        { "timesyncd_source_delay", METRIC_GAUGE, "seconds", "Round-trip delay of the last answer", "DelayNSec", 9 },
        { "timesyncd_source_root_distance", METRIC_GAUGE, "seconds",
          "Bound on the error of the offset of the source now", "RootDistanceNSec", 9 },
        { "timesyncd_source_jitter", METRIC_GAUGE, "seconds", "Jitter of the offsets of the source", "JitterNSec", 9 },
        { "timesyncd_source_stratum", METRIC_GAUGE, NULL, "Stratum of the last answer", "Stratum", 0 },
        { "timesyncd_source_poll_interval", METRIC_GAUGE, "seconds", "Poll interval of the source",
          "PollIntervalUSec", 6 },
        { "timesyncd_source_last_sample_timestamp", METRIC_GAUGE, "seconds",
          "When the request of the last answer went out, seconds since 1970", "LastSampleTimestamp", 6 },
        { "timesyncd_source_packets", METRIC_COUNTER, NULL, "Answers used from the source", "Packets", 0 },
        { "timesyncd_source_failures", METRIC_COUNTER, NULL, "Failures of the source (no answer, refusal, error)",
          "Failures", 0 },
        { "timesyncd_source_refused_replies", METRIC_COUNTER, NULL,
          "Replies from the source that were refused (not authentic, malformed, not matching)", "RefusedReplies", 0 },
        { "timesyncd_source_nts_cookies", METRIC_GAUGE, NULL, "NTS cookies left", "Cookies", 0 },
        { "timesyncd_source_nts_key_exchange_failures", METRIC_GAUGE, NULL,
          "NTS key exchanges that failed in a row (0 after an authenticated answer)", "KeyExchangeFailures", 0 },
        { "timesyncd_source_nts_last_key_exchange_timestamp", METRIC_GAUGE, "seconds",
          "When the last NTS key exchange succeeded, seconds since 1970", "LastKeyExchangeTimestamp", 6 },
        { "timesyncd_source_nts_conflict", METRIC_GAUGE, NULL,
          "1 when the key-exchange server of the source names an NTP address that the different key-exchange "
          "server of another source names too (the other is the conflict_with label of timesyncd_source_info)",
          "ConflictWith", .value = m_conflict },
};

/* The values of State and Verdict, each a series of its own that is 1 for the source's value and
 * 0 for the others: the series stay the same while the value changes (a label that took the
 * value would end one series and begin another at each change). */
static const char *const source_states[] = {
        "idle", "key-exchange", "resolving", "poll-wait", "reply-wait", "backing-off", "failed",
};
static const char *const source_verdicts[] = {
        "selected", "truechimer", "falseticker", "undecided", "duplicate", "unused", "unusable",
};

/* The daemon as a whole, from the Manager's properties and the selected source. */
typedef struct DaemonInfo {
        bool up;                        /* the daemon answered */
        int check;                      /* what --check says */
        bool have_frequency;
        int64_t frequency;              /* adjtimex's, ppm scaled by 2^16 */
        uint64_t poll_interval_usec;
} DaemonInfo;

/* v / 10^decimals, exactly (no rounding through a double). */
static void print_decimal(int64_t v, unsigned decimals) {
        uint64_t scale = 1, a = v < 0 ? -(uint64_t) v : (uint64_t) v;

        for (unsigned i = 0; i < decimals; i++)
                scale *= 10;
        if (decimals == 0)
                printf("%s%" PRIu64, v < 0 ? "-" : "", a);
        else
                printf("%s%" PRIu64 ".%0*" PRIu64, v < 0 ? "-" : "", a / scale, (int) decimals, a % scale);
}

static void print_source_labels(const SourceInfo *s, bool info) {
        printf("{name=\"");
        print_label_value(source_string(s, "Name"));
        printf("\"");
        if (info) {
                /* ConflictWith: the other source of a conflict of claims, which lasts until
                 * a key-exchange server names another address; the gauge
                 * timesyncd_source_nts_conflict stays one series through it. */
                static const char *const keys[] = { "Address", "Origin", "Pool", "KeyExchangeServer", "AEAD",
                                                    "ConflictWith" };

                printf(",authentication=\"%s\"", source_authentication(s));
                for (size_t k = 0; k < ELEMENTSOF(keys); k++) {
                        char label[32];
                        size_t j = 0;

                        if (!source_has(s, keys[k]))
                                continue;
                        /* CamelCase to snake_case: KeyExchangeServer to key_exchange_server,
                         * AEAD to aead (a capital after a capital starts no new word). */
                        for (const char *c = keys[k]; *c && j + 2 < sizeof label; c++) {
                                if (*c >= 'A' && *c <= 'Z') {
                                        if (c != keys[k] && c[-1] >= 'a' && c[-1] <= 'z')
                                                label[j++] = '_';
                                        label[j++] = (char) (*c - 'A' + 'a');
                                } else
                                        label[j++] = *c;
                        }
                        label[j] = '\0';
                        printf(",%s=\"", label);
                        print_label_value(source_string(s, keys[k]));
                        printf("\"");
                }
        }
        printf("}");
}

/* The metadata of a family; returns the name of its samples in sample (size bytes). OpenMetrics
 * names a counter's family without _total and an info family without _info, the samples with;
 * the Prometheus text format (0.0.4) knows no info type and names a family as its samples. */
static const char *print_family(const char *name, MetricType type, const char *unit, const char *help,
                                char *sample, size_t size) {
        static const char *const suffix[] = { [METRIC_GAUGE] = "", [METRIC_COUNTER] = "_total",
                                              [METRIC_INFO] = "_info" };
        static const char *const om_type[] = { [METRIC_GAUGE] = "gauge", [METRIC_COUNTER] = "counter",
                                               [METRIC_INFO] = "info" };
        char family[96];

        snprintf(family, sizeof family, "%s%s%s", name, unit ? "_" : "", strempty(unit));
        snprintf(sample, size, "%s%s", family, suffix[type]);
        if (arg_output == OUTPUT_OPENMETRICS) {
                printf("# TYPE %s %s\n", family, om_type[type]);
                if (unit)
                        printf("# UNIT %s %s\n", family, unit);
                printf("# HELP %s %s.\n", family, help);
        } else {
                printf("# HELP %s %s.\n", sample, help);
                printf("# TYPE %s %s\n", sample, type == METRIC_COUNTER ? "counter" : "gauge");
        }
        return sample;
}

/* One gauge family whose series per source are its values, each 1 for the source's and 0 for the
 * others. A value this tool does not know (a daemon newer than the tool) gets a series too. */
static void print_one_of(const char *name, const char *label, const char *key, const char *const *values,
                         size_t n_values, const char *help, const SourceInfo *sources, size_t n) {
        char sample[128];

        (void) print_family(name, METRIC_GAUGE, NULL, help, sample, sizeof sample);
        for (size_t k = 0; k < n; k++) {
                const char *now = source_string(&sources[k], key);
                bool known = false;

                for (size_t i = 0; i <= n_values; i++) {
                        const char *v = i < n_values ? values[i] : now;

                        if (i == n_values && (known || isempty(now)))
                                break;
                        known = known || streq(v, now);
                        printf("%s{name=\"", sample);
                        print_label_value(source_string(&sources[k], "Name"));
                        printf("\",%s=\"", label);
                        print_label_value(v);
                        printf("\"} %d\n", streq(v, now));
                }
        }
}

/* One gauge in seconds without labels, its value v / 10^decimals. */
static void print_seconds_gauge(const char *name, const char *help, int64_t v, unsigned decimals) {
        char sample[128];

        fputs(print_family(name, METRIC_GAUGE, "seconds", help, sample, sizeof sample), stdout);
        fputc(' ', stdout);
        print_decimal(v, decimals);
        fputc('\n', stdout);
}

/* What the daemon says as a whole: whether it answered, the build, the state --check sees, and as
 * chronyc tracking and ntpd-rs' exporter give them the clock's figures: the selected source's
 * offset, root distance, last update and poll interval, and the frequency correction. */
static void print_daemon(const DaemonInfo *d, const SourceInfo *sources, size_t n) {
        const SourceInfo *sel = NULL;
        char sample[128];

        for (size_t i = 0; i < n && !sel; i++)
                if (streq(source_string(&sources[i], "Verdict"), "selected"))
                        sel = &sources[i];

        printf("%s{version=\"%s\"} 1\n", print_family("timesyncd_build", METRIC_INFO, NULL,
                                                    "The version of timesync-sources (timesyncd-nts) that wrote this",
                                                    sample, sizeof sample), PROJECT_VERSION);
        printf("%s %d\n", print_family("timesyncd_up", METRIC_GAUGE, NULL,
                                       "1 when systemd-timesyncd answered on the bus, 0 when it could not be asked",
                                       sample, sizeof sample), d->up);
        printf("%s %d\n", print_family("timesyncd_synchronized", METRIC_GAUGE, NULL, "1 when a source is selected",
                                       sample, sizeof sample), d->check == CHECK_NTS || d->check == CHECK_PLAIN_NTP);
        printf("%s %d\n", print_family("timesyncd_synchronized_nts", METRIC_GAUGE, NULL,
                                       "1 when the selected source is authenticated with NTS", sample, sizeof sample),
               d->check == CHECK_NTS);
        if (!d->up)
                return;
        printf("%s %zu\n", print_family("timesyncd_sources", METRIC_GAUGE, NULL, "The time sources the daemon knows",
                                        sample, sizeof sample), n);
        if (sel && source_has(sel, "OffsetNSec")) {
                print_seconds_gauge("timesyncd_offset", "The selected source's clock minus the local clock, from its "
                                    "last answer (chronyc tracking: Last offset, opposite sign)",
                                    source_integer(sel, "OffsetNSec"), 9);
                print_seconds_gauge("timesyncd_root_distance", "Bound on the error of the selected source's time now "
                                    "(root delay / 2 + root dispersion)", source_integer(sel, "RootDistanceNSec"), 9);
                print_seconds_gauge("timesyncd_last_update_timestamp", "When the request of the selected source's "
                                    "last answer went out, seconds since 1970",
                                    (int64_t) source_unsigned(sel, "LastSampleTimestamp"), 6);
        }
        if (d->poll_interval_usec > 0)
                print_seconds_gauge("timesyncd_poll_interval", "The poll interval of the selected source",
                                    (int64_t) d->poll_interval_usec, 6);
        if (d->have_frequency)
                printf("%s %.6f\n", print_family("timesyncd_frequency_ppm", METRIC_GAUGE, NULL,
                                                 "The kernel's frequency correction of the local clock, in ppm "
                                                 "(positive: the clock is sped up)", sample, sizeof sample),
                       (double) d->frequency / 65536.0);
}

/* The sources in the OpenMetrics text format (--openmetrics) or in the Prometheus text format
 * that node_exporter's textfile collector reads (--prometheus): one family per property, one
 * sample per source that has a value, the state and the verdict as one series per value, then
 * the daemon. A daemon that could not be asked still gives timesyncd_up 0 and
 * timesyncd_synchronized 0, so that a file written from a timer never keeps a stale "1". */
static void print_metrics(const SourceInfo *sources, size_t n, const DaemonInfo *d) {
        char sample[128];

        for (size_t i = 0; d->up && i < ELEMENTSOF(metrics); i++) {
                const Metric *m = &metrics[i];

                (void) print_family(m->name, m->type, m->unit, m->help, sample, sizeof sample);
                for (size_t k = 0; k < n; k++) {
                        const SourceInfo *s = &sources[k];
                        int64_t v;

                        /* A key the source does not have (no answer yet, not NTS): no sample;
                         * so is a timestamp of 0 ("none in this run"). */
                        if (m->key && (!source_has(s, m->key) || (streq(m->key, "LastKeyExchangeTimestamp") &&
                                                                  source_integer(s, m->key) == 0)))
                                continue;
                        v = m->value ? m->value(s) : source_integer(s, m->key);
                        fputs(sample, stdout);
                        print_source_labels(s, m->type == METRIC_INFO);
                        fputc(' ', stdout);
                        print_decimal(v, m->decimals);
                        fputc('\n', stdout);
                }
                if (i == 0) {
                        print_one_of("timesyncd_source_state", "state", "State", source_states,
                                     ELEMENTSOF(source_states), "What the source is doing: 1 for its state",
                                     sources, n);
                        print_one_of("timesyncd_source_verdict", "verdict", "Verdict", source_verdicts,
                                     ELEMENTSOF(source_verdicts), "What the daemon makes of the source: 1 for its "
                                     "verdict", sources, n);
                }
        }
        print_daemon(d, sources, n);
        if (arg_output == OUTPUT_OPENMETRICS)
                printf("# EOF\n");
}

/* ---- --check ---- */

static const SourceInfo *selected_source(const SourceInfo *sources, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (streq(source_string(&sources[i], "Verdict"), "selected"))
                        return &sources[i];
        return NULL;
}

static int check_status(const SourceInfo *sources, size_t n) {
        const SourceInfo *s = selected_source(sources, n);

        if (!s)
                return CHECK_UNSYNCHRONIZED;
        return source_integer(s, "NTS") ? CHECK_NTS : CHECK_PLAIN_NTP;
}

/* One line that says what the status means. */
static void print_check(const SourceInfo *sources, size_t n, int status, const char *nts_status) {
        const SourceInfo *s = selected_source(sources, n);
        size_t failing = 0;

        for (size_t i = 0; i < n; i++)
                failing += source_failing(&sources[i]);

        /* Synchronized, with NTSStatus set: several servers of which some fail while the
         * others steer. Still exit 0, the clock is steered over NTS, but the line says it. */
        if (s)
                printf("Synchronized %s to %s (%s), offset %+.6fs (source-local).%s%s%s\n",
                       status == CHECK_NTS ? "over NTS" : "over plain NTP, NOT authenticated",
                       source_string(s, "Name"), source_string(s, "Address"),
                       (double) source_integer(s, "OffsetNSec") / 1e9,
                       isempty(nts_status) ? "" : " ", strempty(nts_status), isempty(nts_status) ? "" : ".");
        else
                printf("Not synchronized: no source selected (%zu %s, %zu failing)%s%s\n", n,
                       n == 1 ? "source" : "sources", failing, isempty(nts_status) ? "." : ": ", strempty(nts_status));
}

/* ---- main ---- */

static void help(void) {
        printf("%s [OPTIONS...]\n\n"
               "Show the time sources of systemd-timesyncd: which servers it uses, which of them\n"
               "agree, and their NTS state (D-Bus property Sources of org.freedesktop.timesync1).\n\n"
               "  -h --help            Show this help\n"
               "     --version         Show package version\n"
               "     --json            Print the sources as a JSON array, keys as on D-Bus\n"
               "     --openmetrics     Print the sources and the daemon as OpenMetrics text\n"
               "     --prometheus      The same in the Prometheus text format (node_exporter's\n"
               "                       textfile collector)\n"
               "     --check           Print one line and exit 0 when synchronized over NTS,\n"
               "                       3 over plain NTP, 4 not synchronized, 1 no daemon\n"
               "     --wait[=SECONDS]  As --check, once synchronized over NTS or after SECONDS\n"
               "     --retry           Make the sources that fail try again now (after a fix)\n",
               program_invocation_short_name);
}

static int parse_argv(int argc, char *argv[]) {
        enum { ARG_JSON = 0x100, ARG_OPENMETRICS, ARG_PROMETHEUS, ARG_CHECK, ARG_WAIT, ARG_RETRY, ARG_VERSION };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "json", no_argument, NULL, ARG_JSON },
                { "openmetrics", no_argument, NULL, ARG_OPENMETRICS },
                { "prometheus", no_argument, NULL, ARG_PROMETHEUS },
                { "check", no_argument, NULL, ARG_CHECK },
                { "wait", optional_argument, NULL, ARG_WAIT },
                { "retry", no_argument, NULL, ARG_RETRY },
                {}
        };
        unsigned n_modes = 0;
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("timesync-sources (timesyncd-nts) %s\n", PROJECT_VERSION);
                        return 0;
                case ARG_JSON:
                        arg_output = OUTPUT_JSON;
                        n_modes++;
                        break;
                case ARG_OPENMETRICS:
                        arg_output = OUTPUT_OPENMETRICS;
                        n_modes++;
                        break;
                case ARG_PROMETHEUS:
                        arg_output = OUTPUT_PROMETHEUS;
                        n_modes++;
                        break;
                case ARG_CHECK:
                        arg_output = OUTPUT_CHECK;
                        n_modes++;
                        break;
                case ARG_WAIT:
                        arg_output = OUTPUT_CHECK;
                        arg_wait = true;
                        n_modes++;
                        arg_wait_usec = USEC_INFINITY;
                        if (optarg && parse_sec(optarg, &arg_wait_usec) < 0)
                                return log_error_errno(EINVAL, "--wait= takes a time span (\"90\", \"2min\"), not '%s'.",
                                                       optarg);
                        break;
                case ARG_RETRY:
                        arg_output = OUTPUT_RETRY;
                        n_modes++;
                        break;
                default:
                        return -EINVAL;
                }
        if (optind < argc)
                return log_error_errno(EINVAL, "%s takes no arguments.", program_invocation_short_name);
        if (n_modes > 1)
                return log_error_errno(EINVAL, "--json, --openmetrics, --prometheus, --check, --wait and --retry exclude "
                                       "each other.");
        return 1;
}

/* The Sources property, and for --check and --openmetrics the NTSStatus property (empty when
 * it cannot be read: it only adds a reason). Returns < 0 with the error logged when the daemon
 * cannot be asked. */
static int fetch_sources(sd_bus *bus, SourceInfo **ret, size_t *ret_n, char **ret_nts_status) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_get_property(bus, "org.freedesktop.timesync1", "/org/freedesktop/timesync1",
                                "org.freedesktop.timesync1.Manager", "Sources", &error, &reply, "aa{sv}");
        if (r < 0)
                return log_error_errno(r, "Failed to read the time sources of systemd-timesyncd: %s",
                                       error.message ?: strerror(-r));
        r = read_sources(reply, ret, ret_n);
        if (r < 0)
                return log_error_errno(r, "Failed to read the Sources property: %m");

        if (ret_nts_status) {
                sd_bus_error_free(&error);
                *ret_nts_status = NULL;
                (void) sd_bus_get_property_string(bus, "org.freedesktop.timesync1", "/org/freedesktop/timesync1",
                                                  "org.freedesktop.timesync1.Manager", "NTSStatus", &error,
                                                  ret_nts_status);
        }
        return 0;
}

/* The servers of the NTS list in use (runtime NTS servers while set, else NTS=, else FallbackNTS=
 * while the daemon uses NTS) that no source polls: the daemon makes a source when it first uses a
 * server. Pool entries are left out: their sources are named after their members. */
static int fetch_not_started(sd_bus *bus, const SourceInfo *sources, size_t n, char ***ret) {
        static const char *const lists[] = { "RuntimeNTSServers", "SystemNTSServers", "FallbackNTSServers" };
        _cleanup_strv_free_ char **names = NULL, **out = NULL;
        bool nts = false;
        int r;

        for (size_t i = 0; i < n; i++)
                nts = nts || source_integer(&sources[i], "NTS");
        *ret = NULL;
        if (!nts)
                return 0;
        for (size_t k = 0; k < ELEMENTSOF(lists) && strv_length(names) == 0; k++) {
                names = strv_free(names);
                r = sd_bus_get_property_strv(bus, "org.freedesktop.timesync1", "/org/freedesktop/timesync1",
                                             "org.freedesktop.timesync1.Manager", lists[k], NULL, &names);
                if (r < 0)
                        return 0;
        }
        STRV_FOREACH(name, names) {
                bool found = false;

                if (startswith(*name, "pool:") || startswith(*name, "srv:"))
                        continue;
                for (size_t i = 0; i < n && !found; i++)
                        found = streq(source_string(&sources[i], "Name"), *name);
                if (!found) {
                        r = strv_extend(&out, *name);
                        if (r < 0)
                                return r;
                }
        }
        *ret = TAKE_PTR(out);
        return 0;
}

/* For the metrics: the Manager's Frequency and PollIntervalUSec (left out when unreadable). */
static void fetch_daemon(sd_bus *bus, DaemonInfo *d) {
        uint64_t poll = 0;
        int64_t freq = 0;

        if (sd_bus_get_property_trivial(bus, "org.freedesktop.timesync1", "/org/freedesktop/timesync1",
                                        "org.freedesktop.timesync1.Manager", "Frequency", NULL, 'x', &freq) >= 0) {
                d->have_frequency = true;
                d->frequency = freq;
        }
        if (sd_bus_get_property_trivial(bus, "org.freedesktop.timesync1", "/org/freedesktop/timesync1",
                                        "org.freedesktop.timesync1.Manager", "PollIntervalUSec", NULL, 't', &poll) >= 0)
                d->poll_interval_usec = poll;
}

static void free_sources(SourceInfo *sources, size_t n) {
        for (size_t i = 0; i < n; i++)
                source_info_done(&sources[i]);
        free(sources);
}

/* --check once, or --wait: asks again every second until the daemon says NTS or the time is up;
 * a daemon that is not there yet (starting) is waited for too. */
static int run_check(void) {
        usec_t start = now(CLOCK_MONOTONIC);

        for (;;) {
                _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
                _cleanup_free_ char *nts_status = NULL;
                SourceInfo *sources = NULL;
                size_t n = 0;
                int r, status;

                r = sd_bus_open_system(&bus);
                if (r < 0)
                        log_error_errno(r, "Failed to connect to the system bus: %m");
                else
                        r = fetch_sources(bus, &sources, &n, &nts_status);
                status = r < 0 ? CHECK_NO_DAEMON : check_status(sources, n);

                if (status == CHECK_NTS || !arg_wait ||
                    (arg_wait_usec != USEC_INFINITY && now(CLOCK_MONOTONIC) - start >= arg_wait_usec)) {
                        if (r >= 0)
                                print_check(sources, n, status, nts_status);
                        free_sources(sources, n);
                        return status;
                }
                free_sources(sources, n);
                (void) nanosleep(&(struct timespec) { .tv_sec = 1 }, NULL);
        }
}

/* --retry: RetrySources(), which root may call and others with polkit's permission (the action
 * org.freedesktop.timesync1.retry-sources). */
static int run_retry(sd_bus *bus) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        uint32_t n;
        int r;

        (void) sd_bus_set_allow_interactive_authorization(bus, true);
        r = sd_bus_call_method(bus, "org.freedesktop.timesync1", "/org/freedesktop/timesync1",
                               "org.freedesktop.timesync1.Manager", "RetrySources", &error, &reply, NULL);
        if (r < 0)
                return log_error_errno(r, "Failed to ask systemd-timesyncd to retry: %s", error.message ?: strerror(-r));
        r = sd_bus_message_read(reply, "u", &n);
        if (r < 0)
                return log_error_errno(r, "Failed to read the answer to RetrySources: %m");
        if (n == 0)
                printf("No source was failing: nothing to retry.\n");
        else
                printf("Retrying %" PRIu32 " failing source%s now.\n", n, n == 1 ? "" : "s");
        return 0;
}

int main(int argc, char *argv[]) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        SourceInfo *sources = NULL;
        bool want_metrics;
        size_t n = 0;
        int r;

        log_parse_environment();
        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? 2 : 0;

        if (arg_output == OUTPUT_CHECK)
                return run_check();

        want_metrics = arg_output == OUTPUT_OPENMETRICS || arg_output == OUTPUT_PROMETHEUS;
        r = sd_bus_open_system(&bus);
        if (r < 0)
                log_error_errno(r, "Failed to connect to the system bus: %m");
        else if (arg_output == OUTPUT_RETRY)
                return run_retry(bus) < 0 ? 1 : 0;
        else
                r = fetch_sources(bus, &sources, &n, NULL);
        if (r < 0 && !want_metrics)
                return 1;

        if (want_metrics) {
                DaemonInfo d = {
                        .up = r >= 0,
                        .check = r < 0 ? CHECK_NO_DAEMON : check_status(sources, n),
                };

                if (r >= 0)
                        fetch_daemon(bus, &d);
                /* Written also when the daemon could not be asked (exit 1 all the same). */
                print_metrics(sources, n, &d);
        } else if (arg_output == OUTPUT_JSON)
                print_json(sources, n);
        else {
                _cleanup_strv_free_ char **not_started = NULL;

                r = fetch_not_started(bus, sources, n, &not_started);
                if (r < 0)
                        return log_oom(), 1;
                print_table(sources, n, not_started);
        }

        free_sources(sources, n);
        return r >= 0 && fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}
