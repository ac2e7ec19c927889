/* SPDX-License-Identifier: Apache-2.0 */
/*
 * g6_massless.h — GRAPE-6 finds neighbours by distance alone, so a
 * massless j-particle is a nearest neighbour and a list member like any
 * other; a plugin's sources are its massive particles only. These add the
 * massless j-particles on the host, at the positions the plugin holds for
 * them (the caller fetches those with get_positions), O(ni) each.
 */
#ifndef GP_G6_MASSLESS_H
#define GP_G6_MASSLESS_H

#include <stddef.h>
#include <stdint.h>

#include "g6_jmem.h"
#include "g6_lists.h"

/* The written massless addresses of [0, jlim) into *addr (malloc'ed, the
 * caller frees; NULL when none); their count, or (size_t)-1 out of memory. */
size_t g6_massless_find(const g6_jmem *jm, size_t jlim, uint32_t **addr);

/* For i-particle k at x[3k] (own[k]: its j-address, or UINT32_MAX):
 * nn_addr[k]/nn_d2[k] (addresses, squared distances) lowered to a closer
 * of the m massless j-particles addr[] at pos[3m] (ties: the lower
 * address); when h2 and lists are given, those with |r|^2 < h2[k] join
 * list k. 0, or -1 out of memory. */
int g6_massless_add(const g6_jmem *jm, size_t m, const uint32_t *addr, const double *pos, size_t ni,
                    const double *x, const uint32_t *own, const double *h2, uint32_t *nn_addr, double *nn_d2,
                    g6_lists *lists);

#endif
