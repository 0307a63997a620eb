/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Loading optional libraries at run time, and telling packagers about them.
 *
 * dlopen_library_symbols() opens a library once and resolves a NULL-terminated list of
 * (void **slot, const char *name) pairs into it. It is all-or-nothing: on any failure every
 * slot is reset and the handle closed, so a half-loaded library is never used. Calls after a
 * success return 0 at once; the daemon is single-threaded, so no locking is needed. */

#include <stdint.h>

#include "macro.h"

int dlopen_library_symbols_sentinel(void **handle, const char *soname, int log_level, ...) _sentinel_;
#define dlopen_library_symbols(handle, soname, log_level, ...)                                 \
        dlopen_library_symbols_sentinel((handle), (soname), (log_level), __VA_ARGS__, NULL)

/* One (slot, name) pair; the type check makes a sym_ pointer that does not match the
 * prototype from the library's header a compile error. */
#define DLSYM_ARG(fn)                                                                          \
        ({                                                                                     \
                assert_cc(__builtin_types_compatible_p(typeof(sym_##fn), typeof(&fn)));        \
                (void **) &sym_##fn;                                                           \
        }),                                                                                    \
        STRINGIFY(fn)

/* ELF dlopen metadata (https://uapi-group.org/specifications/specs/elf_dlopen_metadata/):
 * a note of type 0x407c0c0a, owner "FDO", whose description is a NUL-terminated JSON array.
 * Package tools read it to learn which sonames a binary may dlopen(), for which feature. */
#define ELF_NOTE_DLOPEN_VENDOR "FDO"
#define ELF_NOTE_DLOPEN_TYPE UINT32_C(0x407c0c0a)

#define _ELF_NOTE_DLOPEN(json, variable)                                                       \
        __attribute__((used, section(".note.dlopen"), aligned(4))) static const struct {       \
                uint32_t n_namesz, n_descsz, n_type;                                           \
                char name[sizeof(ELF_NOTE_DLOPEN_VENDOR)];                                     \
                char dlopen_json[ALIGN4(sizeof(json))];                                        \
        } variable = {                                                                         \
                .n_namesz = sizeof(ELF_NOTE_DLOPEN_VENDOR),                                    \
                .n_descsz = sizeof(json),                                                      \
                .n_type = ELF_NOTE_DLOPEN_TYPE,                                                \
                .name = ELF_NOTE_DLOPEN_VENDOR,                                                \
                .dlopen_json = json,                                                           \
        }

/* soname must be a string literal such as "libssl.so.3". */
#define ELF_NOTE_DLOPEN(feature, description, priority, soname)                                \
        _ELF_NOTE_DLOPEN("[{\"feature\":\"" feature "\",\"description\":\"" description         \
                         "\",\"priority\":\"" priority "\",\"soname\":[\"" soname "\"]}]",     \
                         UNIQ_T(elf_note_dlopen, UNIQ))

#define ELF_NOTE_DLOPEN_PRIORITY_REQUIRED "required"
#define ELF_NOTE_DLOPEN_PRIORITY_RECOMMENDED "recommended"
#define ELF_NOTE_DLOPEN_PRIORITY_SUGGESTED "suggested"
