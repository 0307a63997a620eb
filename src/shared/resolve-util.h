/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Name resolution that never blocks the event loop. Where systemd-resolved runs, a host name
 * goes to it over D-Bus (org.freedesktop.resolve1.Manager.ResolveHostname, asynchronous, on a
 * system bus connection of the query's own), as newer upstream timesyncd does; its answer is
 * final, also "no such name" and a failed DNSSEC validation. Where it does not (no system bus,
 * or org.freedesktop.resolve1 not on it), getaddrinfo() runs in a short-lived thread and the
 * answer arrives as an sd-event I/O event: libsystemd has no public asynchronous resolver, and
 * glibc's getaddrinfo_a() signals completion through signals or threads just the same, with
 * less control over cancellation. Numeric addresses, "localhost" and non-numeric services
 * always take the getaddrinfo() path. A name with no address asked for both families is asked
 * again per family, so that a failed DNSSEC validation is told as such, not as "no such host
 * name" (resolved_hostname_probe()). Debug lines say which way each name went: "Resolved
 * address ADDRESS for NAME." and "Failed to connect to systemd-resolved, using getaddrinfo".
 * Addresses from resolved come in resolved's order; getaddrinfo() sorts by RFC 6724 (and
 * /etc/gai.conf). SYSTEMD_NSS_RESOLVE_VALIDATE=0 (the unit sets it) turns DNSSEC validation
 * off on both paths. */

#include <netdb.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "macro.h"

/* Flags of org.freedesktop.resolve1 calls and replies (resolved's SD_RESOLVED_*). Measured on
 * resolved 252: reply flags 0x800201 for a signed zone, 0x800001 (no AUTHENTICATED) for an
 * unsigned one or with DNSSEC=no. */
#define RESOLVED_FLAG_AUTHENTICATED (UINT64_C(1) << 9)   /* reply: every record DNSSEC-validated */
#define RESOLVED_FLAG_NO_VALIDATE (UINT64_C(1) << 10)    /* call: answer without validation */

/* The reply to a call to org.freedesktop.resolve1 is an error that says that resolved is not
 * there to ask, not an answer of resolved's: not on the bus, the bus went away, or the bus could
 * not start it (any error the bus driver sends: a masked or broken unit behind resolved's bus
 * activation file, dbus-daemon's own activation). */
bool resolved_reply_means_absent(sd_bus_message *reply);

typedef struct ResolveQuery ResolveQuery;

/* Called once with the addresses (freed after the callback returns) or a negative errno
 * (EAI_* and resolved's errors mapped: -ENOENT for no such name, -EAGAIN for a temporary
 * failure, -EBADMSG for a failed DNSSEC validation). */
typedef void (*resolve_handler_t)(ResolveQuery *q, int error, const struct addrinfo *ai, void *userdata);

/* family: AF_UNSPEC, AF_INET or AF_INET6; socktype: SOCK_DGRAM or SOCK_STREAM; service may be
 * NULL. The handler is not called if the query is freed first. */
int resolve_query_new(sd_event *e, const char *host, const char *service, int family, int socktype,
                      resolve_handler_t handler, void *userdata, ResolveQuery **ret);
/* Cancels the query if it is still running (the thread finishes on its own). */
ResolveQuery *resolve_query_free(ResolveQuery *q);
DEFINE_TRIVIAL_CLEANUP_FUNC(ResolveQuery *, resolve_query_free);

/* resolved answers a name asked for both address families with the addresses that validated,
 * and with none ("NoSuchRR") when one family validated empty and the other failed validation;
 * asked for the failed family alone it says DnssecFailed. So after no address for a query of
 * family (AF_UNSPEC: both) made as asked, with validation on (validate), the family to ask
 * next to learn why, or AF_UNSPEC when the answer stands. */
int resolved_hostname_probe(int family, int asked, bool no_such_rr, bool validate);

/* Text of an EAI_* code mapped by resolve_query_new(). */
const char *resolve_error_string(int error);
