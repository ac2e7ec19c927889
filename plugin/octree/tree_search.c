/* SPDX-License-Identifier: Apache-2.0 */
/* tree_search.c — exact neighbour searches in a source tree (see the header). */
#include "octree/tree_search.h"

#include <math.h>

/* Squared distance from x to the box [lo, hi] (0 inside). */
static double box_d2(const gp_moments *mo, const double x[3])
{
    double d2 = 0;
    for (int a = 0; a < 3; a++) {
        double e = x[a] < mo->lo[a] ? mo->lo[a] - x[a] : (x[a] > mo->hi[a] ? x[a] - mo->hi[a] : 0);
        d2 += e * e;
    }
    return d2;
}

/* Depth-first with an explicit stack: children are consecutive cells, the
 * depth is at most GP_KEY_MAX_LEVEL, so 8 per level bounds the stack. */
enum { STACK = 8 * (GP_KEY_MAX_LEVEL + 2) };

void oct_nearest(const oct_tree *t, const uint32_t *pid, const double x[3], uint32_t self,
                 uint32_t *nn, double *d2)
{
    uint32_t best = UINT32_MAX;
    double bd2 = HUGE_VAL;
    if (t->nsrc && t->st.ncells) {
        uint32_t stack[STACK], sp = 0;
        stack[sp++] = 0;
        while (sp) {
            uint32_t c = stack[--sp];
            /* strictly beyond: a source at the same distance may still win
             * the tie by a lower index */
            if (box_d2(&t->st.mom[c], x) > bd2) continue;
            const gp_cell *cl = &t->st.cells[c];
            if (cl->nchild) {
                /* nearest child popped first: the best distance shrinks
                 * soonest, so far cells are skipped sooner (the result
                 * does not depend on the order) */
                uint32_t ch[8];
                double cd[8];
                uint32_t nc = 0;
                for (uint32_t k = 0; k < cl->nchild; k++) {
                    double e2 = box_d2(&t->st.mom[cl->child + k], x);
                    if (e2 > bd2) continue;
                    uint32_t w = nc++;
                    while (w > 0 && cd[w - 1] < e2) { cd[w] = cd[w - 1]; ch[w] = ch[w - 1]; w--; }
                    cd[w] = e2;
                    ch[w] = cl->child + k;
                }
                for (uint32_t k = 0; k < nc; k++) stack[sp++] = ch[k];
                continue;
            }
            for (uint32_t i = cl->begin; i < cl->begin + cl->count; i++) {
                uint32_t id = pid[i];
                if (id == self) continue;
                double dx = t->sx[i] - x[0], dy = t->sy[i] - x[1], dz = t->sz[i] - x[2];
                double e2 = dx * dx + dy * dy + dz * dz;
                if (e2 < bd2 || (e2 == bd2 && id < best)) { bd2 = e2; best = id; }
            }
        }
    }
    *nn = best;
    *d2 = bd2;
}

size_t oct_within(const oct_tree *t, const uint32_t *pid, const double x[3], double r2,
                  uint32_t self, uint32_t *out, size_t cap)
{
    size_t found = 0;
    if (!t->nsrc || !t->st.ncells) return 0;
    uint32_t stack[STACK], sp = 0;
    stack[sp++] = 0;
    while (sp) {
        uint32_t c = stack[--sp];
        if (!(box_d2(&t->st.mom[c], x) < r2)) continue;
        const gp_cell *cl = &t->st.cells[c];
        if (cl->nchild) {
            for (uint32_t k = 0; k < cl->nchild; k++) stack[sp++] = cl->child + k;
            continue;
        }
        for (uint32_t i = cl->begin; i < cl->begin + cl->count; i++) {
            if (pid[i] == self) continue;
            double dx = t->sx[i] - x[0], dy = t->sy[i] - x[1], dz = t->sz[i] - x[2];
            if (dx * dx + dy * dy + dz * dz < r2) {
                if (found < cap) out[found] = pid[i];
                found++;
            }
        }
    }
    return found;
}
