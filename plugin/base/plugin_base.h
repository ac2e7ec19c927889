/* SPDX-License-Identifier: Apache-2.0 */
/*
 * plugin_base.h — backend-neutral helpers every gravplug plugin links in.
 *
 * Every plugin (cpu-direct, cpu-tree, cuda-direct, cuda-tree) has to do the
 * same book-keeping around its solver: an error sentence per instance, the
 * input validation gravplug.h requires (and which must leave the instance
 * unchanged on failure), a parameter table driven by its gp_param_info[],
 * a copy of the particles and of the active index list, and statistics.
 * This file does all of that once so the plugins hold only their algorithm.
 *
 * Where each part lives: errors.c (sentences, logging), instance.c (init,
 * free), params.c (the parameter table), scan.c (threaded passes over large
 * arrays), subsets.c (index lists: active and source subsets), particles.c
 * (particle validation and copy), state.c (ABI 1.1 held state, predict,
 * masses), outputs.c (results that overflowed), stats.c (get_stats, clock).
 *
 * How a plugin uses it
 *
 *     struct gp_solver {           // the opaque type of gravplug.h
 *         gp_base base;            // FIRST member, always
 *         ... solver state ...
 *     };
 *
 *     static const gp_param_info params[] = {
 *         {"G",   GP_PARAM_DOUBLE, "1", "(0,inf)", "gravitational constant"},
 *         {"eps", GP_PARAM_DOUBLE, "0", "[0,inf)", "Plummer softening length"},
 *     };
 *     enum { P_G, P_EPS };         // indices into params[], same order
 *
 *     init:          return gp_solver_create(out, sizeof **out, "cpu-direct",
 *                                            args, params, 2);
 *                    (on failure the sentence is already in last_error(NULL))
 *     finalize:      gp_base_free(&s->base); free(s);
 *     set_param:     return gp_base_set_param(&s->base, name, value);
 *     get_param:     return gp_base_get_param(&s->base, name, buf, buflen);
 *     set_particles: return gp_particles_set(&s->base, n, pos, mass);
 *                    (the copy is in s->base.p; rebuild your own structures
 *                    from it — if that can fail, validate FIRST with
 *                    gp_check_particles, build into temporaries, and only
 *                    then call gp_particles_set, so failure changes nothing)
 *     compute_forces: st = gp_check_compute(&s->base, acc); then use
 *                    s->base.p and gp_param_double(&s->base, P_EPS)
 *     last_error:    return gp_base_last_error(s ? &s->base : NULL);
 *
 * Every gp_check_* / gp_particles_* function validates completely before it
 * changes anything, and on failure returns the status after writing a
 * sentence with gp_fail. A NULL instance (s == NULL) is answered with
 * GP_ERR_INVALID_ARGUMENT by gp_null_instance().
 *
 * Thread safety: no global mutable state except the thread-local buffer for
 * init failures (last_error(NULL)), as the ABI asks. Each plugin .so links
 * its own copy of these objects (hidden visibility), so two plugins never
 * share anything.
 *
 * This header is C and C++ compatible (CUDA plugins include it from .cu).
 */
#ifndef GP_PLUGIN_BASE_H
#define GP_PLUGIN_BASE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "gravplug.h"
#include "gravplug_predict.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#  define GP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#  define GP_PRINTF(a, b)
#endif

/* Longest error sentence kept (longer ones are truncated, never overrun). */
#define GP_ERROR_LEN 1024
/* Most parameters one plugin may declare. */
#define GP_MAX_PARAMS 32

/* The size of the first published gp_init_args layout (ABI 1.0). A caller's
 * struct_size below this is GP_ERR_ABI_MISMATCH. */
#define GP_INIT_ARGS_V1_SIZE (offsetof(gp_init_args, device) + sizeof(int))

/* ------------------------------------------------------------------------ */
/* Parameter values                                                          */
/* ------------------------------------------------------------------------ */

/* The stored value of one parameter. Which member is meaningful depends on
 * the parameter's type:
 *   GP_PARAM_DOUBLE -> d
 *   GP_PARAM_INT    -> i
 *   GP_PARAM_BOOL   -> b (0 or 1)
 *   GP_PARAM_ENUM   -> word: index of the chosen word in `allowed`
 *                      ("auto|always|N": auto = 0, always = 1, N = 2).
 *
 * Enums with an integer alternative: in an enum's `allowed` list the word
 * "N" (a single capital N) stands for "any positive integer". Setting
 * rebuild = "10" on allowed "auto|always|N" stores word = 2 (the index of
 * "N") and i = 10; get_param then prints "10". So a framework reading
 * describe_params sees "auto|always|N", and users write "auto", "always"
 * or a number. */
typedef struct gp_param_value {
    double d;
    long long i;
    int b;
    int word;
} gp_param_value;

/* ------------------------------------------------------------------------ */
/* Particle storage                                                          */
/* ------------------------------------------------------------------------ */

/* The plugin's own copy of what set_particles / set_active_subset gave it.
 * pos[3n] interleaved xyz, mass[n]. active == NULL means all particles are
 * active (n_active == n); otherwise active[n_active] holds indices < n,
 * none repeated, in the caller's order. */
typedef struct gp_particles {
    int      have;          /* set_particles succeeded at least once */
    size_t   n;
    double  *pos;           /* current source positions */
    double  *mass;
    size_t   n_active;
    uint32_t *active;       /* NULL: all active */

    /* ABI 1.1 (state.c). The held kinematic state: particle i was at
     * x0[3i] at time t[i], moving with vel[3i] and acc[3i]. Allocated at
     * the first set_state; stated[i] says what pos[3i] is:
     *   0  no state since set_particles / update_positions: predict leaves
     *      pos alone;
     *   1  pos == x0 (set_state since the last predict);
     *   2  pos == the prediction to t_pred (so a failed predict can be
     *      undone exactly, by re-evaluating the same expression). */
    double  *x0, *vel, *acc, *t;
    uint8_t *stated;
    size_t   n_stated;      /* particles with stated != 0 */
    double   t_pred;        /* time of the last successful predict */
    size_t   n_src;         /* source subset: n_src == n and src NULL: all */
    uint32_t *src;          /* NULL: all sources, else n_src indices in the
                               caller's order */
    /* ABI 1.2 (state.c): jerk[3i] of the particles given one by
     * set_state_jerk (third[i] = 1: predicted to third order); allocated
     * at the first set_state_jerk. set_state and gp_state_clear reset
     * third[i] to 0 (second order, the 1.1 expression bit for bit). */
    double  *jerk;
    uint8_t *third;
    uint64_t *seen;         /* gp_check_subset's map of n bits, all zero
                               between calls, so that a check costs
                               O(n_sub), not O(n), on every block step */
    size_t   seen_words;
    /* The last index list that passed gp_check_subset, and the n it was
     * checked against: a block step hands the same list to get_positions,
     * set_active_subset and set_state, and comparing it (a sequential
     * read) costs a fraction of checking it again (random bit tests). */
    uint32_t *checked;
    size_t   n_checked, checked_cap, checked_for_n;
    /* ABI 1.3 (groups.c): group[i] of every particle, NULL: no groups
     * (set_source_groups(NULL) or set_particles since) */
    uint32_t *group;
} gp_particles;

/* ------------------------------------------------------------------------ */
/* The common part of every instance                                         */
/* ------------------------------------------------------------------------ */
typedef struct gp_base {
    const char *plugin_name;        /* for sentences: "cpu-direct: ..."     */
    gp_log_fn log;                  /* may be NULL                          */
    void *log_user;
    int device;                     /* from init args; -1 if none given     */
    int in_init;                    /* failures also go to last_error(NULL) */
    char error[GP_ERROR_LEN];       /* last failure on this instance, or "" */

    const gp_param_info *param_info;
    size_t n_params;
    gp_param_value param[GP_MAX_PARAMS];

    gp_particles p;
    gp_stats stats;                 /* cumulative; struct_size = sizeof    */

    /* ABI 1.2 (neighbours.c): the neighbour lists of the last
     * compute_forces_ex that asked for them, CSR over nb_rows active
     * particles; nb_offset NULL: none since */
    uint64_t *nb_offset;
    uint32_t *nb_list;
    size_t nb_rows;
} gp_base;

/* ------------------------------------------------------------------------ */
/* Errors and logging                                                        */
/* ------------------------------------------------------------------------ */

/* Records a failure: formats the sentence (what was wrong, what to do) into
 * base->error, prefixed with the plugin name, logs it at GP_LOG_ERROR
 * through the host's log callback if any, and returns status. base may be
 * NULL (no instance yet): then the sentence goes to the thread-local
 * last_error(NULL) buffer. During gp_base_init it goes to both. */
gp_status gp_fail(gp_base *base, gp_status status, const char *fmt, ...) GP_PRINTF(3, 4);
gp_status gp_vfail(gp_base *base, gp_status status, const char *fmt, va_list ap);

/* An init failure before any gp_base exists (e.g. calloc failed, out ==
 * NULL): writes the thread-local sentence, logs through args->log when args
 * is usable, and returns status. */
gp_status gp_init_fail(const gp_init_args *args, const char *plugin_name,
                       gp_status status, const char *fmt, ...) GP_PRINTF(4, 5);

/* Clears the thread-local init error; call at the start of init. */
void gp_init_clear_error(void);

/* What a plugin's last_error(s) returns: base->error, or the thread-local
 * init failure when base is NULL. Never NULL. */
const char *gp_base_last_error(const gp_base *base);

/* Logs a message through the host callback (no-op when none). */
void gp_log(const gp_base *base, int level, const char *fmt, ...) GP_PRINTF(3, 4);

/* Every entry point given s == NULL answers with this (INVALID_ARGUMENT and
 * a sentence in last_error(NULL)). fn is the entry point's name. */
gp_status gp_null_instance(const char *plugin_name, const char *fn);

/* ------------------------------------------------------------------------ */
/* Instance life cycle                                                       */
/* ------------------------------------------------------------------------ */

/* The common part of every plugin's init: checks out (set to NULL first),
 * allocates `size` zeroed bytes for the plugin's struct gp_solver (whose
 * first member is its gp_base), and runs gp_base_init on it. On success
 * *out holds the new instance and the plugin adds its own setup (on a
 * failure there, it calls its finalize and sets *out = NULL). On failure
 * nothing is left allocated and last_error(NULL) explains. */
gp_status gp_solver_create(gp_solver **out, size_t size, const char *plugin_name,
                           const gp_init_args *args,
                           const gp_param_info *info, size_t n_info);

/* Fills in base (which must be zeroed, e.g. from calloc): checks args
 * (NULL = defaults; struct_size < GP_INIT_ARGS_V1_SIZE -> ABI_MISMATCH;
 * n_params > 0 with params NULL -> INVALID_ARGUMENT), copies the log
 * callback, sets every parameter to its default and then applies
 * args->params in order, exactly as set_param would. Any failure writes
 * last_error(NULL) and returns the status; the caller then calls
 * gp_base_free and frees its instance. Also clears last_error(NULL) first.
 * A default that does not parse is GP_ERR_INTERNAL (a bug in the table). */
gp_status gp_base_init(gp_base *base, const char *plugin_name,
                       const gp_init_args *args,
                       const gp_param_info *info, size_t n_info);

/* Frees what base holds (particle copies). Safe on a zeroed base. */
void gp_base_free(gp_base *base);

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
 * has one and it is > 0, else OpenMP's default. */
int gp_param_threads(const gp_base *base);

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

/* ------------------------------------------------------------------------ */
/* Validation (never changes state)                                          */
/* ------------------------------------------------------------------------ */

/* n > 0, pos and mass not NULL, every pos finite, every mass finite and
 * >= 0, n fits in uint32_t indices. */
gp_status gp_check_particles(gp_base *base, size_t n, const double *pos, const double *mass);

/* pos not NULL, all finite; requires a previous set_particles (BAD_STATE). */
gp_status gp_check_positions(gp_base *base, const double *pos);

/* n_active == 0 means all (index ignored). Otherwise index not NULL, each
 * < n, none repeated (O(n) bitmap). Requires set_particles (BAD_STATE). */
gp_status gp_check_active(gp_base *base, size_t n_active, const uint32_t *index);

/* compute_forces preconditions: set_particles done (BAD_STATE), acc not
 * NULL. */
gp_status gp_check_compute(gp_base *base, const double *acc);

/* compute_field preconditions: set_particles done, m > 0, points and acc
 * not NULL, every point finite. */
gp_status gp_check_field(gp_base *base, size_t m, const double *points, const double *acc);

/* A finite-check over count doubles; returns the index of the first
 * non-finite value, or (size_t)-1 if all are finite. */
size_t gp_first_nonfinite(const double *v, size_t count);

/* The first of n masses that is not finite or is negative, or n. */
size_t gp_first_bad_mass(const double *mass, size_t n);

/* The finite check and a copy in one pass: copies count doubles from src
 * to dst and returns 1 if all were finite, else 0 (dst holds the copy all
 * the same; gp_first_nonfinite finds the culprit for the sentence). For a
 * GPU plugin packing a block step's state for upload, where a check and
 * then a copy read the arrays twice. Spread over the threads from 65,536
 * values. */
int gp_copy_finite(double *dst, const double *src, size_t count);

/* memcpy of count doubles, split over the threads for large copies. */
void gp_copy_doubles(double *dst, const double *src, size_t count);

/* BAD_STATE with a sentence naming fn unless set_particles came first. */
gp_status gp_need_particles(gp_base *base, const char *fn);

/* ------------------------------------------------------------------------ */
/* Particle storage (validate, then copy; failure changes nothing)           */
/* ------------------------------------------------------------------------ */

/* set_particles: validates, copies n/pos/mass into base->p (reusing the
 * buffers when n is unchanged), resets the active subset to all. */
gp_status gp_particles_set(gp_base *base, size_t n, const double *pos, const double *mass);

/* The same without the validation, for a plugin that called
 * gp_check_particles itself first (to build its own structures before
 * anything changes): large inputs are then scanned once, not twice. Only
 * GP_ERR_OUT_OF_MEMORY can fail here. */
gp_status gp_particles_store(gp_base *base, size_t n, const double *pos, const double *mass);

/* update_positions: validates and copies pos into base->p.pos. */
gp_status gp_particles_update(gp_base *base, const double *pos);

/* set_active_subset: validates and stores a copy of the index list
 * (n_active == 0: all active, active = NULL). */
gp_status gp_particles_set_active(gp_base *base, size_t n_active, const uint32_t *index);

/* ---- ABI 1.1 (state.c, subsets.c): held state, predict, subsets, masses */

/* The index rules of 1.1's subset calls, without changing anything:
 * n_sub == 0 is an empty subset (a no-op for the caller); index NULL
 * means all particles in order and needs n_sub == n; otherwise each index
 * < n and none repeated. fn names the entry point in the sentence. */
gp_status gp_check_subset(gp_base *base, const char *fn, size_t n_sub, const uint32_t *index);

/* set_state's and update_masses's checks alone, with their sentences: a
 * collective plugin (mpi-tree) checks on every rank and agrees before any
 * rank changes anything. */
gp_status gp_state_check(gp_base *base, size_t n_sub, const uint32_t *index,
                         const double *pos, const double *vel, const double *acc,
                         const double *t);
/* gp_state_check without the values' finiteness (the subset rules, no
 * NULL array): for a plugin that checks the values as it copies them
 * (gp_copy_finite) and calls gp_state_check for the sentence when one is
 * not finite. */
gp_status gp_state_check_args(gp_base *base, size_t n_sub, const uint32_t *index,
                              const double *pos, const double *vel, const double *acc,
                              const double *t);
gp_status gp_masses_check(gp_base *base, size_t n_sub, const uint32_t *index,
                          const double *mass);

/* set_state: validates (gp_state_check: subset rules, non-NULL arrays, all
 * finite), then stores x0/vel/acc/t for the subset and sets their source
 * positions to pos. Nothing changes on failure. */
gp_status gp_state_set(gp_base *base, size_t n_sub, const uint32_t *index,
                       const double *pos, const double *vel, const double *acc,
                       const double *t);

/* predict: moves every stated particle's source position to time t with
 * the ABI's expression (gp_predict_coord / gp_predict_coord3 of
 * gravplug_predict.h, which backends that loop themselves call too; no
 * FMA: state.c is compiled with -ffp-contract=off), OpenMP over particles
 * on the plugin's threads (gp_param_threads; each particle alone, so the
 * same bits on any count).
 * A non-finite t, or a prediction whose position or velocity overflows,
 * is GP_ERR_INVALID_ARGUMENT (naming the quantity and the first such
 * particle) and leaves every position as it was. *moved
 * (may be NULL) gets the number of particles predicted. */
gp_status gp_state_predict(gp_base *base, double t, size_t *moved);

/* A successful predict taken back (a plugin whose ranks or devices agree
 * on success after predicting: another one failed): each particle's
 * stated mark becomes was[] (p->n bytes, copied before the predict) and
 * its position what it was, x0 (1) or the prediction to t_was (2), third
 * order for a particle given a jerk, re-evaluated bit for bit; t_pred
 * becomes t_was. */
void gp_state_unpredict(gp_base *base, const uint8_t *was, double t_was);

/* ABI 1.2 set_state_jerk: set_state's checks and a finite jerk[3*n_sub],
 * then the state with the jerk: these particles are predicted to third
 * order (gravplug.h). Nothing changes on failure. */
gp_status gp_state_check_jerk(gp_base *base, size_t n_sub, const uint32_t *index,
                              const double *pos, const double *vel, const double *acc,
                              const double *jerk, const double *t);
gp_status gp_state_set_jerk(gp_base *base, size_t n_sub, const uint32_t *index,
                            const double *pos, const double *vel, const double *acc,
                            const double *jerk, const double *t);

/* The velocity of particle i at the positions' current time: the
 * prediction to the last predict's time, or its stated velocity when it
 * was set since; a particle with no state (none given since set_particles
 * or update_positions) does not move and has velocity 0. */
void gp_state_velocity(const gp_particles *p, size_t i, double out[3]);

/* get_velocities: gp_state_velocity of a subset (get_positions' rules). */
gp_status gp_velocities_get(gp_base *base, size_t n_sub, const uint32_t *index, double *vel);

/* get_positions: copies the current source positions of a subset. */
gp_status gp_positions_get(gp_base *base, size_t n_sub, const uint32_t *index, double *pos);

/* set_source_subset: (0, NULL) all (src = NULL, n_src = n); otherwise the
 * rules of set_active_subset. Stores a copy. */
gp_status gp_sources_set(gp_base *base, size_t n_src, const uint32_t *index);

/* gp_sources_set for a plugin that keeps structures built from the
 * sources: *changed is 0 only when all particles were the sources before
 * and are after (nothing to rebuild). */
gp_status gp_sources_replace(gp_base *base, size_t n_src, const uint32_t *index, int *changed);

/* The k-th source (k < base->p.n_src). */
static inline size_t gp_source_index(const gp_base *b, size_t k)
{
    return b->p.src ? (size_t)b->p.src[k] : k;
}

/* update_masses: validates (gp_masses_check: subset rules, finite, >= 0),
 * copies into base->p.mass. */
gp_status gp_masses_update(gp_base *base, size_t n_sub, const uint32_t *index,
                           const double *mass);

/* Forgets the held state (update_positions does this: every position
 * given anew, velocities and accelerations cleared). */
void gp_state_clear(gp_base *base);

/* After a compute call: every acc[3m] and pot[m] (pot may be NULL) finite,
 * else GP_ERR_INVALID_ARGUMENT with a sentence (the inputs' scale makes a
 * result overflow double). outputs.c. */
gp_status gp_check_outputs(gp_base *base, const char *fn, size_t m, const double *acc,
                           const double *pot);

/* compute_forces_ex's request, checked before anything runs (outputs.c):
 * out not NULL, its struct_size covering gp_outputs, acc not NULL, the
 * nb_radius values finite and >= 0, nb_step finite and >= 0; and the
 * plugin's base checks of compute_forces (particles set). */
gp_status gp_check_outputs_ex(gp_base *base, const gp_outputs *out);

/* Neighbour lists (neighbours.c). gp_neighbours_forget: the last lists
 * are gone (a new compute_forces_ex, set_particles); _keep takes
 * ownership of malloc'd offset[rows + 1] and list[offset[rows]];
 * gp_neighbours_get is the ABI's get_neighbours. */
void gp_neighbours_forget(gp_base *base);
void gp_neighbours_keep(gp_base *base, size_t rows, uint64_t *offset, uint32_t *list);
gp_status gp_neighbours_get(gp_base *base, size_t cap, uint64_t *offset, uint32_t *list,
                            size_t *needed);

/* ---- ABI 1.3 (outputs.c, groups.c, exact_ex.c) ------------------------ */

/* gp_outputs as a plugin reads it: a copy of out with the members its
 * struct_size does not cover (a 1.2 caller's pair_step_even,
 * nb_step_even) absent (NULL, 0). Call after gp_check_outputs_ex. */
gp_outputs gp_outputs_read(const gp_outputs *out);

/* compute_field_ex's request, checked before anything runs: particles
 * set; n = 0 an empty call (pos, vel, exclude may then be NULL; out is
 * checked all the same); pos not NULL and finite; vel not NULL (and finite) when
 * jerk, pair_step, pair_step_even, nb_step or nb_step_even asks for it;
 * every exclude[k] < n_particles or UINT32_MAX; out as
 * gp_check_outputs_ex checks it, with n rows instead of n_active. */
gp_status gp_check_field_ex(gp_base *base, size_t n, const double *pos, const double *vel,
                            const uint32_t *exclude, const gp_outputs *out);

/* set_source_groups: particles set (BAD_STATE); group NULL clears; else n
 * must be the particle count; stores a copy. Nothing changes on failure. */
gp_status gp_groups_set(gp_base *base, size_t n, const uint32_t *group);
void gp_groups_clear(gp_base *base);

/* The one rule of source groups: a target of group gi (UINT32_MAX: none)
 * feels nothing from source j of the same group. group NULL: no groups. */
static inline int gp_group_skips(const uint32_t *group, uint32_t gi, size_t j)
{
    return group && gi != UINT32_MAX && group[j] == gi;
}
/* The group of a target that is particle i (UINT32_MAX: a point that is
 * no particle, or no groups): the group it feels the rule as. */
static inline uint32_t gp_group_of(const uint32_t *group, uint32_t i)
{
    return group && i != UINT32_MAX ? group[i] : UINT32_MAX;
}

/* compute_forces while groups are set (the rule holds for every force
 * call): the plugin's compute_forces_ex with these outputs, acc and pot. */
static inline gp_outputs gp_outputs_forces(double *acc, double *pot)
{
    gp_outputs o = { sizeof o, acc, pot, NULL, NULL, NULL, NULL, NULL, 0.0, NULL, 0.0 };
    return o;
}

/* Whether compute_forces_ex needs ABI 1.3's exact pass: groups are set,
 * or out (as gp_outputs_read gives it) asks for an even step or lists by
 * it. */
static inline int gp_outputs_want_13(const gp_base *base, const gp_outputs *o)
{
    return base->p.group != NULL || o->pair_step_even != NULL || o->nb_step_even > 0;
}

/* The targets of gp_exact_ex: n points at pos[3n] moving with vel[3n]
 * (NULL when no output needs it); self[k] the particle point k is (its
 * self term skipped, its group's sources skipped, its mass in the pair
 * steps' mu), or UINT32_MAX; self NULL: none for all. */
typedef struct gp_exact_targets {
    size_t n;
    const double *pos, *vel;
    const uint32_t *self;
} gp_exact_targets;

/* Where the sources are: every particle's position pos[3n] (NULL: base's
 * p.pos) and velocity vel[3n] (NULL: the held state's, gp_state_velocity),
 * G, eps^2 and the threads of the pass. */
typedef struct gp_exact_sources {
    const double *pos, *vel;
    double G, eps2;
    int nthreads;
} gp_exact_sources;

/* Every output of out (as gp_outputs_read gives it) for the targets,
 * exact, in double, over the sources of base: massive particles of the
 * source subset, minus each target's self and group (gp_group_skips).
 * forces: also acc, pot and jerk (else they are left alone). Sums in
 * ascending source index, one target per thread, so the same bits on any
 * thread count; pair steps from base/pair_step.h bit for bit; the lists
 * (when nb_radius, nb_step or nb_step_even asks) replace base's,
 * ascending. fn names the call in sentences. OUT_OF_MEMORY (sentence
 * set, lists as they were) or GP_OK. */
gp_status gp_exact_ex(gp_base *base, const gp_exact_sources *src, const gp_exact_targets *tg,
                      const gp_outputs *out, int forces, const char *fn);
/* gp_exact_ex for the active particles (compute_forces_ex's targets):
 * each at its source position, with its velocity (src->vel's or the held
 * state's), itself excluded. */
gp_status gp_exact_active(gp_base *base, const gp_exact_sources *src, const gp_outputs *out,
                          int forces, const char *fn);

/* compute_forces_ex when gp_outputs_want_13: without groups acc, pot and
 * the jerk from the plugin's own 1.2 pass forces_12 (given a gp_outputs
 * with those three alone: compute_forces' bits), the rest from
 * gp_exact_active; with groups every output from gp_exact_active (exact,
 * so no tree cell is approximated across the exclusion). out as
 * gp_outputs_read gives it. */
typedef gp_status (*gp_forces_12_fn)(gp_solver *s, const gp_outputs *out);
gp_status gp_forces_ex_13(gp_solver *s, gp_base *base, gp_forces_12_fn forces_12,
                          const gp_exact_sources *src, const gp_outputs *out);

/* For a plugin whose state lives elsewhere (a GPU): src->pos and src->vel
 * become host copies of every particle's, made by its own get_positions
 * and get_velocities (so bit for bit what its passes see); free(*buf)
 * after the pass. */
typedef gp_status (*gp_get_fn)(gp_solver *s, size_t n_sub, const uint32_t *index, double *out);
gp_status gp_exact_fetch(gp_solver *s, gp_base *base, gp_get_fn get_pos, gp_get_fn get_vel,
                         gp_exact_sources *src, double **buf);

/* compute_field_ex by the exact pass: gp_check_field_ex, then
 * gp_exact_ex at the points (self = exclude), field_calls counted. */
gp_status gp_field_ex_exact(gp_base *base, const gp_exact_sources *src, size_t n,
                            const double *pos, const double *vel, const uint32_t *exclude,
                            const gp_outputs *out);

/* Stores a copy of an index list already checked (m == 0: none, *list =
 * NULL and *count = n, meaning all particles); OUT_OF_MEMORY leaves both
 * as they were. Shared by the active and the source subsets. */
gp_status gp_index_list_store(gp_base *base, const char *fn, size_t m, const uint32_t *index,
                              uint32_t **list, size_t *count);

/* The i-th active particle (i < base->p.n_active). */
static inline size_t gp_active_index(const gp_base *b, size_t i)
{
    return b->p.active ? (size_t)b->p.active[i] : i;
}

/* ------------------------------------------------------------------------ */
/* Statistics and timing                                                     */
/* ------------------------------------------------------------------------ */

/* get_stats: out not NULL and out->struct_size >= sizeof(size_t); copies
 * only the members that fit in out->struct_size, leaves struct_size. */
gp_status gp_base_get_stats(gp_base *base, gp_stats *out);

/* Monotonic wall clock in seconds (CLOCK_MONOTONIC). */
double gp_wtime(void);

#ifdef __cplusplus
}
#endif


/* The five table entries that every plugin implements identically, given
 * that gp_base is the first member `base` of its struct gp_solver:
 * describe_params, set_param, get_param, get_stats, last_error. Expands to
 * static functions PREFIX_describe_params ... PREFIX_last_error. */
#define GP_PLUGIN_COMMON_ENTRIES(PREFIX, PLUGIN_NAME_, PARAMS, N_PARAMS_)                   \
    static const gp_param_info *PREFIX##_describe_params(size_t *count)                     \
    {                                                                                       \
        if (count) *count = (N_PARAMS_);                                                    \
        return (PARAMS);                                                                    \
    }                                                                                       \
    static gp_status PREFIX##_set_param(gp_solver *s, const char *name, const char *value)  \
    {                                                                                       \
        if (!s) return gp_null_instance(PLUGIN_NAME_, "set_param");                         \
        return gp_base_set_param(&s->base, name, value);                                    \
    }                                                                                       \
    static gp_status PREFIX##_get_param(gp_solver *s, const char *name, char *buf,          \
                                        size_t buflen)                                      \
    {                                                                                       \
        if (!s) return gp_null_instance(PLUGIN_NAME_, "get_param");                         \
        return gp_base_get_param(&s->base, name, buf, buflen);                              \
    }                                                                                       \
    static gp_status PREFIX##_get_stats(gp_solver *s, gp_stats *out)                        \
    {                                                                                       \
        if (!s) return gp_null_instance(PLUGIN_NAME_, "get_stats");                         \
        return gp_base_get_stats(&s->base, out);                                            \
    }                                                                                       \
    static const char *PREFIX##_last_error(const gp_solver *s)                              \
    {                                                                                       \
        return gp_base_last_error(s ? &s->base : NULL);                                     \
    }

/* ABI 1.2 entry points every plugin on plugin/base answers the same way:
 * get_velocities from the held state, get_neighbours from the kept lists. */
#define GP_PLUGIN_12_ENTRIES(PREFIX, PLUGIN_NAME_)                                          \
    static gp_status PREFIX##_get_velocities(gp_solver *s, size_t n_sub,                    \
                                             const uint32_t *index, double *vel)            \
    {                                                                                       \
        if (!s) return gp_null_instance(PLUGIN_NAME_, "get_velocities");                    \
        return gp_velocities_get(&s->base, n_sub, index, vel);                              \
    }                                                                                       \
    static gp_status PREFIX##_get_neighbours(gp_solver *s, size_t cap, uint64_t *offset,    \
                                             uint32_t *list, size_t *needed)                \
    {                                                                                       \
        if (!s) return gp_null_instance(PLUGIN_NAME_, "get_neighbours");                    \
        return gp_neighbours_get(&s->base, cap, offset, list, needed);                      \
    }

/* ABI 1.3's set_source_groups, the same in every plugin that keeps the
 * groups in plugin/base (the passes read base->p.group). */
#define GP_PLUGIN_13_ENTRIES(PREFIX, PLUGIN_NAME_)                                          \
    static gp_status PREFIX##_set_source_groups(gp_solver *s, size_t n,                     \
                                                const uint32_t *group)                      \
    {                                                                                       \
        if (!s) return gp_null_instance(PLUGIN_NAME_, "set_source_groups");                 \
        return gp_groups_set(&s->base, n, group);                                           \
    }

/* Parameter rows that mean the same in every plugin, written once. */
#define GP_PARAM_ROW_G                                                                      \
    {"G", GP_PARAM_DOUBLE, "1", "(0,inf)", "gravitational constant, in the host's units"}
#define GP_PARAM_ROW_EPS                                                                    \
    {"eps", GP_PARAM_DOUBLE, "0", "[0,inf)",                                                \
     "Plummer softening length: 1/r becomes 1/sqrt(r^2 + eps^2)"}
#define GP_PARAM_ROW_THREADS                                                                \
    {"threads", GP_PARAM_INT, "0", "[0,4096]",                                              \
     "OpenMP threads per call; 0 uses the OpenMP default (OMP_NUM_THREADS)"}

/* The plugin's one exported symbol: its table for the ABI major it was
 * built for, NULL for any other. */
#define GP_PLUGIN_ENTRY(API)                                                                \
    GRAVPLUG_EXPORT const gp_api *gravplug_entry(uint32_t abi_major)                        \
    {                                                                                       \
        return abi_major == GRAVPLUG_ABI_MAJOR ? &(API) : NULL;                             \
    }

/* A plugin's function table for this ABI (1.0 and 1.1 entries), every entry
 * point named PREFIX_<entry> (cpu_tree_init, cpu_tree_compute_forces, ...):
 * one prefix per plugin, and a missing entry point is a compile error.
 *     static const gp_api api = GP_PLUGIN_API(cpu_tree, PLUGIN_NAME, GP_CAP_TREE | ...);
 *     GP_PLUGIN_ENTRY(api) */
#define GP_PLUGIN_API_11_MEMBERS(PREFIX, PLUGIN_NAME_, CAPABILITIES)                      \
        .abi_major = GRAVPLUG_ABI_MAJOR,                                                    \
        .struct_size = sizeof(gp_api), .name = (PLUGIN_NAME_), .version = GP_VERSION,       \
        .capabilities = (CAPABILITIES),                                                     \
        .describe_params = PREFIX##_describe_params, .init = PREFIX##_init,                 \
        .finalize = PREFIX##_finalize, .set_param = PREFIX##_set_param,                     \
        .get_param = PREFIX##_get_param, .set_particles = PREFIX##_set_particles,           \
        .update_positions = PREFIX##_update_positions,                                      \
        .set_active_subset = PREFIX##_set_active_subset,                                    \
        .compute_forces = PREFIX##_compute_forces, .compute_field = PREFIX##_compute_field, \
        .get_stats = PREFIX##_get_stats, .last_error = PREFIX##_last_error,                 \
        .set_state = PREFIX##_set_state, .predict = PREFIX##_predict,                       \
        .get_positions = PREFIX##_get_positions,                                            \
        .set_source_subset = PREFIX##_set_source_subset,                                    \
        .update_masses = PREFIX##_update_masses

/* A plugin that implements ABI 1.1 (its 1.2 members NULL: a host's
 * GRAVPLUG_API_HAS says no). */
#define GP_PLUGIN_API(PREFIX, PLUGIN_NAME_, CAPABILITIES)                                  \
    { GP_PLUGIN_API_11_MEMBERS(PREFIX, PLUGIN_NAME_, CAPABILITIES), .abi_minor = 1 }

/* The 1.2 members of a plugin's table. */
#define GP_PLUGIN_API_12_MEMBERS(PREFIX)                                                  \
        .set_state_jerk = PREFIX##_set_state_jerk, .get_velocities = PREFIX##_get_velocities, \
        .compute_forces_ex = PREFIX##_compute_forces_ex,                                    \
        .get_neighbours = PREFIX##_get_neighbours

/* A plugin that implements ABI 1.3 (every real plugin). */
#define GP_PLUGIN_API_13(PREFIX, PLUGIN_NAME_, CAPABILITIES)                               \
    {                                                                                       \
        GP_PLUGIN_API_11_MEMBERS(PREFIX, PLUGIN_NAME_, CAPABILITIES),                       \
        .abi_minor = GRAVPLUG_ABI_MINOR,                                                    \
        GP_PLUGIN_API_12_MEMBERS(PREFIX),                                                   \
        .set_source_groups = PREFIX##_set_source_groups,                                    \
        .compute_field_ex = PREFIX##_compute_field_ex,                                      \
    }

#endif /* GP_PLUGIN_BASE_H */
