/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base_instance.h — the common part of every plugin instance (plugin/base).
 *
 * gp_base (the first member of every plugin's struct gp_solver) with its
 * parameter values and particle store; its life cycle (instance.c), its
 * error sentences and logging (errors.c), its statistics and clock
 * (stats.c). How a plugin uses plugin/base: plugin_base.h.
 *
 * C and C++ compatible (CUDA plugins include it from .cu).
 */
#ifndef GP_BASE_INSTANCE_H
#define GP_BASE_INSTANCE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "gravplug.h"

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

#endif /* GP_BASE_INSTANCE_H */
