/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Name resolution that never blocks the event loop: getaddrinfo() runs in a short-lived
 * thread and the answer arrives as an sd-event I/O event. libsystemd has no public
 * asynchronous resolver, and glibc's getaddrinfo_a() signals completion through signals or
 * threads just the same, with less control over cancellation. */

#include <netdb.h>
#include <systemd/sd-event.h>

typedef struct ResolveQuery ResolveQuery;

/* Called once with the addresses (freed after the callback returns) or a negative errno
 * (EAI_* mapped: -ENOENT for no such name, -EAGAIN for a temporary failure). */
typedef void (*resolve_handler_t)(ResolveQuery *q, int error, const struct addrinfo *ai, void *userdata);

/* family: AF_UNSPEC, AF_INET or AF_INET6; socktype: SOCK_DGRAM or SOCK_STREAM; service may be
 * NULL. The handler is not called if the query is freed first. */
int resolve_query_new(sd_event *e, const char *host, const char *service, int family, int socktype,
                      resolve_handler_t handler, void *userdata, ResolveQuery **ret);
/* Cancels the query if it is still running (the thread finishes on its own). */
ResolveQuery *resolve_query_free(ResolveQuery *q);

/* Text of an EAI_* code mapped by resolve_query_new(). */
const char *resolve_error_string(int error);
