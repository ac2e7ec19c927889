/* SPDX-License-Identifier: Apache-2.0 */
/*
 * g6_engine.h — GRAPE-6's model mapped onto a gravplug plugin:
 *   j-memory address a     = plugin particle a, held with its jerk
 *                            (set_state_jerk), uploaded only when written;
 *   nj                     = the source subset [0, nj);
 *   g6_set_ti              = predict(ti), done lazily at the next calc;
 *   i-particles            = points at the client's own positions:
 *     field route  compute_field_ex, excluding the j-address of each
 *                  i-index (ABI 1.3);
 *     held route   (a plugin without compute_field_ex) an i-particle
 *                  with a j-address is computed in that slot, its state
 *                  set to the client's (x, v) at ti and restored from
 *                  j-memory afterwards (the plugin skips self); one
 *                  without (index -1, unknown, or >= nj) in one of
 *                  npipes massless slots past j-memory; a repeated index
 *                  in a later pass;
 *   h2                     = neighbour radii sqrt(h2) (|r|^2 < h2).
 * The plugin holds as many j-slots as j-memory has allocated, which
 * doubles, so a growing j-memory is reloaded O(log N) times, not per new
 * particle.
 */
#ifndef GP_G6_ENGINE_H
#define GP_G6_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "gravplug_loader.h"
#include "g6_config.h"
#include "g6_jmem.h"
#include "g6_lists.h"

typedef struct g6_engine {
    gp_plugin *plugin;
    const gp_api *api;
    gp_solver *s;
    int field_route;   /* 1: compute_field_ex; 0: held slots */
    size_t npipes;
    size_t jcap;       /* j-slots in the plugin; 0: nothing loaded */
    double *mass;      /* the masses the plugin holds, per j-slot */
    int predicted;     /* the plugin's positions are at pred_t */
    double pred_t;
    size_t src_n;      /* the source subset set, SIZE_MAX: all */
    double eps2;
    int eps_set;
    /* scratch, grown as needed */
    uint32_t *iota, *work_u32;
    double *work;
    size_t work_cap, iota_cap;
    uint64_t *offset;
    uint32_t *list;
    size_t list_cap, offset_cap;
    unsigned *seen;    /* per j-slot: occurrences in this call (held route) */
    char err[1024];
} g6_engine;

/* Opens the configured plugin and an instance on device (cfg->device
 * wins when >= 0). 0, or -1 with a sentence in e->err. */
int g6_engine_open(g6_engine *e, const g6_config *cfg, int device);
void g6_engine_close(g6_engine *e);

/* One g6calc: ni i-particles (index, x, v) against j-memory addresses
 * [0, nj) predicted to ti, softening eps2, neighbour radii^2 h2 (NULL or
 * all <= 0: no lists). Outputs per i in call order; jerk, pot, nn (client
 * indices, -1: none) may be NULL; lists (may be NULL) gets the lists.
 * 0, or -1 with a sentence in e->err. */
int g6_engine_calc(g6_engine *e, g6_jmem *jm, double ti, size_t nj, size_t ni,
                   const int *index, const double *x, const double *v, double eps2,
                   const double *h2, double *acc, double *jerk, double *pot, int *nn,
                   g6_lists *lists);

#endif
