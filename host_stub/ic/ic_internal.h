/*
 * ic_internal.h — what the model files share: parsed options, allocation,
 * random directions. Not installed; nothing here is exported.
 */
#ifndef GP_IC_INTERNAL_H
#define GP_IC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "ic.h"

#define IC_MAX_OPTS 32

/* Parsed option values of one model, in the order of its option table. */
typedef struct ic_vals {
    const char *model;
    const gp_ic_opt_info *info;
    size_t count;
    double num[IC_MAX_OPTS];          /* doubles, ints and bools */
    const char *str[IC_MAX_OPTS];     /* strings and enums (caller's or static) */
} ic_vals;

/* The value of a numeric option (double, int or bool) by name. A name not
 * in the table is a programming error: it returns NaN. */
double ic_num(const ic_vals *v, const char *name);
/* The value of a string or enum option by name. */
const char *ic_str(const ic_vals *v, const char *name);

/* A model: its options, its summary line, and its generator. The generator
 * allocates *out with ic_alloc (n may be decided by the model) and returns
 * 0, or -1 with a sentence in err. */
typedef struct ic_model {
    const char *name;
    const char *summary;
    const gp_ic_opt_info *opts;
    size_t n_opts;
    int (*make)(size_t n, gsl_rng *rng, const ic_vals *v, gp_ic *out,
                char *err, size_t errlen);
} ic_model;

extern const ic_model ic_model_plummer, ic_model_hernquist, ic_model_nfw,
    ic_model_galaxy, ic_model_uniform, ic_model_kepler, ic_model_file,
    ic_model_snapshot;

/* Allocates n particles (ids 0..n-1, everything else zero). */
int ic_alloc(gp_ic *out, size_t n, char *err, size_t errlen);

/* Writes a formatted sentence into err (if err and errlen > 0); returns -1. */
int ic_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A uniformly random unit vector times r, into x[3]. */
void ic_isotropic(gsl_rng *rng, double r, double *x);

/* Moves the particles to their centre-of-mass frame (positions and
 * velocities), with sums in particle order. */
void ic_to_com_frame(gp_ic *ic);

/* Applies the model's "frame" option: com (ic_to_com_frame), momentum
 * (velocities only: zero total momentum, positions untouched) or none. */
void ic_apply_frame(gp_ic *ic, const ic_vals *v);

/* Looks for two particles with the same id (sorting a copy: O(n log n)).
 * Returns 1 with their indices in *a < *b, 0 if all ids are distinct, -1
 * if out of memory. */
int ic_find_duplicate_id(const uint64_t *id, size_t n, size_t *a, size_t *b);

/* The usual check for sampled models: n >= 1. */
int ic_require_n(const char *model, size_t n, char *err, size_t errlen);

#endif /* GP_IC_INTERNAL_H */
