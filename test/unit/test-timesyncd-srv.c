/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The pure part of the SRV pool lookup: SRV records in wire format as systemd-resolved's
 * ResolveRecord hands them over (network input), and the RFC 2782 order of the targets. */

#include <math.h>

#include "iovec-util.h"
#include "string-util.h"
#include "tests.h"
#include "timesyncd-srv.h"
#include "unaligned.h"

/* Writes a name given as dotted text ("" or "." for the root) in wire format. */
static size_t put_name(uint8_t *p, const char *name) {
        size_t n = 0;

        while (*name && !(name[0] == '.' && name[1] == '\0')) {
                const char *dot = strchr(name, '.');
                size_t len = dot ? (size_t) (dot - name) : strlen(name);

                p[n++] = (uint8_t) len;
                memcpy(p + n, name, len);
                n += len;
                name += len + (dot ? 1 : 0);
        }
        p[n++] = 0;
        return n;
}

/* One IN SRV record for _ntske._tcp.pool.test, whose name takes OWNER_SIZE octets. */
#define OWNER_SIZE 23U
static size_t make_rr(uint8_t *buf, uint16_t type, uint32_t ttl, uint16_t priority, uint16_t weight,
                      uint16_t port, const char *target) {
        size_t n = put_name(buf, "_ntske._tcp.pool.test"), rd;

        unaligned_write_be16(buf + n, type);
        unaligned_write_be16(buf + n + 2, DNS_CLASS_IN);
        unaligned_write_be32(buf + n + 4, ttl);
        rd = n + 10;
        unaligned_write_be16(buf + rd, priority);
        unaligned_write_be16(buf + rd + 2, weight);
        unaligned_write_be16(buf + rd + 4, port);
        rd += 6;
        rd += put_name(buf + rd, target);
        unaligned_write_be16(buf + n + 8, (uint16_t) (rd - n - 10));
        return rd;
}

static void add(SrvAnswer *a, uint16_t priority, uint16_t weight, uint16_t port, const char *target) {
        uint8_t buf[600];
        size_t n = make_rr(buf, DNS_TYPE_SRV, 300, priority, weight, port, target);

        ASSERT_OK(srv_answer_add(a, &IOVEC_MAKE(buf, n)));
}

static int parse(const uint8_t *buf, size_t n, SrvRecord *ret) {
        return srv_record_parse(&(struct iovec) { .iov_base = (void *) buf, .iov_len = n }, ret);
}

static void test_srv_record_fields_are_read_and_target_lowercased(void) {
        uint8_t buf[600];
        SrvRecord r;
        size_t n = make_rr(buf, DNS_TYPE_SRV, 3600, 10, 60, 4460, "KE1.Pool.test.");

        ASSERT_OK(parse(buf, n, &r));
        ASSERT_EQ(r.priority, 10);
        ASSERT_EQ(r.weight, 60);
        ASSERT_EQ(r.port, 4460);
        ASSERT_EQ(r.ttl, 3600);
        ASSERT_STREQ(r.target, "ke1.pool.test");
        free(r.target);
}

static void test_root_target_parses_as_empty_name(void) {
        uint8_t buf[600];
        SrvRecord r;
        size_t n = make_rr(buf, DNS_TYPE_SRV, 300, 0, 0, 0, ".");

        ASSERT_OK(parse(buf, n, &r));
        ASSERT_STREQ(r.target, "");
        free(r.target);
}

static void test_every_truncation_is_refused(void) {
        uint8_t buf[600];
        SrvRecord r;
        size_t n = make_rr(buf, DNS_TYPE_SRV, 300, 1, 1, 4460, "ke1.pool.test");

        for (size_t len = 0; len < n; len++)
                ASSERT_ERROR(parse(buf, len, &r), EBADMSG);
}

static void test_trailing_bytes_are_refused(void) {
        uint8_t buf[600];
        SrvRecord r;
        size_t n = make_rr(buf, DNS_TYPE_SRV, 300, 1, 1, 4460, "ke1.pool.test");
        size_t rdlength_at = OWNER_SIZE + 8;

        /* A byte after the record... */
        buf[n] = 0;
        ASSERT_ERROR(parse(buf, n + 1, &r), EBADMSG);
        /* ...and inside RDATA after the target. */
        unaligned_write_be16(buf + rdlength_at, unaligned_read_be16(buf + rdlength_at) + 1);
        ASSERT_ERROR(parse(buf, n + 1, &r), EBADMSG);
        /* RDATA length shorter than the target. */
        unaligned_write_be16(buf + rdlength_at, unaligned_read_be16(buf + rdlength_at) - 2);
        ASSERT_ERROR(parse(buf, n - 1, &r), EBADMSG);
}

static void test_compression_pointers_are_refused(void) {
        uint8_t buf[600];
        SrvRecord r;
        size_t n = make_rr(buf, DNS_TYPE_SRV, 300, 1, 1, 4460, "ke1.pool.test");

        /* The target (15 octets) starts with a pointer to offset 0 instead of a label. */
        buf[n - 15] = 0xC0;
        buf[n - 14] = 0x00;
        ASSERT_ERROR(parse(buf, n, &r), EBADMSG);

        n = make_rr(buf, DNS_TYPE_SRV, 300, 1, 1, 4460, "ke1.pool.test");
        buf[0] = 0xC0;
        ASSERT_ERROR(parse(buf, n, &r), EBADMSG);
        buf[0] = 0x41; /* extended label type */
        ASSERT_ERROR(parse(buf, n, &r), EBADMSG);
}

static void test_overlong_label_and_name_are_refused(void) {
        char label[70], name[300];
        uint8_t buf[600];
        SrvRecord r;
        size_t n;

        memset(label, 'a', 64);
        label[64] = '\0';
        snprintf(name, sizeof name, "%s.test", label);
        n = make_rr(buf, DNS_TYPE_SRV, 300, 1, 1, 4460, name);
        ASSERT_ERROR(parse(buf, n, &r), EBADMSG);

        /* 63 is fine. */
        label[63] = '\0';
        snprintf(name, sizeof name, "%s.test", label);
        n = make_rr(buf, DNS_TYPE_SRV, 300, 1, 1, 4460, name);
        ASSERT_OK(parse(buf, n, &r));
        free(r.target);

        /* Four labels of 63: 4 * 64 + 1 = 257 octets in wire format, over 255. */
        snprintf(name, sizeof name, "%s.%s.%s.%s", label, label, label, label);
        n = make_rr(buf, DNS_TYPE_SRV, 300, 1, 1, 4460, name);
        ASSERT_ERROR(parse(buf, n, &r), EBADMSG);
}

static void test_target_that_is_no_host_name_is_refused(void) {
        static const char *const bad[] = {
                "ke_1.pool.test", "ke 1.pool.test", "-ke1.pool.test", "ke1.pool.123", "k\xc3\xa9.pool.test",
        };
        uint8_t buf[600];
        SrvRecord r;
        size_t n;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                n = make_rr(buf, DNS_TYPE_SRV, 300, 1, 1, 4460, bad[i]);
                ASSERT_ERROR(parse(buf, n, &r), EBADMSG);
        }

        /* A dot inside a label would read as two labels in text: refused, not reinterpreted. */
        n = make_rr(buf, DNS_TYPE_SRV, 300, 1, 1, 4460, "kex1.pool.test");
        buf[n - 16 + 3] = '.'; /* the target's 16 octets: 4 k e x 1 4 p o o l ... */
        ASSERT_ERROR(parse(buf, n, &r), EBADMSG);
}

static void test_record_that_is_not_in_srv_is_told_apart(void) {
        uint8_t buf[600];
        SrvRecord r;
        size_t n = make_rr(buf, 1 /* A */, 300, 1, 1, 4460, "ke1.pool.test");
        size_t class_at = OWNER_SIZE + 2;

        ASSERT_ERROR(parse(buf, n, &r), EMEDIUMTYPE);
        n = make_rr(buf, DNS_TYPE_SRV, 300, 1, 1, 4460, "ke1.pool.test");
        unaligned_write_be16(buf + class_at, 3 /* CH */);
        ASSERT_ERROR(parse(buf, n, &r), EMEDIUMTYPE);
}

static void test_ttl_with_top_bit_counts_as_zero(void) {
        uint8_t buf[600];
        SrvRecord r;
        size_t n = make_rr(buf, DNS_TYPE_SRV, UINT32_C(0x80000001), 1, 1, 4460, "ke1.pool.test");

        ASSERT_OK(parse(buf, n, &r));
        ASSERT_EQ(r.ttl, 0);
        free(r.target);
}

static void test_answer_ttl_is_the_smallest(void) {
        _cleanup_(srv_answer_done) SrvAnswer a = {};
        uint8_t buf[600];
        size_t n;

        n = make_rr(buf, DNS_TYPE_SRV, 900, 1, 1, 4460, "ke1.pool.test");
        ASSERT_OK(srv_answer_add(&a, &IOVEC_MAKE(buf, n)));
        n = make_rr(buf, DNS_TYPE_SRV, 120, 1, 1, 4460, "ke2.pool.test");
        ASSERT_OK(srv_answer_add(&a, &IOVEC_MAKE(buf, n)));
        n = make_rr(buf, DNS_TYPE_SRV, 600, 1, 1, 4460, "ke3.pool.test");
        ASSERT_OK(srv_answer_add(&a, &IOVEC_MAKE(buf, n)));
        ASSERT_EQ(a.ttl, 120);
}

static void test_copy_is_deep(void) {
        _cleanup_(srv_answer_done) SrvAnswer a = {}, b = {}, empty = {};
        uint8_t buf[600];
        size_t n;

        n = make_rr(buf, DNS_TYPE_SRV, 900, 10, 60, 4460, "ke1.pool.test");
        ASSERT_OK(srv_answer_add(&a, &IOVEC_MAKE(buf, n)));
        n = make_rr(buf, DNS_TYPE_SRV, 120, 20, 0, 4461, "ke2.pool.test");
        ASSERT_OK(srv_answer_add(&a, &IOVEC_MAKE(buf, n)));
        ASSERT_OK(srv_answer_copy(&a, &b));
        ASSERT_EQ(b.n_records, 2);
        ASSERT_EQ(b.ttl, 120);
        ASSERT_TRUE(b.records[1].target != a.records[1].target);
        ASSERT_STREQ(b.records[1].target, "ke2.pool.test");
        ASSERT_EQ(b.records[1].port, 4461);
        ASSERT_EQ(b.records[1].priority, 20);
        ASSERT_EQ(b.records[0].weight, 60);
        ASSERT_EQ(b.records[0].ttl, 900);
        srv_answer_done(&a);
        ASSERT_STREQ(b.records[0].target, "ke1.pool.test");

        ASSERT_OK(srv_answer_copy(&a, &empty));
        ASSERT_EQ(empty.n_records, 0);
}

static void test_more_than_the_record_limit_is_refused(void) {
        _cleanup_(srv_answer_done) SrvAnswer a = {};
        uint8_t buf[600];
        size_t n = make_rr(buf, DNS_TYPE_SRV, 300, 1, 65535, 4460, "ke1.pool.test");
        int r;

        for (unsigned i = 0;; i++) {
                r = srv_answer_add(&a, &IOVEC_MAKE(buf, n));
                if (r < 0)
                        break;
                ASSERT_TRUE(i < 100000);
        }
        ASSERT_ERROR(r, E2BIG);
        ASSERT_EQ(a.n_records, 1024);
}

/* A random source that plays back a script and records what it was asked for. */
typedef struct Script {
        const uint32_t *values;
        size_t n, next;
        uint32_t asked[16];
} Script;

static uint32_t scripted(uint32_t n, void *userdata) {
        Script *s = userdata;

        ASSERT_TRUE(s->next < s->n);
        s->asked[s->next] = n;
        ASSERT_TRUE(s->values[s->next] < n);
        return s->values[s->next++];
}

static void test_order_is_by_priority_then_running_sum_of_weights(void) {
        _cleanup_(srv_answer_done) SrvAnswer a = {};
        /* Priority 10: weights 60, 20, 20 (running sums 60, 80, 100); a draw of 61 is past
         * ke1's 60 and within ke2's 80. Then ke1 and ke3 are left (running sums 60, 80). */
        static const uint32_t values[] = { 61, 60 };
        Script s = { values, ELEMENTSOF(values), 0, {} };

        add(&a, 20, 0, 4462, "ke4.pool.test");
        add(&a, 10, 60, 4460, "ke1.pool.test");
        add(&a, 10, 20, 4461, "ke2.pool.test");
        add(&a, 10, 20, 4463, "ke3.pool.test");

        ASSERT_OK(srv_answer_order(&a, scripted, &s));
        /* One draw per position but the last of each priority; ke4 alone needs none. */
        ASSERT_EQ(s.next, 2);
        ASSERT_EQ(s.asked[0], 101); /* [0, 100] inclusive */
        ASSERT_EQ(s.asked[1], 81);  /* ke1 60 + ke3 20 */
        ASSERT_EQ(a.n_records, 4);
        ASSERT_STREQ(a.records[0].target, "ke2.pool.test");
        ASSERT_EQ(a.records[0].port, 4461);
        /* 60 reaches ke1's running sum exactly: ke1, not ke3. */
        ASSERT_STREQ(a.records[1].target, "ke1.pool.test");
        ASSERT_STREQ(a.records[2].target, "ke3.pool.test");
        ASSERT_STREQ(a.records[3].target, "ke4.pool.test");
        ASSERT_EQ(a.records[3].port, 4462);
}

static void test_zero_weight_is_first_in_line_and_taken_only_on_zero(void) {
        _cleanup_(srv_answer_done) SrvAnswer a = {}, b = {};
        static const uint32_t zero[] = { 0, 0 }, one[] = { 1, 0 };
        Script s = { zero, ELEMENTSOF(zero), 0, {} }, t = { one, ELEMENTSOF(one), 0, {} };

        add(&a, 1, 50, 1, "a.pool.test");
        add(&a, 1, 0, 2, "zero.pool.test");
        add(&a, 1, 50, 3, "b.pool.test");
        ASSERT_OK(srv_answer_order(&a, scripted, &s));
        ASSERT_STREQ(a.records[0].target, "zero.pool.test");

        add(&b, 1, 50, 1, "a.pool.test");
        add(&b, 1, 0, 2, "zero.pool.test");
        add(&b, 1, 50, 3, "b.pool.test");
        ASSERT_OK(srv_answer_order(&b, scripted, &t));
        ASSERT_STREQ(b.records[0].target, "a.pool.test");
        /* Then the draw over zero (0) and b (50) is 0: zero, the first in line. */
        ASSERT_STREQ(b.records[1].target, "zero.pool.test");
}

/* A fixed seed: the statistical check is the same on every run. */
static uint32_t seeded(uint32_t n, void *userdata) {
        /* n is small here; the bias of a 64-bit modulo is below 2^-40. */
        return (uint32_t) (test_random_u64(userdata) % n);
}

/* Orders {0, 10, 30, 60} at one priority many times and compares how often each target comes
 * first with RFC 2782's probabilities: (weight + [first in line]) / (sum + 1). */
static void check_first_place_frequencies(srv_random_t random, void *userdata, unsigned rounds) {
        static const uint16_t weights[] = { 10, 0, 60, 30 };
        /* In line: zero first, then the others as sent: 0, 10, 60, 30; sum 100. */
        static const char *const names[] = { "w10.pool.test", "w0.pool.test", "w60.pool.test", "w30.pool.test" };
        static const double expected[] = { 10.0 / 101, 1.0 / 101, 60.0 / 101, 30.0 / 101 };
        unsigned count[ELEMENTSOF(weights)] = {};

        for (unsigned i = 0; i < rounds; i++) {
                _cleanup_(srv_answer_done) SrvAnswer a = {};

                for (size_t k = 0; k < ELEMENTSOF(weights); k++)
                        add(&a, 5, weights[k], 4460, names[k]);
                ASSERT_OK(srv_answer_order(&a, random, userdata));
                for (size_t k = 0; k < ELEMENTSOF(weights); k++)
                        if (streq(a.records[0].target, names[k]))
                                count[k]++;
        }

        for (size_t k = 0; k < ELEMENTSOF(weights); k++) {
                double mean = rounds * expected[k], sd = sqrt(rounds * expected[k] * (1 - expected[k]));

                printf("  %s first %u times, expected %.0f +- %.0f\n", names[k], count[k], mean, sd);
                /* Six standard deviations: a correct order fails this about once in 10^9 runs,
                 * an order that ignored the weights (25% each) fails it every time. */
                ASSERT_TRUE(fabs(count[k] - mean) < 6 * sd);
        }
}

static void test_weights_are_respected_over_many_orderings(void) {
        uint64_t state = 0x5eed;

        check_first_place_frequencies(seeded, &state, 100000);
}

static void test_default_random_source_respects_weights_too(void) {
        check_first_place_frequencies(NULL, NULL, 20000);
}

static void test_random_uniform_stays_in_range_and_covers_it(void) {
        bool seen[7] = {};

        ASSERT_EQ(srv_random_uniform(1, NULL), 0);
        for (unsigned i = 0; i < 2000; i++) {
                uint32_t v = srv_random_uniform(7, NULL);

                ASSERT_TRUE(v < 7);
                seen[v] = true;
        }
        for (size_t i = 0; i < ELEMENTSOF(seen); i++)
                ASSERT_TRUE(seen[i]);
        ASSERT_TRUE(srv_random_uniform(UINT32_MAX, NULL) < UINT32_MAX);
}

static void test_duplicate_targets_and_dot_are_dropped_first_port_kept(void) {
        _cleanup_(srv_answer_done) SrvAnswer a = {};

        add(&a, 1, 0, 4460, "ke1.pool.test");
        add(&a, 2, 0, 0, ".");
        add(&a, 3, 0, 4999, "KE1.pool.test");
        add(&a, 4, 0, 4461, "ke2.pool.test");

        ASSERT_OK(srv_answer_order(&a, NULL, NULL));
        ASSERT_EQ(a.n_records, 2);
        ASSERT_STREQ(a.records[0].target, "ke1.pool.test");
        ASSERT_EQ(a.records[0].port, 4460);
        ASSERT_STREQ(a.records[1].target, "ke2.pool.test");
}

static void test_only_dot_target_means_no_service(void) {
        _cleanup_(srv_answer_done) SrvAnswer a = {};

        add(&a, 0, 0, 0, ".");
        ASSERT_ERROR(srv_answer_order(&a, NULL, NULL), ENOENT);
        ASSERT_EQ(a.n_records, 0);
}

/* ---- which targets the sources of a pool use ---- */

#define IN_USE { .in_use = true }
#define NEW { .in_use = false }
#define IN_USE_FAILED { .in_use = true, .failed = true }
#define NEW_FAILED { .in_use = false, .failed = true }

static void test_pick_keeps_working_sources_whatever_the_new_order(void) {
        /* A new draw put two other targets first: the two in use stay, nothing new. */
        SrvPick p[] = { NEW, NEW, IN_USE, IN_USE };

        ASSERT_EQ(srv_pick(p, ELEMENTSOF(p), 2), 2);
        ASSERT_FALSE(p[0].use);
        ASSERT_FALSE(p[1].use);
        ASSERT_TRUE(p[2].use);
        ASSERT_TRUE(p[3].use);
}

static void test_pick_fills_empty_and_failed_places_in_the_answers_order(void) {
        /* One place empty, one of a failed target: the first two new targets take them. */
        SrvPick p[] = { NEW, IN_USE_FAILED, NEW_FAILED, NEW, IN_USE, NEW };

        ASSERT_EQ(srv_pick(p, ELEMENTSOF(p), 3), 3);
        ASSERT_TRUE(p[0].use);
        ASSERT_FALSE(p[1].use);
        ASSERT_FALSE(p[2].use);
        ASSERT_TRUE(p[3].use);
        ASSERT_TRUE(p[4].use);
        ASSERT_FALSE(p[5].use);
}

static void test_pick_keeps_a_failed_source_while_nothing_better_is_left(void) {
        /* A failed target without a source is never taken; one with a source stays. */
        SrvPick p[] = { IN_USE_FAILED, NEW_FAILED, IN_USE };

        ASSERT_EQ(srv_pick(p, ELEMENTSOF(p), 3), 2);
        ASSERT_TRUE(p[0].use);
        ASSERT_FALSE(p[1].use);
        ASSERT_TRUE(p[2].use);
}

static void test_pick_with_fewer_places_keeps_the_first_in_use(void) {
        SrvPick p[] = { IN_USE, IN_USE, IN_USE };

        ASSERT_EQ(srv_pick(p, ELEMENTSOF(p), 2), 2);
        ASSERT_TRUE(p[0].use);
        ASSERT_TRUE(p[1].use);
        ASSERT_FALSE(p[2].use);
        /* Marks from an earlier call do not stay. */
        ASSERT_EQ(srv_pick(p, ELEMENTSOF(p), 0), 0);
        ASSERT_FALSE(p[0].use);
        ASSERT_EQ(srv_pick(NULL, 0, 4), 0);
}

/* ---- comparing and showing answers ---- */

static void test_same_records_in_another_order_or_ttl_are_the_same(void) {
        _cleanup_(srv_answer_done) SrvAnswer a = {}, b = {}, c = {};
        uint8_t buf[600];
        size_t n;

        add(&a, 10, 60, 4460, "m1.pool.test");
        add(&a, 10, 40, 4461, "m2.pool.test");
        add(&a, 20, 0, 4462, "m3.pool.test");
        add(&b, 20, 0, 4462, "m3.pool.test");
        n = make_rr(buf, DNS_TYPE_SRV, 17, 10, 40, 4461, "m2.pool.test");
        ASSERT_OK(srv_answer_add(&b, &IOVEC_MAKE(buf, n)));
        add(&b, 10, 60, 4460, "m1.pool.test");
        srv_answer_sort(&a);
        srv_answer_sort(&b);
        ASSERT_TRUE(srv_answer_same(&a, &b));
        ASSERT_STREQ(a.records[0].target, "m1.pool.test");
        ASSERT_STREQ(a.records[2].target, "m3.pool.test");

        /* Another port, weight or one record more is a change. */
        add(&c, 10, 60, 4460, "m1.pool.test");
        add(&c, 10, 40, 4463, "m2.pool.test");
        add(&c, 20, 0, 4462, "m3.pool.test");
        srv_answer_sort(&c);
        ASSERT_FALSE(srv_answer_same(&a, &c));
        c.records[1].port = 4461;
        ASSERT_TRUE(srv_answer_same(&a, &c));
        c.records[1].weight = 41;
        ASSERT_FALSE(srv_answer_same(&a, &c));
        c.records[1].weight = 40;
        add(&c, 30, 0, 4464, "m4.pool.test");
        ASSERT_FALSE(srv_answer_same(&a, &c));
}

static void test_describe_lists_every_record_that_fits(void) {
        _cleanup_(srv_answer_done) SrvAnswer a = {};
        char buf[256];

        add(&a, 10, 60, 4460, "m1.pool.test");
        add(&a, 20, 0, 123, "m2.pool.test");
        srv_answer_describe(&a, buf, sizeof buf);
        ASSERT_STREQ(buf, "m1.pool.test:4460 (priority 10, weight 60), m2.pool.test:123 (priority 20, weight 0)");
}

static void test_describe_never_cuts_inside_a_record(void) {
        _cleanup_(srv_answer_done) SrvAnswer a = {};

        for (unsigned i = 0; i < 50; i++) {
                char name[80];

                snprintf(name, sizeof name, "member-%02u-with-a-rather-long-name.pool.test", i);
                add(&a, 10, 10, (uint16_t) (5000 + i), name);
        }

        /* Every size from the smallest on: whole records, then "... and N more", N the rest. */
        for (size_t size = SRV_DESCRIBE_MIN; size <= 4096; size += 7) {
                char buf[4096];
                const char *more, *p;
                size_t listed = 0, rest = 0;

                srv_answer_describe(&a, buf, size);
                ASSERT_TRUE(strlen(buf) < size);
                for (p = buf; (p = strstr(p, " (priority 10, weight 10)")); p++)
                        listed++;
                more = strstr(buf, "... and ");
                if (more) {
                        ASSERT_EQ(sscanf(more, "... and %zu more", &rest), 1);
                        ASSERT_TRUE(endswith(buf, " more"));
                        /* Right after a whole record, or alone. */
                        ASSERT_TRUE(more == buf || strneq(more - 2, ", ", 2));
                        ASSERT_TRUE(more == buf || strneq(more - 5, "10)", 3));
                } else
                        ASSERT_TRUE(endswith(buf, "(priority 10, weight 10)"));
                ASSERT_EQ(listed + rest, 50);
        }

        /* A log line's share (pool_log_targets()): most records, then the count of the rest. */
        char line[1536];
        srv_answer_describe(&a, line, sizeof line);
        ASSERT_TRUE(endswith(line, " more"));
        ASSERT_TRUE(strstr(line, "member-00-with-a-rather-long-name.pool.test:5000 (priority 10, weight 10), "));
}

TEST_MAIN(TEST_CASE(test_srv_record_fields_are_read_and_target_lowercased),
          TEST_CASE(test_root_target_parses_as_empty_name),
          TEST_CASE(test_every_truncation_is_refused),
          TEST_CASE(test_trailing_bytes_are_refused),
          TEST_CASE(test_compression_pointers_are_refused),
          TEST_CASE(test_overlong_label_and_name_are_refused),
          TEST_CASE(test_target_that_is_no_host_name_is_refused),
          TEST_CASE(test_record_that_is_not_in_srv_is_told_apart),
          TEST_CASE(test_ttl_with_top_bit_counts_as_zero),
          TEST_CASE(test_answer_ttl_is_the_smallest),
          TEST_CASE(test_more_than_the_record_limit_is_refused),
          TEST_CASE(test_order_is_by_priority_then_running_sum_of_weights),
          TEST_CASE(test_zero_weight_is_first_in_line_and_taken_only_on_zero),
          TEST_CASE(test_weights_are_respected_over_many_orderings),
          TEST_CASE(test_default_random_source_respects_weights_too),
          TEST_CASE(test_random_uniform_stays_in_range_and_covers_it),
          TEST_CASE(test_duplicate_targets_and_dot_are_dropped_first_port_kept),
          TEST_CASE(test_only_dot_target_means_no_service),
          TEST_CASE(test_copy_is_deep),
          TEST_CASE(test_pick_keeps_working_sources_whatever_the_new_order),
          TEST_CASE(test_pick_fills_empty_and_failed_places_in_the_answers_order),
          TEST_CASE(test_pick_keeps_a_failed_source_while_nothing_better_is_left),
          TEST_CASE(test_pick_with_fewer_places_keeps_the_first_in_use),
          TEST_CASE(test_same_records_in_another_order_or_ttl_are_the_same),
          TEST_CASE(test_describe_lists_every_record_that_fits),
          TEST_CASE(test_describe_never_cuts_inside_a_record));
