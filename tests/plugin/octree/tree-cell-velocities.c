/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tree-cell-velocities.c — oct_cell_velocities (tree_jerk.c), which the
 * tree plugins' jerk moves cells with: each cell's mass-weighted velocity
 * and dS/dt = sum m (dx du + du dx) about its com and that velocity, leaves
 * from their sources, internal cells from their children. Checked for every
 * cell against the same sums over its sources in long double, on a
 * clustered set far from the origin with tiny cells in its clump (where the
 * com's rounding, of order eps |x|, is large against the cell: a recurrence
 * that drops the children's first moments loses five digits there), and
 * with 1 and 2 threads (the same bits).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "octree/tree_jerk.h"
#include "octree/tree_state.h"

static double urand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return ((*s >> 8) & 0xffffff) / (double)0x1000000;
}

int main(void)
{
    const size_t n = 20000;   /* over 4096 cells: the threaded path runs */
    double *pos = malloc(3 * n * sizeof *pos), *mass = malloc(n * sizeof *mass);
    double *vx = malloc(n * sizeof *vx), *vy = malloc(n * sizeof *vy), *vz = malloc(n * sizeof *vz);
    unsigned seed = 11;
    for (size_t i = 0; i < n; i++) {
        double r = pow(urand(&seed), 2.0) * (i < n / 2 ? 0.1 : 1.0);   /* a dense clump and a halo */
        for (int a = 0; a < 3; a++) pos[3 * i + a] = r * (2 * urand(&seed) - 1) + (i < n / 2 ? 0.5 : 0.0);
        mass[i] = i % 7 == 0 ? 0.0 : (0.5 + urand(&seed)) / n;   /* massless ones are no sources */
    }
    oct_tree t;
    if (oct_tree_build(&t, n, pos, mass, 32, 8, GP_KEY_PEANO_HILBERT) || oct_tree_moments(&t)) bail("out of memory");
    /* the velocities of the sources, in the tree's source order */
    const uint32_t ns = t.nsrc, nc = t.st.ncells;
    for (uint32_t k = 0; k < ns; k++) {
        vx[k] = 2 * urand(&seed) - 1 + 3.0;   /* an offset: the com velocity is not 0 */
        vy[k] = 2 * urand(&seed) - 1;
        vz[k] = 2 * urand(&seed) - 1;
    }
    double *cv = malloc(OCT_JERK_CELL * (size_t)nc * sizeof *cv), *cv2 = malloc(OCT_JERK_CELL * (size_t)nc * sizeof *cv2);
    double *scratch = malloc(OCT_JERK_SCRATCH * (size_t)nc * sizeof *scratch);
    if (!cv || !cv2 || !scratch) bail("out of memory");
    oct_cell_velocities(&t.st, t.sx, t.sy, t.sz, t.sm, vx, vy, vz, 1, scratch, cv);
    oct_cell_velocities(&t.st, t.sx, t.sy, t.sz, t.sm, vx, vy, vz, 2, scratch, cv2);
    ok(memcmp(cv, cv2, OCT_JERK_CELL * (size_t)nc * sizeof *cv) == 0, "the same bits with 1 and 2 threads (%u cells)", nc);

    double worst_v = 0, worst_d = 0;
    uint32_t internal = 0;
    for (uint32_t c = 0; c < nc; c++) {
        const gp_cell *cl = &t.st.cells[c];
        internal += cl->nchild > 0;
        long double M = 0, p[3] = { 0, 0, 0 }, s[3] = { 0, 0, 0 };
        for (uint32_t k = cl->begin; k < cl->begin + cl->count; k++) {
            M += t.sm[k];
            p[0] += (long double)t.sm[k] * vx[k]; p[1] += (long double)t.sm[k] * vy[k]; p[2] += (long double)t.sm[k] * vz[k];
            s[0] += vx[k]; s[1] += vy[k]; s[2] += vz[k];
        }
        long double u[3];
        for (int a = 0; a < 3; a++) u[a] = M > 0 ? p[a] / M : s[a] / cl->count;
        const double *com = t.st.mom[c].com, *o = &cv[OCT_JERK_CELL * (size_t)c];
        long double d[6] = { 0, 0, 0, 0, 0, 0 }, scale = 0;
        for (uint32_t k = cl->begin; k < cl->begin + cl->count; k++) {
            long double ax = t.sx[k] - com[0], ay = t.sy[k] - com[1], az = t.sz[k] - com[2];
            long double ux = vx[k] - u[0], uy = vy[k] - u[1], uz = vz[k] - u[2];
            long double mk = t.sm[k];
            d[0] += mk * 2 * ax * ux; d[1] += mk * 2 * ay * uy; d[2] += mk * 2 * az * uz;
            d[3] += mk * (ax * uy + ux * ay); d[4] += mk * (ax * uz + ux * az); d[5] += mk * (ay * uz + uy * az);
            scale += mk * sqrtl(ax * ax + ay * ay + az * az) * sqrtl(ux * ux + uy * uy + uz * uz);
        }
        for (int a = 0; a < 3; a++) {
            double e = fabs(o[a] - (double)u[a]) / 3.0;   /* velocities of order 3 */
            worst_v = e > worst_v ? e : worst_v;
        }
        for (int k = 0; k < 6; k++) {
            double e = scale > 0 ? fabs(o[3 + k] - (double)d[k]) / (double)scale : fabs(o[3 + k]);
            worst_d = e > worst_d ? e : worst_d;
        }
    }
    diag("%u cells, %u internal; largest error: velocity %.3g, dS/dt %.3g (relative to sum m |dx| |du|)",
         nc, internal, worst_v, worst_d);
    ok(internal > 100, "the set has internal cells (%u of %u)", internal, nc);
    ok(worst_v < 1e-13, "every cell's velocity is its sources' mass-weighted mean: %.3g", worst_v);
    ok(worst_d < 1e-12, "every cell's dS/dt is its sources' sum about its com and velocity: %.3g", worst_d);
    oct_tree_free(&t);
    free(pos); free(mass); free(vx); free(vy); free(vz); free(cv); free(cv2); free(scratch);
    done_testing();
}
