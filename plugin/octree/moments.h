/* SPDX-License-Identifier: Apache-2.0 */
/*
 * moments.h — what a cell knows about its mass, computed bottom-up.
 *
 *   m        total mass
 *   com      centre of mass
 *   s[6]     second moment about com, sum m (x-com)_a (x-com)_b, in the order
 *            xx yy zz xy xz yz. The interaction kernels use it directly
 *            (kernels.h); the traceless quadrupole is 3 s - tr(s) I, and
 *            B2 = tr(s) = sum m |x - com|^2 is Warren & Salmon's B2.
 *   lo, hi   tight bounding box of the cell's particles (not the key cube:
 *            tight boxes stay valid when a refit moves particles)
 *   bmax     radius about com of a sphere enclosing all particles
 *
 * Leaves are computed from their particles (two passes, exact bmax);
 * internal cells combine their children with the parallel-axis theorem
 * (gp_moments_combine). Both are per-cell steps, GP_HD, in double precision
 * whatever the precision mode: moments are O(cells) work and their accuracy
 * bounds everything downstream.
 *
 * Particle positions come as separate x, y, z, m arrays (SoA) indexed by
 * key-sorted position.
 */
#ifndef GP_CORE_MOMENTS_H
#define GP_CORE_MOMENTS_H

#include "octree/gp_hd.h"

typedef struct gp_moments {
    double m;
    double com[3];
    double s[6];
    double lo[3], hi[3];
    double bmax;
} gp_moments;

static inline GP_HD double gp_moments_b2(const gp_moments *mo)
{
    return mo->s[0] + mo->s[1] + mo->s[2];
}

/* Side of the cell's tight bounding box (its largest extent): the `l` of
 * the Barnes-Hut and bmax MACs. */
static inline GP_HD double gp_moments_size(const gp_moments *mo)
{
    double l = mo->hi[0] - mo->lo[0];
    if (mo->hi[1] - mo->lo[1] > l) l = mo->hi[1] - mo->lo[1];
    if (mo->hi[2] - mo->lo[2] > l) l = mo->hi[2] - mo->lo[2];
    return l;
}

/* Distance between the centre of mass and the box centre: Nakasato's s. */
static inline GP_HD double gp_moments_offset(const gp_moments *mo)
{
    double dx = mo->com[0] - 0.5 * (mo->lo[0] + mo->hi[0]);
    double dy = mo->com[1] - 0.5 * (mo->lo[1] + mo->hi[1]);
    double dz = mo->com[2] - 0.5 * (mo->lo[2] + mo->hi[2]);
    return sqrt(dx * dx + dy * dy + dz * dz);
}

/* Moments of particles [begin, begin + count). Zero total mass gives m = 0,
 * com = box centre, s = 0 (a source tree holds massive particles only, so
 * this happens only for a caller that includes massless ones). */
static inline GP_HD void gp_moments_leaf(const double *GP_RESTRICT x, const double *GP_RESTRICT y,
                                         const double *GP_RESTRICT z, const double *GP_RESTRICT m,
                                         uint32_t begin, uint32_t count, gp_moments *out)
{
    double mt = 0, cx = 0, cy = 0, cz = 0;
    double lo0 = x[begin], lo1 = y[begin], lo2 = z[begin];
    double hi0 = lo0, hi1 = lo1, hi2 = lo2;
    for (uint32_t i = begin; i < begin + count; i++) {
        mt += m[i];
        cx += m[i] * x[i]; cy += m[i] * y[i]; cz += m[i] * z[i];
        lo0 = x[i] < lo0 ? x[i] : lo0; hi0 = x[i] > hi0 ? x[i] : hi0;
        lo1 = y[i] < lo1 ? y[i] : lo1; hi1 = y[i] > hi1 ? y[i] : hi1;
        lo2 = z[i] < lo2 ? z[i] : lo2; hi2 = z[i] > hi2 ? z[i] : hi2;
    }
    if (mt > 0) { cx /= mt; cy /= mt; cz /= mt; }
    else { cx = 0.5 * (lo0 + hi0); cy = 0.5 * (lo1 + hi1); cz = 0.5 * (lo2 + hi2); }
    /* the mass-weighted mean can land a rounding error outside the box */
    cx = cx < lo0 ? lo0 : (cx > hi0 ? hi0 : cx);
    cy = cy < lo1 ? lo1 : (cy > hi1 ? hi1 : cy);
    cz = cz < lo2 ? lo2 : (cz > hi2 ? hi2 : cz);
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, r2max = 0;
    for (uint32_t i = begin; i < begin + count; i++) {
        double dx = x[i] - cx, dy = y[i] - cy, dz = z[i] - cz;
        s0 += m[i] * dx * dx; s1 += m[i] * dy * dy; s2 += m[i] * dz * dz;
        s3 += m[i] * dx * dy; s4 += m[i] * dx * dz; s5 += m[i] * dy * dz;
        double r2 = dx * dx + dy * dy + dz * dz;
        r2max = r2 > r2max ? r2 : r2max;
    }
    out->m = mt;
    out->com[0] = cx; out->com[1] = cy; out->com[2] = cz;
    out->s[0] = s0; out->s[1] = s1; out->s[2] = s2;
    out->s[3] = s3; out->s[4] = s4; out->s[5] = s5;
    out->lo[0] = lo0; out->lo[1] = lo1; out->lo[2] = lo2;
    out->hi[0] = hi0; out->hi[1] = hi1; out->hi[2] = hi2;
    out->bmax = sqrt(r2max);
}

/* Moments of a cell from its n children ch[0..n): parallel-axis theorem for
 * s, union of boxes, and bmax = the smaller of two valid bounds (children's
 * spheres seen from the new com; the farthest box corner). */
static inline GP_HD void gp_moments_combine(const gp_moments *ch, uint32_t n, gp_moments *out)
{
    double mt = 0, cx = 0, cy = 0, cz = 0;
    double lo[3] = { ch[0].lo[0], ch[0].lo[1], ch[0].lo[2] };
    double hi[3] = { ch[0].hi[0], ch[0].hi[1], ch[0].hi[2] };
    for (uint32_t c = 0; c < n; c++) {
        mt += ch[c].m;
        cx += ch[c].m * ch[c].com[0]; cy += ch[c].m * ch[c].com[1]; cz += ch[c].m * ch[c].com[2];
        for (int a = 0; a < 3; a++) {
            lo[a] = ch[c].lo[a] < lo[a] ? ch[c].lo[a] : lo[a];
            hi[a] = ch[c].hi[a] > hi[a] ? ch[c].hi[a] : hi[a];
        }
    }
    if (mt > 0) { cx /= mt; cy /= mt; cz /= mt; }
    else { cx = 0.5 * (lo[0] + hi[0]); cy = 0.5 * (lo[1] + hi[1]); cz = 0.5 * (lo[2] + hi[2]); }
    cx = cx < lo[0] ? lo[0] : (cx > hi[0] ? hi[0] : cx);
    cy = cy < lo[1] ? lo[1] : (cy > hi[1] ? hi[1] : cy);
    cz = cz < lo[2] ? lo[2] : (cz > hi[2] ? hi[2] : cz);
    double s[6] = { 0, 0, 0, 0, 0, 0 }, bsph = 0;
    for (uint32_t c = 0; c < n; c++) {
        double dx = ch[c].com[0] - cx, dy = ch[c].com[1] - cy, dz = ch[c].com[2] - cz;
        double mc = ch[c].m;
        s[0] += ch[c].s[0] + mc * dx * dx; s[1] += ch[c].s[1] + mc * dy * dy;
        s[2] += ch[c].s[2] + mc * dz * dz; s[3] += ch[c].s[3] + mc * dx * dy;
        s[4] += ch[c].s[4] + mc * dx * dz; s[5] += ch[c].s[5] + mc * dy * dz;
        double b = sqrt(dx * dx + dy * dy + dz * dz) + ch[c].bmax;
        bsph = b > bsph ? b : bsph;
    }
    double ex = (cx - lo[0] > hi[0] - cx) ? cx - lo[0] : hi[0] - cx;
    double ey = (cy - lo[1] > hi[1] - cy) ? cy - lo[1] : hi[1] - cy;
    double ez = (cz - lo[2] > hi[2] - cz) ? cz - lo[2] : hi[2] - cz;
    double bbox = sqrt(ex * ex + ey * ey + ez * ez);
    out->m = mt;
    out->com[0] = cx; out->com[1] = cy; out->com[2] = cz;
    for (int k = 0; k < 6; k++) out->s[k] = s[k];
    for (int a = 0; a < 3; a++) { out->lo[a] = lo[a]; out->hi[a] = hi[a]; }
    out->bmax = bsph < bbox ? bsph : bbox;
}

/* An i-group's enclosing sphere: centre of the bounding box of its
 * particles (those with use[i] != 0 when use is not NULL), radius = the
 * farthest of them. Returns the number of particles used. */
static inline GP_HD uint32_t gp_group_sphere(const double *GP_RESTRICT x, const double *GP_RESTRICT y,
                                             const double *GP_RESTRICT z, const unsigned char *use,
                                             uint32_t begin, uint32_t count,
                                             double centre[3], double *radius)
{
    double lo[3] = { 0, 0, 0 }, hi[3] = { 0, 0, 0 };
    uint32_t used = 0;
    for (uint32_t i = begin; i < begin + count; i++) {
        if (use && !use[i]) continue;
        if (used == 0) { lo[0] = hi[0] = x[i]; lo[1] = hi[1] = y[i]; lo[2] = hi[2] = z[i]; }
        lo[0] = x[i] < lo[0] ? x[i] : lo[0]; hi[0] = x[i] > hi[0] ? x[i] : hi[0];
        lo[1] = y[i] < lo[1] ? y[i] : lo[1]; hi[1] = y[i] > hi[1] ? y[i] : hi[1];
        lo[2] = z[i] < lo[2] ? z[i] : lo[2]; hi[2] = z[i] > hi[2] ? z[i] : hi[2];
        used++;
    }
    double r2 = 0;
    for (int a = 0; a < 3; a++) centre[a] = 0.5 * (lo[a] + hi[a]);
    for (uint32_t i = begin; i < begin + count; i++) {
        if (use && !use[i]) continue;
        double dx = x[i] - centre[0], dy = y[i] - centre[1], dz = z[i] - centre[2];
        double d2 = dx * dx + dy * dy + dz * dz;
        r2 = d2 > r2 ? d2 : r2;
    }
    *radius = sqrt(r2);
    return used;
}

#endif /* GP_CORE_MOMENTS_H */
