/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* timesync-sources: the time sources of a running systemd-timesyncd, read from its "Sources"
 * D-Bus property, as `chronyc sources` and `chronyc -N authdata` show chronyd's: a table for a
 * person, or --json for a script. Reading a property needs no privileges (the bus policy lets
 * everybody talk to org.freedesktop.timesync1), and the tool changes nothing. The JSON keeps
 * every key of the property as it is, so that keys added later (pools) come through. */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <systemd/sd-bus.h>

#include "json-writer.h"
#include "log.h"
#include "string-util.h"
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

static bool arg_json = false;

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
                json_end_object(&w);
        }
        json_end_array(&w);
        fputc('\n', stdout);
}

/* The mark before each source, as chronyc's: * selected, + agrees and is combined, x a
 * falseticker, ? no majority to judge by, = a duplicate (the same server as one listed
 * before it), - not usable now, blank not in use. */
static char verdict_mark(const char *verdict) {
        return streq(verdict, "selected") ? '*' :
               streq(verdict, "truechimer") ? '+' :
               streq(verdict, "falseticker") ? 'x' :
               streq(verdict, "undecided") ? '?' :
               streq(verdict, "duplicate") ? '=' :
               streq(verdict, "unused") ? ' ' : '-';
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

static void print_table(const SourceInfo *sources, size_t n) {
        usec_t t = now(CLOCK_REALTIME);
        bool nts = false;
        char ago[16], poll[16], offset[32], rd[32], stratum[8];

        if (n == 0) {
                printf("No time sources.\n");
                return;
        }

        printf("S %-28s %-24s %-12s %2s %6s %5s %14s %12s\n", "Name", "Address", "State", "St", "Poll", "Last",
               "Offset", "Root dist.");
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
                printf("%c %-28s %-24s %-12s %2s %6s %5s %14s %12s\n", verdict_mark(source_string(s, "Verdict")),
                       source_string(s, "Name"), isempty(address) ? "-" : address, source_string(s, "State"), stratum,
                       format_seconds(source_unsigned(s, "PollIntervalUSec") / USEC_PER_SEC, poll),
                       format_ago(source_unsigned(s, "LastSampleTimestamp"), t, ago), offset, rd);
                nts = nts || source_integer(s, "NTS");
        }
        printf("S: * selected, + agrees, x falseticker, ? undecided (no majority), = duplicate, "
               "- not usable now\n");

        if (!nts)
                return;
        printf("\n%-28s %-28s %-22s %7s %8s %7s  %s\n", "NTS source", "Key exchange", "AEAD", "Cookies", "KE fails",
               "Last KE", "Last error");
        for (size_t i = 0; i < n; i++) {
                const SourceInfo *s = &sources[i];

                if (!source_integer(s, "NTS"))
                        continue;
                printf("%-28s %-28s %-22s %7" PRIu64 " %8" PRIu64 " %7s  %s\n", source_string(s, "Name"),
                       source_string(s, "KeyExchangeServer"),
                       isempty(source_string(s, "AEAD")) ? "-" : source_string(s, "AEAD"),
                       source_unsigned(s, "Cookies"), source_unsigned(s, "KeyExchangeFailures"),
                       format_ago(source_unsigned(s, "LastKeyExchangeTimestamp"), t, ago),
                       source_string(s, "LastError"));
        }
}

/* ---- main ---- */

static void help(void) {
        printf("%s [OPTIONS...]\n\n"
               "Show the time sources of systemd-timesyncd: which servers it uses, which of them\n"
               "agree, and their NTS state (D-Bus property Sources of org.freedesktop.timesync1).\n\n"
               "  -h --help     Show this help\n"
               "     --json     Print the sources as a JSON array, keys as on D-Bus\n",
               program_invocation_short_name);
}

static int parse_argv(int argc, char *argv[]) {
        enum { ARG_JSON = 0x100 };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "json", no_argument, NULL, ARG_JSON },
                {}
        };
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_JSON:
                        arg_json = true;
                        break;
                default:
                        return -EINVAL;
                }
        if (optind < argc)
                return log_error_errno(EINVAL, "%s takes no arguments.", program_invocation_short_name);
        return 1;
}

int main(int argc, char *argv[]) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        SourceInfo *sources = NULL;
        size_t n = 0;
        int r;

        log_parse_environment();
        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? 2 : 0;

        r = sd_bus_open_system(&bus);
        if (r < 0) {
                log_error_errno(r, "Failed to connect to the system bus: %m");
                return 1;
        }
        r = sd_bus_get_property(bus, "org.freedesktop.timesync1", "/org/freedesktop/timesync1",
                                "org.freedesktop.timesync1.Manager", "Sources", &error, &reply, "aa{sv}");
        if (r < 0) {
                log_error("Failed to read the time sources of systemd-timesyncd: %s",
                          error.message ?: strerror(-r));
                return 1;
        }
        r = read_sources(reply, &sources, &n);
        if (r < 0) {
                log_error_errno(r, "Failed to read the Sources property: %m");
                return 1;
        }

        if (arg_json)
                print_json(sources, n);
        else
                print_table(sources, n);

        for (size_t i = 0; i < n; i++)
                source_info_done(&sources[i]);
        free(sources);
        return 0;
}
