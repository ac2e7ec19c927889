/* SPDX-License-Identifier: Apache-2.0 */
/*
 * g6_jmem.h — the host's copy of GRAPE-6's j-memory, by address: what
 * g6_set_j_particle wrote, kept so the plugin can be (re)loaded and only
 * the addresses written since the last upload are sent (the pending list).
 * Acceleration and jerk are held as the plugin wants them: acc = 2*a2,
 * jerk = 6*j6 (GRAPE-6's predictor is x + dt v + dt^2 a2 + dt^3 j6).
 */
#ifndef GP_G6_JMEM_H
#define GP_G6_JMEM_H

#include <stddef.h>
#include <stdint.h>

#include "g6_index_map.h"

typedef struct g6_jmem {
    size_t cap;      /* addresses allocated */
    size_t n;        /* highest address written + 1 */
    double *x, *v, *a, *j, *t, *m;
    int *index;      /* the client's index per address */
    unsigned char *written; /* the address was written since g6_open/reset */
    unsigned char *pending; /* written since the last upload */
    uint32_t *pend;  /* the pending addresses, in order of writing */
    size_t n_pend;
    size_t n_massless; /* written addresses whose mass is 0 */
    g6_index_map map;
} g6_jmem;

/* Writes one address (growing the arrays as needed). 0, or -1: out of
 * memory, nothing changed. */
int g6_jmem_set(g6_jmem *jm, uint32_t address, int index, double tj, double mass,
                const double j6[3], const double a2[3], const double v[3], const double x[3]);
/* Marks an address for upload again (its plugin copy was overwritten). */
void g6_jmem_mark(g6_jmem *jm, uint32_t address);
void g6_jmem_clear_pending(g6_jmem *jm);
/* Forgets every particle (g6_reset). */
void g6_jmem_reset(g6_jmem *jm);
void g6_jmem_free(g6_jmem *jm);

#endif
