/* SPDX-License-Identifier: Apache-2.0 */
/* pair_search.c — exact pair_step and lists by step from a pruned tree
 * search (see the header; the bound: pair_bound.h). */
#include "octree/pair_search.h"

#include <math.h>

#include "base/pair_step.h"
#include "octree/pair_bound.h"

void oct_pair_cells(const oct_tree *t, const uint32_t *pid, const double *vel,
                    const double *mass, oct_pair_cell *pc)
{
    const gp_host_tree *st = &t->st;
    if (!t->nsrc) return;
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

static double cell_bound(const oct_tree *t, const oct_pair_cell *pc, uint32_t c,
                         const double x[3], const double v[3], double mi, double G, double eps2)
{
    const gp_moments *mo = &t->st.mom[c];
    const oct_pair_cell *b = &pc[c];
    return oct_pair_step_bound(box_near2(mo->lo, mo->hi, x), eps2,
                               sqrt(box_near2(b->vlo, b->vhi, v)),
                               sqrt(box_far2(b->vlo, b->vhi, v)), G * (mi + b->mmax));
}

/* Depth-first with an explicit stack, as tree_search.c (8 per level). */
enum { STACK = 8 * (GP_KEY_MAX_LEVEL + 2) };
typedef struct pending {
    uint32_t cell;
    double bound;
} pending;

double oct_pair_search(const oct_tree *t, const oct_pair_cell *pc, const uint32_t *pid,
                       const oct_pair_query *q, uint32_t i, double seed, size_t *evals)
{
    double best = seed;
    size_t n_eval = 0;
    if (!t->nsrc || !t->st.ncells) return best;
    const double *x = &q->pos[3 * (size_t)i], *v = &q->vel[3 * (size_t)i], mi = q->mass[i];
    const double G = q->G, eps2 = q->eps2;
    /* a cell is worth opening while its bound is below the threshold */
    const double list_thr = q->nb_step > 0 ? q->nb_step : -HUGE_VAL;
#define THRESHOLD() (q->want_min && best > list_thr ? best : list_thr)
    pending stack[STACK];
    uint32_t sp = 0;
    stack[sp++] = (pending){ 0, cell_bound(t, pc, 0, x, v, mi, G, eps2) };
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
                double bd = cell_bound(t, pc, cl->child + k, x, v, mi, G, eps2);
                if (bd >= THRESHOLD()) continue;
                uint32_t w = nc++;
                while (w > 0 && ch[w - 1].bound < bd) { ch[w] = ch[w - 1]; w--; }
                ch[w] = (pending){ cl->child + k, bd };
            }
            for (uint32_t k = 0; k < nc; k++) stack[sp++] = ch[k];
            continue;
        }
        for (uint32_t k = cl->begin; k < cl->begin + cl->count; k++) {
            size_t j = pid[k];
            if (j == i || !(q->mass[j] > 0)) continue;
            const double *xj = &q->pos[3 * j], *vj = &q->vel[3 * j];
            double tau = gp_pair_step(x[0] - xj[0], x[1] - xj[1], x[2] - xj[2], v[0] - vj[0],
                                      v[1] - vj[1], v[2] - vj[2], eps2, G * (mi + q->mass[j]));
            n_eval++;
            if (tau < best) best = tau;
            if (q->nb_step > 0 && tau < q->nb_step && q->hit(q->ctx, (uint32_t)j)) {
                if (evals) *evals += n_eval;
                return NAN;
            }
        }
    }
#undef THRESHOLD
    if (evals) *evals += n_eval;
    return best;
}
