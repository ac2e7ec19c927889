/* SPDX-License-Identifier: Apache-2.0 */
/* pair_search.c — exact pair_step and lists by step from a pruned tree
 * search (see the header; the bound: pair_bound.h). */
#include "octree/pair_search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/pair_step.h"
#include "base/pair_step_bound.h"
#include "octree/pair_bound.h"

/* The two loops that bound a cell's children and screen a leaf's pairs
 * run in SIMD lanes; x86-64-v3/v4 clones (picked at load time, as
 * cpu_walk_portable.c's) give them 4 and 8. -ffp-contract=off for this file: no
 * clone fuses a multiply-add, so every clone computes the same bits. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define PAIR_CLONES __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#else
#define PAIR_CLONES
#endif

/* Both loops run whole blocks of LANES (8 doubles: one AVX-512 register)
 * so that no clone falls into a scalar remainder with its roots and
 * divisions: a cell's children are bounded 8 at a time whatever their
 * number, a leaf screened in multiples of 8 (the columns are padded, and
 * what lies past the end is computed and ignored). */
enum { LANES = 8 };

/* W as a fraction of the sources' velocity extent (the root velocity
 * box's largest side). Larger W: more slow pairs to visit; smaller W:
 * cells prune only beyond d ~ sqrt(mu tau / W). On Plummer and galaxy
 * models (bench/pair-search.c, N = 4096 and 16384) 1/1024 visits the
 * fewest cells and pairs: 1/64 opens ~3x more velocity cells, 1/65536
 * 1.5-3x more position cells and pairs. */
#define OCT_PAIR_SPLIT (1.0 / 1024)

/* From how many searches on the velocity tree pays for its build: below,
 * each search finds its slow pairs by a vectorised scan of every
 * source's velocity, which costs far less than the build until there are
 * hundreds of searches (bench/results/cpu-tree/raw/cpu-tree.md, "OCT_PAIR_VTREE_TARGETS");
 * set low, as the scan's cost grows with the sources and the tree walk's
 * does not. */
#define OCT_PAIR_VTREE_TARGETS 256

static void pair_cells(const oct_tree *t, const oct_pair_columns *src, oct_pair_cell *pc)
{
    const gp_host_tree *st = &t->st;
    const double *col[3] = { src->vx, src->vy, src->vz };
    for (int level = (int)st->nlevels - 1; level >= 0; level--) {
        uint32_t lo = st->level_start[level], hi = st->level_start[level + 1];
#pragma omp parallel for schedule(static) if (hi - lo > 256)
        for (uint32_t c = lo; c < hi; c++) {
            const gp_cell *cl = &st->cells[c];
            oct_pair_cell b;
            if (cl->nchild == 0) {
                for (int a = 0; a < 3; a++) b.vlo[a] = b.vhi[a] = col[a][cl->begin];
                b.mmax = src->m[cl->begin];
                for (uint32_t k = cl->begin + 1; k < cl->begin + cl->count; k++) {
                    for (int a = 0; a < 3; a++) {
                        if (col[a][k] < b.vlo[a]) b.vlo[a] = col[a][k];
                        if (col[a][k] > b.vhi[a]) b.vhi[a] = col[a][k];
                    }
                    if (src->m[k] > b.mmax) b.mmax = src->m[k];
                }
            } else {
                b = pc[cl->child];
                for (uint32_t k = 1; k < cl->nchild; k++) {
                    const oct_pair_cell *ch = &pc[cl->child + k];
                    for (int a = 0; a < 3; a++) {
                        if (ch->vlo[a] < b.vlo[a]) b.vlo[a] = ch->vlo[a];
                        if (ch->vhi[a] > b.vhi[a]) b.vhi[a] = ch->vhi[a];
                    }
                    if (ch->mmax > b.mmax) b.mmax = ch->mmax;
                }
            }
            pc[c] = b;
        }
    }
}

void oct_pair_index_free(oct_pair_index *ix)
{
    free(ix->pc);
    free(ix->box);
    free(ix->vpid);
    free(ix->src.block);
    free(ix->vsrc.block);
    oct_tree_free(&ix->vt);
    memset(ix, 0, sizeof *ix);
}

/* The sources' coordinates in the order of ids (n of them). */
static int pair_columns(oct_pair_columns *c, const uint32_t *ids, uint32_t n, const double *pos,
                        const double *vel, const double *mass)
{
    /* LANES of zeros past the end: the screen reads whole lane blocks */
    c->block = malloc((7 * (size_t)n + LANES) * sizeof *c->block);
    if (!c->block) return -1;
    memset(c->block + 7 * (size_t)n, 0, LANES * sizeof *c->block);
    double *col[7];
    for (int a = 0; a < 7; a++) col[a] = c->block + (size_t)a * n;
    c->x = col[0]; c->y = col[1]; c->z = col[2];
    c->vx = col[3]; c->vy = col[4]; c->vz = col[5]; c->m = col[6];
    for (uint32_t k = 0; k < n; k++) {
        size_t j = ids[k];
        for (int a = 0; a < 3; a++) {
            col[a][k] = pos[3 * j + a];
            col[3 + a][k] = vel[3 * j + a];
        }
        col[6][k] = mass[j];
    }
    return 0;
}

int oct_pair_index_build(oct_pair_index *ix, const oct_tree *t, const uint32_t *pid,
                         const double *pos, const double *vel, const double *mass,
                         size_t ntargets)
{
    memset(ix, 0, sizeof *ix);
    ix->t = t;
    ix->pid = pid;
    if (!t->nsrc || !t->st.ncells) return 0;
    ix->pc = malloc((size_t)t->st.ncells * sizeof *ix->pc);
    double *v = NULL, *one = NULL;
    uint32_t *from = NULL;
    if (!ix->pc || pair_columns(&ix->src, pid, t->nsrc, pos, vel, mass)) goto oom;
    pair_cells(t, &ix->src, ix->pc);
    /* the bound's inputs per cell as columns (BOX_*), so that a cell's
     * children are bounded in lanes */
    const size_t nc = t->st.ncells;
    ix->box = malloc((BOX_FIELDS * nc + LANES) * sizeof *ix->box);   /* as columns */
    if (!ix->box) goto oom;
    memset(ix->box + BOX_FIELDS * nc, 0, LANES * sizeof *ix->box);
    for (size_t c = 0; c < nc; c++) {
        for (int a = 0; a < 3; a++) {
            ix->box[(BOX_PLO + a) * nc + c] = t->st.mom[c].lo[a];
            ix->box[(BOX_PHI + a) * nc + c] = t->st.mom[c].hi[a];
            ix->box[(BOX_VLO + a) * nc + c] = ix->pc[c].vlo[a];
            ix->box[(BOX_VHI + a) * nc + c] = ix->pc[c].vhi[a];
        }
        ix->box[BOX_MMAX * nc + c] = ix->pc[c].mmax;
    }
    /* W from the velocity extent of the sources that count (mass > 0) */
    const oct_pair_columns *sc = &ix->src;
    const double *vcol[3] = { sc->vx, sc->vy, sc->vz };
    double vlo[3] = { HUGE_VAL, HUGE_VAL, HUGE_VAL }, vhi[3] = { -HUGE_VAL, -HUGE_VAL, -HUGE_VAL };
    uint32_t m = 0;
    for (uint32_t k = 0; k < t->nsrc; k++) {
        if (!(sc->m[k] > 0)) continue;
        m++;
        for (int a = 0; a < 3; a++) {
            if (vcol[a][k] < vlo[a]) vlo[a] = vcol[a][k];
            if (vcol[a][k] > vhi[a]) vhi[a] = vcol[a][k];
        }
    }
    if (m) {
        double ext = 0;
        for (int a = 0; a < 3; a++)
            if (vhi[a] - vlo[a] > ext) ext = vhi[a] - vlo[a];
        double w = OCT_PAIR_SPLIT * ext;
        ix->w2_split = isfinite(w * w) ? w * w : 0;   /* 0: no slow pairs, all by position */
    }
    /* the velocity tree: the sources that count, all weighing 1 */
    if (m && ntargets >= OCT_PAIR_VTREE_TARGETS) {
        v = malloc(3 * (size_t)m * sizeof *v);
        one = malloc(m * sizeof *one);
        from = malloc(m * sizeof *from);
        if (!v || !one || !from) goto oom;
        m = 0;
        for (uint32_t k = 0; k < t->nsrc; k++) {
            if (!(sc->m[k] > 0)) continue;
            for (int a = 0; a < 3; a++) v[3 * (size_t)m + a] = vcol[a][k];
            one[m] = 1.0;
            from[m++] = pid[k];
        }
        if (oct_tree_build(&ix->vt, m, v, one, 64, 16, GP_KEY_PEANO_HILBERT)) goto oom;
        ix->vpid = malloc(ix->vt.nsrc * sizeof *ix->vpid);
        if (!ix->vpid) goto oom;
        for (uint32_t k = 0; k < ix->vt.nsrc; k++) ix->vpid[k] = from[ix->vt.order[ix->vt.sid[k]]];
        if (pair_columns(&ix->vsrc, ix->vpid, ix->vt.nsrc, pos, vel, mass)) goto oom;
    }
    free(v); free(one); free(from);
    return 0;
oom:
    free(v); free(one); free(from);
    oct_pair_index_free(ix);
    return -1;
}

/* Squared distance from x to the box [lo, hi] (0 inside), as
 * tree_search.c: differences taken as the pair expression takes them, so
 * rounding keeps it at or below every member's. */
static double box_near2(const double lo[3], const double hi[3], const double x[3])
{
    double d2 = 0;
    for (int a = 0; a < 3; a++) {
        double e = x[a] < lo[a] ? lo[a] - x[a] : (x[a] > hi[a] ? x[a] - hi[a] : 0);
        d2 += e * e;
    }
    return d2;
}

typedef struct search {
    const oct_pair_query *q;
    uint32_t i;
    double x[3], v[3], mi;   /* particle i                                 */
    double best;
    double list_thr;         /* nb_step, or -inf without lists             */
    gp_step_bound bound;     /* proves tau_ij >= threshold(S)              */
    size_t evals;
} search;

/* What a pair must go below to matter: the running minimum while it is
 * sought and above nb_step, else nb_step. */
static double threshold(const search *S)
{
    return S->q->want_min && S->best > S->list_thr ? S->best : S->list_thr;
}

/* tau_ij into the running minimum and the list; nonzero: hit() said stop.
 * dx, dv: x_i - x_j and v_i - v_j, as the screen computed them. */
static int visit(search *S, uint32_t j, const double dx[3], const double dv[3], double mj)
{
    const oct_pair_query *q = S->q;
    double tau = q->even ? gp_pair_step_even(dx[0], dx[1], dx[2], dv[0], dv[1], dv[2], q->eps2,
                                             q->G * (S->mi + mj))
                         : gp_pair_step(dx[0], dx[1], dx[2], dv[0], dv[1], dv[2], q->eps2,
                                        q->G * (S->mi + mj));
    S->evals++;
    if (tau < S->best) {
        S->best = tau;
        if (q->want_min) S->bound = gp_step_bound_for(threshold(S));
    }
    return q->nb_step > 0 && tau < q->nb_step && q->hit(q->ctx, j);
}

/* The pairs of sources begin .. begin+count-1 of columns c (particle
 * indices ids) on one side of the split (slow: w < W, else w >= W):
 * screened in blocks by pair_step_bound.h's root-free test, branch-free
 * so it vectorises; only the pairs it cannot prove at or above the
 * threshold get the exact step, each tested again against the threshold
 * the pairs before it have lowered. Nonzero: hit() said stop. */
enum { BLOCK = 32 };

/* Whether the bound proves the pair at or above the threshold: for the
 * even step, the step with the velocity reversed (r.v negated) too. */
static inline int pair_holds(const gp_step_bound *bd, int even, double c, double s, double v2,
                             double Gmu)
{
    return gp_step_bound_holds(bd, c, s, v2, Gmu) & ((!even) | gp_step_bound_holds(bd, c, -s, v2, Gmu));
}

/* need[u] = 0 where source b0+u is on the other side, massless, or its
 * pair proven at or above the threshold. */
static PAIR_CLONES void screen(const search *S, const oct_pair_columns *c, uint32_t b0,
                               uint32_t nb, int slow, double w2_split, unsigned char *restrict need)
{
    const double xi = S->x[0], yi = S->x[1], zi = S->x[2];
    const double vxi = S->v[0], vyi = S->v[1], vzi = S->v[2];
    const double eps2 = S->q->eps2, G = S->q->G, mi = S->mi;
    const double *cx = c->x + b0, *cy = c->y + b0, *cz = c->z + b0;
    const double *cvx = c->vx + b0, *cvy = c->vy + b0, *cvz = c->vz + b0, *cm = c->m + b0;
    const gp_step_bound bd = S->bound;
    const int even = S->q->even;
    for (uint32_t u = 0; u < nb; u++) {
        double dx = xi - cx[u], dy = yi - cy[u], dz = zi - cz[u];
        double dvx = vxi - cvx[u], dvy = vyi - cvy[u], dvz = vzi - cvz[u];
        double v2 = dvx * dvx + dvy * dvy + dvz * dvz;
        double r2 = dx * dx + dy * dy + dz * dz + eps2;
        double s = dx * dvx + dy * dvy + dz * dvz;
        int other_side = (v2 < w2_split) != slow;
        need[u] = !(other_side | !(cm[u] > 0) |
                    pair_holds(&bd, even, 1.0 / sqrt(r2), s, v2, G * (mi + cm[u])));
    }
}

static int leaf_pairs(search *S, const oct_pair_columns *c, const uint32_t *ids, uint32_t begin,
                      uint32_t count, int slow, double w2_split)
{
    const double xi = S->x[0], yi = S->x[1], zi = S->x[2];
    const double vxi = S->v[0], vyi = S->v[1], vzi = S->v[2];
    const double eps2 = S->q->eps2, G = S->q->G, mi = S->mi;
    for (uint32_t b0 = begin; b0 < begin + count; b0 += BLOCK) {
        uint32_t nb = begin + count - b0 < BLOCK ? begin + count - b0 : BLOCK;
        const double *cx = c->x + b0, *cy = c->y + b0, *cz = c->z + b0;
        const double *cvx = c->vx + b0, *cvy = c->vy + b0, *cvz = c->vz + b0, *cm = c->m + b0;
        unsigned char need[BLOCK];
        screen(S, c, b0, (nb + LANES - 1) & ~(uint32_t)(LANES - 1), slow, w2_split, need);
        for (uint32_t u = 0; u < nb; u++) {
            if (!need[u] || ids[b0 + u] == S->i) continue;
            double dx[3] = { xi - cx[u], yi - cy[u], zi - cz[u] };
            double dv[3] = { vxi - cvx[u], vyi - cvy[u], vzi - cvz[u] };
            double r2 = dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2] + eps2;
            if (pair_holds(&S->bound, S->q->even, 1.0 / sqrt(r2),
                           dx[0] * dv[0] + dx[1] * dv[1] + dx[2] * dv[2],
                           dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2], G * (mi + cm[u])))
                continue;
            if (visit(S, ids[b0 + u], dx, dv, cm[u])) return 1;
        }
    }
    return 0;
}

/* Lower bounds of tau_ij over the pairs that are not slow, for cells
 * c0 .. c0+LANES-1 (a caller reads those it asked for; box_near2 and its farthest-corner twin, for position and
 * velocity, from the columns). HUGE_VAL for a cell whose pairs are all
 * slow: the other side's. */
static PAIR_CLONES void cell_bounds(const oct_pair_index *ix, const search *S, uint32_t c0,
                                    double *restrict bound)
{
    const size_t nc = ix->t->st.ncells;
    const double *restrict box = ix->box;
    const double W2 = ix->w2_split, eps2 = S->q->eps2, G = S->q->G, mi = S->mi;
    const double xi[3] = { S->x[0], S->x[1], S->x[2] }, vi[3] = { S->v[0], S->v[1], S->v[2] };
    const int even = S->q->even;
    for (uint32_t k = 0; k < LANES; k++) {
        size_t c = (size_t)c0 + k;   /* size_t sum: the lanes are provably contiguous */
        double r2 = 0, wmin2 = 0, wmax2 = 0, smin = 0, smax = 0;
        for (int a = 0; a < 3; a++) {
            double lo = box[(BOX_PLO + a) * nc + c], hi = box[(BOX_PHI + a) * nc + c];
            double x = xi[a], e = x < lo ? lo - x : (x > hi ? x - hi : 0);
            r2 += e * e;
            double vl = box[(BOX_VLO + a) * nc + c], vh = box[(BOX_VHI + a) * nc + c];
            double v = vi[a], f = v < vl ? vl - v : (v > vh ? v - vh : 0);
            double g = v - vl > vh - v ? v - vl : vh - v;
            wmin2 += f * f;
            wmax2 += g * g;
            double p = oct_pair_rv_min_axis(x, lo, hi, v, vl, vh);
            smin = a ? smin + p : p;
            /* the even step: the velocity box mirrored, -max(r.v) */
            double pm = oct_pair_rv_min_axis(x, lo, hi, -v, -vh, -vl);
            smax = a ? smax + pm : pm;
        }
        /* the largest approach rate: -(r.v) at most -smin; with the
         * velocities reversed too, r.v at most -smax */
        double sneg = smin < 0 ? -smin : 0;
        if (even && smax < 0 && -smax > sneg) sneg = -smax;
        double b = oct_pair_step_bound(r2, eps2, sqrt(wmin2 < W2 ? W2 : wmin2), sqrt(wmax2),
                                       G * (mi + box[BOX_MMAX * nc + c]), sneg);
        bound[k] = wmax2 < W2 ? HUGE_VAL : b;
    }
}

/* Depth-first with an explicit stack, as tree_search.c (8 per level). */
enum { STACK = 8 * (GP_KEY_MAX_LEVEL + 2) };
typedef struct pending {
    uint32_t cell;
    double bound;
} pending;

/* The slow pairs: sources within W of v_i in velocity (the tree's search
 * radius 2W is a superset; the pair's own w decides). */
/* need[u] = whether source b0+u of c is slow for v (w < W). */
static PAIR_CLONES void slow_candidates(const oct_pair_columns *c, uint32_t b0, uint32_t nb,
                                        const double v[3], double w2_split,
                                        unsigned char *restrict need)
{
    const double vxi = v[0], vyi = v[1], vzi = v[2];
    const double *cvx = c->vx + b0, *cvy = c->vy + b0, *cvz = c->vz + b0;
    for (uint32_t u = 0; u < nb; u++) {
        double dvx = vxi - cvx[u], dvy = vyi - cvy[u], dvz = vzi - cvz[u];
        need[u] = dvx * dvx + dvy * dvy + dvz * dvz < w2_split;
    }
}

/* The slow pairs without a velocity tree: every source's w looked at, a
 * chunk at a time, the (rare) slow ones found 8 flags at a time. */
enum { SCAN = 1024 };
static int slow_scan(const oct_pair_index *ix, search *S)
{
    const uint32_t nsrc = ix->t->nsrc;
    unsigned char need[SCAN];
    for (uint32_t b0 = 0; b0 < nsrc; b0 += SCAN) {
        uint32_t nb = nsrc - b0 < SCAN ? nsrc - b0 : SCAN;
        slow_candidates(&ix->src, b0, nb, S->v, ix->w2_split, need);
        for (uint32_t u0 = 0; u0 < nb; u0 += 8) {
            uint64_t any = 0;
            if (nb - u0 >= 8) memcpy(&any, need + u0, 8);
            else any = 1;
            if (!any) continue;
            for (uint32_t u = u0; u < u0 + 8 && u < nb; u++)
                if (need[u] && leaf_pairs(S, &ix->src, ix->pid, b0 + u, 1, 1, ix->w2_split))
                    return 1;
        }
    }
    return 0;
}

static int slow_side(const oct_pair_index *ix, search *S)
{
    const oct_tree *vt = &ix->vt;
    if (!(ix->w2_split > 0)) return 0;
    if (!vt->nsrc) return slow_scan(ix, S);
    const double *v = S->v;
    uint32_t stack[STACK], sp = 0;
    stack[sp++] = 0;
    while (sp) {
        uint32_t c = stack[--sp];
        if (!(box_near2(vt->st.mom[c].lo, vt->st.mom[c].hi, v) < 4 * ix->w2_split)) continue;
        const gp_cell *cl = &vt->st.cells[c];
        if (cl->nchild) {
            for (uint32_t k = 0; k < cl->nchild; k++) stack[sp++] = cl->child + k;
            continue;
        }
        if (leaf_pairs(S, &ix->vsrc, ix->vpid, cl->begin, cl->count, 1, ix->w2_split)) return 1;
    }
    return 0;
}

/* The other pairs, by position: cells pruned by their bound. */
static int position_side(const oct_pair_index *ix, search *S)
{
    const oct_tree *t = ix->t;
    pending stack[STACK];
    uint32_t sp = 0;
    double bd[8];
    cell_bounds(ix, S, 0, bd);
    stack[sp++] = (pending){ 0, bd[0] };
    while (sp) {
        pending top = stack[--sp];
        if (top.bound >= threshold(S)) continue;
        const gp_cell *cl = &t->st.cells[top.cell];
        if (cl->nchild) {
            /* children pushed by falling bound: the most promising is
             * opened first, which lowers the running minimum soonest */
            pending ch[8];
            uint32_t nc = 0;
            const double thr = threshold(S);
            cell_bounds(ix, S, cl->child, bd);
            for (uint32_t k = 0; k < cl->nchild; k++) {
                if (bd[k] >= thr) continue;
                uint32_t w = nc++;
                while (w > 0 && ch[w - 1].bound < bd[k]) { ch[w] = ch[w - 1]; w--; }
                ch[w] = (pending){ cl->child + k, bd[k] };
            }
            for (uint32_t k = 0; k < nc; k++) stack[sp++] = ch[k];
            continue;
        }
        if (leaf_pairs(S, &ix->src, ix->pid, cl->begin, cl->count, 0, ix->w2_split)) return 1;
    }
    return 0;
}

double oct_pair_search(const oct_pair_index *ix, const oct_pair_query *q, uint32_t i,
                       double seed, size_t *evals)
{
    search S = { .q = q, .i = i, .mi = q->mass[i], .best = seed,
                 .list_thr = q->nb_step > 0 ? q->nb_step : -HUGE_VAL };
    for (int a = 0; a < 3; a++) {
        S.x[a] = q->pos[3 * (size_t)i + a];
        S.v[a] = q->vel[3 * (size_t)i + a];
    }
    S.bound = gp_step_bound_for(threshold(&S));
    int stop = 0;
    if (ix->t && ix->t->nsrc && ix->t->st.ncells)
        stop = slow_side(ix, &S) || position_side(ix, &S);
    if (evals) *evals += S.evals;
    return stop ? NAN : S.best;
}
