/* SPDX-License-Identifier: Apache-2.0 */
/* cpu_walk_group.c — the CPU group walk (see cpu_walk.h): its workspace, and one
 * walk of a group, which hands the traversal to the variant the CPU and the
 * precision allow (cpu_walk_portable.c, cpu_walk_avx2.c, cpu_walk_avx512.c)
 * and scales the sums back. */
#include "octree/cpu_walk.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "octree/cpu_lists.h"
#include "octree/cpu_walk_ws.h"

/* C11's aligned_alloc wants a size that is a multiple of the alignment
 * (glibc tolerates others; AddressSanitizer does not). */
static void *alloc64(size_t size)
{
    return aligned_alloc(64, (size + 63) / 64 * 64);
}

oct_workspace *oct_workspace_new(uint32_t max_group)
{
    oct_workspace *ws = calloc(1, sizeof *ws);
    if (!ws) return NULL;
    ws->max_group = max_group;
    ws->cf = alloc64(sizeof(list_f));
    ws->pf = alloc64(sizeof(list_f));
    ws->cd = alloc64(sizeof(list_d));
    ws->pd = alloc64(sizeof(list_d));
    ws->tf = malloc(3 * (size_t)max_group * sizeof(float));
    ws->td = malloc(3 * (size_t)max_group * sizeof(double));
    ws->acc = malloc(4 * (size_t)max_group * sizeof(double));
    ws->accf = malloc(4 * (size_t)max_group * sizeof(float));
    if (!ws->cf || !ws->pf || !ws->cd || !ws->pd || !ws->tf || !ws->td || !ws->acc || !ws->accf) {
        oct_workspace_free(ws);
        return NULL;
    }
    return ws;
}

void oct_workspace_free(oct_workspace *ws)
{
    if (!ws) return;
    free(ws->cf); free(ws->pf); free(ws->cd); free(ws->pd);
    free(ws->tf); free(ws->td); free(ws->acc); free(ws->accf);
    free(ws->rec_cell); free(ws->rec_part);
    free(ws);
}

void oct_workspace_record(oct_workspace *ws, int on)
{
    ws->record = on;
    ws->rec_g = NULL;
}

const oct_walk_lists *oct_walk_recorded(const oct_workspace *ws, const oct_sources *src,
                                        const oct_group *g)
{
    return ws->record && ws->rec_ok && ws->rec_g == g && ws->rec_cells == src->cells ? &ws->rec : NULL;
}

/* One walk of group g with parameters p; returns 1 (and leaves the
 * results undefined) when a float mode meets coordinates or payloads out of
 * its range. */
static int walk_once(const oct_sources *src, const oct_walk_params *p, oct_workspace *ws,
                     const oct_group *g, uint64_t *ncell_out, uint64_t *npart_out)
{
    uint32_t nt = g->n;
    int quad = p->quadrupole;
    const int floats = p->prec != OCT_DOUBLE;
    memset(ws->acc, 0, 4 * (size_t)nt * sizeof *ws->acc);
    memset(ws->accf, 0, 4 * (size_t)nt * sizeof *ws->accf);
    const double il = ldexp(1.0, -src->e_len);
    ws->il = il;
    ws->eps2f = (float)(p->eps2 * il * il);
    /* softening far beyond the box: out of the float modes' range */
    if (floats && !((double)ws->eps2f < 1e30)) return 1;
    for (uint32_t t = 0; t < nt; t++) {
        double rx = g->x[t] - g->centre[0], ry = g->y[t] - g->centre[1], rz = g->z[t] - g->centre[2];
        ws->td[3 * t] = rx; ws->td[3 * t + 1] = ry; ws->td[3 * t + 2] = rz;
        rx *= il; ry *= il; rz *= il;
        if (floats && !(fabs(rx) < OCT_FLOAT_RANGE && fabs(ry) < OCT_FLOAT_RANGE && fabs(rz) < OCT_FLOAT_RANGE))
            return 1;
        ws->tf[3 * t] = (float)rx; ws->tf[3 * t + 1] = (float)ry; ws->tf[3 * t + 2] = (float)rz;
    }
    ws->cf->n = ws->pf->n = ws->cd->n = ws->pd->n = 0;
    ws->rec.ncell = ws->rec.npart = 0;
    ws->rec_ok = 1;
    ws->rec_g = NULL;

    uint64_t ncell = 0, npart = 0;
    if (src->n > 0) {
        oct_walk_ctx w = { .src = src, .p = p, .ws = ws, .g = g, .quad = quad,
                           .accel = p->mac == GP_MAC_ACCELERATION, .floats = floats,
                           .gfac = oct_walk_gfac(p, g) };
        int out;
#ifdef OCT_HAVE_X86_SIMD
        ws->cells_q = floats && src->col && oct_simd_level() >= OCT_SIMD_AVX2;
        if (ws->cells_q)
            out = oct_simd_level() >= OCT_SIMD_AVX512 ? oct_walk_avx512(&w, &ncell, &npart)
                                                      : oct_walk_avx2(&w, &ncell, &npart);
        else
#endif
            out = oct_walk_portable(&w, &ncell, &npart);
        if (out) return 1;
        oct_walk_flush(ws, p, g, quad);
    }
    /* back to the input's units: a = sum * 2^(e_mass - 2 e_len), phi = sum
     * * 2^(e_mass - e_len) (float modes; double: e_len = 0). One exact
     * multiply each where the factor is a double, else ldexp. */
    const int el = floats ? src->e_len : 0;
    const int ka = src->e_mass - 2 * el, kp = src->e_mass - el;
    const int one_mul = ka >= -1000 && ka <= 1000 && kp >= -1000 && kp <= 1000;
    const double fa = one_mul ? ldexp(1.0, ka) : 1.0, fp = one_mul ? ldexp(1.0, kp) : 1.0;
    for (uint32_t t = 0; t < nt; t++) {
        double a0, a1, a2, a3;
        if (p->prec == OCT_SINGLE) {
            a0 = ws->accf[4 * t]; a1 = ws->accf[4 * t + 1]; a2 = ws->accf[4 * t + 2]; a3 = ws->accf[4 * t + 3];
        } else {
            a0 = ws->acc[4 * t]; a1 = ws->acc[4 * t + 1]; a2 = ws->acc[4 * t + 2]; a3 = ws->acc[4 * t + 3];
        }
        if (one_mul) {
            a0 *= fa; a1 *= fa; a2 *= fa; a3 *= fp;
        } else {
            a0 = ldexp(a0, ka); a1 = ldexp(a1, ka); a2 = ldexp(a2, ka); a3 = ldexp(a3, kp);
        }
        g->ax[t] = p->G * a0; g->ay[t] = p->G * a1; g->az[t] = p->G * a2;
        if (g->pot) g->pot[t] = p->G * a3;
    }
    ws->rec.cell = ws->rec_cell;
    ws->rec.part = ws->rec_part;
    ws->rec_cells = src->cells;
    ws->rec_g = g;
    *ncell_out = ncell;
    *npart_out = npart;
    return 0;
}

void oct_walk_group(const oct_sources *src, const oct_walk_params *p, oct_workspace *ws,
                   const oct_group *g, uint64_t *pp, uint64_t *pc)
{
    uint64_t ncell = 0, npart = 0;
    if (walk_once(src, p, ws, g, &ncell, &npart)) {
        if (src->prepare_records) {
#pragma omp critical(oct_prepare_records)
            src->prepare_records(src->owner);
        }
        oct_walk_params pd = *p;
        pd.prec = OCT_DOUBLE;
        walk_once(src, &pd, ws, g, &ncell, &npart);
    }
    *pp += npart * g->n;
    *pc += ncell * g->n;
}

int oct_walk_layouts(oct_precision prec)
{
#ifdef OCT_HAVE_X86_SIMD
    if (prec != OCT_DOUBLE && oct_simd_level() >= OCT_SIMD_AVX2) return OCT_PREPARE_COLUMNS;
#endif
    return OCT_PREPARE_RECORDS;
}
