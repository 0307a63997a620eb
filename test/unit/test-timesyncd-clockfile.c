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
        ClockState st = { .frequency = 4242 };

        ASSERT_OK(clock_backend_new(CLOCK_BACKEND_OBSERVE, &b));
        ASSERT_OK(clock_gettime(CLOCK_REALTIME, &before));
        /* Even a request to jump years ahead is only logged. */
        ASSERT_OK(clock_backend_set(b, &(struct timespec) { .tv_sec = before.tv_sec + 10 * 365 * 86400 }));
        /* 0: nothing changed, and no state to report (that would take an adjtimex()). */
        ASSERT_EQ(clock_backend_adjust(b, &(ClockAdjustment) { .offset_nsec = INT64_C(3600000000000), .step = true }, &st), 0);
        ASSERT_EQ(st.frequency, 4242);
        ASSERT_OK(clock_gettime(CLOCK_REALTIME, &after));
        ASSERT_TRUE(after.tv_sec - before.tv_sec < 60);
        clock_backend_free(b);
}

static void test_fake_backend_counts_steps_and_slews(void) {
        ClockBackend *b = fake_at(1000);
        struct timespec got;
        ClockState st = {};

        ASSERT_OK(clock_backend_adjust(b, &(ClockAdjustment) { .offset_nsec = INT64_C(-1500000000), .step = true }, NULL));
        ASSERT_OK(clock_backend_now(b, &got));
        ASSERT_EQ(got.tv_sec, 998);
        ASSERT_EQ(got.tv_nsec, 500000000);
        /* 1: the fake clock changed, and its state (synchronized, the slew pending) comes back. */
        ASSERT_EQ(clock_backend_adjust(b, &(ClockAdjustment) { .offset_nsec = 1000 }, &st), 1);
        ASSERT_TRUE(st.synchronized);
        ASSERT_EQ(st.offset_nsec, 1000);
        ASSERT_EQ(st.frequency, 0);
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

/* ---- the floor and the NTS bootstrap's evidence (clock_floor_verdict()) ---- */

#define SEC INT64_C(1000000000)
#define F (INT64_C(1800000000) * SEC)

/* verdict FLOOR_ADVANCED BOOT_MOMENT BOOTTIME: the clock reads BOOT_MOMENT + BOOTTIME. */
static ClockFloorVerdict verdict(bool advanced, int64_t boot_moment, int64_t boottime) {
        ClockFloor f = { .nsec = F, .source = "clock file", .advanced = advanced };

        return clock_floor_verdict(&f, boot_moment + boottime, boottime);
}

static void test_clock_before_the_floor_is_behind(void) {
        /* Observe mode leaves such a clock there; so does a person setting it back. */
        ASSERT_EQ(verdict(false, F - 3600 * SEC, 100 * SEC), CLOCK_FLOOR_BEHIND);
        ASSERT_EQ(verdict(true, F - 3600 * SEC, 100 * SEC), CLOCK_FLOOR_BEHIND);
}

static void test_clock_the_daemon_advanced_is_behind_whenever_it_started(void) {
        /* Advanced at boottime 20 s, or 30 days after boot: the clock reads F + time since. */
        ASSERT_EQ(verdict(true, F - 20 * SEC, 25 * SEC), CLOCK_FLOOR_ADVANCED);
        ASSERT_EQ(verdict(true, F - 30 * 86400 * SEC, 30 * 86400 * SEC + 5 * SEC), CLOCK_FLOOR_ADVANCED);
}

static void test_clock_set_forward_after_the_advance_is_past(void) {
        /* Advanced at 20 s, then someone set it 2 s ahead of where it would be. */
        ASSERT_EQ(verdict(true, F - 20 * SEC + 22 * SEC, 100 * SEC), CLOCK_FLOOR_PAST);
}

static void test_clock_pid1_set_early_in_boot_is_behind(void) {
        /* PID 1 set it to the floor 3 s or 60 s after boot; also when we start a month later. */
        ASSERT_EQ(verdict(false, F - 3 * SEC, 10 * SEC), CLOCK_FLOOR_EARLY_BOOT);
        ASSERT_EQ(verdict(false, F - 60 * SEC, 100 * SEC), CLOCK_FLOOR_EARLY_BOOT);
        ASSERT_EQ(verdict(false, F - 3 * SEC, 30 * 86400 * SEC), CLOCK_FLOOR_EARLY_BOOT);
        /* Reading the two clocks one after the other: up to the slack after the floor. */
        ASSERT_EQ(verdict(false, F + CLOCK_FLOOR_SLACK_NSEC, 10 * SEC), CLOCK_FLOOR_EARLY_BOOT);
}

static void test_correct_clock_after_a_reboot_is_past(void) {
        /* The clock file was written as the machine went down; the RTC kept the time while
         * it was down, 5 s (a quick reboot) or a day. */
        ASSERT_EQ(verdict(false, F + 5 * SEC, 10 * SEC), CLOCK_FLOOR_PAST);
        ASSERT_EQ(verdict(false, F + 86400 * SEC, 10 * SEC), CLOCK_FLOOR_PAST);
        ASSERT_EQ(verdict(false, F + CLOCK_FLOOR_SLACK_NSEC + 1, 10 * SEC), CLOCK_FLOOR_PAST);
}

static void test_floor_recorded_after_early_boot_is_late(void) {
        /* A clock file written by an earlier instance 61 s or a day after this boot began
         * (restart), or a build newer than the boot: a correct clock reads the same. */
        ASSERT_EQ(verdict(false, F - 61 * SEC, 100 * SEC), CLOCK_FLOOR_LATE);
        ASSERT_EQ(verdict(false, F - 86400 * SEC, 2 * 86400 * SEC), CLOCK_FLOOR_LATE);
}

static void test_only_behind_verdicts_are_evidence(void) {
        ASSERT_TRUE(clock_floor_is_evidence(CLOCK_FLOOR_BEHIND));
        ASSERT_TRUE(clock_floor_is_evidence(CLOCK_FLOOR_ADVANCED));
        ASSERT_TRUE(clock_floor_is_evidence(CLOCK_FLOOR_EARLY_BOOT));
        ASSERT_FALSE(clock_floor_is_evidence(CLOCK_FLOOR_PAST));
        ASSERT_FALSE(clock_floor_is_evidence(CLOCK_FLOOR_LATE));
}

static void test_describe_names_the_floor_and_the_numbers(void) {
        ClockFloor f = { .nsec = F, .source = "clock file" };
        char buf[256];

        /* 2027-01-15 08:00:00 UTC */
        clock_floor_describe(&f, CLOCK_FLOOR_PAST, F + 100 * SEC + 10 * SEC, 10 * SEC, buf, sizeof buf);
        ASSERT_STREQ(buf, "the clock reads 100 s later than its floor (clock file, 2027-01-15 08:00:00 UTC) "
                          "plus the time since boot, so it did not start from the floor");
        clock_floor_describe(&f, CLOCK_FLOOR_LATE, F - 900 * SEC + 1000 * SEC, 1000 * SEC, buf, sizeof buf);
        ASSERT_STREQ(buf, "its floor (clock file, 2027-01-15 08:00:00 UTC) lies 900 s after the moment of boot "
                          "by this clock, later than early boot, so the clock did not start from it");
        clock_floor_describe(&f, CLOCK_FLOOR_EARLY_BOOT, F - 30 * SEC + 50 * SEC, 50 * SEC, buf, sizeof buf);
        ASSERT_STREQ(buf, "the clock reads as set to its floor (clock file, 2027-01-15 08:00:00 UTC) 30 s after boot");
}

static void test_floor_is_the_latest_of_build_time_clock_file_and_epoch_file(void) {
        char epoch[sizeof dir + 16];
        ClockFloor f;

        snprintf(epoch, sizeof epoch, "%s/clock-epoch", dir);
        (void) unlink(path);
        (void) unlink(epoch);
        clock_floor_read(&f, path, 1600000000, epoch);
        ASSERT_EQ(f.nsec, 1600000000 * SEC);
        ASSERT_STREQ(f.source, "build time");
        ASSERT_FALSE(f.advanced);

        ASSERT_OK(clock_file_save(path, &(struct timespec) { .tv_sec = 1700000000, .tv_nsec = 5 }));
        clock_floor_read(&f, path, 1600000000, epoch);
        ASSERT_EQ(f.nsec, 1700000000 * SEC + 5);
        ASSERT_STREQ(f.source, "clock file");

        ASSERT_OK(clock_file_save(epoch, &(struct timespec) { .tv_sec = 1750000000 }));
        clock_floor_read(&f, path, 1600000000, epoch);
        ASSERT_EQ(f.nsec, 1750000000 * SEC);
        ASSERT_STREQ(f.source, epoch);

        /* An older build time or clock file never lowers it. */
        clock_floor_read(&f, path, 1500000000, epoch);
        ASSERT_EQ(f.nsec, 1750000000 * SEC);
        ASSERT_OK(unlink(epoch));
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
                TEST_CASE(test_clock_before_the_floor_is_behind),
                TEST_CASE(test_clock_the_daemon_advanced_is_behind_whenever_it_started),
                TEST_CASE(test_clock_set_forward_after_the_advance_is_past),
                TEST_CASE(test_clock_pid1_set_early_in_boot_is_behind),
                TEST_CASE(test_correct_clock_after_a_reboot_is_past),
                TEST_CASE(test_floor_recorded_after_early_boot_is_late),
                TEST_CASE(test_only_behind_verdicts_are_evidence),
                TEST_CASE(test_describe_names_the_floor_and_the_numbers),
                TEST_CASE(test_floor_is_the_latest_of_build_time_clock_file_and_epoch_file),
        };

        setup();
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                printf("/* %s */\n", cases[i].name);
                cases[i].func();
        }
        teardown();
        return EXIT_SUCCESS;
}
