/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Logging to stderr or the journal, with systemd's conventions: SYSTEMD_LOG_LEVEL and
 * SYSTEMD_LOG_TARGET from the environment, and log_*_errno() returning -abs(error) so that
 * "return log_error_errno(r, "...: %m");" is one line. %m prints the passed error. */

#include <stdarg.h>
#include <syslog.h>

#include "macro.h"

typedef enum LogTarget {
        LOG_TARGET_CONSOLE,
        LOG_TARGET_JOURNAL,
        LOG_TARGET_AUTO,    /* journal if stderr is connected to it, console otherwise */
        LOG_TARGET_NULL,
        _LOG_TARGET_MAX,
        _LOG_TARGET_INVALID = -EINVAL,
} LogTarget;

void log_set_max_level(int level);
int log_get_max_level(void);
void log_set_target(LogTarget target);
LogTarget log_get_target(void);
/* Reads SYSTEMD_LOG_LEVEL and SYSTEMD_LOG_TARGET; bad values are ignored with a warning. */
void log_parse_environment(void);

/* How many messages of max_level or more severe were logged so far (counted before the level
 * filter of log_internal(), after the one of the log_*() macros). */
unsigned log_get_count(int max_level);

const char *log_target_to_string(LogTarget t) _const_;
LogTarget log_target_from_string(const char *s) _pure_;
/* "debug" or "7" -> 7; -EINVAL for anything else. */
int log_level_from_string(const char *s) _pure_;
const char *log_level_to_string(int level) _const_;

int log_internal(int level, int error, const char *file, int line, const char *func,
                 const char *format, ...) _printf_(6, 7);
int log_internalv(int level, int error, const char *file, int line, const char *func,
                  const char *format, va_list ap) _printf_(6, 0);

#define log_full_errno(level, error, ...)                                                      \
        ({                                                                                     \
                int _level = (level), _e = (error);                                            \
                (log_get_max_level() >= _level)                                                \
                        ? log_internal(_level, _e, __FILE__, __LINE__, __func__, __VA_ARGS__)  \
                        : -abs(_e);                                                            \
        })

#define log_full(level, ...) ((void) log_full_errno((level), 0, __VA_ARGS__))

/* A message with a journal MESSAGE_ID= (32 hex digits, see catalog/) and extra journal fields,
 * given as a NULL-terminated list of names and values: (const char *const[]) { "NTS_SERVER",
 * name, "NTS_ADDRESS", address, NULL }; a NULL value leaves its field out. On the console only
 * the message is printed, as by log_full_errno(). */
int log_struct_internal(int level, int error, const char *file, int line, const char *func, const char *message_id,
                        const char *const *fields, const char *format, ...) _printf_(8, 9);

#define log_struct_errno(level, error, message_id, fields, ...)                                \
        ({                                                                                     \
                int _level = (level), _e = (error);                                            \
                (log_get_max_level() >= _level)                                                \
                        ? log_struct_internal(_level, _e, __FILE__, __LINE__, __func__,        \
                                              (message_id), (fields), __VA_ARGS__)            \
                        : -abs(_e);                                                            \
        })
#define log_struct(level, message_id, fields, ...)                                              \
        ((void) log_struct_errno((level), 0, (message_id), (fields), __VA_ARGS__))

/* The journal fields of one message, "NAME=value" each, as log_struct_internal() sends them:
 * MESSAGE=, PRIORITY=, CODE_FILE=, CODE_LINE=, CODE_FUNC=, ERRNO= (if error), MESSAGE_ID= (if
 * message_id) and the extra fields. Returns how many were written to ret (at most n, each to be
 * freed), or -ENOMEM, -E2BIG. Exposed for tests. */
int log_struct_fields(char **ret, size_t n, int level, int error, const char *file, int line, const char *func,
                      const char *message_id, const char *const *fields, const char *message);

#define log_debug(...) log_full(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_full(LOG_INFO, __VA_ARGS__)
#define log_notice(...) log_full(LOG_NOTICE, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, __VA_ARGS__)
#define log_error(...) log_full(LOG_ERR, __VA_ARGS__)

#define log_debug_errno(error, ...) log_full_errno(LOG_DEBUG, (error), __VA_ARGS__)
#define log_info_errno(error, ...) log_full_errno(LOG_INFO, (error), __VA_ARGS__)
#define log_notice_errno(error, ...) log_full_errno(LOG_NOTICE, (error), __VA_ARGS__)
#define log_warning_errno(error, ...) log_full_errno(LOG_WARNING, (error), __VA_ARGS__)
#define log_error_errno(error, ...) log_full_errno(LOG_ERR, (error), __VA_ARGS__)

#define log_oom() log_error_errno(ENOMEM, "Out of memory.")
