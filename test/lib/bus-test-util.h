/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The manager's D-Bus objects on one end of a socket pair and a client on the other, both on
 * the manager's event loop: no bus daemon, no system bus. The client calls methods, reads
 * properties and collects the names of every PropertiesChanged signal, as a listener on the
 * system bus would see them. */

#include <sys/socket.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-id128.h>

#include "strv.h"
#include "tests.h"
#include "timesyncd-bus-internal.h"
#include "timesyncd-manager-internal.h"

#define BUS_TEST_PATH "/org/freedesktop/timesync1"
#define BUS_TEST_INTERFACE "org.freedesktop.timesync1.Manager"
#define BUS_TEST_WAIT_USEC (10 * USEC_PER_SEC)

/* A manager in observe mode with the fake clock, never started: no source, no network. */
static inline Manager *test_manager_new(void) {
        ManagerOptions o = { .observe = true, .test_fake_clock = true };
        Manager *m = NULL;

        ASSERT_OK(manager_new(&m, &o));
        /* Nothing a test does with it may reach the real clock. */
        ASSERT_EQ(clock_backend_type(m->clock), CLOCK_BACKEND_FAKE);
        return m;
}

/* The strings of l joined by spaces ("" for none), to be freed. */
static inline char *test_join(const char *const *l) {
        size_t size = 1;
        char *s;

        for (const char *const *i = l; i && *i; i++)
                size += strlen(*i) + 1;
        s = calloc(1, size);
        ASSERT_TRUE(s);
        for (const char *const *i = l; i && *i; i++) {
                if (i != l)
                        strcat(s, " ");
                strcat(s, *i);
        }
        return s;
}

typedef struct BusPair {
        Manager *manager;
        sd_bus *client;
        char **changed;                 /* every property named by a PropertiesChanged, in order */
        unsigned n_signals;
} BusPair;

static inline int bus_pair_on_changed(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        BusPair *p = userdata;
        _cleanup_(strv_freep) char **invalidated = NULL;
        const char *interface, *name;

        ASSERT_OK(sd_bus_message_read(msg, "s", &interface));
        ASSERT_STREQ(interface, BUS_TEST_INTERFACE);
        ASSERT_OK(sd_bus_message_enter_container(msg, 'a', "{sv}"));
        while (sd_bus_message_enter_container(msg, 'e', "sv") > 0) {
                ASSERT_OK(sd_bus_message_read(msg, "s", &name));
                ASSERT_OK(strv_extend(&p->changed, name));
                ASSERT_OK(sd_bus_message_skip(msg, "v"));
                ASSERT_OK(sd_bus_message_exit_container(msg));
        }
        ASSERT_OK(sd_bus_message_exit_container(msg));
        ASSERT_OK(sd_bus_message_read_strv(msg, &invalidated));
        STRV_FOREACH(i, invalidated)
                ASSERT_OK(strv_extend(&p->changed, *i));
        p->n_signals++;
        return 0;
}

/* Connects a client to m's objects; m->bus->connection is the server end, ready for signals. */
static inline void bus_pair_start(BusPair *p, Manager *m) {
        sd_bus *server = NULL;
        sd_id128_t id;
        int fds[2];

        *p = (BusPair) { .manager = m };
        ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds));
        ASSERT_OK(sd_id128_randomize(&id));

        ASSERT_OK(sd_bus_new(&server));
        ASSERT_OK(sd_bus_set_fd(server, fds[0], fds[0]));
        ASSERT_OK(sd_bus_set_server(server, true, id));
        ASSERT_OK(manager_bus_add_objects(server, m));
        ASSERT_OK(sd_bus_start(server));
        ASSERT_OK(sd_bus_attach_event(server, m->event, 0));

        ASSERT_OK(sd_bus_new(&p->client));
        ASSERT_OK(sd_bus_set_fd(p->client, fds[1], fds[1]));
        ASSERT_OK(sd_bus_match_signal(p->client, NULL, NULL, BUS_TEST_PATH, "org.freedesktop.DBus.Properties",
                                      "PropertiesChanged", bus_pair_on_changed, p));
        ASSERT_OK(sd_bus_start(p->client));
        ASSERT_OK(sd_bus_attach_event(p->client, m->event, 0));

        m->bus->connection = server;
        m->bus->connected = true;
}

static inline void bus_pair_stop(BusPair *p) {
        p->client = sd_bus_flush_close_unref(p->client);
        p->changed = strv_free(p->changed);
}

static inline int bus_pair_on_reply(sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        sd_bus_message **ret = userdata;

        *ret = sd_bus_message_ref(reply);
        return 0;
}

/* Runs the loop until *done is set (bounded). */
static inline void bus_pair_run_until(BusPair *p, void **done) {
        usec_t deadline = now(CLOCK_MONOTONIC) + BUS_TEST_WAIT_USEC;

        while (!*done) {
                ASSERT_TRUE(now(CLOCK_MONOTONIC) < deadline);
                ASSERT_OK(sd_event_run(p->manager->event, 100 * USEC_PER_MSEC));
        }
}

/* Every signal sent so far has reached the client: whatever is due in the loop (a timer armed
 * at once, such as the Sources signal's) is dispatched first, and a call made after the signals
 * is answered after them, the socket being a stream. */
static inline void bus_pair_sync(BusPair *p) {
        sd_bus_message *reply = NULL;

        for (unsigned i = 0; sd_event_run(p->manager->event, 0) > 0; i++)
                ASSERT_TRUE(i < 1000);

        ASSERT_OK(sd_bus_call_method_async(p->client, NULL, NULL, BUS_TEST_PATH, "org.freedesktop.DBus.Peer",
                                           "Ping", bus_pair_on_reply, &reply, NULL));
        bus_pair_run_until(p, (void **) &reply);
        ASSERT_FALSE(sd_bus_message_is_method_error(reply, NULL));
        sd_bus_message_unref(reply);
}

/* The names of the properties signalled since the last call, joined by spaces ("" for none). */
static inline char *bus_pair_take_changed(BusPair *p) {
        char *s;

        bus_pair_sync(p);
        s = test_join((const char *const *) p->changed);
        p->changed = strv_free(p->changed);
        return s;
}
