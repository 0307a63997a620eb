/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <pthread.h>
#include <sys/socket.h>

#include "log.h"
#include "resolve-util.h"

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

int resolve_query_new(sd_event *e, const char *host, const char *service, int family, int socktype,
                      resolve_handler_t handler, void *userdata, ResolveQuery **ret) {
        _cleanup_free_ ResolveQuery *q = NULL;
        ResolveJob *j;
        pthread_attr_t attr;
        pthread_t thread;
        int pair[2], r;

        assert(e);
        assert(host);
        assert(handler);
        assert(ret);

        q = new0(ResolveQuery, 1);
        if (!q)
                return -ENOMEM;

        j = new0(ResolveJob, 1);
        if (!j)
                return -ENOMEM;
        j->n_ref = 1;
        j->notify_fd = -EBADF;
        j->host = strdup(host);
        j->service = service ? strdup(service) : NULL;
        if (!j->host || (service && !j->service)) {
                job_unref(j);
                return -ENOMEM;
        }
        j->hints = (struct addrinfo) {
                .ai_family = family,
                .ai_socktype = socktype,
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
        q->handler = handler;
        q->userdata = userdata;

        r = sd_event_add_io(e, &q->source, q->fd, EPOLLIN, on_resolved, q);
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

        *ret = TAKE_PTR(q);
        return 0;

fail:
        q->source = sd_event_source_disable_unref(q->source);
        safe_close(q->fd);
        job_unref(j);
        return r;
}

ResolveQuery *resolve_query_free(ResolveQuery *q) {
        if (!q)
                return NULL;

        q->source = sd_event_source_disable_unref(q->source);
        safe_close(q->fd);
        job_unref(q->job);
        return mfree(q);
}
