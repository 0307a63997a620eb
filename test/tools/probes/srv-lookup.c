/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Runs the SRV pool lookup of src/timesync/timesyncd-srv.c once, on the system bus
 * ($DBUS_SYSTEM_BUS_ADDRESS honoured), and prints what the daemon would get: the ordered
 * targets with their ports and the TTL, or the error message. For the tests of test/integration/dns/.
 *   srv-lookup NAME             looks up _ntske._tcp.NAME
 *   srv-lookup --orderings N NAME
 *                               one lookup, then N more RFC 2782 orderings of its records,
 *                               one line each with the targets in order
 * Exit status: 0 with targets; 1 with the error's errno name and message on stderr, as
 * "srv-lookup: ENOKEY: ..."; 2 for a usage error. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-event.h>

#include "log.h"
#include "macro.h"
#include "timesyncd-srv.h"

typedef struct Context {
        sd_event *event;
        unsigned orderings;
        int status;
} Context;

static void print_order(const SrvAnswer *a) {
        for (size_t i = 0; i < a->n_records; i++)
                printf("%s%s", i > 0 ? " " : "", a->records[i].target);
        printf("\n");
}

/* Orders a copy of the records again, as a new lookup would. */
static int reorder(const SrvAnswer *a) {
        SrvAnswer copy;
        int r;

        r = srv_answer_copy(a, &copy);
        if (r < 0)
                return r;
        r = srv_answer_order(&copy, NULL, NULL);
        if (r >= 0)
                print_order(&copy);
        srv_answer_done(&copy);
        return r;
}

static void on_lookup(SrvLookup *l, int error, const char *message, const SrvAnswer *answer, void *userdata) {
        Context *c = userdata;

        if (error < 0) {
                fprintf(stderr, "srv-lookup: %s: %s\n", strerrorname_np(-error) ?: "?", message);
                c->status = 1;
        } else {
                printf("authenticated: yes\nttl: %u\n", answer->ttl);
                for (size_t i = 0; i < answer->n_records; i++)
                        printf("target: %s port %u priority %u weight %u\n", answer->records[i].target,
                               answer->records[i].port, answer->records[i].priority,
                               answer->records[i].weight);
                for (unsigned i = 0; i < c->orderings; i++)
                        if (reorder(answer) < 0) {
                                c->status = 1;
                                break;
                        }
                if (c->status < 0)
                        c->status = 0;
        }
        (void) sd_event_exit(c->event, 0);
}

int main(int argc, char *argv[]) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        Context c = { .status = -1 };
        SrvLookup *l = NULL;
        const char *name;
        int r;

        log_parse_environment();
        if (argc == 4 && streq(argv[1], "--orderings")) {
                c.orderings = (unsigned) strtoul(argv[2], NULL, 10);
                name = argv[3];
        } else if (argc == 2 && argv[1][0] != '-')
                name = argv[1];
        else {
                fputs("usage: srv-lookup [--orderings N] NAME\n", stderr);
                return 2;
        }

        r = sd_event_default(&c.event);
        if (r < 0)
                return log_error_errno(r, "srv-lookup: no event loop: %m"), 1;
        r = sd_bus_open_system(&bus);
        if (r < 0) {
                fprintf(stderr, "srv-lookup: %s: cannot connect to the system bus: %s\n",
                        strerrorname_np(-r) ?: "?", strerror(-r));
                return 1;
        }
        r = sd_bus_attach_event(bus, c.event, 0);
        if (r >= 0)
                r = srv_lookup_new(bus, name, NULL, NULL, on_lookup, &c, &l);
        if (r < 0) {
                fprintf(stderr, "srv-lookup: %s: cannot start the lookup: %s\n", strerrorname_np(-r) ?: "?",
                        strerror(-r));
                return 1;
        }
        r = sd_event_loop(c.event);
        srv_lookup_free(l);
        sd_event_unref(c.event);
        if (r < 0)
                return log_error_errno(r, "srv-lookup: event loop failed: %m"), 1;
        return c.status == 0 ? 0 : 1;
}
