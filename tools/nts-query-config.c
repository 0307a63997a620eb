/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* nts-query --config: every NTS server of the daemon's configuration, read by the daemon's own
 * reader, checked with the trust the daemon would use (NTSTrustedCertificates=). */

#include <stdio.h>

#include "log.h"
#include "nts-query.h"
#include "server-name.h"
#include "string-util.h"
#include "strv.h"
#include "timesyncd-conf.h"

typedef struct ConfigEntry {
        const char *name;               /* as written in NTS= */
        ServerNameKind kind;
        char *host;
        uint16_t port;
        Query query;                    /* a server, or a key-exchange pool's server */
        QueryOptions srv_opts;          /* the run's, as for srv:NAME on the command line */
        Sources srv;                    /* srv:NAME */
        QueryExit exit;
        const char *failure;
} ConfigEntry;

typedef struct ConfigRun {
        QueryOptions opts;              /* the command line's, trusting what the configuration says */
        TimesyncConfig config;
        const char *list;               /* the setting whose servers are checked: "NTS=" or "FallbackNTS=" */
        const char *ca;                 /* what is trusted: a path, NULL for the system's store */
        ConfigEntry *entries;
        size_t n_entries;
        QueryExit exit;
        char failure[512];
        bool failure_logged;            /* by the configuration reader already */
} ConfigRun;

static void config_run_done(ConfigRun *R) {
        for (size_t i = 0; i < R->n_entries; i++) {
                query_done(&R->entries[i].query);
                sources_done(&R->entries[i].srv);
                free(R->entries[i].host);
        }
        free(R->entries);
        timesync_config_done(&R->config);
}

#define config_fail FAIL_WITH

static void config_entry_run(ConfigRun *R, ConfigEntry *e) {
        if (e->kind == SERVER_NAME_SRV) {
                /* Checked as srv:NAME on the command line is. */
                e->srv_opts = R->opts;
                e->srv_opts.srv = true;
                e->srv_opts.host = e->host;
                e->srv.opts = &e->srv_opts;
                e->exit = sources_run_srv(&e->srv);
                e->failure = e->srv.failure;
                return;
        }
        /* A key-exchange pool: its server is checked with one key exchange, as a server. */
        e->query = (Query) { .opts = &R->opts, .host = e->host, .port = e->port > 0 ? e->port : NTS_KE_PORT };
        e->exit = query_run(&e->query);
        e->failure = e->query.failure;
}

/* The daemon's reader, the daemon's trust: NTSTrustedCertificates= as a file or a directory,
 * a refused value refuses every key exchange (as the daemon does), unless --ca= was given. The
 * daemon's list: NTS=, or FallbackNTS= where the configuration alone makes the daemon use it. */
static QueryExit config_run(ConfigRun *R) {
        char **servers;
        size_t n;
        int r;

        r = timesync_config_read(&R->config, R->opts.config_file, 0);
        if (r == -ENOENT && R->opts.config_file) {
                /* The reader said so. */
                R->failure_logged = true;
                return config_fail(R, QUERY_EXIT_USAGE, "Configuration file '%s' does not exist", R->opts.config_file);
        }
        /* Other errors were logged by the reader, which goes on with what it got, as the daemon does. */

        R->list = "NTS=";
        servers = R->config.nts_servers;
        if (timesync_config_uses_fallback_nts(&R->config)) {
                R->list = "FallbackNTS=";
                servers = R->config.fallback_nts_servers;
        }

        if (R->opts.ca_given)
                R->ca = R->opts.ca_file ?: R->opts.ca_dir;
        else if (R->config.nts_trusted_certificates_invalid)
                return config_fail(R, QUERY_EXIT_TLS, "NTSTrustedCertificates= has no valid value: the daemon "
                                   "refuses every key exchange rather than trust the system's store");
        else if (R->config.nts_trusted_certificates) {
                R->ca = R->config.nts_trusted_certificates;
                r = query_options_set_ca(&R->opts, R->ca);
                if (r < 0)
                        return config_fail(R, QUERY_EXIT_TLS, "NTSTrustedCertificates=%s does not exist", R->ca);
        }

        n = strv_length(servers);
        if (n == 0)
                return config_fail(R, QUERY_EXIT_OTHER, "The configuration names no NTS server (NTS= is empty): %s",
                                   R->config.nts_required ?
                                   "NTSRequired=yes, so the daemon takes no time at all" :
                                   R->config.nts_set ?
                                   "it names no valid server, so the daemon takes no time at all" :
                                   R->config.ntp_servers ?
                                   "the daemon takes unauthenticated time from NTP=" :
                                   "the daemon takes unauthenticated time from FallbackNTP= (FallbackNTS= is empty)");
        R->entries = new0(ConfigEntry, n);
        if (!R->entries)
                return config_fail(R, QUERY_EXIT_OTHER, "Out of memory");

        for (size_t i = 0; i < n; i++) {
                ConfigEntry *e = &R->entries[i];

                e->name = servers[i];
                R->n_entries++;
                /* The reader keeps valid names only. */
                r = server_name_parse_nts(e->name, &e->kind, &e->host, &e->port);
                if (r < 0) {
                        e->exit = QUERY_EXIT_OTHER;
                        e->failure = "not a valid NTS server name";
                        continue;
                }
                config_entry_run(R, e);
        }

        R->exit = QUERY_EXIT_VERIFIED;
        for (size_t i = 0; i < R->n_entries; i++)
                if (R->entries[i].exit != QUERY_EXIT_VERIFIED)
                        return config_fail(R, R->entries[i].exit, "NTS server %zu (%s): %s", i + 1,
                                           R->entries[i].name, R->entries[i].failure);
        return R->exit;
}

static size_t config_verified(const ConfigRun *R) {
        size_t n = 0;

        for (size_t i = 0; i < R->n_entries; i++)
                n += R->entries[i].exit == QUERY_EXIT_VERIFIED;
        return n;
}

static const char *server_kind_string(ServerNameKind k) {
        return k == SERVER_NAME_SRV ? "srv" : k == SERVER_NAME_KE_POOL ? "pool" : "server";
}

static void config_print(const ConfigRun *R) {
        printf("Configuration:      %s\n", R->opts.config_file ?: "timesyncd.conf and its drop-ins");
        printf("Trusted CAs:        %s%s%s\n", R->ca ?: "the system's store",
               R->opts.ca_given ? " (--ca=)" : R->ca ? " (NTSTrustedCertificates=)" : "",
               R->opts.ca_given && R->config.nts_trusted_certificates ? ", not NTSTrustedCertificates=" : "");
        printf("NTS servers:        %zu%s\n", R->n_entries,
               streq_ptr(R->list, "FallbackNTS=") ?
               " of FallbackNTS= (no NTS= or NTP=: used unless the network names NTP servers)" : "");

        for (size_t i = 0; i < R->n_entries; i++) {
                ConfigEntry *e = &R->entries[i];

                printf("\n=== NTS server %zu of %zu: %s ===\n", i + 1, R->n_entries, e->name);
                if (e->kind == SERVER_NAME_SRV && e->host) {
                        sources_print(&e->srv);
                } else {
                        if (e->kind == SERVER_NAME_KE_POOL)
                                printf("Key-exchange pool:  one key exchange with its server\n");
                        query_print(&e->query);
                }
                if (e->exit != QUERY_EXIT_VERIFIED)
                        printf("Failed:             %s\n", e->failure);
        }

        printf("\n");
        if (R->n_entries > 0)
                printf("Servers:            %zu of %zu verified\n", config_verified(R), R->n_entries);
}

static void config_print_json(const ConfigRun *R) {
        JsonWriter w = JSON_WRITER_INIT(stdout);

        json_begin_object(&w, NULL);
        json_write_string(&w, "mode", "config");
        json_write_string(&w, "config", R->opts.config_file);
        json_write_string(&w, "trusted_certificates", R->ca);
        json_write_string(&w, "list", R->list);
        json_write_integer(&w, "exit_code", R->exit);
        json_write_string(&w, "status", query_exit_to_string(R->exit));
        json_write_string(&w, "error", R->exit == QUERY_EXIT_VERIFIED ? NULL : R->failure);
        json_write_integer(&w, "verified", (int64_t) config_verified(R));
        json_begin_array(&w, "servers");
        for (size_t i = 0; i < R->n_entries; i++) {
                ConfigEntry *e = &R->entries[i];

                json_begin_object(&w, NULL);
                json_write_string(&w, "name", e->name);
                json_write_string(&w, "kind", server_kind_string(e->kind));
                json_write_integer(&w, "exit_code", e->exit);
                json_write_string(&w, "status", query_exit_to_string(e->exit));
                json_write_string(&w, "error", e->exit == QUERY_EXIT_VERIFIED ? NULL : e->failure);
                json_begin_array(&w, "sources");
                if (e->kind == SERVER_NAME_SRV) {
                        for (size_t k = 0; k < e->srv.n_queries; k++)
                                query_json(&w, NULL, e->srv.queries[k]);
                } else if (e->host)
                        query_json(&w, NULL, &e->query);
                json_end_array(&w);
                json_end_object(&w);
        }
        json_end_array(&w);
        json_end_object(&w);
}

/* nts-query --config[=FILE]: returns the exit status. */
int config_main(const QueryOptions *o) {
        ConfigRun R = { .opts = *o };
        int r;

        (void) config_run(&R);
        if (o->json)
                config_print_json(&R);
        else if (!R.failure_logged)
                config_print(&R);
        fflush(stdout);
        if (R.exit != QUERY_EXIT_VERIFIED && !R.failure_logged)
                log_error("%s", R.failure);
        r = R.exit;
        config_run_done(&R);
        return r;
}
