/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The state of a plain time source (timesyncd-source.c) and its transition function: one row
 * per state and event, the state it enters, what it reports to its owner, and for failures why.
 * A source is brought into the row's state the way the daemon gets there (a reply of an NTP
 * responder on 127.0.0.1 in a thread of the test, or the owner's calls), then the event is an
 * owner's call or what the loop delivers: the resolver's answer, a reply, a timer due at once.
 * The source reads the fake clock (asserted) and never adjusts a clock; the key-exchange state
 * of NTS sources is test/integration/client/test-timesyncd-source.c's. */

#include <unistd.h>

#include "ntp-responder.h"
#include "source-test-util.h"
#include "string-util.h"
#include "tests.h"
#include "timesyncd-clock.h"

#define WAIT_USEC (20 * USEC_PER_SEC)
#define EV(e) (1U << (e))

typedef enum Reply {
        REPLY_NONE,             /* no responder: the source never sends */
        REPLY_GOOD,
        REPLY_DENY,
        REPLY_RSTR,
        REPLY_RATE,
        REPLY_UNKNOWN_KISS,
        REPLY_UNSYNCHRONIZED,
        REPLY_ZERO_TIMESTAMPS,
        REPLY_FAR,              /* root distance above RootDistanceMaxSec= */
        REPLY_FORGED_THEN_GOOD, /* a wrong origin first: refused, then the reply */
        REPLY_SHORT_THEN_GOOD,
} Reply;

typedef enum Action {
        ACT_START,
        ACT_KEEP_TRYING,
        ACT_STOP,
        ACT_CLOCK_STEPPED,      /* ours: the sample in flight is not used */
        ACT_CLOCK_STEPPED_POLL, /* someone else's: poll at once */
        ACT_RUN,                /* the loop, until the state changes */
        ACT_STEPPED_THEN_RUN,   /* our step while a request is out, then its reply */
} Action;

static const char *const reply_names[] = {
        "none", "good", "DENY", "RSTR", "RATE", "unknown kiss code", "unsynchronized", "zero timestamps",
        "far from UTC", "forged then good", "short then good",
};

static const char *const action_names[] = {
        "start", "keep trying", "stop", "our clock step", "a foreign clock step", "the loop",
        "our clock step, then the loop",
};
assert_cc(ELEMENTSOF(reply_names) == REPLY_SHORT_THEN_GOOD + 1);
assert_cc(ELEMENTSOF(action_names) == ACT_STEPPED_THEN_RUN + 1);

typedef struct Run {
        sd_event *event;
        ClockBackend *clock;
        SourceSettings settings;
        Source *source;
        NTPResponder responder;
        bool responding;
        Reply reply;
        unsigned reports;       /* SourceEvent bits since the last reset */
} Run;

static void on_event(Source *s, SourceEvent e, void *userdata) {
        Run *r = userdata;

        ASSERT_TRUE(e >= 0 && e < _SOURCE_EVENT_MAX);
        r->reports |= EV(e);
}

static bool reply(void *userdata, size_t i, const NTPHeader *request, NTPHeader *h, size_t *size) {
        Reply kind = *(const Reply *) userdata;

        switch (kind) {
        case REPLY_GOOD:
                return i == 0;
        case REPLY_DENY:
        case REPLY_RSTR:
        case REPLY_RATE:
        case REPLY_UNKNOWN_KISS:
                h->stratum = NTP_STRATUM_KISS;
                memcpy(h->refid, kind == REPLY_DENY ? "DENY" : kind == REPLY_RSTR ? "RSTR" :
                                 kind == REPLY_RATE ? "RATE" : "ABCD", 4);
                return i == 0;
        case REPLY_UNSYNCHRONIZED:
                h->leap = NTP_LEAP_NOTINSYNC;
                return i == 0;
        case REPLY_ZERO_TIMESTAMPS:
                h->receive = h->transmit = (NTPTimestamp) {};
                return i == 0;
        case REPLY_FAR:
                h->root_delay = ntp_short_from_nsec(INT64_C(16) * NTP_NSEC_PER_SEC);
                return i == 0;
        case REPLY_FORGED_THEN_GOOD:
                if (i == 0)
                        h->origin.fraction ^= 1;
                return i < 2;
        case REPLY_SHORT_THEN_GOOD:
                if (i == 0)
                        *size = NTP_HEADER_SIZE - 1;
                return i < 2;
        default:
                assert_not_reached();
        }
}

/* Runs the loop until the source leaves state, bounded. */
static void run_until_not(Run *r, SourceState state) {
        usec_t deadline = now(CLOCK_MONOTONIC) + WAIT_USEC;

        while (source_state(r->source) == state) {
                ASSERT_TRUE(now(CLOCK_MONOTONIC) < deadline);
                ASSERT_OK(sd_event_run(r->event, 100 * USEC_PER_MSEC));
        }
}

static void run_init(Run *r, Reply kind) {
        char host[32] = "127.0.0.1";
        uint16_t port = 9;

        *r = (Run) { .reply = kind };
        ASSERT_OK(sd_event_new(&r->event));
        ASSERT_OK(clock_backend_new(CLOCK_BACKEND_FAKE, &r->clock));
        clock_backend_fake_follow(r->clock, 0);
        ASSERT_EQ(clock_backend_type(r->clock), CLOCK_BACKEND_FAKE);
        r->settings = test_source_settings(r->event, NULL);
        r->settings.clock = r->clock;
        r->settings.root_distance_max_usec = 5 * USEC_PER_SEC;

        if (kind != REPLY_NONE) {
                ntp_responder_start(&r->responder, reply, &r->reply);
                r->responding = true;
                port = socket_address_port(&r->responder.address);
        }
        ASSERT_OK(source_new(&r->settings, host, host, port, /* nts= */ false, on_event, r, &r->source));
        ASSERT_EQ(source_state(r->source), SOURCE_IDLE);
}

static void run_done(Run *r) {
        r->source = source_free(r->source);
        if (r->responding)
                ntp_responder_stop(&r->responder);
        clock_backend_free(r->clock);
        sd_event_unref(r->event);
}

/* Brings the source into state the way the daemon does; clears the reports. */
static void reach(Run *r, SourceState state) {
        switch (state) {
        case SOURCE_IDLE:
                break;
        case SOURCE_RESOLVING:
                ASSERT_OK(source_start(r->source));
                break;
        case SOURCE_REPLY_WAIT:
                /* The address resolved, its first request sent. */
                ASSERT_OK(source_start(r->source));
                run_until_not(r, SOURCE_RESOLVING);
                break;
        case SOURCE_POLL_WAIT:
        case SOURCE_FAILED:
        case SOURCE_BACKING_OFF:
                /* What the responder answers decides. */
                ASSERT_OK(source_start(r->source));
                run_until_not(r, SOURCE_RESOLVING);
                run_until_not(r, SOURCE_REPLY_WAIT);
                break;
        default:
                assert_not_reached();
        }
        ASSERT_EQ(source_state(r->source), state);
        r->reports = 0;
}

static int act(Run *r, Action a) {
        SourceState before = source_state(r->source);

        switch (a) {
        case ACT_START:
                return source_start(r->source);
        case ACT_KEEP_TRYING:
                return source_keep_trying(r->source);
        case ACT_STOP:
                source_stop(r->source);
                return 0;
        case ACT_CLOCK_STEPPED:
                source_clock_stepped(r->source, /* poll_now= */ false);
                return 0;
        case ACT_CLOCK_STEPPED_POLL:
                source_clock_stepped(r->source, /* poll_now= */ true);
                return 0;
        case ACT_STEPPED_THEN_RUN:
                source_clock_stepped(r->source, /* poll_now= */ false);
                _fallthrough_;
        case ACT_RUN:
                run_until_not(r, before);
                return 0;
        default:
                assert_not_reached();
        }
}

static void test_state_and_event(void) {
        static const struct {
                SourceState from;
                Reply reply;
                Action action;
                int ret;
                SourceState to;
                unsigned reports;
                const char *error;      /* source_last_error() after; NULL: "" */
                unsigned failures;
                bool sample;            /* source_sample() */
        } table[] = {
                /* The owner's calls. */
                { SOURCE_IDLE, REPLY_NONE, ACT_START, 0, SOURCE_RESOLVING, 0, NULL, 0, false },
                { SOURCE_IDLE, REPLY_NONE, ACT_KEEP_TRYING, 0, SOURCE_RESOLVING, 0, NULL, 0, false },
                { SOURCE_IDLE, REPLY_NONE, ACT_STOP, 0, SOURCE_IDLE, 0, NULL, 0, false },
                { SOURCE_IDLE, REPLY_NONE, ACT_CLOCK_STEPPED_POLL, 0, SOURCE_IDLE, 0, NULL, 0, false },
                { SOURCE_RESOLVING, REPLY_NONE, ACT_STOP, 0, SOURCE_IDLE, 0, NULL, 0, false },
                { SOURCE_REPLY_WAIT, REPLY_GOOD, ACT_STOP, 0, SOURCE_IDLE, 0, NULL, 0, false },
                { SOURCE_REPLY_WAIT, REPLY_GOOD, ACT_CLOCK_STEPPED, 0, SOURCE_REPLY_WAIT, 0, NULL, 0, false },
                { SOURCE_POLL_WAIT, REPLY_GOOD, ACT_STOP, 0, SOURCE_IDLE, 0, NULL, 0, true },
                { SOURCE_POLL_WAIT, REPLY_GOOD, ACT_CLOCK_STEPPED_POLL, 0, SOURCE_POLL_WAIT, 0, NULL, 0, true },
                { SOURCE_BACKING_OFF, REPLY_UNSYNCHRONIZED, ACT_START, 0, SOURCE_RESOLVING, 0, "not synchronized", 1,
                  false },
                { SOURCE_BACKING_OFF, REPLY_UNSYNCHRONIZED, ACT_KEEP_TRYING, 0, SOURCE_RESOLVING, 0,
                  "not synchronized", 1, false },
                { SOURCE_BACKING_OFF, REPLY_UNSYNCHRONIZED, ACT_STOP, 0, SOURCE_IDLE, 0, "not synchronized", 1,
                  false },
                /* FAILED stays until the configuration names the server again. */
                { SOURCE_FAILED, REPLY_DENY, ACT_STOP, 0, SOURCE_FAILED, 0, "refuses service (kiss code DENY)", 1,
                  false },
                { SOURCE_FAILED, REPLY_DENY, ACT_KEEP_TRYING, -EPERM, SOURCE_FAILED, 0,
                  "refuses service (kiss code DENY)", 1, false },
                { SOURCE_FAILED, REPLY_DENY, ACT_CLOCK_STEPPED_POLL, 0, SOURCE_FAILED, 0,
                  "refuses service (kiss code DENY)", 1, false },

                /* What the loop delivers. */
                { SOURCE_RESOLVING, REPLY_GOOD, ACT_RUN, 0, SOURCE_REPLY_WAIT, EV(SOURCE_EVENT_ADDRESS), NULL, 0,
                  false },
                { SOURCE_REPLY_WAIT, REPLY_GOOD, ACT_RUN, 0, SOURCE_POLL_WAIT, EV(SOURCE_EVENT_SAMPLE), NULL, 0,
                  true },
                { SOURCE_REPLY_WAIT, REPLY_FORGED_THEN_GOOD, ACT_RUN, 0, SOURCE_POLL_WAIT, EV(SOURCE_EVENT_SAMPLE),
                  NULL, 0, true },
                { SOURCE_REPLY_WAIT, REPLY_SHORT_THEN_GOOD, ACT_RUN, 0, SOURCE_POLL_WAIT, EV(SOURCE_EVENT_SAMPLE),
                  NULL, 0, true },
                { SOURCE_REPLY_WAIT, REPLY_DENY, ACT_RUN, 0, SOURCE_FAILED, EV(SOURCE_EVENT_FAILED),
                  "refuses service (kiss code DENY)", 1, false },
                { SOURCE_REPLY_WAIT, REPLY_RSTR, ACT_RUN, 0, SOURCE_FAILED, EV(SOURCE_EVENT_FAILED),
                  "refuses service (kiss code RSTR)", 1, false },
                /* A kiss code that is not a refusal: no time, poll again later. */
                { SOURCE_REPLY_WAIT, REPLY_RATE, ACT_RUN, 0, SOURCE_POLL_WAIT, 0, NULL, 0, false },
                { SOURCE_REPLY_WAIT, REPLY_UNKNOWN_KISS, ACT_RUN, 0, SOURCE_POLL_WAIT, 0, NULL, 0, false },
                { SOURCE_REPLY_WAIT, REPLY_ZERO_TIMESTAMPS, ACT_RUN, 0, SOURCE_POLL_WAIT, 0, NULL, 0, false },
                /* The only address is of no use: the source gives up for now. */
                { SOURCE_REPLY_WAIT, REPLY_UNSYNCHRONIZED, ACT_RUN, 0, SOURCE_BACKING_OFF, EV(SOURCE_EVENT_FAILED),
                  "not synchronized", 1, false },
                { SOURCE_REPLY_WAIT, REPLY_FAR, ACT_RUN, 0, SOURCE_BACKING_OFF, EV(SOURCE_EVENT_FAILED),
                  "root distance too large", 1, false },
                /* Sent before our step: authentic, not used, asked again at once. */
                { SOURCE_REPLY_WAIT, REPLY_GOOD, ACT_STEPPED_THEN_RUN, 0, SOURCE_POLL_WAIT, 0, NULL, 0, false },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                Run r;
                int ret;

                fprintf(stderr, "# row %zu: %s, reply %s: %s\n", i, source_state_to_string(table[i].from),
                        reply_names[table[i].reply], action_names[table[i].action]);
                run_init(&r, table[i].reply);
                reach(&r, table[i].from);

                ret = act(&r, table[i].action);
                ASSERT_EQ(ret, table[i].ret);
                ASSERT_STREQ(source_state_to_string(source_state(r.source)), source_state_to_string(table[i].to));
                ASSERT_EQ(r.reports, table[i].reports);
                ASSERT_STREQ(source_last_error(r.source), table[i].error ?: "");
                ASSERT_EQ(source_failures(r.source), table[i].failures);
                ASSERT_EQ(!!source_sample(r.source), table[i].sample);
                /* Never without a way forward. */
                ASSERT_FALSE(source_stalled(r.source));
                ASSERT_EQ(source_usable(r.source), table[i].to != SOURCE_FAILED);
                run_done(&r);
        }
}

/* After a POLL_WAIT entered for a clock step by someone else, the loop sends the next request
 * at once (not after the 32 s poll interval): REPLY_WAIT with the same address. */
static void test_foreign_step_polls_now(void) {
        const SocketAddress *a;
        Run r;

        run_init(&r, REPLY_GOOD);
        reach(&r, SOURCE_POLL_WAIT);
        a = source_address(r.source);
        ASSERT_TRUE(a);
        source_clock_stepped(r.source, /* poll_now= */ true);
        run_until_not(&r, SOURCE_POLL_WAIT);
        ASSERT_EQ(source_state(r.source), SOURCE_REPLY_WAIT);
        ASSERT_TRUE(source_address(r.source) == a);
        ASSERT_EQ(r.reports, 0u);
        run_done(&r);
}

/* What a reply does to the poll interval: a sample starts at the minimum, RATE doubles it. */
static void test_poll_interval_after_a_reply(void) {
        static const struct {
                Reply reply;
                usec_t interval;
                unsigned refused;       /* source_refusals() total */
        } table[] = {
                { REPLY_GOOD, 32 * USEC_PER_SEC, 0 },
                { REPLY_RATE, 64 * USEC_PER_SEC, 0 },
                { REPLY_FORGED_THEN_GOOD, 32 * USEC_PER_SEC, 1 },
                { REPLY_SHORT_THEN_GOOD, 32 * USEC_PER_SEC, 1 },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                unsigned refused = 0;
                Run r;

                fprintf(stderr, "# row %zu: reply %s\n", i, reply_names[table[i].reply]);
                run_init(&r, table[i].reply);
                reach(&r, SOURCE_REPLY_WAIT);
                run_until_not(&r, SOURCE_REPLY_WAIT);
                ASSERT_EQ(source_state(r.source), SOURCE_POLL_WAIT);
                ASSERT_EQ(source_poll_interval(r.source), table[i].interval);
                for (RefusalCause c = 0; c < _REFUSAL_CAUSE_MAX; c++)
                        refused += source_refusals(r.source)->by_cause[c].count;
                ASSERT_EQ(refused, table[i].refused);
                run_done(&r);
        }
}

/* Each state has a name of its own (logs and the Sources property show it); nothing else has. */
static void test_state_names(void) {
        for (SourceState s = 0; s < _SOURCE_STATE_MAX; s++) {
                ASSERT_FALSE(isempty(source_state_to_string(s)));
                for (SourceState t = 0; t < s; t++)
                        ASSERT_FALSE(streq(source_state_to_string(s), source_state_to_string(t)));
        }
        ASSERT_STREQ(source_state_to_string(SOURCE_FAILED), "failed");
        ASSERT_TRUE(source_state_to_string(_SOURCE_STATE_MAX) == NULL);
        ASSERT_TRUE(source_state_to_string(_SOURCE_STATE_INVALID) == NULL);
}

TEST_MAIN(TEST_CASE(test_state_and_event),
          TEST_CASE(test_foreign_step_polls_now),
          TEST_CASE(test_poll_interval_after_a_reply),
          TEST_CASE(test_state_names));
