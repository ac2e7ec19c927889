/* SPDX-License-Identifier: Apache-2.0 */
/* octree-lists: cpu-tree's AVX2 list kernel (plugin/octree/cpu_lists_avx2.c)
 * against the double kernels on the same lists: cells with quadrupoles and
 * particles, mixed and single sums, the self entry, padding, eps = 0 with a
 * coincident pair, and each target's bits independent of the target it is
 * paired with. Skipped where the CPU has no AVX2. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "octree/cpu_lists.h"
#include "octree/kernels.h"

static uint64_t rs = 88172645463325252u;
static double urand(void)
{
    rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
    return (double)(rs >> 11) * (1.0 / 9007199254740992.0);
}

enum { NC = 203, NPART = 117, NT = 7 };

static list_f *C, *P, *C0;

/* 64-byte aligned (C11 wants a size that is a multiple of it) */
static list_f *new_list(void)
{
    list_f *L = aligned_alloc(64, (sizeof(list_f) + 63) / 64 * 64);
    if (!L) bail("out of memory");
    memset(L, 0, sizeof *L);
    return L;
}
static float tf[3 * NT];
static int32_t self[NT];

/* pads as the walk does: entries that add exactly 0 */
static uint32_t pad(list_f *L, uint32_t n)
{
    uint32_t e = (n + 15) / 16 * 16;
    for (uint32_t j = n; j < e; j++) {
        L->x[j] = L->y[j] = L->z[j] = 1; L->m[j] = 0;
        for (int k = 0; k < 6; k++) L->s[k][j] = 0;
        L->id[j] = -2;
    }
    return e;
}

/* the sums in double from the float list values (cells with S, as the walk fills them) */
static void reference(const list_f *Cs, uint32_t nc, const list_f *Ps, uint32_t np, int t,
                      double eps2, double out[4])
{
    for (int k = 0; k < 4; k++) out[k] = 0;
    double xi = tf[3 * t], yi = tf[3 * t + 1], zi = tf[3 * t + 2];
    for (uint32_t j = 0; j < nc; j++) {
        double s[6], a[4];
        for (int k = 0; k < 6; k++) s[k] = Cs->s[k][j];
        gp_quad_d(Cs->x[j] - xi, Cs->y[j] - yi, Cs->z[j] - zi, Cs->m[j], s, eps2, &a[0], &a[1], &a[2], &a[3]);
        for (int k = 0; k < 4; k++) out[k] += a[k];
    }
    for (uint32_t j = 0; j < np; j++) {
        if (Ps->id[j] == self[t]) continue;
        double a[4];
        gp_mono_d(Ps->x[j] - xi, Ps->y[j] - yi, Ps->z[j] - zi, Ps->m[j], eps2, &a[0], &a[1], &a[2], &a[3]);
        for (int k = 0; k < 4; k++) out[k] += a[k];
    }
}

static double worst(const double *got, const double ref[NT][4])
{
    double e = 0;
    for (int t = 0; t < NT; t++) {
        double n = sqrt(ref[t][0] * ref[t][0] + ref[t][1] * ref[t][1] + ref[t][2] * ref[t][2]);
        for (int k = 0; k < 3; k++) e = fmax(e, fabs(got[4 * t + k] - ref[t][k]) / n);
        e = fmax(e, fabs(got[4 * t + 3] - ref[t][3]) / fabs(ref[t][3]));
    }
    return e;
}

/* the AVX2 flush of a fresh copy of the cells, turned into the SIMD form */
static void flush(uint32_t nc, uint32_t np, int quad, float eps2, int mixed, uint32_t t0,
                  uint32_t nt, double *acc, float *accf)
{
    memcpy(C, C0, sizeof *C);
    if (quad) oct_avx2_cells_to_q(C, nc, eps2);
    oct_avx2_flush(C, nc, quad, P, np, tf + 3 * t0, self + t0, nt, eps2, mixed, acc + 4 * t0, accf + 4 * t0);
}

int main(void)
{
    if (oct_simd_level() < OCT_SIMD_AVX2) skip_all("this CPU has no AVX2 and FMA (or GRAVPLUG_CPU_TREE_SIMD caps the level)");
    plan(9);
    C = new_list(); P = new_list(); C0 = new_list();
    for (int j = 0; j < NC; j++) {
        /* cells 3..6 away, second moments of a cloud of size ~0.3 */
        double r = 3 + 3 * urand(), u = 2 * urand() - 1, ph = 6.283185307179586 * urand();
        C0->x[j] = (float)(r * sqrt(1 - u * u) * cos(ph)); C0->y[j] = (float)(r * sqrt(1 - u * u) * sin(ph));
        C0->z[j] = (float)(r * u); C0->m[j] = (float)(0.5 + urand());
        for (int k = 0; k < 3; k++) C0->s[k][j] = (float)(0.09 * C0->m[j] * urand());
        for (int k = 3; k < 6; k++) C0->s[k][j] = (float)(0.03 * C0->m[j] * (urand() - 0.5));
        C0->id[j] = -1;
    }
    for (int j = 0; j < NPART; j++) {
        P->x[j] = (float)(urand() - 0.5); P->y[j] = (float)(urand() - 0.5); P->z[j] = (float)(urand() - 0.5);
        P->m[j] = (float)(0.01 + 0.02 * urand()); P->id[j] = 1000 + j;
    }
    for (int t = 0; t < NT; t++) {
        /* targets 0..3 are particles of the list (self excluded), the rest field points */
        if (t < 4) {
            int j = 13 * t + 5;
            tf[3 * t] = P->x[j]; tf[3 * t + 1] = P->y[j]; tf[3 * t + 2] = P->z[j]; self[t] = P->id[j];
        } else {
            tf[3 * t] = (float)(0.4 * urand()); tf[3 * t + 1] = (float)(0.4 * urand()); tf[3 * t + 2] = (float)(0.4 * urand());
            self[t] = -1;
        }
    }
    uint32_t nc = pad(C0, NC), np = pad(P, NPART);
    const float eps2 = 1e-4f;
    double ref[NT][4];
    for (int t = 0; t < NT; t++) reference(C0, NC, P, NPART, t, eps2, ref[t]);

    double acc[4 * NT] = { 0 };
    float accf[4 * NT] = { 0 };
    flush(nc, np, 1, eps2, 1, 0, NT, acc, accf);
    double e = worst(acc, ref);
    ok(e < 2e-6, "mixed sums, cells with quadrupoles and particles, self excluded: worst relative error %.2e (float rounding)", e);

    double accs[4 * NT];
    flush(nc, np, 1, eps2, 0, 0, NT, acc, accf);
    for (int k = 0; k < 4 * NT; k++) accs[k] = accf[k];
    e = worst(accs, ref);
    ok(e < 1e-5, "single sums: worst relative error %.2e", e);

    /* each target alone, and paired differently (start at target 1): the same bits */
    double a1[4 * NT] = { 0 }, a2[4 * NT] = { 0 };
    float f1[4 * NT] = { 0 };
    for (uint32_t t = 0; t < NT; t++) flush(nc, np, 1, eps2, 1, t, 1, a1, f1);
    flush(nc, np, 1, eps2, 1, 0, 1, a2, f1);
    flush(nc, np, 1, eps2, 1, 1, NT - 1, a2, f1);
    double a0[4 * NT] = { 0 };
    flush(nc, np, 1, eps2, 1, 0, NT, a0, f1);
    ok(memcmp(a0, a1, sizeof a0) == 0 && memcmp(a0, a2, sizeof a0) == 0,
       "a target's sums have the same bits alone and with any partner");

    /* padding adds exactly 0: the same list padded to 32 more entries */
    double ap[4 * NT] = { 0 };
    for (uint32_t j = nc; j < nc + 32; j++) { C0->x[j] = C0->y[j] = C0->z[j] = 1; C0->m[j] = 0; for (int k = 0; k < 6; k++) C0->s[k][j] = 0; }
    for (uint32_t j = np; j < np + 32; j++) { P->x[j] = P->y[j] = P->z[j] = 1; P->m[j] = 0; P->id[j] = -2; }
    flush(nc + 32, np + 32, 1, eps2, 1, 0, NT, ap, f1);
    int same = 1;
    for (int k = 0; k < 4 * NT; k++) same &= fabs(ap[k] - a0[k]) <= 1e-7 * fabs(a0[k]);
    ok(same, "padding entries add nothing (beyond the sums' regrouping)");

    /* monopole cells (quad = 0): the list's S is ignored */
    double am[4 * NT] = { 0 }, refm[NT][4];
    flush(nc, np, 0, eps2, 1, 0, NT, am, f1);
    list_f *Cm = new_list();
    memcpy(Cm, C0, sizeof *Cm);
    for (int k = 0; k < 6; k++) memset(Cm->s[k], 0, sizeof Cm->s[k]);
    for (int t = 0; t < NT; t++) reference(Cm, NC, P, NPART, t, eps2, refm[t]);
    e = worst(am, refm);
    ok(e < 2e-6, "monopole cells: worst relative error %.2e", e);

    /* the quadrupole is there: with it the sums differ from the monopoles' by more than rounding */
    double dq = 0;
    for (int k = 0; k < 4 * NT; k++) dq = fmax(dq, fabs(a0[k] - am[k]) / fabs(am[k]));
    ok(dq > 1e-4, "the quadrupole terms count (largest change %.2e)", dq);

    /* eps = 0: the self entry and a coincident particle add nothing, the rest is finite */
    P->x[40] = tf[0]; P->y[40] = tf[1]; P->z[40] = tf[2];   /* on top of target 0 */
    double az[4 * NT] = { 0 }, refz[NT][4];
    flush(nc, np, 1, 0.0f, 1, 0, NT, az, f1);
    int finite = 1;
    for (int k = 0; k < 4 * NT; k++) finite &= isfinite(az[k]);
    ok(finite, "eps = 0 with a coincident pair: every sum finite");
    /* reference without the coincident one (gp_mono_d gives it 0 too) */
    for (int t = 0; t < NT; t++) reference(C0, NC, P, NPART, t, 0.0, refz[t]);
    e = worst(az, refz);
    ok(e < 1e-5, "eps = 0: worst relative error %.2e against the double sums", e);

    /* the cells' S became Q = 3 S - tr(S) I in place, et = eps^2 tr(S) */
    memcpy(C, C0, sizeof *C);
    oct_avx2_cells_to_q(C, nc, eps2);
    int j = 17;
    float tr = C0->s[0][j] + C0->s[1][j] + C0->s[2][j];
    ok(fabsf(C->s[0][j] - (3 * C0->s[0][j] - tr)) <= 1e-6f * tr && C->s[3][j] == 3 * C0->s[3][j] &&
       fabsf(C->et[j] - eps2 * tr) <= 1e-6f * eps2 * tr,
       "the cells' S become the traceless Q and et = eps^2 tr(S)");
    free(C); free(P); free(C0); free(Cm);
    return done_testing();
}
