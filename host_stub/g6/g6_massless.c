/* SPDX-License-Identifier: Apache-2.0 */
/* g6_massless.c — see g6_massless.h. */
#include "g6_massless.h"

#include <stdio.h>
#include <stdlib.h>

int g6_massless_add(g6_engine *e, const g6_jmem *jm, size_t jlim, size_t ni, const double *x,
                    const uint32_t *own, const double *h2, uint32_t *nn_addr, double *nn_d2, g6_lists *lists)
{
    size_t m = 0;
    for (size_t q = 0; q < jlim; ++q) m += jm->written[q] && jm->m[q] == 0.0;
    if (m == 0) return 0;
    uint32_t *addr = malloc(m * sizeof *addr);
    double *pos = malloc(3 * m * sizeof *pos);
    int *found = malloc(m * sizeof *found);
    if (!addr || !pos || !found) {
        free(addr); free(pos); free(found);
        snprintf(e->err, sizeof e->err, "no memory for %zu massless j-particles", m);
        return -1;
    }
    m = 0;
    for (size_t q = 0; q < jlim; ++q)
        if (jm->written[q] && jm->m[q] == 0.0) addr[m++] = (uint32_t)q;
    gp_status st = e->api->get_positions(e->s, m, addr, pos);
    int rc = st == GP_OK ? 0 : g6_engine_plugin_fail(e, "get_positions", st);
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
        if (nf && lists && g6_lists_add(lists, k, found, nf)) {
            snprintf(e->err, sizeof e->err, "no memory for the neighbour lists");
            rc = -1;
        }
    }
    free(addr); free(pos); free(found);
    return rc;
}
