/* SPDX-License-Identifier: Apache-2.0 */
/*
 * g6_massless.h — GRAPE-6 finds neighbours by distance alone, so a
 * massless j-particle is a nearest neighbour and a list member like any
 * other; a plugin's sources are its massive particles only. This adds the
 * massless j-particles of [0, jlim) on the host, at the positions the
 * plugin holds for them (get_positions), O(ni) each.
 */
#ifndef GP_G6_MASSLESS_H
#define GP_G6_MASSLESS_H

#include <stddef.h>
#include <stdint.h>

#include "g6_engine.h"

/* For i-particle k at x[3k] (own[k]: its j-address, or UINT32_MAX):
 * nn_addr[k]/nn_d2[k] (addresses, squared distances) lowered to a closer
 * massless j-particle (ties: the lower address); when h2 and lists are
 * given, the massless ones with |r|^2 < h2[k] join list k. 0, or -1 with
 * a sentence in e->err. */
int g6_massless_add(g6_engine *e, const g6_jmem *jm, size_t jlim, size_t ni, const double *x,
                    const uint32_t *own, const double *h2, uint32_t *nn_addr, double *nn_d2, g6_lists *lists);

#endif
