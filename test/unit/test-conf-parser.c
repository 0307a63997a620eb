/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "conf-files.h"
#include "conf-parser.h"
#include "fileio.h"
#include "strv.h"
#include "test-util.h"
#include "time-util.h"

/* Every assignment of [Test] Record= is appended to the list as "<file name>:<line>:<value>",
 * so a test sees exactly which files were read, in which order, and what each value became. */
static int record(const char *filename, unsigned line, const char *section, const char *lvalue,
                  int ltype, const char *rvalue, void *data, void *userdata) {
        const char *base = strrchr(filename, '/');
        char ***records = data;
        char buf[4096];

        snprintf(buf, sizeof buf, "%s:%u:%s", base ? base + 1 : filename, line, rvalue);
        return strv_extend(records, buf);
}

typedef struct Settings {
        char **records;
        usec_t interval;
        char *path;
} Settings;

static void settings_done(Settings *s) {
        s->records = strv_free(s->records);
        s->path = mfree(s->path);
}

static const char *const test_sections[] = { "Test", "Other", NULL };

#define TEST_SPEC(s)                                                                           \
        (&(const ConfigSpec) {                                                                 \
                .sections = test_sections,                                                     \
                .table = (const ConfigTableItem[]) {                                           \
                        { "Test", "Record", record, 0, &(s)->records },                        \
                        { "Test", "Interval", config_parse_sec, 0, &(s)->interval },           \
                        { "Test", "Path", config_parse_path, 0, &(s)->path },                  \
                        { "Other", "Record", record, 0, &(s)->records },                       \
                        {},                                                                    \
                },                                                                             \
                .userdata = (s),                                                               \
        })

/* Parses text as the file "test.conf" and returns the log output. */
static char *parse_text(const char *text, size_t size, Settings *s, int expected) {
        LogCapture c;
        FILE *f;
        int r;

        f = fmemopen((void *) text, size, "r");
        ASSERT_TRUE(f);
        log_capture_start(&c);
        r = config_parse_stream(f, "/etc/test.conf", TEST_SPEC(s));
        fclose(f);
        char *out = log_capture_stop(&c);
        ASSERT_EQ(r, expected);
        return out;
}

#define PARSE_OK(text, s) parse_text((text), strlen(text), (s), 0)

static void assert_records(char **records, const char *const *expected) {
        size_t n = 0;

        for (; expected[n]; n++)
                if (n >= strv_length(records) || !streq(records[n], expected[n])) {
                        fprintf(stderr, "record %zu: expected \"%s\", got \"%s\"\n", n, expected[n],
                                n < strv_length(records) ? records[n] : "(none)");
                        abort();
                }
        ASSERT_EQ(strv_length(records), n);
}

#define ASSERT_RECORDS(records, ...)                                                               \
        assert_records((records), (const char *const[]) { __VA_ARGS__, NULL })

static void test_assignments_apply_in_order_and_later_ones_win(void) {
        _cleanup_(settings_done) Settings s = {};
        _cleanup_free_ char *out =
                PARSE_OK("[Test]\nRecord=a\nInterval=5s\nRecord=b\nInterval=1min 4s\n", &s);

        ASSERT_RECORDS(s.records, "test.conf:2:a", "test.conf:4:b");
        ASSERT_TRUE(s.interval == 64 * USEC_PER_SEC);
        ASSERT_STREQ(out, "");
}

static void test_comments_blank_lines_and_surrounding_whitespace_are_ignored(void) {
        _cleanup_(settings_done) Settings s = {};
        _cleanup_free_ char *out = PARSE_OK(
                "# comment\n; also a comment\n\n   \t\n  [Test]  \n"
                "   # indented comment\n  Record  =   spaced value  \t\n;Record=commented\n",
                &s);

        ASSERT_RECORDS(s.records, "test.conf:7:spaced value");
        ASSERT_STREQ(out, "");
}

static void test_trailing_backslash_continues_the_line(void) {
        _cleanup_(settings_done) Settings s = {};
        _cleanup_free_ char *out = PARSE_OK("[Test]\nRecord=one\\\n"
                                            "# a comment inside is skipped\n"
                                            "two \\\n"
                                            "  three\n"
                                            "Record=four\n",
                                            &s);

        ASSERT_RECORDS(s.records, "test.conf:5:one two    three", "test.conf:6:four");
        ASSERT_STREQ(out, "");
}

static void test_escaped_backslash_does_not_continue(void) {
        _cleanup_(settings_done) Settings s = {};
        _cleanup_free_ char *out = PARSE_OK("[Test]\nRecord=a\\\\\nRecord=b\n", &s);

        ASSERT_RECORDS(s.records, "test.conf:2:a\\\\", "test.conf:3:b");
        ASSERT_STREQ(out, "");
}

static void test_continuation_at_end_of_file_still_counts(void) {
        _cleanup_(settings_done) Settings s = {};
        _cleanup_free_ char *out = PARSE_OK("[Test]\nRecord=last\\", &s);

        ASSERT_RECORDS(s.records, "test.conf:2:last");
        ASSERT_STREQ(out, "");
}

static void test_unknown_key_warns_with_file_and_line_and_the_rest_applies(void) {
        _cleanup_(settings_done) Settings s = {};
        _cleanup_free_ char *out =
                PARSE_OK("[Test]\nRecord=a\nFoo=bar\nrecord=case matters\nRecord=b\n", &s);

        ASSERT_CONTAINS(out,
                        "/etc/test.conf:3: Unknown key name 'Foo' in section 'Test', ignoring.");
        ASSERT_CONTAINS(out,
                        "/etc/test.conf:4: Unknown key name 'record' in section 'Test', ignoring.");
        ASSERT_RECORDS(s.records, "test.conf:2:a", "test.conf:5:b");
}

static void test_unknown_section_warns_once_and_its_keys_are_skipped(void) {
        _cleanup_(settings_done) Settings s = {};
        _cleanup_free_ char *out = PARSE_OK("[Bogus]\nRecord=x\nFoo=y\n[Other]\nRecord=z\n", &s);

        ASSERT_CONTAINS(out, "/etc/test.conf:1: Unknown section 'Bogus'. Ignoring.");
        ASSERT_NOT_CONTAINS(out, "Foo");
        ASSERT_NOT_CONTAINS(out, "outside");
        ASSERT_RECORDS(s.records, "test.conf:5:z");
}

static void test_x_prefixed_sections_and_keys_are_silently_ignored(void) {
        _cleanup_(settings_done) Settings s = {};
        _cleanup_free_ char *out =
                PARSE_OK("[X-Vendor]\nRecord=x\n[Test]\nX-Mine=1\nRecord=y\n", &s);

        ASSERT_STREQ(out, "");
        ASSERT_RECORDS(s.records, "test.conf:5:y");
}

static void test_lines_without_key_or_equals_warn_and_are_skipped(void) {
        _cleanup_(settings_done) Settings s = {};
        _cleanup_free_ char *out =
                PARSE_OK("Record=early\n[Test]\nnot an assignment\n=value\nRecord=ok\n", &s);

        ASSERT_CONTAINS(out, "/etc/test.conf:1: Assignment outside of section. Ignoring.");
        ASSERT_CONTAINS(out, "/etc/test.conf:3: Missing '=', ignoring line.");
        ASSERT_CONTAINS(out, "/etc/test.conf:4: Missing key name before '=', ignoring line.");
        ASSERT_RECORDS(s.records, "test.conf:5:ok");
}

static void test_bad_value_warns_with_file_and_line_and_keeps_the_old_one(void) {
        _cleanup_(settings_done) Settings s = { .interval = 7 };
        _cleanup_free_ char *out =
                PARSE_OK("[Test]\nInterval=5x\nPath=relative/path\nInterval=\nRecord=after\n", &s);

        ASSERT_CONTAINS(out, "/etc/test.conf:2: Invalid time span \"5x\" for Interval=, keeping 7us.");
        ASSERT_CONTAINS(out,
                        "/etc/test.conf:3: Path= path is not absolute, ignoring: relative/path");
        ASSERT_CONTAINS(out, "/etc/test.conf:4: Invalid time span \"\" for Interval=, keeping 7us.");
        ASSERT_TRUE(s.interval == 7);
        ASSERT_TRUE(!s.path);
        ASSERT_RECORDS(s.records, "test.conf:5:after");
}

static void test_empty_path_resets_it(void) {
        _cleanup_(settings_done) Settings s = {};
        _cleanup_free_ char *out = PARSE_OK("[Test]\nPath=/a\nPath=/b/c\n", &s);

        ASSERT_STREQ(s.path, "/b/c");
        free(out);
        out = PARSE_OK("[Test]\nPath=\n", &s);
        ASSERT_TRUE(!s.path);
}

static void test_malformed_section_header_stops_the_file(void) {
        _cleanup_(settings_done) Settings s = {};
        const char *text = "[Test]\nRecord=before\n[Test\nRecord=after\n";
        _cleanup_free_ char *out = parse_text(text, strlen(text), &s, -EBADMSG);

        ASSERT_CONTAINS(out, "/etc/test.conf:3: Invalid section header '[Test'");
        ASSERT_RECORDS(s.records, "test.conf:2:before");
}

static void test_unsafe_section_name_stops_the_file(void) {
        _cleanup_(settings_done) Settings s = {};
        const char *text = "[Te\"st]\nRecord=x\n";
        _cleanup_free_ char *out = parse_text(text, strlen(text), &s, -EBADMSG);

        ASSERT_CONTAINS(out, "/etc/test.conf:1: Bad characters in section header");
        ASSERT_TRUE(!s.records);
}

static void test_non_utf8_line_stops_the_file(void) {
        _cleanup_(settings_done) Settings s = {};
        const char *text = "[Test]\nRecord=a\nRecord=\xff\xfe\nRecord=b\n";
        _cleanup_free_ char *out = parse_text(text, strlen(text), &s, -EINVAL);

        ASSERT_CONTAINS(out, "/etc/test.conf:3: String is not UTF-8 clean");
        ASSERT_RECORDS(s.records, "test.conf:2:a");
}

static void test_nul_byte_ends_a_line(void) {
        _cleanup_(settings_done) Settings s = {};
        static const char text[] = "[Test]\nRecord=a\0Record=b\nRecord=c\n";
        _cleanup_free_ char *out = parse_text(text, sizeof text - 1, &s, 0);

        ASSERT_RECORDS(s.records, "test.conf:2:a", "test.conf:3:b", "test.conf:4:c");
        ASSERT_STREQ(out, "");
}

static void test_crlf_and_cr_line_endings_are_understood(void) {
        _cleanup_(settings_done) Settings s = {};
        _cleanup_free_ char *out = PARSE_OK("[Test]\r\nRecord=a\r\nRecord=b\rRecord=c", &s);

        ASSERT_RECORDS(s.records, "test.conf:2:a", "test.conf:3:b", "test.conf:4:c");
        ASSERT_STREQ(out, "");
}

static void test_byte_order_mark_is_skipped(void) {
        _cleanup_(settings_done) Settings s = {};
        _cleanup_free_ char *out = PARSE_OK("\xef\xbb\xbf[Test]\nRecord=a\n", &s);

        ASSERT_STREQ(out, "");
        ASSERT_RECORDS(s.records, "test.conf:2:a");
}

static void test_overlong_line_stops_the_file(void) {
        _cleanup_(settings_done) Settings s = {};
        size_t n = strlen("[Test]\nRecord=") + LONG_LINE_MAX + 1;
        _cleanup_free_ char *text = malloc(n + 1);

        ASSERT_TRUE(text);
        strcpy(text, "[Test]\nRecord=");
        memset(text + strlen(text), 'x', LONG_LINE_MAX);
        text[n - 1] = '\n';
        text[n] = '\0';

        _cleanup_free_ char *out = parse_text(text, n, &s, -ENOBUFS);
        ASSERT_CONTAINS(out, "/etc/test.conf:2: Line too long");
        ASSERT_TRUE(!s.records);
}

static void test_overlong_continuation_stops_the_file(void) {
        _cleanup_(settings_done) Settings s = {};
        size_t half = LONG_LINE_MAX / 2 + 8;
        _cleanup_free_ char *text = malloc(3 * (half + 2) + 32);
        char *p;

        ASSERT_TRUE(text);
        p = stpcpy(text, "[Test]\nRecord=");
        for (size_t i = 0; i < 3; i++) {
                memset(p, 'y', half);
                p += half;
                p = stpcpy(p, "\\\n");
        }

        _cleanup_free_ char *out = parse_text(text, strlen(text), &s, -ENOBUFS);
        ASSERT_CONTAINS(out, "/etc/test.conf:3: Continuation line too long");
}

static void test_endless_file_is_cut_off(void) {
        _cleanup_(settings_done) Settings s = {};
        LogCapture c;

        /* A configuration file that is a symlink to /dev/zero must not hang the daemon. */
        log_capture_start(&c);
        int r = config_parse_file("/dev/zero", TEST_SPEC(&s));
        _cleanup_free_ char *out = log_capture_stop(&c);

        ASSERT_EQ(r, -EFBIG);
        ASSERT_CONTAINS(out, "/dev/zero: File larger than");
}

static void test_missing_file_is_not_an_error(void) {
        _cleanup_(settings_done) Settings s = {};

        ASSERT_EQ(config_parse_file("/nonexistent/timesyncd-test.conf", TEST_SPEC(&s)), 0);
}

static void test_root_prefix_is_joined_without_double_slashes(void) {
        _cleanup_free_ char *a = path_prefix_root(NULL, "/etc/x"),
                            *b = path_prefix_root("/", "/etc/x"),
                            *c = path_prefix_root("/tmp/root//", "/etc/x"),
                            *d = path_prefix_root("", "/etc/x");

        ASSERT_STREQ(a, "/etc/x");
        ASSERT_STREQ(b, "/etc/x");
        ASSERT_STREQ(c, "/tmp/root/etc/x");
        ASSERT_STREQ(d, "/etc/x");
}

static void test_standard_search_reads_main_file_then_dropins_sorted_by_name(void) {
        _cleanup_(settings_done) Settings s = {};
        _cleanup_free_ char *root = test_tmpdir_new();

        test_write_file(root, "etc/systemd/test.conf", "[Test]\nRecord=main\n");
        test_write_file(root, "usr/lib/systemd/test.conf.d/10-vendor.conf",
                        "[Test]\nRecord=usr-lib-10\n");
        test_write_file(root, "usr/local/lib/systemd/test.conf.d/20-local.conf",
                        "[Test]\nRecord=usr-local-20\n");
        test_write_file(root, "run/systemd/test.conf.d/30-run.conf", "[Test]\nRecord=run-30\n");
        test_write_file(root, "etc/systemd/test.conf.d/05-admin.conf", "[Test]\nRecord=etc-05\n");
        test_write_file(root, "etc/systemd/test.conf.d/99-last.conf", "[Test]\nRecord=etc-99\n");

        ASSERT_OK(config_parse_standard(root, "systemd/test.conf", TEST_SPEC(&s)));
        ASSERT_RECORDS(s.records, "test.conf:2:main", "05-admin.conf:2:etc-05",
                       "10-vendor.conf:2:usr-lib-10", "20-local.conf:2:usr-local-20",
                       "30-run.conf:2:run-30", "99-last.conf:2:etc-99");
        test_rm_rf(root);
}

static void test_dropin_in_more_local_directory_masks_the_same_name(void) {
        _cleanup_(settings_done) Settings s = {};
        _cleanup_free_ char *root = test_tmpdir_new();

        test_write_file(root, "usr/lib/systemd/test.conf.d/50-x.conf", "[Test]\nRecord=usr-lib\n");
        test_write_file(root, "usr/local/lib/systemd/test.conf.d/50-x.conf",
                        "[Test]\nRecord=usr-local\n");
        test_write_file(root, "run/systemd/test.conf.d/50-x.conf", "[Test]\nRecord=run\n");
        test_write_file(root, "usr/lib/systemd/test.conf.d/60-y.conf",
                        "[Test]\nRecord=y-usr-lib\n");
        test_write_file(root, "usr/local/lib/systemd/test.conf.d/60-y.conf",
                        "[Test]\nRecord=y-usr-local\n");
        test_write_file(root, "usr/lib/systemd/test.conf.d/70-z.conf",
                        "[Test]\nRecord=z-usr-lib\n");
        test_write_file(root, "etc/systemd/test.conf.d/70-z.conf", "[Test]\nRecord=z-etc\n");

        ASSERT_OK(config_parse_standard(root, "systemd/test.conf", TEST_SPEC(&s)));
        ASSERT_RECORDS(s.records, "50-x.conf:2:run", "60-y.conf:2:y-usr-local",
                       "70-z.conf:2:z-etc");
        test_rm_rf(root);
}

static void test_empty_file_or_dev_null_symlink_disables_a_vendor_dropin(void) {
        _cleanup_(settings_done) Settings s = {};
        _cleanup_free_ char *root = test_tmpdir_new();

        test_write_file(root, "usr/lib/systemd/test.conf.d/10-a.conf", "[Test]\nRecord=a\n");
        test_write_file(root, "usr/lib/systemd/test.conf.d/20-b.conf", "[Test]\nRecord=b\n");
        test_write_file(root, "usr/lib/systemd/test.conf.d/30-c.conf", "[Test]\nRecord=c\n");
        test_write_file(root, "etc/systemd/test.conf.d/10-a.conf", "");
        test_symlink("/dev/null", root, "etc/systemd/test.conf.d/20-b.conf");

        ASSERT_OK(config_parse_standard(root, "systemd/test.conf", TEST_SPEC(&s)));
        ASSERT_RECORDS(s.records, "30-c.conf:2:c");
        test_rm_rf(root);
}

static void test_only_visible_conf_files_are_dropins(void) {
        _cleanup_(settings_done) Settings s = {};
        _cleanup_free_ char *root = test_tmpdir_new();

        test_write_file(root, "etc/systemd/test.conf.d/.hidden.conf", "[Test]\nRecord=hidden\n");
        test_write_file(root, "etc/systemd/test.conf.d/notes.txt", "[Test]\nRecord=txt\n");
        test_write_file(root, "etc/systemd/test.conf.d/a.conf~", "[Test]\nRecord=backup\n");
        test_write_file(root, "etc/systemd/test.conf.d/dir.conf/x.conf",
                        "[Test]\nRecord=in-subdir\n");
        test_write_file(root, "etc/systemd/test.conf.d/ok.conf", "[Test]\nRecord=ok\n");

        ASSERT_OK(config_parse_standard(root, "systemd/test.conf", TEST_SPEC(&s)));
        ASSERT_RECORDS(s.records, "ok.conf:2:ok");
        test_rm_rf(root);
}

static void test_main_file_is_only_read_from_etc(void) {
        _cleanup_(settings_done) Settings s = {};
        _cleanup_free_ char *root = test_tmpdir_new();

        /* systemd 252 reads the main file from /etc/systemd/ alone. */
        test_write_file(root, "usr/lib/systemd/test.conf", "[Test]\nRecord=usr-lib-main\n");
        test_write_file(root, "run/systemd/test.conf", "[Test]\nRecord=run-main\n");

        ASSERT_OK(config_parse_standard(root, "systemd/test.conf", TEST_SPEC(&s)));
        ASSERT_TRUE(!s.records);
        test_rm_rf(root);
}

static void test_broken_file_stops_the_search_but_keeps_what_was_read(void) {
        _cleanup_(settings_done) Settings s = {};
        _cleanup_free_ char *root = test_tmpdir_new();
        LogCapture c;

        test_write_file(root, "etc/systemd/test.conf", "[Test]\nRecord=main\n");
        test_write_file(root, "etc/systemd/test.conf.d/10-broken.conf",
                        "[Test]\nRecord=first\n[Test\n");
        test_write_file(root, "etc/systemd/test.conf.d/20-later.conf", "[Test]\nRecord=never\n");

        log_capture_start(&c);
        int r = config_parse_standard(root, "systemd/test.conf", TEST_SPEC(&s));
        _cleanup_free_ char *out = log_capture_stop(&c);

        ASSERT_EQ(r, -EBADMSG);
        ASSERT_CONTAINS(out, "10-broken.conf:3: Invalid section header '[Test'");
        ASSERT_RECORDS(s.records, "test.conf:2:main", "10-broken.conf:2:first");
        test_rm_rf(root);
}

static void test_dropin_listing_with_missing_directories_is_empty(void) {
        _cleanup_strv_free_ char **files = NULL;
        _cleanup_free_ char *root = test_tmpdir_new();

        ASSERT_OK(conf_files_list_dropins(root, CONF_PATHS_STRV, "systemd/none.conf.d", ".conf",
                                          &files));
        ASSERT_TRUE(files);
        ASSERT_EQ(strv_length(files), 0);
        test_rm_rf(root);
}

/* The misplaced callback's view: "<section or (none)>:<line>:<key>". */
static int record_misplaced(const char *filename, unsigned line, const char *section, const char *lvalue,
                            void *userdata) {
        char buf[256];

        snprintf(buf, sizeof buf, "%s:%u:%s", section ?: "(none)", line, lvalue);
        return strv_extend(userdata, buf);
}

static char *parse_misplaced(const char *text, char ***misplaced) {
        Settings s = {};
        LogCapture c;
        FILE *f = fmemopen((void *) text, strlen(text), "r");
        const ConfigSpec spec = {
                .sections = test_sections,
                .table = (const ConfigTableItem[]) { { "Test", "Record", record, 0, &s.records }, {} },
                .misplaced = record_misplaced,
                .userdata = misplaced,
        };

        ASSERT_TRUE(f);
        log_capture_start(&c);
        ASSERT_OK(config_parse_stream(f, "/etc/test.conf", &spec));
        fclose(f);
        settings_done(&s);
        return log_capture_stop(&c);
}

static void test_a_file_without_a_known_section_is_said_to_be_ignored_whole(void) {
        _cleanup_strv_free_ char **misplaced = NULL, **none = NULL, **ok = NULL;
        _cleanup_free_ char *out = parse_misplaced("[test]\nRecord=x\nFoo=y\n", &misplaced);
        _cleanup_free_ char *out_none = parse_misplaced("Record=x\n", &none);
        _cleanup_free_ char *out_ok = parse_misplaced("[Bogus]\nFoo=1\n[Test]\nRecord=x\n[X-Mine]\nBar=2\n", &ok);

        ASSERT_CONTAINS(out, "/etc/test.conf:1: Unknown section 'test' (section names are case-sensitive: "
                             "did you mean [Test]?). Ignoring.");
        ASSERT_CONTAINS(out, "/etc/test.conf: none of its 2 assignments is in a known section: the whole file "
                             "is ignored.");
        ASSERT_RECORDS(misplaced, "test:2:Record", "test:3:Foo");
        ASSERT_CONTAINS(out_none, "/etc/test.conf: none of its 1 assignment is in a known section");
        ASSERT_RECORDS(none, "(none):1:Record");
        /* One assignment counts: no summary. Keys of X- sections are nobody's business. */
        ASSERT_NOT_CONTAINS(out_ok, "whole file");
        ASSERT_RECORDS(ok, "Bogus:2:Foo");
}

static void test_bad_boolean_says_which_value_stays(void) {
        bool b = true;
        const ConfigSpec spec = {
                .sections = test_sections,
                .table = (const ConfigTableItem[]) { { "Test", "Flag", config_parse_bool, 0, &b }, {} },
        };
        const char *text = "[Test]\nFlag=ture\n";
        FILE *f = fmemopen((void *) text, strlen(text), "r");
        LogCapture c;

        ASSERT_TRUE(f);
        log_capture_start(&c);
        ASSERT_OK(config_parse_stream(f, "/etc/test.conf", &spec));
        fclose(f);
        _cleanup_free_ char *out = log_capture_stop(&c);
        ASSERT_CONTAINS(out, "/etc/test.conf:2: Flag=ture is not a boolean (yes or no), keeping yes.");
        ASSERT_TRUE(b);
}

TEST_MAIN(TEST_CASE(test_assignments_apply_in_order_and_later_ones_win),
          TEST_CASE(test_comments_blank_lines_and_surrounding_whitespace_are_ignored),
          TEST_CASE(test_trailing_backslash_continues_the_line),
          TEST_CASE(test_escaped_backslash_does_not_continue),
          TEST_CASE(test_continuation_at_end_of_file_still_counts),
          TEST_CASE(test_unknown_key_warns_with_file_and_line_and_the_rest_applies),
          TEST_CASE(test_unknown_section_warns_once_and_its_keys_are_skipped),
          TEST_CASE(test_x_prefixed_sections_and_keys_are_silently_ignored),
          TEST_CASE(test_lines_without_key_or_equals_warn_and_are_skipped),
          TEST_CASE(test_bad_value_warns_with_file_and_line_and_keeps_the_old_one),
          TEST_CASE(test_empty_path_resets_it),
          TEST_CASE(test_malformed_section_header_stops_the_file),
          TEST_CASE(test_unsafe_section_name_stops_the_file),
          TEST_CASE(test_non_utf8_line_stops_the_file),
          TEST_CASE(test_nul_byte_ends_a_line),
          TEST_CASE(test_crlf_and_cr_line_endings_are_understood),
          TEST_CASE(test_byte_order_mark_is_skipped),
          TEST_CASE(test_overlong_line_stops_the_file),
          TEST_CASE(test_overlong_continuation_stops_the_file),
          TEST_CASE(test_endless_file_is_cut_off),
          TEST_CASE(test_missing_file_is_not_an_error),
          TEST_CASE(test_root_prefix_is_joined_without_double_slashes),
          TEST_CASE(test_standard_search_reads_main_file_then_dropins_sorted_by_name),
          TEST_CASE(test_dropin_in_more_local_directory_masks_the_same_name),
          TEST_CASE(test_empty_file_or_dev_null_symlink_disables_a_vendor_dropin),
          TEST_CASE(test_only_visible_conf_files_are_dropins),
          TEST_CASE(test_main_file_is_only_read_from_etc),
          TEST_CASE(test_broken_file_stops_the_search_but_keeps_what_was_read),
          TEST_CASE(test_dropin_listing_with_missing_directories_is_empty),
          TEST_CASE(test_a_file_without_a_known_section_is_said_to_be_ignored_whole),
          TEST_CASE(test_bad_boolean_says_which_value_stays));
