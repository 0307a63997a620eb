/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Server names as configured, in lists by where they came from, and the choice of the next
 * one to use: stock timesyncd's precedence (runtime, system, link; the fallback list only when
 * none of those exists), or with NTS only the NTS lists. Each name keeps its time source
 * (timesyncd-source) once it was used, so that its NTS keys, its backoff and a refusal
 * outlive the moments it is not selected. */

#include <stdbool.h>
#include <stdint.h>

#include "list.h"
#include "server-name.h"
#include "timesyncd-pool.h"
#include "timesyncd-source.h"
typedef struct ServerName ServerName;

typedef enum ServerType {
        SERVER_SYSTEM,          /* NTP= */
        SERVER_FALLBACK,        /* FallbackNTP= or the compiled-in list */
        SERVER_LINK,            /* per-link, from systemd-networkd */
        SERVER_RUNTIME,         /* SetRuntimeNTPServers() over D-Bus */
        SERVER_NTS,             /* NTS=: NTS-KE servers */
        SERVER_NTS_RUNTIME,     /* SetRuntimeNTSServers() over D-Bus */
        _SERVER_TYPE_MAX,
        _SERVER_TYPE_INVALID = -EINVAL,
} ServerType;

struct ServerName {
        ServerType type;
        char *string;           /* as configured, e.g. "ntp.example.org:1234", "srv:example.org" */
        ServerNameKind kind;    /* one server, or a pool (NTS lists only) */
        char *host;             /* name or address literal, without brackets; of a pool: its name */
        uint16_t port;          /* 0: the protocol's default */
        Source *source;         /* once the name was selected (owned); one server only */
        Pool *pool;             /* a pool's sources, once it was used (owned) */
        LIST_FIELDS(ServerName, names);
};

/* Appends a new name to *list. string must be valid (checked by the config layer); returns
 * -EINVAL otherwise. */
int server_name_new(ServerName **list, ServerType type, const char *string, ServerName **ret);
/* Frees every name of *list, and their sources and pools. */
void server_list_flush(ServerName **list);
/* Not refused by its server, and not backing off after failed NTS key exchanges. */
bool server_name_usable(const ServerName *n);
/* n's source, made when it is first used and kept with the name (logged on failure). */
int server_name_source(ServerName *n, const SourceSettings *settings, source_handler_t handler, void *userdata);
/* The same for a pool entry (pool:, srv:) and its Pool. */
int server_name_pool(ServerName *n, const PoolSettings *settings, source_handler_t source_handler,
                     pool_handler_t pool_handler, void *userdata);
/* The name of lists whose source, or whose pool's source, s is; NULL when none. */
ServerName *server_lists_find_source(ServerName *const lists[static _SERVER_TYPE_MAX], const Source *s);

/* The usable name to try after current (NULL: start from the first), in precedence order;
 * with nts, among the NTS lists only (there is no downgrade to plain NTP). *ret_wrapped is set
 * when the walk starts over, that is when every server was tried once. NULL when none is
 * usable. */
ServerName *server_next(ServerName *const lists[static _SERVER_TYPE_MAX], const ServerName *current, bool nts,
                        bool *ret_wrapped);

const char *server_type_to_string(ServerType t);
static inline bool server_type_is_nts(ServerType t) {
        return t == SERVER_NTS || t == SERVER_NTS_RUNTIME;
}
