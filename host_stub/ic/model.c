/* SPDX-License-Identifier: Apache-2.0 */
/*
 * model.c — what the model files share (model.h): sentences, option
 * values by name, allocation, random directions, the seeding of a block's
 * generator, the centre-of-mass frame, duplicate ids. Below the models and
 * the dispatcher (make.c), calling neither.
 */
#include "model.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ic_fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int by_id(const void *a, const void *b)
{
    uint64_t x = ((const uint64_t *)a)[0], y = ((const uint64_t *)b)[0];
    return x < y ? -1 : x > y;
}

int ic_find_duplicate_id(const uint64_t *id, size_t n, size_t *a, size_t *b)
{
    if (!id || n < 2) return 0;
    uint64_t *pairs = malloc(2 * n * sizeof *pairs); /* (id, index) */
    if (!pairs) return -1;
    for (size_t i = 0; i < n; ++i) {
        pairs[2 * i] = id[i];
        pairs[2 * i + 1] = i;
    }
    qsort(pairs, n, 2 * sizeof *pairs, by_id);
    int found = 0;
    for (size_t i = 1; i < n && !found; ++i)
        if (pairs[2 * i] == pairs[2 * i - 2]) {
            size_t x = (size_t)pairs[2 * i - 1], y = (size_t)pairs[2 * i + 1];
            *a = x < y ? x : y;
            *b = x < y ? y : x;
            found = 1;
        }
    free(pairs);
    return found;
}

size_t ic_opt_index(const ic_vals *v, const char *name)
{
    for (size_t i = 0; i < v->count; ++i)
        if (strcmp(v->info[i].name, name) == 0) return i;
    return (size_t)-1;
}

double ic_num(const ic_vals *v, const char *name)
{
    size_t i = ic_opt_index(v, name);
    return i == (size_t)-1 ? NAN : v->num[i];
}

const char *ic_str(const ic_vals *v, const char *name)
{
    size_t i = ic_opt_index(v, name);
    return i == (size_t)-1 ? NULL : v->str[i];
}

/* Checks x against a range written "(lo,hi)", "[lo,hi]", mixed, with
 * "inf"/"-inf" allowed. A NULL or unparsable range accepts everything. */
int ic_alloc(gp_ic *out, size_t n, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (n > SIZE_MAX / (3 * sizeof(double)))
        return ic_fail(err, errlen, "%zu particles do not fit in memory.", n);
    out->pos = calloc(n ? 3 * n : 1, sizeof(double));
    out->vel = calloc(n ? 3 * n : 1, sizeof(double));
    out->mass = calloc(n ? n : 1, sizeof(double));
    out->id = calloc(n ? n : 1, sizeof(uint64_t));
    if (!out->pos || !out->vel || !out->mass || !out->id) {
        gp_ic_free(out);
        return ic_fail(err, errlen,
                       "Out of memory allocating %zu particles (%.3g GB); use fewer particles.",
                       n, (double)n * 64.0 / 1e9);
    }
    out->n = n;
    for (size_t i = 0; i < n; ++i) out->id[i] = i;
    return 0;
}

int ic_require_n(const char *model, size_t n, char *err, size_t errlen)
{
    if (n == 0)
        return ic_fail(err, errlen, "Model '%s' needs at least one particle; n was 0.", model);
    return 0;
}

void ic_isotropic(gsl_rng *rng, double r, double *x)
{
    double z = 2.0 * gsl_rng_uniform(rng) - 1.0;
    double phi = 2.0 * M_PI * gsl_rng_uniform(rng);
    double s = sqrt(fmax(0.0, 1.0 - z * z));
    x[0] = r * s * cos(phi);
    x[1] = r * s * sin(phi);
    x[2] = r * z;
}

/* ---- seeding --------------------------------------------------------------- */

/* GSL 2's mt19937 state (mt.c): checked against gsl_rng_size. */
enum { MT_N = 624 };
typedef struct mt_state {
    unsigned long mt[MT_N];
    int mti;
} mt_state;

int ic_mt_seed_array(gsl_rng *rng, const uint32_t *key, size_t len)
{
    if (rng->type != gsl_rng_mt19937 || gsl_rng_size(rng) != sizeof(mt_state) || len == 0) return -1;
    /* init_genrand(19650218), which is what GSL's mt_set does with it */
    gsl_rng_set(rng, 19650218UL);
    mt_state *st = gsl_rng_state(rng);
    unsigned long *mt = st->mt;
    size_t i = 1, j = 0;
    for (size_t k = MT_N > len ? MT_N : len; k; --k) {
        mt[i] = ((mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525UL)) + key[j] + j) & 0xffffffffUL;
        if (++i >= MT_N) { mt[0] = mt[MT_N - 1]; i = 1; }
        if (++j >= len) j = 0;
    }
    for (size_t k = MT_N - 1; k; --k) {
        mt[i] = ((mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941UL)) - i) & 0xffffffffUL;
        if (++i >= MT_N) { mt[0] = mt[MT_N - 1]; i = 1; }
    }
    mt[0] = 0x80000000UL; /* a nonzero state */
    st->mti = MT_N;
    return 0;
}

int ic_seed_block(gsl_rng *rng, uint64_t seed, uint64_t b)
{
    if (b == 0) {
        /* As before blocks existed (every set of up to GP_IC_BLOCK particles
         * is unchanged): GSL seeds with an unsigned long; mt19937 treats 0
         * as its default seed 4357, so fold the 64 bits and keep 0
         * distinct. */
        gsl_rng_set(rng, (unsigned long)(seed ^ (seed >> 32)) + (seed == 0 ? 0x9e3779b9UL : 0));
        return 0;
    }
    /* All 128 bits of (seed, b): gsl_rng_set keeps only 32 bits of a seed,
     * so the 16384 blocks of 2^30 particles would share seeds by chance. */
    uint32_t key[4] = {(uint32_t)seed, (uint32_t)(seed >> 32), (uint32_t)b, (uint32_t)(b >> 32)};
    return ic_mt_seed_array(rng, key, 4);
}

/* ---- frames ------------------------------------------------------------------ */


/* The frame sums of count particles, in particle order. */
void ic_frame_sums(size_t count, const double *pos, const double *vel, const double *mass,
                   double *row)
{
    double mt = 0, cx[3] = {0, 0, 0}, cv[3] = {0, 0, 0};
    for (size_t i = 0; i < count; ++i) {
        mt += mass[i];
        for (int k = 0; k < 3; ++k) {
            cx[k] += mass[i] * pos[3 * i + k];
            cv[k] += mass[i] * vel[3 * i + k];
        }
    }
    row[0] = mt;
    for (int k = 0; k < 3; ++k) {
        row[1 + k] = cx[k];
        row[4 + k] = cv[k];
    }
}

/* Subtracts the centre of mass (positions, when asked) and its velocity
 * given by the frame sums of the whole set. */
void ic_frame_shift(const double *total, int positions, size_t count, double *pos, double *vel)
{
    double mt = total[0], cx[3], cv[3];
    if (!(mt > 0)) return;
    for (int k = 0; k < 3; ++k) {
        cx[k] = total[1 + k] / mt;
        cv[k] = total[4 + k] / mt;
    }
    for (size_t i = 0; i < count; ++i)
        for (int k = 0; k < 3; ++k) {
            if (positions) pos[3 * i + k] -= cx[k];
            vel[3 * i + k] -= cv[k];
        }
}

void ic_to_com_frame(gp_ic *ic)
{
    double total[IC_FRAME_SUMS];
    ic_frame_sums(ic->n, ic->pos, ic->vel, ic->mass, total);
    ic_frame_shift(total, 1, ic->n, ic->pos, ic->vel);
}
