/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "string-util.h"
#include "strv.h"

char **strv_free(char **l) {
        STRV_FOREACH(s, l)
                free(*s);
        free(l);
        return NULL;
}

size_t strv_length(char * const *l) {
        size_t n = 0;

        STRV_FOREACH(s, l)
                n++;
        return n;
}

bool strv_contains(char * const *l, const char *s) {
        STRV_FOREACH(i, l)
                if (streq(*i, s))
                        return true;
        return false;
}

bool strv_equal(char * const *a, char * const *b) {
        size_t n = strv_length(a);

        if (n != strv_length(b))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!streq(a[i], b[i]))
                        return false;
        return true;
}

int strv_push(char ***l, char *value) {
        size_t n = strv_length(*l);
        char **c;

        assert(value);

        c = reallocarray(*l, n + 2, sizeof(char *));
        if (!c)
                return -ENOMEM;
        c[n] = value;
        c[n + 1] = NULL;
        *l = c;
        return 0;
}

int strv_extend(char ***l, const char *value) {
        char *v;
        int r;

        v = strdup(value);
        if (!v)
                return -ENOMEM;
        r = strv_push(l, v);
        if (r < 0)
                free(v);
        return r;
}

char **strv_split_whitespace(const char *s) {
        _cleanup_strv_free_ char **l = NULL;

        l = calloc(1, sizeof(char *));
        if (!l)
                return NULL;

        for (const char *p = skip_leading_whitespace(s); *p; p = skip_leading_whitespace(p)) {
                size_t n = strcspn(p, WHITESPACE);
                char *w = strndup(p, n);

                if (!w || strv_push(&l, w) < 0) {
                        free(w);
                        return NULL;
                }
                p += n;
        }

        return TAKE_PTR(l);
}

static int compare_strings(const void *a, const void *b) {
        return strcmp(*(char * const *) a, *(char * const *) b);
}

char **strv_sort(char **l) {
        size_t n = strv_length(l);

        if (n > 1)
                qsort(l, n, sizeof(char *), compare_strings);
        return l;
}
