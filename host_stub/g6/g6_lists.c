/* SPDX-License-Identifier: Apache-2.0 */
/* g6_lists.c — see g6_lists.h. */
#include "g6_lists.h"

#include <stdlib.h>
#include <string.h>

int g6_lists_begin(g6_lists *l, size_t ni)
{
    l->valid = 0;
    l->ni = 0;
    l->n_pool = 0;
    if (ni > l->cap_ni) {
        size_t *s = realloc(l->start, ni * sizeof *s);
        if (!s) return -1;
        l->start = s;
        size_t *n = realloc(l->len, ni * sizeof *n);
        if (!n) return -1;
        l->len = n;
        l->cap_ni = ni;
    }
    memset(l->len, 0, ni * sizeof *l->len);
    memset(l->start, 0, ni * sizeof *l->start);
    l->ni = ni;
    return 0;
}

static int reserve(g6_lists *l, size_t n)
{
    if (l->n_pool + n > l->cap_pool) {
        size_t cap = l->cap_pool ? l->cap_pool : 4096;
        while (cap < l->n_pool + n) cap *= 2;
        int *p = realloc(l->pool, cap * sizeof *p);
        if (!p) return -1;
        l->pool = p;
        l->cap_pool = cap;
    }
    return 0;
}

int g6_lists_put(g6_lists *l, size_t k, const uint32_t *addr, size_t n, const int *index)
{
    if (reserve(l, n)) return -1;
    l->start[k] = l->n_pool;
    l->len[k] = n;
    for (size_t q = 0; q < n; ++q) l->pool[l->n_pool++] = index[addr[q]];
    return 0;
}

int g6_lists_add(g6_lists *l, size_t k, const int *index, size_t n)
{
    /* the list moves to the end of the pool, where it can grow */
    if (reserve(l, l->len[k] + n)) return -1;
    memmove(l->pool + l->n_pool, l->pool + l->start[k], l->len[k] * sizeof(int));
    memcpy(l->pool + l->n_pool + l->len[k], index, n * sizeof(int));
    l->start[k] = l->n_pool;
    l->len[k] += n;
    l->n_pool += l->len[k];
    return 0;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

void g6_lists_finish(g6_lists *l)
{
    for (size_t k = 0; k < l->ni; ++k) qsort(l->pool + l->start[k], l->len[k], sizeof(int), cmp_int);
    l->valid = 1;
}

size_t g6_lists_longest(const g6_lists *l)
{
    size_t m = 0;
    for (size_t k = 0; k < l->ni; ++k)
        if (l->len[k] > m) m = l->len[k];
    return m;
}

void g6_lists_free(g6_lists *l)
{
    free(l->start);
    free(l->len);
    free(l->pool);
    memset(l, 0, sizeof *l);
}
