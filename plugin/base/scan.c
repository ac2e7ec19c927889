/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scan.c — the passes over large double arrays every set_particles makes:
 * the finite check, the mass check and the copy, spread over the threads
 * for large arrays with an answer that does not depend on the thread count.
 */
#include "base/base_particles.h"

#include <math.h>
#include <string.h>

/* Blocks of 1024 values. A block is checked by summing x * 0 over it:
 * that is NaN for an infinite or NaN x and 0 otherwise, so the sum is NaN
 * when a value is not finite. The sum vectorises (simd lets it be
 * reordered) even with SSE2 alone, where an isfinite() loop stayed scalar
 * at -O2 (1.4-2.6x slower on the project's VM). Blocks are spread over
 * the threads for large arrays, and the first bad block (smallest index)
 * is searched for its culprit, so the answer is the same for any thread
 * count. */
enum { SCAN_BLOCK = 1024, SCAN_PARALLEL = 1 << 20 };

/* gp_copy_finite spreads over the threads from here: its arrays are a
 * block step's subset (0.5 million values at 167,772 particles), which
 * one thread takes milliseconds to check and copy
 * (bench/results/gpu/raw/gpu-H100.md, "gp_copy_finite"). */
enum { COPY_PARALLEL = 1 << 16 };

/* Whether block b of v (count values) holds a value that is not finite. */
static inline int block_bad(const double *v, size_t count, long long b)
{
    size_t s = (size_t)b * SCAN_BLOCK, e = s + SCAN_BLOCK < count ? s + SCAN_BLOCK : count;
    double z = 0.0; /* NaN when a value is not finite */
#pragma omp simd reduction(+ : z)
    for (size_t k = s; k < e; ++k) z += v[k] * 0.0;
    return z != z;
}

/* Small arrays are scanned serially, outside any parallel region
 * (base_params.h says why). */
static size_t first_bad_block(const double *v, size_t count)
{
    const long long nb = (long long)((count + SCAN_BLOCK - 1) / SCAN_BLOCK);
    if (count < SCAN_PARALLEL) {
        for (long long b = 0; b < nb; ++b)
            if (block_bad(v, count, b)) return (size_t)b;
        return (size_t)nb;
    }
    long long first = nb;
#pragma omp parallel for schedule(static) reduction(min : first)
    for (long long b = 0; b < nb; ++b)
        if (block_bad(v, count, b) && b < first) first = b;
    return (size_t)first;
}

size_t gp_first_nonfinite(const double *v, size_t count)
{
    size_t b = first_bad_block(v, count);
    for (size_t k = b * SCAN_BLOCK; k < count && k < (b + 1) * SCAN_BLOCK; ++k)
        if (!isfinite(v[k])) return k;
    return (size_t)-1;
}

static inline int mass_bad(double m)
{
    return !(isfinite(m) && m >= 0);
}

size_t gp_first_bad_mass(const double *mass, size_t n)
{
    if (n < SCAN_PARALLEL) {   /* serial: base_params.h says why */
        for (size_t i = 0; i < n; ++i)
            if (mass_bad(mass[i])) return i;
        return n;
    }
    long long first = (long long)n;
#pragma omp parallel for schedule(static) reduction(min : first)
    for (long long i = 0; i < (long long)n; ++i)
        if (mass_bad(mass[i]) && i < first) first = i;
    return (size_t)first;
}

/* Copies block b of src to dst; returns whether it held a value that is
 * not finite. */
static inline int copy_block(double *dst, const double *src, size_t count, long long b)
{
    size_t s = (size_t)b * SCAN_BLOCK, e = s + SCAN_BLOCK < count ? s + SCAN_BLOCK : count;
    double z = 0.0; /* NaN when a value is not finite */
#pragma omp simd reduction(+ : z)
    for (size_t k = s; k < e; ++k) {
        double x = src[k];
        dst[k] = x;
        z += x * 0.0;
    }
    return z != z;
}

int gp_copy_finite(double *dst, const double *src, size_t count)
{
    const long long nb = (long long)((count + SCAN_BLOCK - 1) / SCAN_BLOCK);
    int bad = 0;
    if (count < COPY_PARALLEL) {   /* serial: base_params.h says why */
        for (long long b = 0; b < nb; ++b) bad |= copy_block(dst, src, count, b);
        return !bad;
    }
#pragma omp parallel for schedule(static) reduction(| : bad)
    for (long long b = 0; b < nb; ++b) bad |= copy_block(dst, src, count, b);
    return !bad;
}

void gp_copy_doubles(double *dst, const double *src, size_t count)
{
    if (count < SCAN_PARALLEL) { memcpy(dst, src, count * sizeof *dst); return; }
    const long long nb = (long long)((count + 65535) / 65536);
#pragma omp parallel for schedule(static)
    for (long long b = 0; b < nb; ++b) {
        size_t s = (size_t)b * 65536, e = s + 65536 < count ? s + 65536 : count;
        memcpy(dst + s, src + s, (e - s) * sizeof *dst);
    }
}
