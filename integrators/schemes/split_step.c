/* SPDX-License-Identifier: Apache-2.0 */
/* split_step.c — see the header. */
#include <stdlib.h>
#include <string.h>

#include "split_step.h"
#include "core/stopping.h"

#include "timestep_criteria.h"

void gp_split_stop(gp_sim *sim)
{
    gp_split_priv *p = sim->priv;
    if (!p) return;
    free(p->ptime);
    free(p->mask);
    free(p->all);
    free(p);
    sim->priv = NULL;
}

gp_status gp_split_oom(gp_sim *sim, const char *scheme)
{
    return gp_sim_fail(sim, GP_ERR_OUT_OF_MEMORY,
                       "%s: out of memory for the splitting of %zu particles; use fewer particles", scheme,
                       sim->n);
}

gp_status gp_split_make_priv(gp_sim *sim, const char *scheme)
{
    gp_split_stop(sim);
    gp_split_priv *p = calloc(1, sizeof *p);
    if (!p) return gp_split_oom(sim, scheme);
    sim->priv = p;
    p->ptime = malloc(sim->n * sizeof *p->ptime);
    p->mask = malloc(sim->n * sizeof *p->mask);
    p->all = malloc(sim->n * sizeof *p->all);
    if (!p->ptime || !p->mask || !p->all) {
        gp_split_stop(sim);
        return gp_split_oom(sim, scheme);
    }
    for (size_t i = 0; i < sim->n; ++i) p->all[i] = (uint32_t)i;
    return GP_OK;
}

/* A last partial step to an off-grid end time re-anchors the grid there,
 * as the shared-step schemes do. */
void gp_split_anchor(gp_sim *sim, double t0)
{
    gp_levels_anchor(&sim->lv, t0, GP_BLOCK_SET(sim)->dt, GP_BLOCK_SET(sim)->max_level);
}

double gp_split_top_step(const gp_sim *sim, double t_end, int *partial)
{
    const gp_levels *lv = &sim->lv;
    double t_next = gp_levels_time(lv, lv->now + gp_levels_span(lv, 0));
    *partial = t_next > t_end + 1e-9 * lv->dt_max;
    return *partial ? t_end - sim->time : lv->dt_max;
}

static void advance(gp_sim *sim, double t_end, int partial)
{
    gp_levels *lv = &sim->lv;
    if (partial) {
        gp_split_anchor(sim, t_end);
        sim->time = t_end;
        return;
    }
    lv->now += gp_levels_span(lv, 0);
    for (size_t i = 0; i < sim->n; ++i) lv->t_last[i] = lv->now;
    double t = gp_levels_time(lv, lv->now);
    /* land exactly on an end time that lies on the grid */
    if (t != t_end && t > t_end - 1e-9 * GP_BLOCK_SET(sim)->dt && t < t_end + 1e-9 * GP_BLOCK_SET(sim)->dt) t = t_end;
    sim->time = t;
}

gp_status gp_split_top_step_done(gp_sim *sim, double t_end, int partial, const char *scheme)
{
    size_t n = sim->n;
    uint8_t *lv = malloc(n ? n : 1);
    if (!lv) return gp_split_oom(sim, scheme);
    memcpy(lv, sim->lv.level, n);
    advance(sim, t_end, partial);   /* a partial step re-anchors (levels cleared) */
    memcpy(sim->lv.level, lv, n);
    gp_levels_touched(&sim->lv);
    free(lv);
    return GP_OK;
}

void gp_split_kick(gp_sim *sim, const uint32_t *a, size_t na, const double *acc, double dt)
{
    for (size_t k = 0; k < na; ++k)
        for (int c = 0; c < 3; ++c) sim->vel[3 * (size_t)a[k] + c] += dt * acc[3 * k + c];
}

void gp_split_drift(gp_sim *sim, const uint32_t *a, size_t na, double dt, double t)
{
    gp_split_priv *p = sim->priv;
    for (size_t k = 0; k < na; ++k) {
        size_t i = a[k];
        for (int c = 0; c < 3; ++c) sim->pos[3 * i + c] += dt * sim->vel[3 * i + c];
        p->ptime[i] = t;
    }
    gp_stopping_after_drift(sim, a, na);
}

void gp_split_levels(gp_sim *sim, const uint32_t *a, size_t na, int depth)
{
    for (size_t k = 0; k < na; ++k) sim->lv.level[a[k]] = (uint8_t)depth;
    gp_levels_touched(&sim->lv);
}
