/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ic.h — initial conditions for gravplug hosts (part of libgravplug.so).
 *
 *     gp_ic ic;
 *     char err[256];
 *     gp_param kv[] = { { "scale", "0.5" } };
 *     gp_ic_opts opts = { kv, 1 };
 *     if (gp_ic_make("plummer", 4096, 42, &opts, &ic, err, sizeof err) != 0)
 *         fprintf(stderr, "%s\n", err);
 *     ... ic.pos[3*i+k], ic.vel[3*i+k], ic.mass[i], ic.id[i] ...
 *     gp_ic_free(&ic);
 *
 * Every model is reproducible: the same model, n, seed and options give
 * bit-identical particles (GSL's mt19937 generator, seeded from `seed`, and
 * a fixed order of every draw and sum). Every model is returned in its
 * centre-of-mass frame (position and velocity), except `file` and
 * `snapshot` with center = false.
 *
 * The stream of a sampled model (plummer, hernquist, nfw, galaxy, uniform)
 * is cut into blocks of GP_IC_BLOCK = 65536 consecutive particle indices,
 * each drawn from its own mt19937: block 0 seeded with gsl_rng_set(seed
 * folded to 32 bits, as before blocks existed, so every set of up to 65536
 * particles is what it always was), block b > 0 with the reference
 * init_by_array of the key (seed low, seed high, b low, b high) as 32-bit
 * words. Inside a block the model draws its particles in index order. The
 * frame shift uses per-block sums (particle order inside a block) added in
 * block order; uniform's virial scaling likewise. So gp_ic_make_range can
 * make any slice [lo, hi) of a set in O(hi - lo + GP_IC_BLOCK) time and
 * memory, bit-identical to the same particles of the whole set, whatever
 * the cut (docs/IC.md, "Streams and ranges").
 *
 * Options are name = value strings (gp_param from gravplug.h), so a host can
 * pass its config settings through unchanged. Unknown names, unparsable
 * values and values out of range are errors with a sentence naming what is
 * accepted. gp_ic_describe() lists a model's options with their defaults and
 * one-line docs; docs/IC.md has the formulas and units.
 *
 * Models (units: G = 1 in all of them):
 *   plummer   Plummer sphere, isotropic velocities (Aarseth, Henon & Wielen
 *             1974). Henon (N-body) units by default: M = 1, E = -1/4, so
 *             the scale radius is 3*pi/16 and the virial radius 1.
 *   hernquist Hernquist sphere, M = 1, scale radius a = 1 by default;
 *             isotropic velocities from the Eddington formula. Optionally
 *             truncated (rtrunc > 0) with an exponential taper.
 *   nfw       NFW halo, scale radius rs = 1, truncated at c*rs (c = 10)
 *             with an exponential taper (Kazantzidis et al. 2004), total
 *             mass 1; Eddington velocities.
 *   galaxy    Hernquist bulge inside an NFW halo, optionally with an
 *             exponential disk; halo units as for nfw. The bulge and halo
 *             velocities come from the Eddington formula in the combined
 *             (spherically averaged) potential; the disk rotates with
 *             approximately circular velocities plus a dispersion.
 *   uniform   cold uniform sphere, M = 1, R = 1 (free-fall time
 *             pi/2 * sqrt(R^3 / (2 G M)) = 1.1107).
 *   kepler    two bodies on a Kepler orbit (a, e, m1, m2), in the x-y plane;
 *             n must be 2 (or 0: the model's own count).
 *   file      particles read from a text file: one particle a line,
 *             columns x y z vx vy vz m [id]; '#' starts a comment; blank
 *             lines are ignored. n = 0 takes every particle in the file,
 *             n > 0 requires exactly that many.
 *   snapshot  particles read from a gravplug/Gadget/SWIFT HDF5 snapshot
 *             (PartType1), e.g. to restart from one; n as for file.
 *
 * Exported names start with gp_; all return 0 on success, else -1 with a
 * sentence in err (errlen bytes, NUL-terminated, may be truncated).
 */
#ifndef GP_IC_H
#define GP_IC_H

#include <stddef.h>
#include <stdint.h>

#include "gravplug.h"
#include "particle_set.h" /* gp_ic, gp_ic_free */

#ifdef __cplusplus
extern "C" {
#endif

/* Options for gp_ic_make: name = value pairs, both strings. A later pair
 * overrides an earlier one with the same name. params may be NULL when
 * n_params is 0. */
typedef struct gp_ic_opts {
    const gp_param *params;
    size_t n_params;
} gp_ic_opts;

/* The kind of value an option takes. */
typedef enum gp_ic_opt_type {
    GP_IC_OPT_DOUBLE = 0,
    GP_IC_OPT_INT    = 1,
    GP_IC_OPT_BOOL   = 2,   /* true/false, 1/0, yes/no */
    GP_IC_OPT_STRING = 3,   /* e.g. a path */
    GP_IC_OPT_ENUM   = 4    /* one of the '|'-separated words in allowed */
} gp_ic_opt_type;

/* One option of a model, as gp_ic_describe lists it. Strings are static. */
typedef struct gp_ic_opt_info {
    const char *name;
    gp_ic_opt_type type;
    const char *default_value; /* as a string */
    const char *allowed;       /* ranges "(0,inf)", "[0,1)"; enums "a|b"; or NULL */
    const char *doc;           /* one line */
} gp_ic_opt_info;

/* Makes n particles of `model` with the given seed and options (opts may
 * be NULL: all defaults; it is a `const gp_ic_opts *`). On success fills
 * *out (which the caller frees with gp_ic_free) and returns 0; on failure
 * returns -1, leaves *out empty (n = 0, NULL arrays) and writes a sentence
 * into err. */
GRAVPLUG_EXPORT int gp_ic_make(const char *model, size_t n, uint64_t seed,
                               const void *opts, gp_ic *out,
                               char *err, size_t errlen);

/* The particles of a sampled model come in blocks of this many indices
 * (see the top of this file). */
#define GP_IC_BLOCK 65536

/* Gives every process the block sums of the others, for gp_ic_make_range
 * on several processes (e.g. MPI ranks; the library itself knows no MPI).
 * sums has n_blocks rows of `width` doubles; this process filled rows
 * [own_first, own_first + own_count) (the blocks that begin inside its
 * range; ranges that tile [0, n) own every block once); the function
 * fills the other rows from their owners and returns 0. status is this
 * process's state so far: 0, or -1 with its sentence in err. If any
 * process passes -1, the function returns -1 on every process with one
 * failing process's sentence in err (sums untouched). Collective: every
 * process calls it the same number of times (once, or twice for uniform
 * with virial_ratio > 0), provided all pass the same model, n, seed and
 * options. */
typedef int (*gp_ic_share_fn)(void *ctx, int status, double *sums, size_t width, size_t n_blocks,
                              size_t own_first, size_t own_count, char *err, size_t errlen);

/* Particles [lo, hi) of the set gp_ic_make(model, n, seed, opts) makes,
 * bit for bit (positions, velocities, masses, ids lo..hi-1), into *out
 * (out->n = hi - lo). Sampled models draw only the blocks that overlap
 * [lo, hi); their frame shift needs the sums of every block, which share
 * (with share_ctx) brings from the other processes, each making its own
 * range. share may be NULL only for the whole set [0, n). Models that are
 * not sampled (kepler, file, snapshot: see gp_ic_makes_ranges) make the
 * whole set, keep [lo, hi) and never call share. Errors in the arguments
 * (model, options, range) return -1 at once, without calling share; any
 * later one goes through share, so every process fails with the same
 * sentence. Returns 0 or -1 with err, as gp_ic_make. */
GRAVPLUG_EXPORT int gp_ic_make_range(const char *model, size_t n, uint64_t seed,
                                     const void *opts, size_t lo, size_t hi,
                                     gp_ic_share_fn share, void *share_ctx,
                                     gp_ic *out, char *err, size_t errlen);

/* 1 if gp_ic_make_range makes `model`'s ranges in time and memory of the
 * range (the sampled models), 0 if it makes the whole set each time
 * (kepler, file, snapshot), -1 for an unknown model. */
GRAVPLUG_EXPORT int gp_ic_makes_ranges(const char *model);

/* The names of the models, as a static NULL-terminated array. */
GRAVPLUG_EXPORT const char *const *gp_ic_models(void);

/* The options of a model as a static array (*count gets its length), or
 * NULL for an unknown model. */
GRAVPLUG_EXPORT const gp_ic_opt_info *gp_ic_describe(const char *model, size_t *count);

/* A one-line description of a model (what it is, its units), or NULL. */
GRAVPLUG_EXPORT const char *gp_ic_summary(const char *model);

#ifdef __cplusplus
}
#endif

#endif /* GP_IC_H */
