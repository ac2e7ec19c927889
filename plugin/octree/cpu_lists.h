/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu_lists.h — the CPU walk's interaction lists, and the SIMD level their
 * float kernels run at.
 *
 * A walk (cpu_walk*.c) appends the cells and particles it accepts to two
 * lists held as SoA arrays; a flush sums them for every target of the group.
 * The float lists are summed by one of three kernels, chosen once per
 * process from the CPU:
 *   portable  plain loops the compiler vectorises (cpu_walk_portable.c); the 1/sqrt
 *             from a bit-level guess and three Newton steps
 *   avx2      intrinsics for x86-64 with AVX2 and FMA (cpu_lists_avx2.c)
 *   avx512    intrinsics for AVX-512 (cpu_lists_avx512.c; its vectorised
 *             traversal: cpu_walk_avx512.c)
 * GRAVPLUG_CPU_TREE_SIMD=portable|avx2|avx512 caps the level (tests run the
 * lower paths that way; any other value caps nothing;
 * GRAVPLUG_CPU_TREE_NO_AVX512 caps it at avx2). Each
 * kernel sums in an order fixed by the list and the target alone, so the
 * output is bit-identical whatever the thread count; the three give
 * different roundings of the same sums.
 */
#ifndef GP_OCTREE_CPU_LISTS_H
#define GP_OCTREE_CPU_LISTS_H

#include <stdint.h>

#define OCT_LIST_CAP 1024   /* entries per list before a flush (multiple of OCT_LANES) */

/* SoA list storage; n is the used length, padding up to a lane multiple is
 * written at flush time. */
typedef struct list_f { float x[OCT_LIST_CAP], y[OCT_LIST_CAP], z[OCT_LIST_CAP], m[OCT_LIST_CAP];
                        float s[6][OCT_LIST_CAP]; int32_t id[OCT_LIST_CAP];
                        float et[OCT_LIST_CAP]; /* SIMD cells: eps^2 tr(S) */
                        uint32_t n; } list_f;
typedef struct list_d { double x[OCT_LIST_CAP], y[OCT_LIST_CAP], z[OCT_LIST_CAP], m[OCT_LIST_CAP];
                        double s[6][OCT_LIST_CAP]; int32_t id[OCT_LIST_CAP]; uint32_t n; } list_d;

enum { OCT_SIMD_PORTABLE = 0, OCT_SIMD_AVX2 = 2, OCT_SIMD_AVX512 = 3 };

/* The kernels this process runs (decided once; see above). */
int oct_simd_level(void);

/* The AVX2 flush: nt targets at tf[3 t..] (self ids self[t], or none when
 * self is NULL) against the cell list C (nc entries, cells in the SIMD
 * form: s holds the traceless quadrupole 3 S - tr(S) I and et eps^2 tr(S);
 * quad = 0: monopoles) and the particle list P (np entries); nc and np are
 * multiples of 8, padded with entries that add exactly 0. Adds each
 * target's a and phi sums to acc[4 t..] (mixed: double sums) or accf[4 t..]
 * (single). Only call it when oct_simd_level() >= OCT_SIMD_AVX2. */
void oct_avx2_flush(const list_f *C, uint32_t nc, int quad, const list_f *P, uint32_t np,
                    const float *tf, const int32_t *self, uint32_t nt, float eps2, int mixed,
                    double *acc, float *accf);

/* The same on AVX-512 (cpu_lists_avx512.c): two targets per pass, the
 * hardware 1/sqrt estimate and one Newton step, float blocks of 16 terms
 * (nc and np multiples of 16). Only call it when oct_simd_level() >=
 * OCT_SIMD_AVX512. */
void oct_avx512_flush(const list_f *C, uint32_t nc, int quad, const list_f *P, uint32_t np,
                      const float *tf, const int32_t *self, uint32_t nt, float eps2, int mixed,
                      double *acc, float *accf);

/* The cells of a list the portable walk filled (s: the second moment S)
 * into the SIMD form in place: s = 3 S - tr(S) I, et = eps^2 tr(S), for
 * entries 0 .. nc-1 (nc a multiple of 8). Once per flush, before
 * oct_avx2_flush; the AVX walks fill the SIMD form themselves. */
void oct_avx2_cells_to_q(list_f *C, uint32_t nc, float eps2f);

#endif /* GP_OCTREE_CPU_LISTS_H */
