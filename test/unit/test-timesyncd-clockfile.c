/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests.h"
#include "timesyncd-clock.h"
#include "timesyncd-clockfile.h"

static char dir[] = "/tmp/test-clockfile-XXXXXX";
static char path[sizeof dir + 16];

static ClockBackend *fake_at(time_t t) {
        ClockBackend *b;

        ASSERT_OK(clock_backend_new(CLOCK_BACKEND_FAKE, &b));
        clock_backend_fake_set_now(b, &(struct timespec) { .tv_sec = t });
        return b;
}

static void test_clock_behind_file_is_advanced_to_it(void) {
        ClockBackend *b = fake_at(1000000000);
        struct timespec ts = { .tv_sec = 1700000000, .tv_nsec = 5 }, got;

        ASSERT_OK(clock_file_save(path, &ts));
        ASSERT_EQ(clock_file_restore(b, path, 0, NULL), 1);
        ASSERT_OK(clock_backend_now(b, &got));
        ASSERT_EQ(got.tv_sec, 1700000000);
        ASSERT_EQ(clock_backend_fake_steps(b), 1);
        clock_backend_free(b);
}

static void test_clock_ahead_of_file_is_left_alone(void) {
        ClockBackend *b = fake_at(1800000000);
        struct timespec ts = { .tv_sec = 1700000000 }, got;

        ASSERT_OK(clock_file_save(path, &ts));
        ASSERT_EQ(clock_file_restore(b, path, 0, NULL), 0);
        ASSERT_OK(clock_backend_now(b, &got));
        ASSERT_EQ(got.tv_sec, 1800000000);
        ASSERT_EQ(clock_backend_fake_steps(b), 0);
        clock_backend_free(b);
}

static void test_build_time_is_a_floor_without_file(void) {
        ClockBackend *b = fake_at(0);
        struct timespec got, floor;

        (void) unlink(path);
        ASSERT_EQ(clock_file_restore(b, path, 1600000000, &floor), 1);
        ASSERT_EQ(floor.tv_sec, 1600000000);
        ASSERT_OK(clock_backend_now(b, &got));
        ASSERT_EQ(got.tv_sec, 1600000000);
        clock_backend_free(b);
}

static void test_file_older_than_build_time_uses_build_time(void) {
        ClockBackend *b = fake_at(0);
        struct timespec ts = { .tv_sec = 1500000000 }, got;

        ASSERT_OK(clock_file_save(path, &ts));
        ASSERT_EQ(clock_file_restore(b, path, 1600000000, NULL), 1);
        ASSERT_OK(clock_backend_now(b, &got));
        ASSERT_EQ(got.tv_sec, 1600000000);
        clock_backend_free(b);
}

static void test_observe_backend_never_sets_the_clock(void) {
        ClockBackend *b;
        struct timespec before, after;

        ASSERT_OK(clock_backend_new(CLOCK_BACKEND_OBSERVE, &b));
        ASSERT_OK(clock_gettime(CLOCK_REALTIME, &before));
        /* Even a request to jump years ahead is only logged. */
        ASSERT_OK(clock_backend_set(b, &(struct timespec) { .tv_sec = before.tv_sec + 10 * 365 * 86400 }));
        ASSERT_OK(clock_backend_adjust(b, &(ClockAdjustment) { .offset_nsec = INT64_C(3600000000000), .step = true }));
        ASSERT_OK(clock_gettime(CLOCK_REALTIME, &after));
        ASSERT_TRUE(after.tv_sec - before.tv_sec < 60);
        clock_backend_free(b);
}

static void test_fake_backend_counts_steps_and_slews(void) {
        ClockBackend *b = fake_at(1000);
        struct timespec got;

        ASSERT_OK(clock_backend_adjust(b, &(ClockAdjustment) { .offset_nsec = INT64_C(-1500000000), .step = true }));
        ASSERT_OK(clock_backend_now(b, &got));
        ASSERT_EQ(got.tv_sec, 998);
        ASSERT_EQ(got.tv_nsec, 500000000);
        ASSERT_OK(clock_backend_adjust(b, &(ClockAdjustment) { .offset_nsec = 1000 }));
        ASSERT_EQ(clock_backend_fake_steps(b), 1);
        ASSERT_EQ(clock_backend_fake_slews(b), 1);
        clock_backend_free(b);
}

/* The first save creates the file, later ones only move its mtime (either way to ts). */
static void test_save_creates_then_updates_the_file(void) {
        struct timespec a = { .tv_sec = 1600000000, .tv_nsec = 7 }, b = { .tv_sec = 1650000000 };
        struct stat st;

        (void) unlink(path);
        ASSERT_OK(clock_file_save(path, &a));
        ASSERT_OK(stat(path, &st));
        ASSERT_EQ(st.st_mtim.tv_sec, a.tv_sec);
        ASSERT_EQ(st.st_mtim.tv_nsec, a.tv_nsec);
        ASSERT_OK(clock_file_save(path, &b));
        ASSERT_OK(stat(path, &st));
        ASSERT_EQ(st.st_mtim.tv_sec, b.tv_sec);
}

/* A symbolic link in place of the file never carries the time to its target. */
static void test_save_never_follows_a_symlink(void) {
        char target[sizeof dir + 16];
        struct timespec ts = { .tv_sec = 1700000000 };
        struct stat st;
        int fd;

        snprintf(target, sizeof target, "%s/target", dir);
        fd = open(target, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ASSERT_TRUE(fd >= 0);
        close(fd);
        ASSERT_OK(utimensat(AT_FDCWD, target, (struct timespec[2]) { { .tv_sec = 1000 }, { .tv_sec = 1000 } }, 0));
        (void) unlink(path);
        ASSERT_OK(symlink(target, path));

        ASSERT_OK(clock_file_save(path, &ts));
        ASSERT_OK(stat(target, &st));
        ASSERT_EQ(st.st_mtim.tv_sec, 1000);
        ASSERT_OK(lstat(path, &st));
        ASSERT_EQ(st.st_mtim.tv_sec, ts.tv_sec);

        ASSERT_OK(unlink(path));
        ASSERT_OK(unlink(target));
}

static void setup(void) {
        ASSERT_TRUE(mkdtemp(dir));
        snprintf(path, sizeof path, "%s/clock", dir);
}

static void teardown(void) {
        (void) unlink(path);
        (void) rmdir(dir);
}

int main(void) {
        static const TestCase cases[] = {
                TEST_CASE(test_save_creates_then_updates_the_file),
                TEST_CASE(test_save_never_follows_a_symlink),
                TEST_CASE(test_clock_behind_file_is_advanced_to_it),
                TEST_CASE(test_clock_ahead_of_file_is_left_alone),
                TEST_CASE(test_build_time_is_a_floor_without_file),
                TEST_CASE(test_file_older_than_build_time_uses_build_time),
                TEST_CASE(test_observe_backend_never_sets_the_clock),
                TEST_CASE(test_fake_backend_counts_steps_and_slews),
        };

        setup();
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                printf("/* %s */\n", cases[i].name);
                cases[i].func();
        }
        teardown();
        return EXIT_SUCCESS;
}
