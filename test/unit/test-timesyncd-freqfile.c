/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "tests.h"
#include "timesyncd-clock.h"
#include "timesyncd-freqfile.h"

static char dir[] = "/tmp/test-freqfile-XXXXXX";
static char path[sizeof dir + 16];

static void write_text(const char *text) {
        FILE *f = fopen(path, "we");

        ASSERT_TRUE(f);
        ASSERT_TRUE(fputs(text, f) >= 0);
        ASSERT_OK(fclose(f));
}

static void test_parse_takes_one_number_within_the_kernel_s_range(void) {
        double f = 0;

        ASSERT_OK(freq_file_parse("-20.0130\n", &f));
        ASSERT_TRUE(f == -20.013);
        ASSERT_OK(freq_file_parse("500", &f));
        ASSERT_TRUE(f == 500);
        ASSERT_EQ(freq_file_parse("", &f), -EINVAL);
        ASSERT_EQ(freq_file_parse("\n", &f), -EINVAL);
        ASSERT_EQ(freq_file_parse(" 12\n", &f), -EINVAL);
        ASSERT_EQ(freq_file_parse("12 ppm\n", &f), -EINVAL);
        ASSERT_EQ(freq_file_parse("12\n13\n", &f), -EINVAL);
        ASSERT_EQ(freq_file_parse("500.1\n", &f), -EINVAL);
        ASSERT_EQ(freq_file_parse("-1e9\n", &f), -EINVAL);
        ASSERT_EQ(freq_file_parse("nan\n", &f), -EINVAL);
        ASSERT_EQ(freq_file_parse("inf\n", &f), -EINVAL);
        ASSERT_TRUE(f == 500);
}

static void test_save_then_load_gives_the_frequency_back(void) {
        double f = 0;

        ASSERT_EQ(freq_file_load(path, &f), 0);
        ASSERT_OK(freq_file_save(path, -17.25));
        ASSERT_EQ(freq_file_load(path, &f), 1);
        ASSERT_TRUE(f == -17.25);
        /* again over the old file, which a leftover temporary of a cut write does not stop */
        {
                char tmp[sizeof path + 8];
                FILE *t;

                snprintf(tmp, sizeof tmp, "%s.tmp", path);
                ASSERT_TRUE(t = fopen(tmp, "we"));
                ASSERT_OK(fclose(t));
        }
        ASSERT_OK(freq_file_save(path, 3.5));
        ASSERT_EQ(freq_file_load(path, &f), 1);
        ASSERT_TRUE(f == 3.5);
        ASSERT_EQ(freq_file_save(path, 600), -EINVAL);
}

static void test_a_bad_or_absurd_file_is_refused(void) {
        double f = 1;

        write_text("garbage\n");
        ASSERT_EQ(freq_file_load(path, &f), -EINVAL);
        write_text("-900\n");
        ASSERT_EQ(freq_file_load(path, &f), -EINVAL);
        write_text("1234567890123456789012345678901234567890123456789012345678901234567890\n");
        ASSERT_TRUE(freq_file_load(path, &f) < 0);
        ASSERT_TRUE(f == 1);
        ASSERT_OK(unlink(path));
        ASSERT_OK(symlink("/etc/hostname", path));
        ASSERT_TRUE(freq_file_load(path, &f) < 0);
        ASSERT_OK(unlink(path));
}

static void test_only_the_kernel_backend_learns_a_frequency(void) {
        ClockBackend *b;
        double f;

        ASSERT_OK(clock_backend_new(CLOCK_BACKEND_OBSERVE, &b));
        clock_backend_seed_frequency(b, 12);
        ASSERT_FALSE(clock_backend_frequency_learned(b, &f));
        clock_backend_free(b);
        ASSERT_OK(clock_backend_new(CLOCK_BACKEND_KERNEL, &b));
        /* nothing fitted yet */
        ASSERT_FALSE(clock_backend_frequency_learned(b, &f));
        clock_backend_free(b);
}

static void setup(void) {
        ASSERT_TRUE(mkdtemp(dir));
        snprintf(path, sizeof path, "%s/frequency", dir);
}

static void teardown(void) {
        char tmp[sizeof path + 8];

        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        (void) unlink(tmp);
        (void) unlink(path);
        (void) rmdir(dir);
}

/* The state directory: made first, removed last. */
TEST_MAIN(TEST_CASE(setup),
          TEST_CASE(test_parse_takes_one_number_within_the_kernel_s_range),
          TEST_CASE(test_save_then_load_gives_the_frequency_back),
          TEST_CASE(test_a_bad_or_absurd_file_is_refused),
          TEST_CASE(test_only_the_kernel_backend_learns_a_frequency),
          TEST_CASE(teardown));
