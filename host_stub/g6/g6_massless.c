/* SPDX-License-Identifier: Apache-2.0 */
/* g6_massless.c — see g6_massless.h. */
#include "g6_massless.h"

#include <stdlib.h>

size_t g6_massless_find(const g6_jmem *jm, size_t jlim, uint32_t **addr)
{
    size_t m = 0;
    *addr = NULL;
    if (jm->n_massless == 0) return 0;   /* no scan of j-memory on every call */
    for (size_t q = 0; q < jlim; ++q) m += jm->written[q] && jm->m[q] == 0.0;
    if (m == 0) return 0;
    if (!(*addr = malloc(m * sizeof **addr))) return (size_t)-1;
    m = 0;
    for (size_t q = 0; q < jlim; ++q)
        if (jm->written[q] && jm->m[q] == 0.0) (*addr)[m++] = (uint32_t)q;
    return m;
}

int g6_massless_add(const g6_jmem *jm, size_t m, const uint32_t *addr, const double *pos, size_t ni,
                    const double *x, const uint32_t *own, const double *h2, uint32_t *nn_addr, double *nn_d2,
                    g6_lists *lists)
{
    int *found = malloc((m ? m : 1) * sizeof *found);
    if (!found) return -1;
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < ni; ++k) {
        size_t nf = 0;
        for (size_t p = 0; p < m; ++p) {
            if (addr[p] == own[k]) continue;
            double dx = pos[3 * p] - x[3 * k], dy = pos[3 * p + 1] - x[3 * k + 1], dz = pos[3 * p + 2] - x[3 * k + 2];
            double d2 = dx * dx + dy * dy + dz * dz;
            if (d2 < nn_d2[k] || (d2 == nn_d2[k] && addr[p] < nn_addr[k])) {
                nn_d2[k] = d2;
                nn_addr[k] = addr[p];
            }
            if (h2 && d2 < h2[k]) found[nf++] = jm->index[addr[p]];
        }
        if (nf && lists && g6_lists_add(lists, k, found, nf)) rc = -1;
    }
    free(found);
    return rc;
}
