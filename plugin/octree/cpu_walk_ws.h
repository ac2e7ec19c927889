/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu_walk_ws.h — what the force walk's files share (cpu_walk_group.c, the
 * driver; cpu_walk_portable.c, cpu_walk_avx2.c, cpu_walk_avx512.c, one
 * instruction set each): the workspace, the record of a walk, and the
 * entry points of each variant. Private to those files.
 */
#ifndef GP_OCTREE_CPU_WALK_WS_H
#define GP_OCTREE_CPU_WALK_WS_H

#include <stdint.h>
#include <stdlib.h>

#include "octree/cpu_lists.h"
#include "octree/cpu_traverse.h"
#include "octree/cpu_walk.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define OCT_HAVE_X86_SIMD 1
#endif

/* Float modes handle relative coordinates below this (r^2 stays far from
 * FLT_MAX); a group that meets anything farther, or a cell whose payload
 * does not fit, is redone in double precision: correct, just slower. */
#define OCT_FLOAT_RANGE 1e15

struct oct_workspace {
    uint32_t max_group;
    list_f *cf, *pf;          /* cells, particles (single, mixed) */
    list_d *cd, *pd;          /* cells, particles (double)        */
    float *tf;                /* targets relative to the centre: x, y, z (3 * max_group) */
    double *td;
    double *acc;              /* running sums: ax, ay, az, pot (4 * max_group) */
    float *accf;              /* single precision running sums    */
    int cells_q;              /* float lists filled by an AVX walk: cells carry Q and et */
    double il;                /* float modes: 2^-e_len, the length scale's inverse */
    float eps2f;              /* float modes: eps^2 in units of 2^(2 e_len) */
    oct_batch stack[OCT_STACK_CAP];
    /* the record of the last walk (oct_workspace_record) */
    int record, rec_ok;
    const oct_wcell *rec_cells;
    const oct_group *rec_g;
    uint32_t *rec_cell, *rec_part, cap_cell, cap_part;
    oct_walk_lists rec;
};

/* What every variant's hooks need of one walk (oct_traverse's ctx). */
typedef struct oct_walk_ctx {
    const oct_sources *src;
    const oct_walk_params *p;
    oct_workspace *ws;
    const oct_group *g;
    int quad, accel, floats;    /* floats: a float precision */
    double gfac;
} oct_walk_ctx;

/* Room for `more` entries in a record list; on failure the record is
 * dropped for this walk (rec_ok = 0), never the walk. */
static inline int oct_rec_room(oct_workspace *ws, uint32_t **list, uint32_t *cap, uint32_t n,
                               uint32_t more)
{
    if (n + more <= *cap) return 1;
    uint32_t c = *cap ? *cap : 4096;
    while (c < n + more) c *= 2;
    uint32_t *grown = realloc(*list, (size_t)c * sizeof *grown);
    if (!grown) { ws->rec_ok = 0; return 0; }
    *list = grown;
    *cap = c;
    return 1;
}

static inline void oct_rec_cell(oct_workspace *ws, uint32_t c)
{
    if (ws->record && ws->rec_ok && oct_rec_room(ws, &ws->rec_cell, &ws->cap_cell, ws->rec.ncell, 1))
        ws->rec_cell[ws->rec.ncell++] = c;
}

static inline void oct_rec_leaf(oct_workspace *ws, uint32_t first, uint32_t count)
{
    if (!ws->record || !ws->rec_ok) return;
    const uint32_t n = ws->rec.npart;
    if (!oct_rec_room(ws, &ws->rec_part, &ws->cap_part, n, count)) return;
    uint32_t *o = ws->rec_part + n;
    for (uint32_t k = 0; k < count; k++) o[k] = first + k;
    ws->rec.npart = n + count;
}

/* The root of an AVX walk, decided alone from its record as the portable
 * walk decides it: 1 accepted (appended to the empty cell list in the
 * AVX form, Q and et), 0 not, -1 out of the float range. */
static inline int oct_simd_root(const oct_walk_ctx *w)
{
    const oct_sources *src = w->src;
    oct_workspace *ws = w->ws;
    const oct_cell_columns *col = src->col;
    double d[3], d2;
    const double il = ws->il;
    if (!oct_walk_accepts(&src->cells[0], w->g->centre, w->g->radius, w->accel, w->gfac, w->p->lcap,
                          d, &d2))
        return 0;
    if (!(d2 * il * il < (double)src->payf[0].d2max)) return -1;
    list_f *C = ws->cf;
    uint32_t j = C->n++;
    C->x[j] = (float)(d[0] * il); C->y[j] = (float)(d[1] * il); C->z[j] = (float)(d[2] * il);
    C->m[j] = col->m[0];
    for (int k = 0; k < 6; k++) C->s[k][j] = w->quad ? col->s[k][0] : 0.0f;
    C->et[j] = w->quad ? ws->eps2f * col->tr[0] : 0.0f;
    C->id[j] = -1;
    oct_rec_cell(ws, 0);
    return 1;
}

/* Evaluates the lists for every target of g and empties them
 * (cpu_walk_portable.c: the portable kernels, or the AVX2 or AVX-512
 * ones where the CPU has them, cpu_lists_avx2.c, cpu_lists_avx512.c). */
void oct_walk_flush(oct_workspace *ws, const oct_walk_params *p, const oct_group *g, int quad);

/* Appends a leaf's particles one by one; returns 1 when a relative
 * coordinate is out of the float range (the group is then redone in
 * double). The AVX walks' fallback for a leaf longer than a list. */
int oct_push_particles(oct_workspace *ws, const oct_walk_params *p, const oct_group *g, int quad,
                       const oct_sources *src, uint32_t begin, uint32_t count);

/* One traversal of w's group, filling (and flushing) the lists: the
 * portable walk (records), and the float modes' AVX2 and AVX-512 walks
 * (columns; only where oct_simd_level() allows). Return 1 where a float
 * mode meets coordinates or payloads out of its range. */
int oct_walk_portable(oct_walk_ctx *w, uint64_t *ncell, uint64_t *npart);
int oct_walk_avx2(oct_walk_ctx *w, uint64_t *ncell, uint64_t *npart);
int oct_walk_avx512(oct_walk_ctx *w, uint64_t *ncell, uint64_t *npart);

#endif /* GP_OCTREE_CPU_WALK_WS_H */
