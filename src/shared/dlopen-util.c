/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <dlfcn.h>
#include <stdarg.h>

#include "dlopen-util.h"
#include "log.h"

static void reset_slots(va_list ap) {
        void **slot;

        while ((slot = va_arg(ap, void **))) {
                (void) va_arg(ap, const char *);
                *slot = NULL;
        }
}

int dlopen_library_symbols_sentinel(void **handle, const char *soname, int log_level, ...) {
        void *dl;
        va_list ap;
        void **slot;

        assert(handle);
        assert(soname);

        if (*handle)
                return 0; /* already loaded */

        dl = dlopen(soname, RTLD_NOW | RTLD_NODELETE);
        if (!dl)
                /* dlerror() tells a missing file from one that could not be opened (EMFILE...). */
                return log_full_errno(log_level, EOPNOTSUPP, "Cannot load %s: %s", soname,
                                      dlerror() ?: "unknown error");

        va_start(ap, log_level);
        while ((slot = va_arg(ap, void **))) {
                const char *name = va_arg(ap, const char *);

                *slot = dlsym(dl, name);
                if (!*slot) {
                        int r = log_full_errno(log_level, ENXIO,
                                               "%s lacks the symbol %s: %s", soname, name,
                                               dlerror() ?: "unknown error");
                        va_end(ap);

                        va_start(ap, log_level);
                        reset_slots(ap);
                        va_end(ap);

                        (void) dlclose(dl);
                        return r;
                }
        }
        va_end(ap);

        *handle = dl;
        return 1;
}
