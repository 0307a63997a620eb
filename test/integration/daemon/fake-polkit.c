/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* A stand-in for polkit on a test's private system bus: owns org.freedesktop.PolicyKit1,
 * answers every CheckAuthorization with ANSWER (yes or no), and prints the action each call
 * asks about, one line each, so that a test sees which action a method of the daemon needs.
 *   fake-polkit yes|no
 * Prints "ready" once it owns the name; runs until it is killed. */

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

static bool answer_yes;

static int check_authorization(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *action;
        int r;

        /* The subject, then the action id. */
        r = sd_bus_message_skip(m, "(sa{sv})");
        if (r >= 0)
                r = sd_bus_message_read(m, "s", &action);
        if (r < 0)
                return r;
        printf("%s\n", action);
        fflush(stdout);

        return sd_bus_reply_method_return(m, "(bba{ss})", answer_yes, false, 0);
}

static const sd_bus_vtable authority_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("CheckAuthorization", "(sa{sv})sa{ss}us", "(bba{ss})", check_authorization,
                      SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};

int main(int argc, char *argv[]) {
        sd_event *event = NULL;
        sd_bus *bus = NULL;
        int r;

        if (argc != 2 || (strcmp(argv[1], "yes") != 0 && strcmp(argv[1], "no") != 0)) {
                fprintf(stderr, "usage: %s yes|no\n", argv[0]);
                return 2;
        }
        answer_yes = strcmp(argv[1], "yes") == 0;

        r = sd_event_default(&event);
        if (r >= 0)
                r = sd_bus_open_system(&bus);
        if (r >= 0)
                r = sd_bus_add_object_vtable(bus, NULL, "/org/freedesktop/PolicyKit1/Authority",
                                             "org.freedesktop.PolicyKit1.Authority", authority_vtable, NULL);
        if (r >= 0)
                r = sd_bus_request_name(bus, "org.freedesktop.PolicyKit1", 0);
        if (r >= 0)
                r = sd_bus_attach_event(bus, event, 0);
        if (r < 0) {
                fprintf(stderr, "fake-polkit: %s\n", strerror(-r));
                return 1;
        }
        printf("ready\n");
        fflush(stdout);

        r = sd_event_loop(event);
        sd_bus_flush_close_unref(bus);
        sd_event_unref(event);
        return r < 0 ? 1 : 0;
}
