/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base_params.h — a plugin's parameters (params.c): set_param / get_param
 * with the ABI's rules from the plugin's gp_param_info[], the values by
 * index, parsing and formatting, and the rows every plugin shares.
 *
 * C and C++ compatible (CUDA plugins include it from .cu).
 */
#ifndef GP_BASE_PARAMS_H
#define GP_BASE_PARAMS_H

#include <stddef.h>

#include "gravplug.h"
#include "gravplug_params.h"
#include "base/base_instance.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Parameters                                                                */
/* ------------------------------------------------------------------------ */

/* set_param / get_param with the ABI's rules: unknown name ->
 * GP_ERR_UNKNOWN_PARAMETER naming the accepted names; bad value ->
 * GP_ERR_INVALID_ARGUMENT naming what is accepted; NULL name/value/buf or a
 * too small buffer -> GP_ERR_INVALID_ARGUMENT. On failure nothing changes.
 * Doubles are printed in the shortest form (15-17 digits) that round-trips
 * exactly. */
gp_status gp_base_set_param(gp_base *base, const char *name, const char *value);
gp_status gp_base_get_param(gp_base *base, const char *name, char *buf, size_t buflen);

/* Index of a parameter by name (exact match), or -1. */
int gp_param_index(const gp_base *base, const char *name);

/* The OpenMP threads of one call: the plugin's `threads` parameter where it
 * has one and it is > 0, else OpenMP's default.
 * A loop too small for the threads runs serially, outside any parallel
 * region: libgomp sets up and ends a team even for a region whose if
 * clause is false or that has one thread, a futex call each time, and the
 * split schemes call with a few hundred particles some 10^5 times a run
 * (bench/results/hold/raw/huayno-lanes.md). */
int gp_param_threads(const gp_base *base);

/* The threads of a loop over `items` independent pieces of work that
 * evaluate `pairs` target-source pairs in all: `threads` (the call's, as
 * gp_param_threads gives them) where that is worth waking a team (more
 * than one item and at least GP_PAR_PAIRS_MIN pairs, some tens of
 * microseconds of one core's work), else 1, and the caller then runs the
 * loop outside any parallel region. A higher bar (2^18) cost hold 35% of
 * its wall time on two threads; none at all cost a GRAPE-6 client, whose
 * calls can hold a single i-particle, a team per call
 * (bench/results/grape6). */
enum { GP_PAR_PAIRS_MIN = 1 << 16 };
int gp_threads_for(int threads, size_t items, size_t pairs);

/* Current values by index into the plugin's gp_param_info[]. */
static inline double    gp_param_double(const gp_base *b, int idx) { return b->param[idx].d; }
static inline long long gp_param_int(const gp_base *b, int idx)    { return b->param[idx].i; }
static inline int       gp_param_bool(const gp_base *b, int idx)   { return b->param[idx].b; }
/* Enum: the index of the chosen word in allowed. For the "N" word, the
 * integer is gp_param_int(b, idx). */
static inline int       gp_param_enum(const gp_base *b, int idx)   { return b->param[idx].word; }

/* Parses value for parameter info into *out without touching any instance.
 * On failure writes a sentence (what is accepted) to msg and returns
 * GP_ERR_INVALID_ARGUMENT. Exposed for tests and for plugins that check a
 * value before applying it. */
gp_status gp_param_parse(const gp_param_info *info, const char *value,
                         gp_param_value *out, char *msg, size_t msglen);

/* Formats a value of parameter info as set_param accepts it. Returns the
 * length snprintf would write (so >= buflen means truncated). */
int gp_param_format(const gp_param_info *info, const gp_param_value *v, char *buf, size_t buflen);

/* Parses a range such as "[0,inf)", "(0,1]", "[1,64]", "(-inf,inf)".
 * Returns 1 on success. lo_open/hi_open: 1 for '(' / ')'. */
int gp_range_parse(const char *allowed, double *lo, int *lo_open, double *hi, int *hi_open);

/* Parameter rows that mean the same in every plugin, written once, under
 * the names abi/gravplug_params.h gives their roles. */
#define GP_PARAM_ROW_G                                                                      \
    {GP_PARAM_GRAVITY, GP_PARAM_DOUBLE, "1", "(0,inf)", "gravitational constant, in the host's units"}
#define GP_PARAM_ROW_EPS                                                                    \
    {GP_PARAM_SOFTENING, GP_PARAM_DOUBLE, "0", "[0,inf)",                                   \
     "Plummer softening length: 1/r becomes 1/sqrt(r^2 + eps^2)"}
#define GP_PARAM_ROW_THREADS                                                                \
    {GP_PARAM_THREADS, GP_PARAM_INT, "0", "[0,4096]",                                       \
     "OpenMP threads per call; 0 uses the OpenMP default (OMP_NUM_THREADS)"}

#ifdef __cplusplus
}
#endif

#endif /* GP_BASE_PARAMS_H */
