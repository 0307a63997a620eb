/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostname-util.h"
#include "macro.h"
#include "random-util.h"
#include "resolve-util.h"
#include "string-util.h"
#include "time-util.h"
#include "timesyncd-srv.h"
#include "unaligned.h"

/* RFC 1035 section 2.3.4: a name is at most 255 octets in wire format, a label 63. */
#define DNS_WIRE_NAME_MAX 255U
#define DNS_LABEL_MAX 63U
/* Type, class, TTL, RDATA length after the owner name (RFC 1035 section 4.1.3). */
#define DNS_RR_FIXED_SIZE 10U
/* Priority, weight, port before the target (RFC 2782). */
#define SRV_RDATA_FIXED_SIZE 6U
/* A pool with more records than this is refused rather than ordered: it bounds the work and
 * keeps the sum of the weights (at most 65535 each) inside 32 bits. */
#define SRV_RECORDS_MAX 1024U
/* resolved gives up on a query itself well before this; it only guards against a hung bus. */
#define SRV_LOOKUP_TIMEOUT_USEC (30 * USEC_PER_SEC)

static bool char_is_ldh(uint8_t c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

/* Reads an uncompressed name from [*p, end). With text set, writes it there in lower case
 * without a trailing dot ("" for the root) and requires every label to be letters, digits and
 * hyphens: it becomes a host name to connect to and to check a certificate against. */
static int dns_name_read(const uint8_t **p, const uint8_t *end, char *text) {
        const uint8_t *q = *p;
        size_t wire = 0, n = 0;

        for (;;) {
                uint8_t len;

                if (q >= end)
                        return -EBADMSG;
                len = *q++;
                wire++;
                if (len == 0)
                        break;
                /* 0xC0: a compression pointer, which RDATA of resolved's answers never holds;
                 * 0x40 and 0x80: extended label types (RFC 6891 section 5), never valid here. */
                if (len > DNS_LABEL_MAX)
                        return -EBADMSG;
                if ((size_t) (end - q) < len)
                        return -EBADMSG;
                wire += len;
                if (wire >= DNS_WIRE_NAME_MAX) /* the root byte still has to fit */
                        return -EBADMSG;
                if (text) {
                        if (n > 0)
                                text[n++] = '.';
                        for (size_t i = 0; i < len; i++) {
                                if (!char_is_ldh(q[i]))
                                        return -EBADMSG;
                                text[n++] = (char) (q[i] >= 'A' && q[i] <= 'Z' ? q[i] - 'A' + 'a' : q[i]);
                        }
                }
                q += len;
        }

        if (text) {
                text[n] = '\0';
                if (n > 0 && !hostname_is_valid(text))
                        return -EBADMSG;
        }
        *p = q;
        return 0;
}

void srv_answer_done(SrvAnswer *a) {
        if (!a)
                return;
        for (size_t i = 0; i < a->n_records; i++)
                free(a->records[i].target);
        a->records = mfree(a->records);
        a->n_records = 0;
        a->ttl = 0;
}

int srv_answer_copy(const SrvAnswer *a, SrvAnswer *ret) {
        SrvAnswer copy = { .ttl = a->ttl };

        assert(a);
        assert(ret);

        copy.records = new0(SrvRecord, MAX(a->n_records, (size_t) 1));
        if (!copy.records)
                return -ENOMEM;
        for (size_t i = 0; i < a->n_records; i++) {
                copy.records[i] = a->records[i];
                copy.records[i].target = strdup(a->records[i].target);
                if (!copy.records[i].target) {
                        srv_answer_done(&copy);
                        return -ENOMEM;
                }
                copy.n_records++;
        }
        *ret = copy;
        return 0;
}

int srv_record_parse(const struct iovec *rr, SrvRecord *ret) {
        char target[DNS_WIRE_NAME_MAX];
        const uint8_t *p, *end, *rdata;
        uint16_t type, class, rdlength;
        uint32_t ttl;
        char *t;
        int r;

        assert(rr);
        assert(ret);

        if (!rr->iov_base || rr->iov_len == 0)
                return -EBADMSG;
        p = rr->iov_base;
        end = p + rr->iov_len;

        r = dns_name_read(&p, end, NULL);
        if (r < 0)
                return r;
        if ((size_t) (end - p) < DNS_RR_FIXED_SIZE)
                return -EBADMSG;
        type = unaligned_read_be16(p);
        class = unaligned_read_be16(p + 2);
        ttl = unaligned_read_be32(p + 4);
        rdlength = unaligned_read_be16(p + 8);
        p += DNS_RR_FIXED_SIZE;
        if (type != DNS_TYPE_SRV || class != DNS_CLASS_IN)
                return -EMEDIUMTYPE;
        /* One record per buffer: RDATA ends exactly where the buffer does. */
        if ((size_t) (end - p) != rdlength || rdlength < SRV_RDATA_FIXED_SIZE + 1)
                return -EBADMSG;

        rdata = p;
        p += SRV_RDATA_FIXED_SIZE;
        r = dns_name_read(&p, end, target);
        if (r < 0)
                return r;
        if (p != end)
                return -EBADMSG;

        t = strdup(target);
        if (!t)
                return -ENOMEM;
        *ret = (SrvRecord) {
                .priority = unaligned_read_be16(rdata),
                .weight = unaligned_read_be16(rdata + 2),
                .port = unaligned_read_be16(rdata + 4),
                /* RFC 2181 section 8: a TTL with the top bit set counts as zero. */
                .ttl = ttl > INT32_MAX ? 0 : ttl,
                .target = t,
        };
        return 0;
}

int srv_answer_add(SrvAnswer *a, const struct iovec *rr) {
        SrvRecord rec, *records;
        int r;

        assert(a);

        if (a->n_records >= SRV_RECORDS_MAX)
                return -E2BIG;
        r = srv_record_parse(rr, &rec);
        if (r < 0)
                return r;
        records = reallocarray(a->records, a->n_records + 1, sizeof(SrvRecord));
        if (!records) {
                free(rec.target);
                return -ENOMEM;
        }
        a->records = records;
        a->ttl = a->n_records == 0 ? rec.ttl : MIN(a->ttl, rec.ttl);
        a->records[a->n_records++] = rec;
        return 0;
}

uint32_t srv_random_uniform(uint32_t n, void *userdata) {
        uint32_t v, limit;

        assert(n > 0);

        /* The largest multiple of n that fits: values at or above it would favour the low
         * residues, so they are drawn again. */
        limit = UINT32_MAX - UINT32_MAX % n;
        do
                if (random_bytes(&v, sizeof v) < 0)
                        /* getrandom() does not fail once the loop runs; if it does, a fixed
                         * order is still a valid RFC 2782 order, only not a balanced one. */
                        return 0;
        while (v >= limit);
        return v % n;
}

/* Moves r[from] to r[to] (to <= from), shifting the records between up by one: the ones not
 * yet selected keep their relative order. */
static void records_move(SrvRecord *r, size_t from, size_t to) {
        SrvRecord moved = r[from];

        assert(to <= from);
        memmove(r + to + 1, r + to, (from - to) * sizeof(SrvRecord));
        r[to] = moved;
}

/* RFC 2782, "Usage rules": within one priority, zero weights go first, then repeatedly pick
 * a uniform number in [0, sum of the remaining weights] and select the first record whose
 * running sum reaches it. */
static void order_one_priority(SrvRecord *r, size_t n, srv_random_t random, void *userdata) {
        size_t zeros = 0;

        for (size_t i = 0; i < n; i++)
                if (r[i].weight == 0)
                        records_move(r, i, zeros++);

        for (size_t i = 0; i + 1 < n; i++) {
                uint32_t sum = 0, pick, running = 0;
                size_t j;

                for (j = i; j < n; j++)
                        sum += r[j].weight;
                pick = random(sum + 1, userdata);
                for (j = i; j < n; j++) {
                        running += r[j].weight;
                        if (running >= pick)
                                break;
                }
                /* A source that returned more than asked selects the last one. */
                records_move(r, MIN(j, n - 1), i);
        }
}

int srv_answer_order(SrvAnswer *a, srv_random_t random, void *userdata) {
        SrvRecord *r;
        size_t kept = 0;

        assert(a);

        if (!random)
                random = srv_random_uniform;
        r = a->records;

        /* Stable insertion sort by priority: n is bounded by SRV_RECORDS_MAX, and equal
         * priorities keep the order the server sent them in before the weighted draw. */
        for (size_t i = 1; i < a->n_records; i++) {
                size_t j = i;

                while (j > 0 && r[j - 1].priority > r[i].priority)
                        j--;
                records_move(r, i, j);
        }

        for (size_t i = 0; i < a->n_records;) {
                size_t j = i;

                while (j < a->n_records && r[j].priority == r[i].priority)
                        j++;
                order_one_priority(r + i, j - i, random, userdata);
                i = j;
        }

        /* RFC 2782: target "." means no service. A target twice would be one server counted
         * as two sources. */
        for (size_t i = 0; i < a->n_records; i++) {
                bool dup = isempty(r[i].target);

                for (size_t k = 0; !dup && k < kept; k++)
                        dup = streq(r[k].target, r[i].target);
                if (dup) {
                        free(r[i].target);
                        continue;
                }
                r[kept++] = r[i];
        }
        a->n_records = kept;
        return kept > 0 ? 0 : -ENOENT;
}

size_t srv_pick(SrvPick *picks, size_t n, size_t wanted) {
        size_t k = 0;

        assert(picks || n == 0);

        for (size_t i = 0; i < n; i++)
                picks[i].use = false;
        /* Three passes, each in the answer's order: kept, new, failed but better than nothing. */
        for (unsigned pass = 0; pass < 3; pass++)
                for (size_t i = 0; i < n && k < wanted; i++) {
                        SrvPick *x = &picks[i];
                        bool take = pass == 0 ? x->in_use && !x->failed :
                                    pass == 1 ? !x->in_use && !x->failed :
                                                x->in_use && x->failed;

                        if (take && !x->use) {
                                x->use = true;
                                k++;
                        }
                }
        return k;
}

static int srv_record_compare(const void *x, const void *y) {
        const SrvRecord *a = x, *b = y;
        int r;

        if (a->priority != b->priority)
                return a->priority < b->priority ? -1 : 1;
        r = strcmp(a->target, b->target);
        if (r != 0)
                return r;
        if (a->port != b->port)
                return a->port < b->port ? -1 : 1;
        if (a->weight != b->weight)
                return a->weight < b->weight ? -1 : 1;
        return 0;
}

void srv_answer_sort(SrvAnswer *a) {
        assert(a);

        if (a->n_records > 1)
                qsort(a->records, a->n_records, sizeof(SrvRecord), srv_record_compare);
}

bool srv_answer_same(const SrvAnswer *a, const SrvAnswer *b) {
        assert(a);
        assert(b);

        if (a->n_records != b->n_records)
                return false;
        for (size_t i = 0; i < a->n_records; i++)
                if (srv_record_compare(&a->records[i], &b->records[i]) != 0)
                        return false;
        return true;
}

void srv_answer_describe(const SrvAnswer *a, char *buf, size_t size) {
        size_t len = 0;

        assert(a);
        assert(buf);
        assert(size >= SRV_DESCRIBE_MIN);

        buf[0] = '\0';
        for (size_t i = 0; i < a->n_records; i++) {
                const SrvRecord *r = &a->records[i];
                char entry[DNS_WIRE_NAME_MAX + 64];
                size_t after = a->n_records - i - 1, need;
                int n;

                n = snprintf(entry, sizeof entry, "%s%s:%u (priority %u, weight %u)", i > 0 ? ", " : "", r->target,
                             r->port, r->priority, r->weight);
                if (n < 0)
                        n = 0;
                /* This record, and when others follow, room for the "... and N more" that may
                 * have to come after it. */
                need = (size_t) n + (after > 0 ? (size_t) snprintf(NULL, 0, ", ... and %zu more", after) : 0);
                if (len + need >= size) {
                        (void) snprintf(buf + len, size - len, "%s... and %zu more", i > 0 ? ", " : "",
                                        a->n_records - i);
                        return;
                }
                memcpy(buf + len, entry, (size_t) n + 1);
                len += (size_t) n;
        }
}

struct SrvLookup {
        sd_bus *bus;
        sd_bus_slot *slot;
        char *name;             /* _ntske._tcp.NAME, no trailing dot */
        srv_random_t random;
        void *random_userdata;
        srv_handler_t handler;
        void *userdata;
        SrvAnswer answer;       /* kept while resolved's DNSSEC setting is asked for */
};

SrvLookup *srv_lookup_free(SrvLookup *l) {
        if (!l)
                return NULL;
        sd_bus_slot_unref(l->slot);
        sd_bus_unref(l->bus);
        srv_answer_done(&l->answer);
        free(l->name);
        return mfree(l);
}

/* Calls the handler with error and a message made from format; the handler may free l.
 * Returns 0, for the reply callbacks to return. */
_printf_(3, 4)
static int lookup_fail(SrvLookup *l, int error, const char *format, ...) {
        _cleanup_free_ char *message = NULL;
        va_list ap;

        assert(error < 0);

        va_start(ap, format);
        if (vasprintf(&message, format, ap) < 0)
                message = NULL;
        va_end(ap);

        l->slot = sd_bus_slot_unref(l->slot);
        l->handler(l, error, message ?: "SRV lookup failed (out of memory while describing why)", NULL,
                   l->userdata);
        return 0;
}

static int on_dnssec_setting(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        SrvLookup *l = userdata;
        const char *mode = NULL;

        /* Only to say why: an error here still means "not authenticated". */
        if (!sd_bus_message_is_method_error(reply, NULL))
                (void) sd_bus_message_read(reply, "v", "s", &mode);

        srv_answer_done(&l->answer);
        if (streq_ptr(mode, "no"))
                return lookup_fail(l, -ENOKEY,
                            "systemd-resolved runs with DNSSEC=no, so its answer for %s is not validated; "
                            "SRV pools are used only with DNSSEC-validated answers: set DNSSEC=yes in "
                            "resolved.conf (or a drop-in in /etc/systemd/resolved.conf.d/)", l->name);
        return lookup_fail(l, -ENOKEY,
                            "the SRV records of %s are not DNSSEC-authenticated (resolved's DNSSEC=%s): the "
                            "zone is unsigned or not validated; SRV pools are used only from a "
                            "DNSSEC-signed zone with systemd-resolved running DNSSEC=yes", l->name,
                            mode ?: "unknown");
}

static void lookup_not_authenticated(SrvLookup *l) {
        int r;

        l->slot = sd_bus_slot_unref(l->slot);
        r = sd_bus_call_method_async(l->bus, &l->slot, "org.freedesktop.resolve1", "/org/freedesktop/resolve1",
                                     "org.freedesktop.DBus.Properties", "Get", on_dnssec_setting, l, "ss",
                                     "org.freedesktop.resolve1.Manager", "DNSSEC");
        if (r < 0) {
                srv_answer_done(&l->answer);
                (void) lookup_fail(l, -ENOKEY,
                                   "the SRV records of %s are not DNSSEC-authenticated; SRV pools are used only "
                                   "from a DNSSEC-signed zone with systemd-resolved running DNSSEC=yes", l->name);
        }
}

/* a(iqqay) of ResolveRecord into l->answer: every IN SRV record; others are skipped. */
static int read_records(SrvLookup *l, sd_bus_message *reply) {
        int r;

        r = sd_bus_message_enter_container(reply, 'a', "(iqqay)");
        if (r < 0)
                return r;
        for (;;) {
                uint16_t class, type;
                int32_t ifindex;
                struct iovec rr;

                r = sd_bus_message_enter_container(reply, 'r', "iqqay");
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                r = sd_bus_message_read(reply, "iqq", &ifindex, &class, &type);
                if (r < 0)
                        return r;
                r = sd_bus_message_read_array(reply, 'y', (const void **) &rr.iov_base, &rr.iov_len);
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(reply);
                if (r < 0)
                        return r;
                if (class != DNS_CLASS_IN || type != DNS_TYPE_SRV)
                        continue;
                r = srv_answer_add(&l->answer, &rr);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_exit_container(reply);
}

static int on_resolve_record(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        SrvLookup *l = userdata;
        const sd_bus_error *e;
        uint64_t flags;
        int r;

        e = sd_bus_message_get_error(reply);
        if (e) {
                if (resolved_reply_means_absent(reply))
                        return lookup_fail(l, -ENOTCONN,
                                           "systemd-resolved is not running (org.freedesktop.resolve1 is not on the "
                                           "system bus, or cannot be started: %s); SRV pools need systemd-resolved "
                                           "with DNSSEC=yes", e->message ?: e->name);
                if (sd_bus_error_has_name(e, "org.freedesktop.resolve1.DnssecFailed"))
                        return lookup_fail(l, -EBADMSG,
                                           "DNSSEC validation of %s failed (%s): the zone's signatures do not "
                                           "verify, or the system clock is so wrong that they look expired or not "
                                           "yet valid", l->name, e->message ?: e->name);
                if (sd_bus_error_has_names(e, "org.freedesktop.resolve1.NoSuchRR",
                                           "org.freedesktop.resolve1.DnsError.NXDOMAIN"))
                        return lookup_fail(l, -ENOENT, "%s has no SRV records: check the name after srv:",
                                           l->name);
                return lookup_fail(l, sd_bus_error_get_errno(e) > 0 ? -sd_bus_error_get_errno(e) : -EIO,
                                   "systemd-resolved could not look up %s: %s", l->name,
                                   e->message ?: e->name);
        }

        r = read_records(l, reply);
        if (r >= 0)
                r = sd_bus_message_read(reply, "t", &flags);
        if (r < 0) {
                srv_answer_done(&l->answer);
                return lookup_fail(l, r == -ENOMEM ? r : -EBADMSG,
                                   "systemd-resolved's answer for %s is malformed: %s", l->name, strerror(-r));
        }
        if (l->answer.n_records == 0)
                return lookup_fail(l, -ENOENT, "%s has no SRV records: check the name after srv:", l->name);
        if (!(flags & RESOLVED_FLAG_AUTHENTICATED)) {
                lookup_not_authenticated(l);
                return 0;
        }

        r = srv_answer_order(&l->answer, l->random, l->random_userdata);
        if (r < 0) {
                srv_answer_done(&l->answer);
                return lookup_fail(l, -ENOENT, "%s says there is no NTS-KE service there (SRV target \".\")",
                                   l->name);
        }

        l->slot = sd_bus_slot_unref(l->slot);
        /* The handler may free l, and with it the answer: hand it over first. */
        SrvAnswer answer = l->answer;
        l->answer = (SrvAnswer) {};
        l->handler(l, 0, NULL, &answer, l->userdata);
        srv_answer_done(&answer);
        return 0;
}

int srv_lookup_new(sd_bus *bus, const char *name, srv_random_t random, void *random_userdata,
                   srv_handler_t handler, void *userdata, SrvLookup **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_free_ SrvLookup *l = NULL;
        size_t len;
        int r;

        assert(bus);
        assert(name);
        assert(handler);
        assert(ret);

        len = strlen(name);
        if (len > 0 && name[len - 1] == '.')
                len--;
        if (len == 0)
                return -EINVAL;

        l = new0(SrvLookup, 1);
        if (!l)
                return -ENOMEM;
        if (asprintf(&l->name, SRV_NTSKE_PREFIX "%.*s", (int) len, name) < 0) {
                l->name = NULL;
                return -ENOMEM;
        }

        r = sd_bus_message_new_method_call(bus, &m, "org.freedesktop.resolve1", "/org/freedesktop/resolve1",
                                           "org.freedesktop.resolve1.Manager", "ResolveRecord");
        if (r >= 0)
                /* Any interface; flags 0: never SD_RESOLVED_NO_VALIDATE, which would turn a
                 * failed validation into a plain unauthenticated answer. */
                r = sd_bus_message_append(m, "isqqt", 0, l->name, DNS_CLASS_IN, DNS_TYPE_SRV, UINT64_C(0));
        if (r >= 0)
                r = sd_bus_call_async(bus, &l->slot, m, on_resolve_record, l, SRV_LOOKUP_TIMEOUT_USEC);
        if (r < 0) {
                free(l->name);
                return r;
        }

        l->bus = sd_bus_ref(bus);
        l->random = random;
        l->random_userdata = random_userdata;
        l->handler = handler;
        l->userdata = userdata;
        *ret = TAKE_PTR(l);
        return 0;
}
