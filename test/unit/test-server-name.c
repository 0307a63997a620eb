/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "server-name.h"
#include "string-util.h"
#include "tests.h"

static void assert_server(const char *s, const char *host, uint16_t port) {
        _cleanup_free_ char *h = NULL;
        uint16_t p = 4711;

        if (server_name_parse(s, &h, &p) < 0) {
                fprintf(stderr, "server_name_parse(\"%s\") failed\n", s);
                abort();
        }
        ASSERT_STREQ(h, host);
        ASSERT_EQ(p, port);
}

static void assert_invalid(const char *s) {
        char *h = NULL;
        uint16_t p = 4711;

        if (server_name_parse(s, &h, &p) != -EINVAL || h || p != 4711) {
                fprintf(stderr, "server_name_parse(\"%s\") was accepted\n", s);
                abort();
        }
}

static void test_host_names_without_port_get_port_zero(void) {
        assert_server("ntp.example.com", "ntp.example.com", 0);
        assert_server("0.debian.pool.ntp.org", "0.debian.pool.ntp.org", 0);
        assert_server("localhost", "localhost", 0);
        assert_server("a-b.c0", "a-b.c0", 0);
        assert_server("ntp.example.com.", "ntp.example.com.", 0);
        assert_server("NTP.Example.COM", "NTP.Example.COM", 0);
}

static void test_host_and_port_are_split(void) {
        assert_server("ntp.example.com:4460", "ntp.example.com", 4460);
        assert_server("localhost:1", "localhost", 1);
        assert_server("localhost:65535", "localhost", 65535);
}

static void test_ipv4_literals_with_and_without_port(void) {
        assert_server("192.0.2.1", "192.0.2.1", 0);
        assert_server("127.0.0.1:123", "127.0.0.1", 123);
}

static void test_ipv6_literals_bracketed_or_bare(void) {
        assert_server("[::1]:4460", "::1", 4460);
        assert_server("[2001:db8::1]", "2001:db8::1", 0);
        assert_server("fe80::1", "fe80::1", 0);
        assert_server("::1", "::1", 0);
        assert_server("::ffff:192.0.2.1", "::ffff:192.0.2.1", 0);
}

static void test_ports_outside_1_to_65535_are_rejected(void) {
        assert_invalid("localhost:0");
        assert_invalid("localhost:65536");
        assert_invalid("localhost:100000");
        assert_invalid("localhost:");
        assert_invalid("localhost:-1");
        assert_invalid("localhost:+1");
        assert_invalid("localhost:0x10");
        assert_invalid("localhost: 123");
        assert_invalid("[::1]:0");
        assert_invalid("[::1]:");
        assert_invalid("127.0.0.1:99999");
}

static void test_malformed_host_names_are_rejected(void) {
        char long_label[70], long_name[300];

        assert_invalid("");
        assert_invalid(".");
        assert_invalid("axrfav.,avf..ra");
        assert_invalid("12345..123");
        assert_invalid("a..b");
        assert_invalid(".example.com");
        assert_invalid("-ntp.example.com");
        assert_invalid("ntp-.example.com");
        assert_invalid("ntp_1.example.com");
        assert_invalid("ntp example.com");
        assert_invalid("ntp.example.com..");
        assert_invalid("h\xc3\xa9.example");
        /* Dotted-decimal shapes are addresses or typos (RFC 1123 section 2.1), never names. */
        assert_invalid("1.2.3.256");
        assert_invalid("12345");
        assert_invalid("1.2.3");

        memset(long_label, 'a', 63);
        strcpy(long_label + 63, ".com");
        assert_server(long_label, long_label, 0);
        memset(long_label, 'a', 64);
        strcpy(long_label + 64, ".com");
        assert_invalid(long_label);

        /* 4 * 63 + 3 dots = 255 characters: over the 253 limit. */
        for (size_t i = 0; i < 4; i++) {
                memset(long_name + i * 64, 'a', 63);
                long_name[i * 64 + 63] = '.';
        }
        long_name[255] = '\0';
        assert_invalid(long_name);
        long_name[253] = '\0';
        assert_server(long_name, long_name, 0);
}

static void test_malformed_addresses_are_rejected(void) {
        assert_invalid("[::1");
        assert_invalid("[]");
        assert_invalid("[::1]x");
        assert_invalid("[::1]:123:4");
        assert_invalid("[192.0.2.1]");
        assert_invalid("[ntp.example.com]:123");
        assert_invalid("fe80::1:123:");
        assert_invalid("fe80::g");
        assert_invalid("fe80::1%eth0");
        assert_invalid("::1:123x");
        assert_invalid("host:1:2");
        assert_invalid("1.2.3.4.5");
}

static void test_validation_needs_no_output(void) {
        ASSERT_TRUE(server_name_is_valid("ntp.example.com:123"));
        ASSERT_FALSE(server_name_is_valid("ntp.example.com:0"));
        ASSERT_OK(server_name_parse("[::1]:4460", NULL, NULL));
}

static void assert_nts(const char *s, ServerNameKind kind, const char *host, uint16_t port) {
        _cleanup_free_ char *h = NULL;
        ServerNameKind k = _SERVER_NAME_KIND_MAX;
        uint16_t p = 4711;

        if (server_name_parse_nts(s, &k, &h, &p) < 0) {
                fprintf(stderr, "server_name_parse_nts(\"%s\") failed\n", s);
                abort();
        }
        ASSERT_EQ(k, kind);
        ASSERT_STREQ(h, host);
        ASSERT_EQ(p, port);
}

static void test_nts_lists_take_pool_and_srv_prefixes(void) {
        assert_nts("pool:nts.pool.example", SERVER_NAME_KE_POOL, "nts.pool.example", 0);
        assert_nts("pool:nts.pool.example:4461", SERVER_NAME_KE_POOL, "nts.pool.example", 4461);
        assert_nts("pool:[::1]:4460", SERVER_NAME_KE_POOL, "::1", 4460);
        assert_nts("pool:127.0.0.1", SERVER_NAME_KE_POOL, "127.0.0.1", 0);
        assert_nts("srv:example.org", SERVER_NAME_SRV, "example.org", 0);
        assert_nts("srv:example.org.", SERVER_NAME_SRV, "example.org.", 0);
        assert_nts("ntp.example.com:4460", SERVER_NAME_ONE, "ntp.example.com", 4460);
        assert_nts("[::1]", SERVER_NAME_ONE, "::1", 0);
}

static void test_pool_and_srv_with_a_port_keep_their_old_meaning(void) {
        /* A host named "pool" or "srv" at a port, as before the prefixes existed. */
        assert_nts("pool:4460", SERVER_NAME_ONE, "pool", 4460);
        assert_nts("srv:123", SERVER_NAME_ONE, "srv", 123);
        assert_server("pool:4460", "pool", 4460);
}

static void test_malformed_pools_are_rejected(void) {
        static const char *const bad[] = {
                "pool:", "srv:", "srv:example.org:4460", "srv:127.0.0.1", "srv:[::1]", "srv:::1",
                "pool:host:0", "pool:pool:x", "srv:srv:x", "pool:-bad", "srv:a..b", "pool:[::1",
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char *h = NULL;
                if (server_name_parse_nts(bad[i], NULL, &h, NULL) != -EINVAL || h) {
                        fprintf(stderr, "server_name_parse_nts(\"%s\") was accepted\n", bad[i]);
                        abort();
                }
        }
        /* Plain NTP lists know no pools. */
        ASSERT_FALSE(server_name_is_valid("pool:nts.pool.example"));
        ASSERT_FALSE(server_name_is_valid("srv:example.org"));
        ASSERT_TRUE(server_name_is_valid_nts("srv:example.org"));
}

static void test_invalid_names_say_what_is_wrong(void) {
        static const struct {
                const char *name;
                bool nts;
                const char *why;
        } cases[] = {
                { "nts://time.example", true, "a URL: give the host name alone, without a scheme such as nts://" },
                { "a.example,b.example", true, "a comma: servers are separated by spaces" },
                { "a.example:99999", true, "the port is not a number from 1 to 65535" },
                { "a.example:0", false, "the port is not a number from 1 to 65535" },
                { "a.example:", true, "the port is not a number from 1 to 65535" },
                { "[::1]:70000", true, "the port is not a number from 1 to 65535" },
                { "[::1", true, "'[' without ']'" },
                { "[a.example]:4460", true, "brackets hold an IPv6 address only" },
                { "[::1]x", true, "only \":PORT\" may follow ']'" },
                { "2001:db8::1::2", true, "not an IPv6 address (one with a port goes in brackets: [2001:db8::1]:4460)" },
                { "bad_name.example", true, "'_' is not allowed in a host name" },
                { "a..example", false, "not a host name or IPv4 address (letters, digits, '-' and '.', labels of 1 to 63)" },
                { "srv:a.example:4460", true, "srv: takes a DNS name, without a port or an address" },
                { "pool:a.example", false, "pool: and srv: entries are for NTS= and FallbackNTS= only" },
                { "pool:a.example:99999", true, "the port is not a number from 1 to 65535" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *why = server_name_invalid_reason(cases[i].name, cases[i].nts);

                if (!streq_ptr(why, cases[i].why)) {
                        fprintf(stderr, "%s: got \"%s\", expected \"%s\"\n", cases[i].name, why ?: "(null)", cases[i].why);
                        abort();
                }
        }
        ASSERT_TRUE(!server_name_invalid_reason("a.example:4460", false));
        ASSERT_TRUE(!server_name_invalid_reason("pool:a.example", true));
        ASSERT_TRUE(!server_name_invalid_reason("[::1]:4460", true));
}

TEST_MAIN(TEST_CASE(test_host_names_without_port_get_port_zero),
          TEST_CASE(test_host_and_port_are_split),
          TEST_CASE(test_ipv4_literals_with_and_without_port),
          TEST_CASE(test_ipv6_literals_bracketed_or_bare),
          TEST_CASE(test_ports_outside_1_to_65535_are_rejected),
          TEST_CASE(test_malformed_host_names_are_rejected),
          TEST_CASE(test_malformed_addresses_are_rejected),
          TEST_CASE(test_validation_needs_no_output),
          TEST_CASE(test_nts_lists_take_pool_and_srv_prefixes),
          TEST_CASE(test_pool_and_srv_with_a_port_keep_their_old_meaning),
          TEST_CASE(test_malformed_pools_are_rejected),
          TEST_CASE(test_invalid_names_say_what_is_wrong));
