/* SPDX-License-Identifier: Apache-2.0 */
/* cpu_walk_avx512.c — the float modes' walk on CPUs with AVX-512: the
 * traversal's visit with a cell's children decided as one vector (see
 * cpu_walk.h; its list kernels are cpu_lists_avx512.c). Built on x86-64 only, run
 * only where oct_simd_level() says AVX-512. */
#include "octree/cpu_walk_ws.h"

#ifdef OCT_HAVE_X86_SIMD
#include <immintrin.h>

#include "octree/cpu_lists.h"
#include "octree/cpu_traverse.h"
#include "octree/cpu_walk.h"

/* ---- AVX-512 traversal (float modes) -----------------------------------------
 * oct_traverse with a cell's children one batch (OCT_BATCH_FAMILY), decided
 * together: one masked load per column brings all of them (they are
 * consecutive), the MAC, the box test and the float-range test run on 8
 * lanes in double (same operations, same answers as oct_walk_accepts),
 * and the accepted cells are appended to the cell list with
 * compress-stores, no branch per cell. Opened leaves append their
 * particles 8 at a time. Only the order in which the lists fill differs
 * from the portable walk (it depends on the tree and the group alone,
 * never on threads). */
#define K512W __attribute__((target("avx512f,avx512dq,avx512vl,fma")))

/* One walk's constants, broadcast once. */
typedef struct w512_ctx {
    oct_walk_ctx w;
    __m512d gx, gy, gz, vrg, vrg2, vgfac, vil, vlcap;
    __m256 veps2;
    double lcap;
} w512_ctx;

K512W static inline int w512_particles(oct_workspace *ws, const oct_walk_params *p,
                                       const oct_group *g, int quad, const oct_sources *src,
                                       uint32_t begin, uint32_t count)
{
    list_f *P = ws->pf;
    if (P->n + count > OCT_LIST_CAP) oct_walk_flush(ws, p, g, quad);
    if (count > OCT_LIST_CAP) return oct_push_particles(ws, p, g, quad, src, begin, count);
    const __m512d gx = _mm512_set1_pd(g->centre[0]), gy = _mm512_set1_pd(g->centre[1]),
                  gz = _mm512_set1_pd(g->centre[2]), range = _mm512_set1_pd(OCT_FLOAT_RANGE),
                  il = _mm512_set1_pd(ws->il);
    uint32_t n = P->n;
    for (uint32_t i = 0; i < count; i += 8) {
        __mmask8 k = count - i >= 8 ? 0xff : (__mmask8)((1u << (count - i)) - 1);
        uint32_t s = begin + i;
        __m512d dx = _mm512_mul_pd(_mm512_sub_pd(_mm512_maskz_loadu_pd(k, src->x + s), gx), il);
        __m512d dy = _mm512_mul_pd(_mm512_sub_pd(_mm512_maskz_loadu_pd(k, src->y + s), gy), il);
        __m512d dz = _mm512_mul_pd(_mm512_sub_pd(_mm512_maskz_loadu_pd(k, src->z + s), gz), il);
        __mmask8 ok = _mm512_cmp_pd_mask(_mm512_abs_pd(dx), range, _CMP_LT_OQ) &
                      _mm512_cmp_pd_mask(_mm512_abs_pd(dy), range, _CMP_LT_OQ) &
                      _mm512_cmp_pd_mask(_mm512_abs_pd(dz), range, _CMP_LT_OQ);
        if ((ok & k) != k) return 1;
        _mm256_mask_storeu_ps(P->x + n + i, k, _mm512_cvtpd_ps(dx));
        _mm256_mask_storeu_ps(P->y + n + i, k, _mm512_cvtpd_ps(dy));
        _mm256_mask_storeu_ps(P->z + n + i, k, _mm512_cvtpd_ps(dz));
        _mm256_mask_storeu_ps(P->m + n + i, k, _mm512_cvtpd_ps(_mm512_maskz_loadu_pd(k, src->m + s)));
        _mm256_mask_storeu_epi32(P->id + n + i, k, _mm256_maskz_loadu_epi32(k, src->id + s));
    }
    P->n = n + count;
    return 0;
}

/* The children f .. f + nch - 1 of an opened cell (the root alone: its
 * record): the accepted ones appended and recorded, their mask returned;
 * -1 when one is out of the float range. */
K512W static inline __attribute__((always_inline)) int w512_decide(void *ctx, uint32_t f, uint32_t nch)
{
    const w512_ctx *x = ctx;
    if (f == 0) return oct_simd_root(&x->w);
    oct_workspace *ws = x->w.ws;
    const oct_cell_columns *col = x->w.src->col;
    const int quad = x->w.quad;
    const __m512d zero = _mm512_setzero_pd();
    const __m256i one = _mm256_set1_epi32(1), lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __mmask8 all = (__mmask8)((1u << nch) - 1);
    __m512d dx = _mm512_sub_pd(_mm512_maskz_loadu_pd(all, col->cx + f), x->gx);
    __m512d dy = _mm512_sub_pd(_mm512_maskz_loadu_pd(all, col->cy + f), x->gy);
    __m512d dz = _mm512_sub_pd(_mm512_maskz_loadu_pd(all, col->cz + f), x->gz);
    __m512d d2 = _mm512_add_pd(_mm512_add_pd(_mm512_mul_pd(dx, dx), _mm512_mul_pd(dy, dy)),
                               _mm512_mul_pd(dz, dz));
    __m512d rc = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(all, col->rcrit + f));
    if (x->w.accel) {
        rc = _mm512_mul_pd(rc, x->vgfac);
        if (x->lcap > 0) {   /* oct_accel_rcrit: at least the box's side x lcap */
            __m512d side = zero;
            for (int a = 0; a < 3; a++)
                /* (a NaN side keeps the last, as the scalar form does:
                 * max_pd answers its second operand then) */
                side = _mm512_max_pd(_mm512_sub_pd(_mm512_cvtps_pd(_mm256_maskz_loadu_ps(all, col->bhi[a] + f)),
                                                   _mm512_cvtps_pd(_mm256_maskz_loadu_ps(all, col->blo[a] + f))),
                                     side);
            rc = _mm512_max_pd(rc, _mm512_mul_pd(side, x->vlcap));
        }
    }
    __m512d r = _mm512_add_pd(rc, x->vrg);
    __mmask8 acc = _mm512_mask_cmp_pd_mask(all, _mm512_mul_pd(r, r), d2, _CMP_LT_OQ);
    __m256i cnt = _mm256_maskz_loadu_epi32(all, col->count + f);
    acc &= _mm256_cmpgt_epu32_mask(cnt, one);
    /* box test: r = group centre - com = -d; e = distance outside [lo, hi] per axis */
    __m512d ex, e2;
    __m512d rx = _mm512_sub_pd(zero, dx), ry = _mm512_sub_pd(zero, dy), rz = _mm512_sub_pd(zero, dz);
    __m512d lo, hi;
    lo = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(all, col->blo[0] + f));
    hi = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(all, col->bhi[0] + f));
    ex = _mm512_max_pd(_mm512_max_pd(_mm512_sub_pd(lo, rx), _mm512_sub_pd(rx, hi)), zero);
    e2 = _mm512_mul_pd(ex, ex);
    lo = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(all, col->blo[1] + f));
    hi = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(all, col->bhi[1] + f));
    ex = _mm512_max_pd(_mm512_max_pd(_mm512_sub_pd(lo, ry), _mm512_sub_pd(ry, hi)), zero);
    e2 = _mm512_add_pd(e2, _mm512_mul_pd(ex, ex));
    lo = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(all, col->blo[2] + f));
    hi = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(all, col->bhi[2] + f));
    ex = _mm512_max_pd(_mm512_max_pd(_mm512_sub_pd(lo, rz), _mm512_sub_pd(rz, hi)), zero);
    e2 = _mm512_add_pd(e2, _mm512_mul_pd(ex, ex));
    acc &= _mm512_cmp_pd_mask(e2, x->vrg2, _CMP_GT_OQ);
    if (!acc) return 0;

    __m512d d2max = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(acc, col->d2max + f));
    __m512d d2s = _mm512_mul_pd(_mm512_mul_pd(d2, x->vil), x->vil);
    if (_mm512_mask_cmp_pd_mask(acc, d2s, d2max, _CMP_NLT_UQ)) return -1;
    dx = _mm512_mul_pd(dx, x->vil); dy = _mm512_mul_pd(dy, x->vil); dz = _mm512_mul_pd(dz, x->vil);
    list_f *C = ws->cf;
    if (C->n + 8 > OCT_LIST_CAP) oct_walk_flush(ws, x->w.p, x->w.g, quad);
    uint32_t j = C->n;
    /* (8 entries written, na kept: the list has room for 8) */
    _mm256_storeu_ps(C->x + j, _mm256_maskz_compress_ps(acc, _mm512_cvtpd_ps(dx)));
    _mm256_storeu_ps(C->y + j, _mm256_maskz_compress_ps(acc, _mm512_cvtpd_ps(dy)));
    _mm256_storeu_ps(C->z + j, _mm256_maskz_compress_ps(acc, _mm512_cvtpd_ps(dz)));
    _mm256_storeu_ps(C->m + j, _mm256_maskz_compress_ps(acc, _mm256_maskz_loadu_ps(acc, col->m + f)));
    for (int k = 0; k < 6; k++)
        _mm256_storeu_ps(C->s[k] + j, quad ? _mm256_maskz_compress_ps(acc, _mm256_maskz_loadu_ps(acc, col->s[k] + f))
                                           : _mm256_setzero_ps());
    _mm256_storeu_ps(C->et + j, quad ? _mm256_mul_ps(x->veps2, _mm256_maskz_compress_ps(acc, _mm256_maskz_loadu_ps(acc, col->tr + f)))
                                     : _mm256_setzero_ps());
    _mm256_storeu_si256((__m256i *)(C->id + j), _mm256_set1_epi32(-1));
    uint32_t na = (uint32_t)__builtin_popcount(acc);
    C->n = j + na;
    if (ws->record && ws->rec_ok && oct_rec_room(ws, &ws->rec_cell, &ws->cap_cell, ws->rec.ncell, 8)) {
        __m256i idx = _mm256_add_epi32(_mm256_set1_epi32((int)f), lane);
        _mm256_mask_compressstoreu_epi32(ws->rec_cell + ws->rec.ncell, acc, idx);
        ws->rec.ncell += na;
    }
    return acc;
}

K512W static inline __attribute__((always_inline)) int w512_leaf(void *ctx, uint32_t first, uint32_t count)
{
    const w512_ctx *x = ctx;
    if (w512_particles(x->w.ws, x->w.p, x->w.g, x->w.quad, x->w.src, first, count)) return 1;
    oct_rec_leaf(x->w.ws, first, count);
    return 0;
}

K512W int oct_walk_avx512(oct_walk_ctx *w, uint64_t *ncell, uint64_t *npart)
{
    const oct_group *g = w->g;
    const double rg = g->radius, il = w->ws->il;
    w512_ctx x = { .w = *w,
                   .gx = _mm512_set1_pd(g->centre[0]), .gy = _mm512_set1_pd(g->centre[1]),
                   .gz = _mm512_set1_pd(g->centre[2]), .vrg = _mm512_set1_pd(rg),
                   .vrg2 = _mm512_set1_pd(rg * rg), .vgfac = _mm512_set1_pd(w->gfac),
                   .vil = _mm512_set1_pd(il), .vlcap = _mm512_set1_pd(w->p->lcap),
                   .veps2 = _mm256_set1_ps(w->ws->eps2f), .lcap = w->p->lcap };
    return oct_traverse(w->src, w->ws->stack, OCT_BATCH_FAMILY, 1, w512_decide, w512_leaf, &x, ncell,
                        npart);
}

#endif
