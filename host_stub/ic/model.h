/* SPDX-License-Identifier: Apache-2.0 */
/*
 * model.h — what the model files share (model.c): parsed options, allocation,
 * random directions. Not installed; nothing here is exported.
 */
#ifndef GP_IC_MODEL_H
#define GP_IC_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "ic.h"

#define IC_MAX_OPTS 32

/* Option rows that mean the same in every model, written once. */
#define IC_OPT_ROW_MASS {"mass", GP_IC_OPT_DOUBLE, "1", "(0,inf)", "total mass"}
#define IC_OPT_ROW_FRAME                                                                    \
    {"frame", GP_IC_OPT_ENUM, "com", "com|momentum|none",                                   \
     "com: centre-of-mass frame; momentum: zero momentum only, density centre kept at the "  \
     "origin"}

/* Parsed option values of one model, in the order of its option table. */
typedef struct ic_vals {
    const char *model;
    const gp_ic_opt_info *info;
    size_t count;
    double num[IC_MAX_OPTS];          /* doubles, ints and bools */
    const char *str[IC_MAX_OPTS];     /* strings and enums (caller's or static) */
} ic_vals;

/* The index of an option in v by name (the model's table order). */
size_t ic_opt_index(const ic_vals *v, const char *name);
/* The value of a numeric option (double, int or bool) by name. A name not
 * in the table is a programming error: it returns NaN. */
double ic_num(const ic_vals *v, const char *name);
/* The value of a string or enum option by name. */
const char *ic_str(const ic_vals *v, const char *name);

/* How a sampled model draws its particles block by block (make.c cuts the
 * set into blocks of GP_IC_BLOCK global indices, each with its own
 * generator; see ic.h). prepare fills one of these. */
typedef struct ic_stream {
    void *state;   /* the model's per-set data (tables, counts) */
    /* Particles [first, first + count) of the set, all in one block, drawn
     * from rng in index order into pos[3 count], vel[3 count], mass[count]
     * (the block's own arrays: index 0 is particle `first`). */
    void (*draw)(void *state, gsl_rng *rng, size_t first, size_t count, double *pos, double *vel,
                 double *mass);
    void (*release)(void *state);   /* may be NULL */
    /* Optional (NULL: none), after the frame shift, for a whole-set
     * rescaling (uniform's virial ratio): a sum over one block's
     * particles, then what to do with the set's total (block sums added in
     * block order) to each block. */
    double (*block_sum)(void *state, size_t count, const double *vel, const double *mass);
    void (*apply_total)(void *state, double total, size_t count, double *vel);
} ic_stream;

/* A model: its options, its summary line, and its generator.
 * Sampled models give prepare: the per-set work every process repeats
 * (tables, component counts, checks of the options against n), returning
 * 0 with *s filled, or -1 with a sentence in err; make.c then draws the
 * blocks and moves the set to the model's frame.
 * Whole-set models (kepler, file, snapshot) give make instead: it
 * allocates *out with ic_alloc (n may be decided by the model) and returns
 * 0, or -1 with a sentence in err. */
typedef struct ic_model {
    const char *name;
    const char *summary;
    const gp_ic_opt_info *opts;
    size_t n_opts;
    int (*make)(size_t n, gsl_rng *rng, const ic_vals *v, gp_ic *out,
                char *err, size_t errlen);
    int (*prepare)(size_t n, const ic_vals *v, ic_stream *s, char *err, size_t errlen);
} ic_model;


/* Allocates n particles (ids 0..n-1, everything else zero). */
int ic_alloc(gp_ic *out, size_t n, char *err, size_t errlen);

/* Writes a formatted sentence into err (if err and errlen > 0); returns -1. */
int ic_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A uniformly random unit vector times r, into x[3]. */
void ic_isotropic(gsl_rng *rng, double r, double *x);

/* Seeds rng (GSL's mt19937) with a key of len 32-bit words by the
 * reference init_by_array of Matsumoto & Nishimura (mt19937ar.c), which
 * uses every bit of the key (gsl_rng_set keeps 32 bits of its seed).
 * Returns 0, or -1 if rng is not an mt19937 laid out as GSL 2 lays it. */
int ic_mt_seed_array(gsl_rng *rng, const uint32_t *key, size_t len);

/* Seeds rng for block b of the set made with `seed` (ic.h: block 0 with
 * gsl_rng_set as before blocks existed, block b > 0 with the key (seed,
 * b)). Returns 0, or -1 as ic_mt_seed_array. */
int ic_seed_block(gsl_rng *rng, uint64_t seed, uint64_t b);

/* Moves the particles to their centre-of-mass frame (positions and
 * velocities), with sums in particle order. */
void ic_to_com_frame(gp_ic *ic);

/* The frame's sums of count particles: mass, mass * position (3), mass *
 * velocity (3), in particle order; and the shift by a set's total of
 * them (positions too when positions != 0). make.c adds them block by
 * block. */
enum { IC_FRAME_SUMS = 7 };
void ic_frame_sums(size_t count, const double *pos, const double *vel, const double *mass, double *row);
void ic_frame_shift(const double *total, int positions, size_t count, double *pos, double *vel);

/* Looks for two particles with the same id (sorting a copy: O(n log n)).
 * Returns 1 with their indices in *a < *b, 0 if all ids are distinct, -1
 * if out of memory. */
int ic_find_duplicate_id(const uint64_t *id, size_t n, size_t *a, size_t *b);

/* The usual check for sampled models: n >= 1. */
int ic_require_n(const char *model, size_t n, char *err, size_t errlen);

#endif /* GP_IC_MODEL_H */
