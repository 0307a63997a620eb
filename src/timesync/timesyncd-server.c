/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "log.h"
#include "server-name.h"
#include "timesyncd-pool.h"
#include "timesyncd-server.h"
#include "timesyncd-source.h"

static const char *const server_type_table[_SERVER_TYPE_MAX] = {
        [SERVER_SYSTEM] = "system",
        [SERVER_FALLBACK] = "fallback",
        [SERVER_LINK] = "link",
        [SERVER_RUNTIME] = "runtime",
        [SERVER_NTS] = "nts",
        [SERVER_NTS_RUNTIME] = "nts-runtime",
};

const char *server_type_to_string(ServerType t) {
        if (t < 0 || t >= _SERVER_TYPE_MAX)
                return NULL;
        return server_type_table[t];
}

int server_name_new(ServerName **list, ServerType type, const char *string, ServerName **ret) {
        _cleanup_free_ char *host = NULL;
        ServerNameKind kind = SERVER_NAME_ONE;
        ServerName *n;
        uint16_t port;
        int r;

        assert(list);
        assert(string);
        assert(type >= 0 && type < _SERVER_TYPE_MAX);

        r = server_type_is_nts(type) ? server_name_parse_nts(string, &kind, &host, &port)
                                     : server_name_parse(string, &host, &port);
        if (r < 0)
                return r;

        n = new0(ServerName, 1);
        if (!n)
                return -ENOMEM;

        n->type = type;
        n->kind = kind;
        n->port = port;
        n->host = TAKE_PTR(host);
        n->string = strdup(string);
        if (!n->string) {
                free(n->host);
                free(n);
                return -ENOMEM;
        }

        LIST_APPEND(names, *list, n);

        if (ret)
                *ret = n;
        return 0;
}

static ServerName *server_name_free(ServerName *n) {
        if (!n)
                return NULL;

        source_free(n->source);
        pool_free(n->pool);
        free(n->string);
        free(n->host);
        return mfree(n);
}

void server_list_flush(ServerName **list) {
        assert(list);

        while (*list) {
                ServerName *n = *list;

                LIST_REMOVE(names, *list, n);
                server_name_free(n);
        }
}

bool server_name_usable(const ServerName *n) {
        return !n->source || source_usable(n->source);
}

int server_name_source(ServerName *n, const SourceSettings *settings, source_handler_t handler, void *userdata) {
        int r;

        assert(n);

        if (n->source)
                return 0;

        r = source_new(settings, n->string, n->host, n->port, server_type_is_nts(n->type), handler, userdata,
                       &n->source);
        if (r < 0)
                return log_error_errno(r, "Failed to set up server %s: %m", n->string);
        return 0;
}

int server_name_pool(ServerName *n, const PoolSettings *settings, source_handler_t source_handler,
                     pool_handler_t pool_handler, void *userdata) {
        int r;

        assert(n);
        assert(n->kind != SERVER_NAME_ONE);

        if (n->pool)
                return 0;

        r = pool_new(settings, n->kind, n->string, n->host, n->port, source_handler, userdata, pool_handler,
                     userdata, &n->pool);
        if (r < 0)
                return log_error_errno(r, "Failed to set up pool %s: %m", n->string);
        return 0;
}

ServerName *server_lists_find_source(ServerName *const lists[static _SERVER_TYPE_MAX], const Source *s) {
        for (ServerType t = 0; t < _SERVER_TYPE_MAX; t++)
                LIST_FOREACH(names, n, lists[t])
                        if (n->source == s || (n->pool && pool_has_source(n->pool, s)))
                                return n;
        return NULL;
}

static ServerName *first_usable(ServerName *n) {
        for (; n; n = n->names_next)
                if (server_name_usable(n))
                        return n;
        return NULL;
}

/* Stock timesyncd's precedence: runtime, then system, then link servers, round and round; the
 * fallback list only when none of those exists. */
ServerName *server_next(ServerName *const lists[static _SERVER_TYPE_MAX], const ServerName *current, bool nts,
                        bool *ret_wrapped) {
        static const ServerType ntp_order[] = { SERVER_RUNTIME, SERVER_SYSTEM, SERVER_LINK };
        static const ServerType nts_order[] = { SERVER_NTS_RUNTIME, SERVER_NTS };
        const ServerType *order = nts ? nts_order : ntp_order;
        size_t n_order = nts ? ELEMENTSOF(nts_order) : ELEMENTSOF(ntp_order);
        ServerName *n;
        size_t start = 0;

        assert(ret_wrapped);

        *ret_wrapped = false;

        if (!nts && !lists[SERVER_RUNTIME] && !lists[SERVER_SYSTEM] && !lists[SERVER_LINK]) {
                n = current ? first_usable(current->names_next) : NULL;
                if (n)
                        return n;
                *ret_wrapped = current;
                return first_usable(lists[SERVER_FALLBACK]);
        }

        if (current && current->type != SERVER_FALLBACK) {
                n = first_usable(current->names_next);
                if (n)
                        return n;
                for (size_t i = 0; i < n_order; i++)
                        if (order[i] == current->type)
                                start = i + 1;
        }

        for (size_t i = start; i < n_order; i++) {
                n = first_usable(lists[order[i]]);
                if (n)
                        return n;
        }

        *ret_wrapped = current;
        for (size_t i = 0; i < n_order; i++) {
                n = first_usable(lists[order[i]]);
                if (n)
                        return n;
        }
        return NULL;
}
