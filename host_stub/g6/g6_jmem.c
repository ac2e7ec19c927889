/* SPDX-License-Identifier: Apache-2.0 */
/* g6_jmem.c — see g6_jmem.h. */
#include "g6_jmem.h"

#include <stdlib.h>
#include <string.h>

static int grow_array(void **p, size_t old_n, size_t new_n, size_t size)
{
    void *q = realloc(*p, new_n * size);
    if (!q) return -1;
    memset((char *)q + old_n * size, 0, (new_n - old_n) * size);
    *p = q;
    return 0;
}

static int reserve(g6_jmem *jm, size_t need)
{
    if (need <= jm->cap) return 0;
    size_t cap = jm->cap ? jm->cap : 1024;
    while (cap < need) cap *= 2;
    if (grow_array((void **)&jm->x, jm->cap, cap, 3 * sizeof(double)) ||
        grow_array((void **)&jm->v, jm->cap, cap, 3 * sizeof(double)) ||
        grow_array((void **)&jm->a, jm->cap, cap, 3 * sizeof(double)) ||
        grow_array((void **)&jm->j, jm->cap, cap, 3 * sizeof(double)) ||
        grow_array((void **)&jm->t, jm->cap, cap, sizeof(double)) ||
        grow_array((void **)&jm->m, jm->cap, cap, sizeof(double)) ||
        grow_array((void **)&jm->index, jm->cap, cap, sizeof(int)) ||
        grow_array((void **)&jm->written, jm->cap, cap, 1) ||
        grow_array((void **)&jm->pending, jm->cap, cap, 1) ||
        grow_array((void **)&jm->pend, jm->cap, cap, sizeof(uint32_t)))
        return -1; /* the arrays grown so far stay valid, only larger */
    jm->cap = cap;
    return 0;
}

void g6_jmem_mark(g6_jmem *jm, uint32_t a)
{
    if (a >= jm->n || !jm->written[a] || jm->pending[a]) return;
    jm->pending[a] = 1;
    jm->pend[jm->n_pend++] = a;
}

int g6_jmem_set(g6_jmem *jm, uint32_t a, int index, double tj, double mass,
                const double j6[3], const double a2[3], const double v[3], const double x[3])
{
    if (reserve(jm, (size_t)a + 1)) return -1;
    if (jm->written[a] && jm->index[a] != index) g6_index_map_drop(&jm->map, jm->index[a], a);
    if (g6_index_map_put(&jm->map, index, a)) return -1;
    for (int k = 0; k < 3; ++k) {
        jm->x[3 * a + k] = x[k];
        jm->v[3 * a + k] = v[k];
        jm->a[3 * a + k] = 2.0 * a2[k];
        jm->j[3 * a + k] = 6.0 * j6[k];
    }
    jm->t[a] = tj;
    jm->n_massless -= jm->written[a] && jm->m[a] == 0.0;
    jm->n_massless += mass == 0.0;
    jm->m[a] = mass;
    jm->index[a] = index;
    jm->written[a] = 1;
    if (a >= jm->n) jm->n = (size_t)a + 1;
    g6_jmem_mark(jm, a);
    return 0;
}

void g6_jmem_clear_pending(g6_jmem *jm)
{
    for (size_t k = 0; k < jm->n_pend; ++k) jm->pending[jm->pend[k]] = 0;
    jm->n_pend = 0;
}

void g6_jmem_reset(g6_jmem *jm)
{
    g6_jmem_clear_pending(jm);
    if (jm->cap) memset(jm->written, 0, jm->cap);
    if (jm->cap) memset(jm->m, 0, jm->cap * sizeof(double));
    jm->n = 0;
    jm->n_massless = 0;
    g6_index_map_free(&jm->map);
}

void g6_jmem_free(g6_jmem *jm)
{
    free(jm->x); free(jm->v); free(jm->a); free(jm->j); free(jm->t); free(jm->m);
    free(jm->index); free(jm->written); free(jm->pending); free(jm->pend);
    g6_index_map_free(&jm->map);
    memset(jm, 0, sizeof *jm);
}
