/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <dirent.h>

#include "conf-files.h"
#include "log.h"
#include "string-util.h"
#include "strv.h"

typedef struct DropIn {
        const char *name;       /* points into path */
        char *path;
        size_t priority;        /* index of the directory; lower is more local */
} DropIn;

typedef struct DropInList {
        DropIn *items;
        size_t n;
} DropInList;

static void drop_in_list_done(DropInList *l) {
        for (size_t i = 0; i < l->n; i++)
                free(l->items[i].path);
        l->items = mfree(l->items);
        l->n = 0;
}

char *path_prefix_root(const char *root, const char *path) {
        size_t n;

        assert(path);

        if (isempty(root))
                return strdup(path);

        n = strlen(root);
        while (n > 0 && root[n - 1] == '/')
                n--;

        char prefix[n + 1];
        memcpy(prefix, root, n);
        prefix[n] = '\0';
        return strjoin(prefix, path);
}

DEFINE_TRIVIAL_CLEANUP_FUNC_VOID(DIR *, closedir);

static bool dirent_is_candidate(const struct dirent *de, const char *suffix) {
        if (de->d_name[0] == '.')
                return false;
        /* The type is checked only when the file system reports it; fopen() sorts out the rest. */
        if (de->d_type != DT_REG && de->d_type != DT_LNK && de->d_type != DT_UNKNOWN)
                return false;
        return endswith(de->d_name, suffix);
}

static int add_directory(DropInList *l, const char *dir, size_t priority, const char *suffix) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;

        d = opendir(dir);
        if (!d) {
                if (errno != ENOENT)
                        log_debug_errno(errno, "Failed to open directory '%s', ignoring: %m", dir);
                return 0;
        }

        while ((errno = 0, de = readdir(d))) {
                DropIn *items;
                char *path;

                if (!dirent_is_candidate(de, suffix))
                        continue;

                path = strjoin(dir, "/", de->d_name);
                if (!path)
                        return -ENOMEM;

                items = reallocarray(l->items, l->n + 1, sizeof(DropIn));
                if (!items) {
                        free(path);
                        return -ENOMEM;
                }
                l->items = items;
                l->items[l->n++] = (DropIn) {
                        .name = path + strlen(dir) + 1,
                        .path = path,
                        .priority = priority,
                };
        }
        if (errno != 0)
                log_debug_errno(errno, "Failed to read directory '%s', ignoring the rest: %m", dir);

        return 0;
}

static int drop_in_compare(const void *a, const void *b) {
        const DropIn *x = a, *y = b;
        int c = strcmp(x->name, y->name);

        if (c != 0)
                return c;
        return x->priority < y->priority ? -1 : x->priority > y->priority;
}

int conf_files_list_dropins(const char *root, const char *const *dirs, const char *subdir,
                            const char *suffix, char ***ret) {
        _cleanup_(drop_in_list_done) DropInList list = {};
        _cleanup_strv_free_ char **files = NULL;
        size_t priority = 0;
        int r;

        assert(dirs);
        assert(subdir);
        assert(suffix);
        assert(ret);

        for (const char *const *dir = dirs; *dir; dir++, priority++) {
                _cleanup_free_ char *relative = NULL, *path = NULL;

                relative = strjoin(*dir, "/", subdir);
                if (!relative)
                        return -ENOMEM;
                path = path_prefix_root(root, relative);
                if (!path)
                        return -ENOMEM;

                r = add_directory(&list, path, priority, suffix);
                if (r < 0)
                        return r;
        }

        if (list.n > 0)
                qsort(list.items, list.n, sizeof(DropIn), drop_in_compare);

        files = calloc(1, sizeof(char *));
        if (!files)
                return -ENOMEM;

        /* After sorting, the first of each run of equal names is the most local one. */
        const char *kept = NULL;
        for (size_t i = 0; i < list.n; i++) {
                if (kept && streq(list.items[i].name, list.items[i - 1].name)) {
                        log_debug("Skipping %s, masked by %s.", list.items[i].path, kept);
                        continue;
                }

                r = strv_push(&files, list.items[i].path);
                if (r < 0)
                        return r;
                kept = TAKE_PTR(list.items[i].path);
        }

        *ret = TAKE_PTR(files);
        return 0;
}
