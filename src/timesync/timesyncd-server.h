/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Server names as configured, grouped by where they came from, and the addresses each name
 * resolved to. The manager walks names in precedence order and each name's addresses in turn. */

#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>

#include "list.h"
#include "timesyncd-refusals.h"

typedef struct Manager Manager;
typedef struct NTSState NTSState;
typedef struct ServerName ServerName;
typedef struct ServerAddress ServerAddress;

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

union sockaddr_union {
        struct sockaddr sa;
        struct sockaddr_in in;
        struct sockaddr_in6 in6;
        struct sockaddr_storage storage;
};

struct ServerAddress {
        ServerName *name;
        union sockaddr_union sockaddr;
        socklen_t socklen;
        LIST_FIELDS(ServerAddress, addresses);
};

struct ServerName {
        Manager *manager;
        ServerType type;
        char *string;           /* as configured, e.g. "ntp.example.org:1234" */
        char *host;             /* name or address literal, without brackets */
        uint16_t port;          /* 0: the protocol's default */
        bool marked;            /* set while a list is rebuilt: names still marked go away */
        bool refused;           /* the server sent DENY or RSTR: skipped until configured anew */
        NTSState *nts;          /* NTS servers only: keys, cookies, key exchange */
        ServerAddress *addresses;       /* NTP addresses (for NTS: of the negotiated server) */
        Refusals refusals;              /* its replies that were refused, by cause */
        LIST_FIELDS(ServerName, names);
};

/* Appends a new name to the list of its type. string must be valid (checked by the config
 * layer); returns -EINVAL otherwise. */
int server_name_new(Manager *m, ServerName **ret, ServerType type, const char *string);
ServerName *server_name_free(ServerName *n);
void server_name_flush_addresses(ServerName *n);
/* "host" or "host:port" as a user wrote it. */
const char *server_name_string(const ServerName *n);

int server_address_new(ServerName *n, ServerAddress **ret, const struct sockaddr *sa, socklen_t len);
ServerAddress *server_address_free(ServerAddress *a);
/* "192.0.2.1:123" or "[2001:db8::1]:123" */
char *server_address_pretty(const ServerAddress *a, char *buf, size_t size);

const char *server_type_to_string(ServerType t);
static inline bool server_type_is_nts(ServerType t) {
        return t == SERVER_NTS || t == SERVER_NTS_RUNTIME;
}

/* The list head a type lives on. */
ServerName **manager_server_list(Manager *m, ServerType t);
