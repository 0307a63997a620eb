/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdio.h>
#include <sys/stat.h>
#include <sys/uio.h>
/* Every message carries the CODE_FILE=, CODE_LINE= and CODE_FUNC= of its caller, which this file
 * adds itself; without this, sd-journal.h's macros would add this file's own as a second set. */
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

#include "log.h"

static int log_max_level = LOG_INFO;
static LogTarget log_target = LOG_TARGET_AUTO;

static const char *const log_target_table[_LOG_TARGET_MAX] = {
        [LOG_TARGET_CONSOLE] = "console",
        [LOG_TARGET_JOURNAL] = "journal",
        [LOG_TARGET_AUTO] = "auto",
        [LOG_TARGET_NULL] = "null",
};

static const char *const log_level_table[] = {
        [LOG_EMERG] = "emerg",  [LOG_ALERT] = "alert",   [LOG_CRIT] = "crit",
        [LOG_ERR] = "err",      [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
        [LOG_INFO] = "info",    [LOG_DEBUG] = "debug",
};

void log_set_max_level(int level) {
        assert(level >= LOG_EMERG && level <= LOG_DEBUG);
        log_max_level = level;
}

int log_get_max_level(void) {
        return log_max_level;
}

void log_set_target(LogTarget target) {
        assert(target >= 0 && target < _LOG_TARGET_MAX);
        log_target = target;
}

LogTarget log_get_target(void) {
        return log_target;
}

const char *log_target_to_string(LogTarget t) {
        if (t < 0 || t >= _LOG_TARGET_MAX)
                return NULL;
        return log_target_table[t];
}

LogTarget log_target_from_string(const char *s) {
        if (!s)
                return _LOG_TARGET_INVALID;
        for (LogTarget t = 0; t < _LOG_TARGET_MAX; t++)
                if (streq(log_target_table[t], s))
                        return t;
        /* systemd also knows these; they all end up in the journal here. */
        if (streq(s, "journal-or-kmsg") || streq(s, "syslog") || streq(s, "syslog-or-kmsg") ||
            streq(s, "kmsg"))
                return LOG_TARGET_JOURNAL;
        return _LOG_TARGET_INVALID;
}

int log_level_from_string(const char *s) {
        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(log_level_table); i++)
                if (streq(log_level_table[i], s))
                        return (int) i;
        if (s[0] >= '0' && s[0] <= '7' && s[1] == '\0')
                return s[0] - '0';
        return -EINVAL;
}

const char *log_level_to_string(int level) {
        if (level < 0 || (size_t) level >= ELEMENTSOF(log_level_table))
                return NULL;
        return log_level_table[level];
}

void log_parse_environment(void) {
        const char *e;

        e = getenv("SYSTEMD_LOG_LEVEL");
        if (e) {
                int l = log_level_from_string(e);
                if (l < 0)
                        log_warning("Failed to parse SYSTEMD_LOG_LEVEL=%s, ignoring.", e);
                else
                        log_set_max_level(l);
        }

        e = getenv("SYSTEMD_LOG_TARGET");
        if (e) {
                LogTarget t = log_target_from_string(e);
                if (t < 0)
                        log_warning("Failed to parse SYSTEMD_LOG_TARGET=%s, ignoring.", e);
                else
                        log_set_target(t);
        }
}

/* True when stderr is the stream the journal gave us (JOURNAL_STREAM=dev:ino). */
static bool stderr_is_journal(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
                return false;
        if (fstat(STDERR_FILENO, &st) < 0)
                return false;
        return (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino;
}

/* Messages logged per level (LOG_EMERG..LOG_DEBUG), whether they were shown or not. */
static unsigned log_counts[LOG_DEBUG + 1];

unsigned log_get_count(int max_level) {
        unsigned n = 0;

        for (int l = 0; l <= max_level && l <= LOG_DEBUG; l++)
                n += log_counts[l];
        return n;
}

int log_internalv(int level, int error, const char *file, int line, const char *func,
                  const char *format, va_list ap) {
        char buf[2048];
        LogTarget t = log_target;
        int saved_errno = errno;

        if (level >= 0 && level <= LOG_DEBUG)
                log_counts[level]++;
        if (level > log_max_level || t == LOG_TARGET_NULL)
                return -abs(error);

        /* %m prints the error we were passed, not whatever errno happens to be. */
        errno = abs(error);
        (void) vsnprintf(buf, sizeof buf, format, ap);

        if (t == LOG_TARGET_AUTO)
                t = stderr_is_journal() ? LOG_TARGET_JOURNAL : LOG_TARGET_CONSOLE;

        if (t == LOG_TARGET_JOURNAL &&
            sd_journal_send("MESSAGE=%s", buf,
                            "PRIORITY=%i", level,
                            "CODE_FILE=%s", file,
                            "CODE_LINE=%i", line,
                            "CODE_FUNC=%s", func,
                            error != 0 ? "ERRNO=%i" : NULL, abs(error),
                            NULL) >= 0) {
                errno = saved_errno;
                return -abs(error);
        }

        fprintf(stderr, "%s\n", buf);
        errno = saved_errno;
        return -abs(error);
}

int log_struct_fields(char **ret, size_t n, int level, int error, const char *file, int line, const char *func,
                      const char *message_id, const char *const *fields, const char *message) {
        size_t k = 0;
        int r;

#define ADD(...)                                                                                \
        do {                                                                                   \
                if (k >= n) {                                                                  \
                        r = -E2BIG;                                                            \
                        goto fail;                                                             \
                }                                                                              \
                if (asprintf(&ret[k], __VA_ARGS__) < 0) {                                      \
                        r = -ENOMEM;                                                           \
                        goto fail;                                                             \
                }                                                                              \
                k++;                                                                           \
        } while (false)

        ADD("MESSAGE=%s", message);
        ADD("PRIORITY=%i", level);
        ADD("CODE_FILE=%s", file);
        ADD("CODE_LINE=%i", line);
        ADD("CODE_FUNC=%s", func);
        if (error != 0)
                ADD("ERRNO=%i", abs(error));
        if (message_id)
                ADD("MESSAGE_ID=%s", message_id);
        for (size_t i = 0; fields && fields[i]; i += 2)
                if (fields[i + 1])
                        ADD("%s=%s", fields[i], fields[i + 1]);
#undef ADD
        return (int) k;

fail:
        while (k > 0)
                free(ret[--k]);
        return r;
}

int log_struct_internal(int level, int error, const char *file, int line, const char *func, const char *message_id,
                        const char *const *fields, const char *format, ...) {
        char buf[2048], *f[24] = {};
        struct iovec iov[ELEMENTSOF(f)];
        LogTarget t = log_target;
        int saved_errno = errno, n;
        va_list ap;

        if (level >= 0 && level <= LOG_DEBUG)
                log_counts[level]++;
        if (level > log_max_level || t == LOG_TARGET_NULL)
                return -abs(error);

        errno = abs(error);
        va_start(ap, format);
        (void) vsnprintf(buf, sizeof buf, format, ap);
        va_end(ap);

        if (t == LOG_TARGET_AUTO)
                t = stderr_is_journal() ? LOG_TARGET_JOURNAL : LOG_TARGET_CONSOLE;

        if (t == LOG_TARGET_JOURNAL) {
                n = log_struct_fields(f, ELEMENTSOF(f), level, error, file, line, func, message_id, fields, buf);
                if (n >= 0) {
                        int r;

                        for (int i = 0; i < n; i++)
                                iov[i] = (struct iovec) { .iov_base = f[i], .iov_len = strlen(f[i]) };
                        r = sd_journal_sendv(iov, n);
                        for (int i = 0; i < n; i++)
                                free(f[i]);
                        if (r >= 0) {
                                errno = saved_errno;
                                return -abs(error);
                        }
                }
        }

        fprintf(stderr, "%s\n", buf);
        errno = saved_errno;
        return -abs(error);
}

int log_internal(int level, int error, const char *file, int line, const char *func,
                 const char *format, ...) {
        va_list ap;
        int r;

        va_start(ap, format);
        r = log_internalv(level, error, file, line, func, format, ap);
        va_end(ap);
        return r;
}

void assert_failed(const char *text, const char *file, int line, const char *func) {
        log_internal(LOG_CRIT, 0, file, line, func,
                     "Assertion '%s' failed at %s:%i, function %s(). Aborting.", text, file, line,
                     func);
        abort();
}
