/* SPDX-License-Identifier: Apache-2.0 */
/* pair_search.c — exact pair_step and lists by step from a pruned tree
 * search (see the header; the bound: pair_bound.h). */
#include "octree/pair_search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/pair_step.h"
#include "octree/pair_bound.h"

/* W as a fraction of the sources' velocity extent (the root velocity
 * box's largest side). Larger W: more slow pairs to visit; smaller W:
 * cells prune only beyond d ~ sqrt(mu tau / W). On Plummer and galaxy
 * models (bench/pair-search.c, N = 4096 and 16384) 1/1024 visits the
 * fewest cells and pairs: 1/64 opens ~3x more velocity cells, 1/65536
 * 1.5-3x more position cells and pairs. */
#define OCT_PAIR_SPLIT (1.0 / 1024)

static void pair_cells(const oct_tree *t, const uint32_t *pid, const double *vel,
                       const double *mass, oct_pair_cell *pc)
{
    const gp_host_tree *st = &t->st;
    for (int level = (int)st->nlevels - 1; level >= 0; level--) {
        uint32_t lo = st->level_start[level], hi = st->level_start[level + 1];
#pragma omp parallel for schedule(static) if (hi - lo > 256)
        for (uint32_t c = lo; c < hi; c++) {
            const gp_cell *cl = &st->cells[c];
            oct_pair_cell b;
            if (cl->nchild == 0) {
                const double *v = &vel[3 * (size_t)pid[cl->begin]];
                for (int a = 0; a < 3; a++) b.vlo[a] = b.vhi[a] = v[a];
                b.mmax = mass[pid[cl->begin]];
                for (uint32_t k = cl->begin + 1; k < cl->begin + cl->count; k++) {
                    v = &vel[3 * (size_t)pid[k]];
                    for (int a = 0; a < 3; a++) {
                        if (v[a] < b.vlo[a]) b.vlo[a] = v[a];
                        if (v[a] > b.vhi[a]) b.vhi[a] = v[a];
                    }
                    if (mass[pid[k]] > b.mmax) b.mmax = mass[pid[k]];
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
    free(ix->vpid);
    oct_tree_free(&ix->vt);
    memset(ix, 0, sizeof *ix);
}

int oct_pair_index_build(oct_pair_index *ix, const oct_tree *t, const uint32_t *pid,
                         const double *vel, const double *mass)
{
    memset(ix, 0, sizeof *ix);
    ix->t = t;
    ix->pid = pid;
    if (!t->nsrc || !t->st.ncells) return 0;
    ix->pc = malloc((size_t)t->st.ncells * sizeof *ix->pc);
    double *v = malloc(3 * (size_t)t->nsrc * sizeof *v), *one = malloc(t->nsrc * sizeof *one);
    uint32_t *from = malloc(t->nsrc * sizeof *from);
    if (!ix->pc || !v || !one || !from) goto oom;
    pair_cells(t, pid, vel, mass, ix->pc);
    /* the velocity tree: the sources that count (mass > 0), all weighing 1 */
    uint32_t m = 0;
    for (uint32_t k = 0; k < t->nsrc; k++) {
        size_t j = pid[k];
        if (!(mass[j] > 0)) continue;
        memcpy(&v[3 * (size_t)m], &vel[3 * j], 3 * sizeof *v);
        one[m] = 1.0;
        from[m++] = (uint32_t)j;
    }
    if (m) {
        if (oct_tree_build(&ix->vt, m, v, one, 64, 16, GP_KEY_PEANO_HILBERT)) goto oom;
        ix->vpid = malloc(ix->vt.nsrc * sizeof *ix->vpid);
        if (!ix->vpid) goto oom;
        for (uint32_t k = 0; k < ix->vt.nsrc; k++) ix->vpid[k] = from[ix->vt.order[ix->vt.sid[k]]];
        const gp_moments *root = &ix->vt.st.mom[0];
        double ext = 0;
        for (int a = 0; a < 3; a++)
            if (root->hi[a] - root->lo[a] > ext) ext = root->hi[a] - root->lo[a];
        double w = OCT_PAIR_SPLIT * ext;
        ix->w2_split = isfinite(w * w) ? w * w : 0;   /* 0: no slow pairs, all by position */
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

/* Squared distance from x to the farthest corner of [lo, hi]. */
static double box_far2(const double lo[3], const double hi[3], const double x[3])
{
    double d2 = 0;
    for (int a = 0; a < 3; a++) {
        double e = x[a] - lo[a] > hi[a] - x[a] ? x[a] - lo[a] : hi[a] - x[a];
        d2 += e * e;
    }
    return d2;
}

/* The one predicate both sides use: is the pair slow (w < W)? */
static int slow_pair(const double *vi, const double *vj, double w2_split)
{
    double dx = vi[0] - vj[0], dy = vi[1] - vj[1], dz = vi[2] - vj[2];
    return dx * dx + dy * dy + dz * dz < w2_split;
}

/* Lower bound of tau_ij over cell c's pairs that are not slow. */
static double cell_bound(const oct_pair_index *ix, uint32_t c, const double x[3],
                         const double v[3], double mi, double G, double eps2)
{
    const gp_moments *mo = &ix->t->st.mom[c];
    const oct_pair_cell *b = &ix->pc[c];
    double wmin2 = box_near2(b->vlo, b->vhi, v), wmax2 = box_far2(b->vlo, b->vhi, v);
    if (wmax2 < ix->w2_split) return HUGE_VAL;   /* every pair slow: the other side's */
    if (wmin2 < ix->w2_split) wmin2 = ix->w2_split;
    return oct_pair_step_bound(box_near2(mo->lo, mo->hi, x), eps2, sqrt(wmin2), sqrt(wmax2),
                               G * (mi + b->mmax));
}

typedef struct search {
    const oct_pair_query *q;
    uint32_t i;
    double best;
    size_t evals;
} search;

/* tau_ij into the running minimum and the list; nonzero: hit() said stop. */
static int visit(search *S, size_t j)
{
    const oct_pair_query *q = S->q;
    const double *x = &q->pos[3 * (size_t)S->i], *v = &q->vel[3 * (size_t)S->i];
    const double *xj = &q->pos[3 * j], *vj = &q->vel[3 * j];
    double tau = gp_pair_step(x[0] - xj[0], x[1] - xj[1], x[2] - xj[2], v[0] - vj[0],
                              v[1] - vj[1], v[2] - vj[2], q->eps2,
                              q->G * (q->mass[S->i] + q->mass[j]));
    S->evals++;
    if (tau < S->best) S->best = tau;
    return q->nb_step > 0 && tau < q->nb_step && q->hit(q->ctx, (uint32_t)j);
}

/* Depth-first with an explicit stack, as tree_search.c (8 per level). */
enum { STACK = 8 * (GP_KEY_MAX_LEVEL + 2) };
typedef struct pending {
    uint32_t cell;
    double bound;
} pending;

/* The slow pairs: sources within W of v_i in velocity (the tree's search
 * radius 2W is a superset; slow_pair decides). */
static int slow_side(const oct_pair_index *ix, search *S)
{
    const oct_tree *vt = &ix->vt;
    const oct_pair_query *q = S->q;
    if (!vt->nsrc || !(ix->w2_split > 0)) return 0;
    const double *v = &q->vel[3 * (size_t)S->i];
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
        for (uint32_t k = cl->begin; k < cl->begin + cl->count; k++) {
            size_t j = ix->vpid[k];
            if (j == S->i || !slow_pair(v, &q->vel[3 * j], ix->w2_split)) continue;
            if (visit(S, j)) return 1;
        }
    }
    return 0;
}

/* The other pairs, by position: cells pruned by their bound. */
static int position_side(const oct_pair_index *ix, search *S)
{
    const oct_tree *t = ix->t;
    const oct_pair_query *q = S->q;
    const double *x = &q->pos[3 * (size_t)S->i], *v = &q->vel[3 * (size_t)S->i];
    const double mi = q->mass[S->i], G = q->G, eps2 = q->eps2;
    /* a cell is worth opening while its bound is below the threshold */
    const double list_thr = q->nb_step > 0 ? q->nb_step : -HUGE_VAL;
#define THRESHOLD() (q->want_min && S->best > list_thr ? S->best : list_thr)
    pending stack[STACK];
    uint32_t sp = 0;
    stack[sp++] = (pending){ 0, cell_bound(ix, 0, x, v, mi, G, eps2) };
    while (sp) {
        pending top = stack[--sp];
        if (top.bound >= THRESHOLD()) continue;
        const gp_cell *cl = &t->st.cells[top.cell];
        if (cl->nchild) {
            /* children pushed by falling bound: the most promising is
             * opened first, which lowers the running minimum soonest */
            pending ch[8];
            uint32_t nc = 0;
            for (uint32_t k = 0; k < cl->nchild; k++) {
                double bd = cell_bound(ix, cl->child + k, x, v, mi, G, eps2);
                if (bd >= THRESHOLD()) continue;
                uint32_t w = nc++;
                while (w > 0 && ch[w - 1].bound < bd) { ch[w] = ch[w - 1]; w--; }
                ch[w] = (pending){ cl->child + k, bd };
            }
            for (uint32_t k = 0; k < nc; k++) stack[sp++] = ch[k];
            continue;
        }
        for (uint32_t k = cl->begin; k < cl->begin + cl->count; k++) {
            size_t j = ix->pid[k];
            if (j == S->i || !(q->mass[j] > 0) || slow_pair(v, &q->vel[3 * j], ix->w2_split))
                continue;
            if (visit(S, j)) return 1;
        }
    }
#undef THRESHOLD
    return 0;
}

double oct_pair_search(const oct_pair_index *ix, const oct_pair_query *q, uint32_t i,
                       double seed, size_t *evals)
{
    search S = { q, i, seed, 0 };
    int stop = 0;
    if (ix->t && ix->t->nsrc && ix->t->st.ncells)
        stop = slow_side(ix, &S) || position_side(ix, &S);
    if (evals) *evals += S.evals;
    return stop ? NAN : S.best;
}
