/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <fcntl.h>
#include <stdio.h>
#include <sys/inotify.h>

#include "fileio.h"
#include "log.h"
#include "string-util.h"
#include "strv.h"
#include "timesyncd-network.h"

#define NETWORK_STATE_MAX 65536

/* networkd's carrier and address states that mean "no usable network". */
static bool state_is_offline(const char *key, const char *value) {
        if (streq(key, "CARRIER_STATE"))
                return streq(value, "off") || streq(value, "no-carrier") || streq(value, "dormant");
        if (streq(key, "ADDRESS_STATE"))
                return streq(value, "off");
        return false;
}

int network_state_parse(const char *contents, NetworkState *ret) {
        _cleanup_(strv_freep) char **ntp = NULL;
        bool online = true;
        const char *p = contents;

        assert(contents);
        assert(ret);

        while (*p) {
                _cleanup_free_ char *line = NULL;
                const char *eol = strchrnul(p, '\n');
                char *eq;

                line = strndup(p, eol - p);
                if (!line)
                        return -ENOMEM;
                p = *eol ? eol + 1 : eol;

                eq = strchr(line, '=');
                if (line[0] == '#' || !eq)
                        continue;
                *eq = '\0';

                if (streq(line, "NTP")) {
                        strv_free(ntp);
                        ntp = strv_split_whitespace(eq + 1);
                        if (!ntp)
                                return -ENOMEM;
                } else if (state_is_offline(line, eq + 1))
                        online = false;
        }

        *ret = (NetworkState) {
                .online = online,
                .ntp_servers = TAKE_PTR(ntp),
        };
        return 0;
}

int network_state_read(const char *dir, NetworkState *ret) {
        _cleanup_free_ char *path = NULL, *contents = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r;

        assert(dir);
        assert(ret);

        if (asprintf(&path, "%s/state", dir) < 0)
                return -ENOMEM;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                if (errno != ENOENT)
                        return -errno;
                *ret = (NetworkState) { .online = true };
                return 0;
        }

        /* networkd's file is small; a huge one is not networkd's. */
        r = read_full_fd(fd, NETWORK_STATE_MAX, &contents, NULL);
        if (r < 0)
                return r;

        return network_state_parse(contents, ret);
}

void network_state_done(NetworkState *s) {
        if (s)
                s->ntp_servers = strv_free(s->ntp_servers);
}

struct NetworkWatch {
        char *dir;                      /* the state directory */
        sd_event_source *event;         /* the inotify watch; NULL without a parent directory */
        bool state_known;               /* the state was read (or counted as online) once */
        network_handler_t handler;
        void *userdata;
};

int network_watch_update(NetworkWatch *w) {
        _cleanup_(network_state_done) NetworkState st = {};
        int r;

        assert(w);

        r = network_state_read(w->dir, &st);
        if (r < 0) {
                /* An unreadable file (EMFILE, ENOMEM, a stranger's file) says nothing about the
                 * network: keep what the last good read said, and before any good read count
                 * as online, as without networkd. Never fatal, and the watch stays armed. */
                log_warning_errno(r, "Failed to read network state, keeping the last known state: %m");
                if (!w->state_known) {
                        w->state_known = true;
                        (void) w->handler(w, NETWORK_EVENT_ONLINE, NULL, w->userdata);
                }
                return 0;
        }
        w->state_known = true;

        /* Offline first, so that the log still names the server in use. */
        if (!st.online)
                (void) w->handler(w, NETWORK_EVENT_OFFLINE, NULL, w->userdata);
        r = w->handler(w, NETWORK_EVENT_LINK_SERVERS, st.ntp_servers, w->userdata);
        if (r < 0)
                return r;
        if (st.online)
                (void) w->handler(w, NETWORK_EVENT_ONLINE, NULL, w->userdata);
        return 0;
}

#define NETIF_WATCH_MASK (IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE | IN_CREATE)

/* Watches the state directory if it exists, else its parent for it to appear (networkd
 * started after us). Returns > 0 when the state directory itself is watched. */
static int network_watch_add(NetworkWatch *w, int fd) {
        _cleanup_free_ char *parent = NULL;
        const char *slash = strrchr(w->dir, '/');

        if (inotify_add_watch(fd, w->dir, NETIF_WATCH_MASK) >= 0)
                return 1;
        if (errno != ENOENT)
                return -errno;
        parent = slash && slash > w->dir ? strndup(w->dir, slash - w->dir) : strdup("/");
        if (!parent)
                return -ENOMEM;
        if (inotify_add_watch(fd, parent, IN_CREATE | IN_MOVED_TO | IN_ONLYDIR) < 0)
                return -errno;
        return 0;
}

static int on_netif_event(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        uint8_t buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        NetworkWatch *w = userdata;
        const char *name = strrchr(w->dir, '/');
        ssize_t l;

        name = name ? name + 1 : w->dir;

        /* Drain the queue; which file changed does not matter, the state file says it all,
         * but a new state directory needs a watch of its own. */
        while ((l = read(fd, buf, sizeof buf)) > 0)
                for (uint8_t *p = buf; p < buf + l;) {
                        const struct inotify_event *e = (const struct inotify_event *) p;

                        if (e->len > 0 && streq(e->name, name) && (e->mask & IN_ISDIR))
                                (void) network_watch_add(w, fd);
                        p += sizeof(struct inotify_event) + e->len;
                }

        /* A failure is logged there; returning it would make sd-event drop the watch for good. */
        (void) network_watch_update(w);
        return 0;
}

int network_watch_new(sd_event *event, const char *dir, network_handler_t handler, void *userdata,
                      NetworkWatch **ret) {
        _cleanup_(network_watch_freep) NetworkWatch *w = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r;

        assert(event);
        assert(dir);
        assert(handler);
        assert(ret);

        w = new0(NetworkWatch, 1);
        if (!w)
                return log_oom();
        w->dir = strdup(dir);
        if (!w->dir)
                return log_oom();
        w->handler = handler;
        w->userdata = userdata;

        fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (fd < 0)
                return log_error_errno(errno, "Failed to create inotify watch: %m");

        r = network_watch_add(w, fd);
        if (r < 0) {
                /* No parent directory at all: no networkd will come, and we count as online. */
                log_debug_errno(r, "Not watching %s: %m", dir);
                *ret = TAKE_PTR(w);
                return 0;
        }

        r = sd_event_add_io(event, &w->event, fd, EPOLLIN, on_netif_event, w);
        if (r < 0)
                return log_error_errno(r, "Failed to watch network state: %m");
        r = sd_event_source_set_io_fd_own(w->event, true);
        if (r < 0)
                return r;
        TAKE_FD(fd);

        *ret = TAKE_PTR(w);
        return 0;
}

NetworkWatch *network_watch_free(NetworkWatch *w) {
        if (!w)
                return NULL;
        w->event = sd_event_source_disable_unref(w->event);
        free(w->dir);
        return mfree(w);
}
