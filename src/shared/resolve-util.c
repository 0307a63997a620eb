/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <systemd/sd-bus.h>

#include "in-addr-util.h"
#include "log.h"
#include "resolve-util.h"
#include "string-util.h"
#include "time-util.h"

/* resolved gives up on a query itself well before this; it only guards against a hung bus. */
#define RESOLVED_CALL_TIMEOUT_USEC (30 * USEC_PER_SEC)

/* Shared between the event loop and the resolver thread; the last of the two to let go
 * frees it. */
typedef struct ResolveJob {
        unsigned n_ref;
        char *host, *service;
        struct addrinfo hints;
        int eai;
        int eai_errno;          /* errno of the thread, for EAI_SYSTEM */
        struct addrinfo *result;
        int notify_fd;          /* the thread's end of the socket pair */
} ResolveJob;

struct ResolveQuery {
        sd_event *event;
        char *host;
        uint16_t port;          /* from the numeric service; 0 without one */
        int family, socktype;
        int asked;              /* the family of the ResolveHostname call in flight */

        /* Through systemd-resolved: a connection of the query's own, so that a lookup
         * depends on neither the daemon's bus connection nor the order they come up in. */
        sd_bus *bus;
        sd_bus_slot *slot;

        /* Through getaddrinfo() in a thread. */
        char *service;
        ResolveJob *job;
        int fd;                 /* the loop's end */
        sd_event_source *source;

        resolve_handler_t handler;
        void *userdata;
};

static void job_unref(ResolveJob *j) {
        if (!j || __atomic_sub_fetch(&j->n_ref, 1, __ATOMIC_ACQ_REL) > 0)
                return;
        if (j->result)
                freeaddrinfo(j->result);
        safe_close(j->notify_fd);
        free(j->host);
        free(j->service);
        free(j);
}

static void *resolve_thread(void *p) {
        ResolveJob *j = p;
        char c = 0;

        j->eai = getaddrinfo(j->host, j->service, &j->hints, &j->result);
        j->eai_errno = errno;
        /* If the query was cancelled the other end is closed: MSG_NOSIGNAL turns that into
         * a harmless EPIPE. */
        (void) send(j->notify_fd, &c, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        job_unref(j);
        return NULL;
}

static int eai_to_errno(int eai, int eai_errno) {
        switch (eai) {
        case 0:
                return 0;
        case EAI_NONAME:
        case EAI_NODATA:
        case EAI_ADDRFAMILY:
                return -ENOENT;
        case EAI_AGAIN:
                return -EAGAIN;
        case EAI_MEMORY:
                return -ENOMEM;
        case EAI_SYSTEM:
                return eai_errno > 0 ? -eai_errno : -EIO;
        default:
                return -EIO;
        }
}

const char *resolve_error_string(int error) {
        switch (error) {
        case -ENOENT:
                return "no such host name";
        case -EAGAIN:
                return "temporary failure in name resolution";
        case -EBADMSG:
                return "DNSSEC validation failed";
        default:
                return strerror(-error);
        }
}

static int on_resolved(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        ResolveQuery *q = userdata;
        ResolveJob *j = q->job;
        resolve_handler_t handler = q->handler;
        void *handler_data = q->userdata;
        struct addrinfo *ai;
        int error;

        /* The thread has finished writing j before it sent the byte. */
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        q->source = sd_event_source_disable_unref(q->source);

        /* Take the answer out of the job: the handler may free q, and with it the job. */
        ai = TAKE_PTR(j->result);
        error = eai_to_errno(j->eai, j->eai_errno);

        handler(q, error, error == 0 ? ai : NULL, handler_data);

        if (ai)
                freeaddrinfo(ai);
        return 0;
}

/* Starts getaddrinfo() in a thread; its answer arrives through on_resolved(). */
static int query_start_thread(ResolveQuery *q) {
        ResolveJob *j;
        pthread_attr_t attr;
        pthread_t thread;
        int pair[2], r;

        j = new0(ResolveJob, 1);
        if (!j)
                return -ENOMEM;
        j->n_ref = 1;
        j->notify_fd = -EBADF;
        j->host = strdup(q->host);
        j->service = q->service ? strdup(q->service) : NULL;
        if (!j->host || (q->service && !j->service)) {
                job_unref(j);
                return -ENOMEM;
        }
        j->hints = (struct addrinfo) {
                .ai_family = q->family,
                .ai_socktype = q->socktype,
                .ai_flags = AI_ADDRCONFIG,
        };

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, pair) < 0) {
                r = -errno;
                job_unref(j);
                return r;
        }
        q->fd = pair[0];
        j->notify_fd = pair[1];
        q->job = j;

        r = sd_event_add_io(q->event, &q->source, q->fd, EPOLLIN, on_resolved, q);
        if (r < 0)
                goto fail;

        r = -pthread_attr_init(&attr);
        if (r < 0)
                goto fail;
        (void) pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        /* getaddrinfo() needs little stack; keep thread creation cheap. */
        (void) pthread_attr_setstacksize(&attr, 256 * 1024);

        __atomic_add_fetch(&j->n_ref, 1, __ATOMIC_ACQ_REL);
        r = -pthread_create(&thread, &attr, resolve_thread, j);
        pthread_attr_destroy(&attr);
        if (r < 0) {
                __atomic_sub_fetch(&j->n_ref, 1, __ATOMIC_ACQ_REL);
                goto fail;
        }
        return 0;

fail:
        q->source = sd_event_source_disable_unref(q->source);
        q->fd = safe_close(q->fd);
        q->job = NULL;
        job_unref(j);
        return r;
}

/* The addresses of ResolveHostname as an addrinfo list of our own: each node and its socket
 * address in one allocation, freed by addrinfo_list_free(), never by freeaddrinfo(). */
typedef struct AddrinfoNode {
        struct addrinfo ai;
        union {
                struct sockaddr_in in;
                struct sockaddr_in6 in6;
        } sa;
} AddrinfoNode;

static void addrinfo_list_free(struct addrinfo *ai) {
        while (ai) {
                struct addrinfo *next = ai->ai_next;

                free(ai); /* the AddrinfoNode it is the first member of */
                ai = next;
        }
}

static int addrinfo_append(ResolveQuery *q, struct addrinfo ***tail, int32_t ifindex, int family,
                           const void *addr) {
        AddrinfoNode *n;

        n = new0(AddrinfoNode, 1);
        if (!n)
                return -ENOMEM;
        n->ai = (struct addrinfo) {
                .ai_family = family,
                .ai_socktype = q->socktype,
                /* What getaddrinfo() fills in for these socket types. */
                .ai_protocol = q->socktype == SOCK_STREAM ? IPPROTO_TCP :
                               q->socktype == SOCK_DGRAM ? IPPROTO_UDP : 0,
                .ai_addr = (struct sockaddr *) &n->sa,
        };
        if (family == AF_INET) {
                n->sa.in = (struct sockaddr_in) { .sin_family = AF_INET, .sin_port = htons(q->port) };
                memcpy(&n->sa.in.sin_addr, addr, sizeof n->sa.in.sin_addr);
                n->ai.ai_addrlen = sizeof n->sa.in;
        } else {
                n->sa.in6 = (struct sockaddr_in6) { .sin6_family = AF_INET6, .sin6_port = htons(q->port) };
                memcpy(&n->sa.in6.sin6_addr, addr, sizeof n->sa.in6.sin6_addr);
                /* A link-local address means nothing without its interface. */
                if (IN6_IS_ADDR_LINKLOCAL(&n->sa.in6.sin6_addr) && ifindex > 0)
                        n->sa.in6.sin6_scope_id = (uint32_t) ifindex;
                n->ai.ai_addrlen = sizeof n->sa.in6;
        }
        **tail = &n->ai;
        *tail = &n->ai.ai_next;
        return 0;
}

/* a(iiay) of ResolveHostname into an addrinfo list; addresses of a family we did not ask for
 * or of the wrong size (bad input from the bus) are skipped. */
static int read_addresses(ResolveQuery *q, sd_bus_message *reply, struct addrinfo **ret) {
        struct addrinfo *list = NULL, **tail = &list;
        int r;

        r = sd_bus_message_enter_container(reply, 'a', "(iiay)");
        if (r < 0)
                goto fail;
        for (;;) {
                int32_t ifindex, family;
                const void *addr;
                size_t size;

                r = sd_bus_message_enter_container(reply, 'r', "iiay");
                if (r < 0)
                        goto fail;
                if (r == 0)
                        break;
                r = sd_bus_message_read(reply, "ii", &ifindex, &family);
                if (r >= 0)
                        r = sd_bus_message_read_array(reply, 'y', &addr, &size);
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
                if (r < 0)
                        goto fail;
                if (!address_family_is_ip(family) || size != family_address_size(family) ||
                    (q->family != AF_UNSPEC && q->family != family))
                        continue;
                log_debug("Resolved address %s for %s.",
                          IN_ADDR_TO_STRING(family, (const union in_addr_union *) addr), q->host);
                r = addrinfo_append(q, &tail, ifindex, family, addr);
                if (r < 0)
                        goto fail;
        }
        r = sd_bus_message_exit_container(reply);
        if (r < 0)
                goto fail;

        *ret = list;
        return 0;

fail:
        addrinfo_list_free(list);
        return r;
}

/* resolved's own errors (no such name, DNSSEC failed, its DNS server refused) come from its
 * unique name; the bus driver's come from org.freedesktop.DBus. In the qemu guest, with
 * systemd-resolved masked, the call bus-activates the unit behind dbus-org.freedesktop.resolve1
 * and the driver passes systemd's failure on ("Unit dbus-org.freedesktop.resolve1.service failed
 * to load properly ...: File exists"): no name of the three, and resolved is as absent as when
 * it is not installed. */
bool resolved_reply_means_absent(sd_bus_message *reply) {
        const sd_bus_error *e = sd_bus_message_get_error(reply);

        if (!e)
                return false;
        return sd_bus_error_has_names(e,
                                      SD_BUS_ERROR_SERVICE_UNKNOWN,
                                      SD_BUS_ERROR_NAME_HAS_NO_OWNER,
                                      SD_BUS_ERROR_DISCONNECTED) ||
                streq_ptr(sd_bus_message_get_sender(reply), "org.freedesktop.DBus");
}

/* resolved's answer is the answer: a name it does not know is not asked again elsewhere, and
 * a failed DNSSEC validation is not worked around. */
static int resolved_error_to_errno(const sd_bus_error *e) {
        if (sd_bus_error_has_names(e, "org.freedesktop.resolve1.DnsError.NXDOMAIN",
                                   "org.freedesktop.resolve1.NoSuchRR"))
                return -ENOENT;
        if (sd_bus_error_has_name(e, "org.freedesktop.resolve1.DnssecFailed"))
                return -EBADMSG;
        return -EAGAIN;
}

int resolved_hostname_probe(int family, int asked, bool no_such_rr, bool validate) {
        if (!validate || !no_such_rr || family != AF_UNSPEC)
                return AF_UNSPEC;
        switch (asked) {
        case AF_UNSPEC:
                return AF_INET;
        case AF_INET:
                return AF_INET6;
        default:
                return AF_UNSPEC;
        }
}

static void query_close_bus(ResolveQuery *q) {
        q->slot = sd_bus_slot_unref(q->slot);
        q->bus = sd_bus_close_unref(q->bus);
}

/* SYSTEMD_NSS_RESOLVE_VALIDATE=0 asks nss-resolve, the getaddrinfo() path through resolved, not
 * to validate; the unit sets it because DNSSEC signatures can only be checked with a correct
 * clock, which is what the daemon is there to get. The same variable means the same here.
 * Host names need no DNSSEC: the key exchange checks the certificate against the name. */
static uint64_t resolved_flags(void) {
        const char *v = getenv("SYSTEMD_NSS_RESOLVE_VALIDATE");

        return v && parse_boolean(v) == 0 ? RESOLVED_FLAG_NO_VALIDATE : 0;
}

static int query_send_resolved(ResolveQuery *q, int family);

static int on_resolve_hostname(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        ResolveQuery *q = userdata;
        resolve_handler_t handler = q->handler;
        void *handler_data = q->userdata;
        struct addrinfo *ai = NULL;
        const sd_bus_error *e;
        int r, next;

        e = sd_bus_message_get_error(reply);
        if (resolved_reply_means_absent(reply)) {
                log_debug("Failed to connect to systemd-resolved, using getaddrinfo: %s", e->message ?: e->name);
                /* One connection less while the thread runs: it may be the last descriptor. */
                query_close_bus(q);
                r = query_start_thread(q);
                if (r < 0)
                        handler(q, r, NULL, handler_data);
                return 0;
        }

        if (e) {
                r = resolved_error_to_errno(e);
                log_debug("systemd-resolved failed to resolve %s: %s", q->host, e->message ?: e->name);
        } else {
                r = read_addresses(q, reply, &ai);
                if (r < 0)
                        log_debug_errno(r, "systemd-resolved's answer for %s is malformed: %m", q->host);
                else if (!ai)
                        r = -ENOENT;
        }

        /* No address at all may be a failed validation in disguise: ask for one family at a
         * time why. */
        next = resolved_hostname_probe(q->family, q->asked,
                                       e ? sd_bus_error_has_name(e, "org.freedesktop.resolve1.NoSuchRR") : r == -ENOENT,
                                       resolved_flags() == 0);
        if (next != AF_UNSPEC) {
                q->slot = sd_bus_slot_unref(q->slot);
                if (query_send_resolved(q, next) >= 0)
                        return 0;
        }
        query_close_bus(q);

        handler(q, r, r >= 0 ? ai : NULL, handler_data);
        addrinfo_list_free(ai);
        return 0;
}

/* Sends ResolveHostname for family on the query's connection. */
static int query_send_resolved(ResolveQuery *q, int family) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(q->bus, &m, "org.freedesktop.resolve1", "/org/freedesktop/resolve1",
                                           "org.freedesktop.resolve1.Manager", "ResolveHostname");
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "isit", 0, q->host, family, resolved_flags());
        if (r < 0)
                return r;
        r = sd_bus_call_async(q->bus, &q->slot, m, on_resolve_hostname, q, RESOLVED_CALL_TIMEOUT_USEC);
        if (r < 0)
                return r;
        q->asked = family;
        return 0;
}

/* Sends ResolveHostname on a connection of the query's own. Fails at once when there is no
 * system bus; resolved missing on the bus shows in the reply. */
static int query_start_resolved(ResolveQuery *q) {
        int r;

        r = sd_bus_open_system(&q->bus);
        if (r < 0)
                return r;
        r = sd_bus_attach_event(q->bus, q->event, 0);
        if (r >= 0)
                r = query_send_resolved(q, q->family);
        if (r < 0)
                query_close_bus(q);
        return r;
}

/* Names that need no DNS keep to getaddrinfo(): numeric addresses, which it parses with
 * everything they may carry (scope ids, short IPv4 forms), and "localhost", for which
 * resolved 252 gave only 127.0.0.1 where /etc/hosts also has ::1. A service name (not a
 * number) is something only getaddrinfo() knows. */
static bool want_resolved(const char *host, const char *service) {
        struct addrinfo hints = { .ai_flags = AI_NUMERICHOST }, *ai = NULL;
        const char *h;

        if (getaddrinfo(host, NULL, &hints, &ai) == 0) {
                freeaddrinfo(ai);
                return false;
        }
        h = endswith(host, "localhost") ?: endswith(host, "localhost.");
        if (h && (h == host || h[-1] == '.'))
                return false;
        if (service && (isempty(service) || service[strspn(service, "0123456789")] != '\0'))
                return false;
        return true;
}

int resolve_query_new(sd_event *e, const char *host, const char *service, int family, int socktype,
                      resolve_handler_t handler, void *userdata, ResolveQuery **ret) {
        _cleanup_(resolve_query_freep) ResolveQuery *q = NULL;
        int r;

        assert(e);
        assert(host);
        assert(handler);
        assert(ret);

        q = new0(ResolveQuery, 1);
        if (!q)
                return -ENOMEM;
        q->fd = -EBADF;
        q->event = sd_event_ref(e);
        q->family = family;
        q->socktype = socktype;
        q->handler = handler;
        q->userdata = userdata;
        q->host = strdup(host);
        q->service = service ? strdup(service) : NULL;
        if (!q->host || (service && !q->service))
                return -ENOMEM;

        if (want_resolved(host, service)) {
                unsigned long port = service ? strtoul(service, NULL, 10) : 0;

                if (port <= UINT16_MAX) {
                        q->port = (uint16_t) port;
                        r = query_start_resolved(q);
                        if (r >= 0) {
                                *ret = TAKE_PTR(q);
                                return 0;
                        }
                        log_debug_errno(r, "Failed to connect to systemd-resolved, using getaddrinfo: %m");
                }
        }

        r = query_start_thread(q);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(q);
        return 0;
}

ResolveQuery *resolve_query_free(ResolveQuery *q) {
        if (!q)
                return NULL;

        query_close_bus(q);
        q->source = sd_event_source_disable_unref(q->source);
        safe_close(q->fd);
        job_unref(q->job);
        sd_event_unref(q->event);
        free(q->host);
        free(q->service);
        return mfree(q);
}
