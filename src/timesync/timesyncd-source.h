/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One time source: a server we poll. It owns the NTP exchange with that server (name
 * resolution, the socket, requests, the reply timeout, the checks of every reply, the sample
 * filter and the poll interval) and, for an NTS server, its NTS client (timesyncd-nts-client),
 * which it pulls from: prepare before polling, seal each request, open each reply.
 *
 * What a source is doing is one field, SourceState (timesyncd-source-state.h), and one
 * function enters a state, along the transitions that lists, and arms what it waits for: a
 * source is never without a way forward unless its state says it waits on purpose (IDLE,
 * FAILED) or for its NTS client (KEY_EXCHANGE, which always calls back). Its timer is
 * allocated with it and only re-armed afterwards, so that moving on never fails for want of
 * memory.
 *
 * The source never touches the clock and never calls its owner's functions: it reports
 * samples, failures and NTS changes through one callback, only from the event loop, never from
 * inside a source_*() call. The owner decides what a sample does to the clock and, when a
 * source fails, whether to wait for it or to move on to another one. */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "ntp-packet.h"
#include "socket-address.h"
#include "time-util.h"
#include "timesyncd-filter.h"
#include "timesyncd-nts-client.h"
#include "timesyncd-refusals.h"
#include "timesyncd-source-state.h"

typedef struct ClockBackend ClockBackend;
typedef struct NTSClient NTSClient;
typedef struct NTSClientSettings NTSClientSettings;
typedef struct NTSClientPool NTSClientPool;
typedef struct Source Source;

/* Seconds to wait for one reply before trying the next address (stock: 10 s). */
#define SOURCE_REPLY_TIMEOUT_USEC (10 * USEC_PER_SEC)

/* What the sources of one owner share. The owner keeps it alive and current (a reload or the
 * first synchronization changes it): it is read at each use. */
typedef struct SourceSettings {
        sd_event *event;
        ClockBackend *clock;            /* t1 and t4 are read from it */
        usec_t poll_interval_min_usec;
        usec_t poll_interval_max_usec;
        usec_t root_distance_max_usec;  /* replies of servers further from UTC are refused */
        usec_t retry_usec;              /* how long a failed source backs off (ConnectionRetrySec=) */
        bool precise_timers;            /* fire timers when they say (test poll intervals of a few
                                         * milliseconds); otherwise sd-event's 250 ms slack */
        bool synchronized;              /* what requests say in their leap indicator */
        const NTSClientSettings *nts;   /* for the NTS clients of NTS sources */
} SourceSettings;

/* One reply that passed every check. */
typedef struct SourceSample {
        NTPHeader header;
        int64_t origin_nsec;            /* t1: our transmit time */
        int64_t receive_nsec;           /* t2 */
        int64_t transmit_nsec;          /* t3 */
        int64_t destination_nsec;       /* t4: our receive time */
        NTPSample ntp;                  /* offset and delay */
        int64_t root_distance_nsec;     /* the server's, from its header: RootDistanceMaxSec= */
        bool spike;                     /* the filter's judgement: not to be steered by */
        NTPFilterDelay delay;           /* the filter's judgement of its delay: not USUAL, not to
                                         * be used as time (held back on the way, or too long) */
        int64_t delay_min_nsec;         /* the least delay of the samples before it; -1: none */
        uint64_t packet_count;          /* replies since the source started */
        double jitter_nsec;
        bool authenticated;             /* verified with NTS */
        bool first;                     /* the first reply from this address */
        usec_t boottime;                /* CLOCK_BOOTTIME at t1: how old the sample is */
        NTSClientBootstrap bootstrap;   /* verified with keys from a bootstrap key exchange */
} SourceSample;

typedef enum SourceEvent {
        SOURCE_EVENT_ADDRESS,           /* the address polled changed: a new one, whose first
                                         * request went out, or none while the NTP server is
                                         * resolved again: source_address() */
        SOURCE_EVENT_SAMPLE,            /* source_sample(); the source polls again after the
                                         * handler returns, unless the handler changed that */
        SOURCE_EVENT_FAILED,            /* backing off (no address answered, key exchanges
                                         * failed, ...) or FAILED: source_last_error() */
        SOURCE_EVENT_REFUSED,           /* a request timed out after replies to it were refused:
                                         * source_refusals() */
        SOURCE_EVENT_NTS_VERIFIED,      /* a reply passed NTS verification */
        SOURCE_EVENT_NTS_KEYS,          /* a key exchange gave new keys and cookies */
        SOURCE_EVENT_NTS_KE_FAILED,     /* a key exchange failed: nts_client_last_error() */
        SOURCE_EVENT_NTS_BOOTSTRAP_REFUSED,
        SOURCE_EVENT_NTS_KEYS_DROPPED,  /* the server refused our cookie (NAK) */
        SOURCE_EVENT_NTS_COOKIES,       /* a request went unanswered: the cookie count fell */
        _SOURCE_EVENT_MAX,
} SourceEvent;

/* The owner may stop the source from its handler, not free it. */
typedef void (*source_handler_t)(Source *s, SourceEvent event, void *userdata);

/* name: as configured, for logs ("host" or "host:port"); host and port: the NTP server (port
 * 0: 123), or with nts the NTS-KE server (port 0: 4460), whose key exchange names the NTP
 * server. Copies the strings; keeps settings. */
int source_new(const SourceSettings *settings, const char *name, const char *host, uint16_t port, bool nts,
               source_handler_t handler, void *userdata, Source **ret);
Source *source_free(Source *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(Source *, source_free);

/* For the sources of a pool entry, before the first start (NTS sources only): the name of the
 * NTS client's state file (nts_client_set_state_name()) and, for a key-exchange pool, the pool
 * its key exchanges share (nts_client_join_pool(); NULL: none). */
int source_set_pool(Source *s, const char *state_name, NTSClientPool *ke_pool);
/* From IDLE or BACKING_OFF: resolves the NTP server and polls it, after a key exchange if
 * needed. -EAGAIN when the NTS client backs off (the state stays); another negative errno
 * when resolving cannot start (the state stays). Reports nothing from inside. */
int source_start(Source *s);
/* For an owner that keeps its sources running (several at once): starts from IDLE or
 * BACKING_OFF, and when that cannot be done now (its NTS client backs off, resolving cannot
 * start) backs off instead, so that its timer tries again: the source is never left without a
 * way forward. Returns 0 when it started, the error of source_start() when it backs off (then
 * source_last_error() says why; no report comes for it). -EPERM in FAILED. */
int source_keep_trying(Source *s);
/* Back to IDLE, from every state but FAILED: no request, no timer, no socket. A key exchange
 * of the NTS client runs on (its keys stay for the next start). */
void source_stop(Source *s);
/* Neither FAILED nor with an NTS client that backs off. */
bool source_usable(const Source *s);
/* What made it fail may have been fixed (a reload, a retry asked over D-Bus): a source that
 * backs off starts again now, and its NTS client's backoff ends (nts_client_retry_now()).
 * Returns whether either backed off. FAILED stays: only a configuration that names the server
 * again ends it. */
bool source_retry_now(Source *s);

/* The owner acts on a sample (inside its SAMPLE handler): the clock took it. Ends an NTS
 * bootstrap: returns true when the keys were dropped for a key exchange with every check
 * (KEY_EXCHANGE now). */
bool source_sample_used(Source *s);
/* The clock was stepped: earlier samples say nothing any more, and neither does the reply to
 * a request out now (it is not used; the source asks again at once). By someone else
 * (poll_now): poll at once and start the poll interval over. */
void source_clock_stepped(Source *s, bool poll_now);
/* We stepped the clock by step_nsec: the last sample's offset, measured against the clock before,
 * is that much less against the clock now (what D-Bus shows of it, until the next sample). */
void source_sample_stepped(Source *s, int64_t step_nsec);
/* The poll interval limits of the settings changed: apply them to the interval and the timer. */
void source_poll_limits_changed(Source *s);
/* The owner does not use its samples (a falseticker): from its next sample on, its poll level
 * follows how far each sample strays from its recent ones, not its offset from the local
 * clock, which nothing corrects towards it. */
void source_set_unused(Source *s, bool unused);
/* The longest poll interval the owner's clock discipline is locked for: the poll interval
 * grows no further (it is not shortened for it). USEC_INFINITY: no limit. */
void source_set_poll_interval_locked(Source *s, usec_t interval);

SourceState source_state(const Source *s);
/* Its state waits for a timer or a query that is not there: a bug, or sd-event failing. The
 * owner's safety net (which should never find one) starts over then. */
bool source_stalled(const Source *s);
/* As configured; a key-exchange pool's source: its member once it has one. */
const char *source_name(const Source *s);
/* The address polled now, NULL when none. */
const SocketAddress *source_address(const Source *s);
/* The last sample; NULL before the first. */
const SourceSample *source_sample(const Source *s);
usec_t source_poll_interval(const Source *s);
NTSClient *source_nts(const Source *s);
/* Its replies that were refused, by cause, since the source was made. */
const Refusals *source_refusals(const Source *s);
const char *source_last_error(const Source *s);
/* NTS: its last failure was that no datagram ever came from its NTP server, though the key
 * exchange gave keys (outgoing UDP blocked, most likely): source_last_error() says so. */
bool source_silent(const Source *s);
/* When the last error came (CLOCK_REALTIME); 0: none. */
usec_t source_last_error_realtime(const Source *s);
/* How often it gave up (backed off or refused service) since it was made. */
unsigned source_failures(const Source *s);
