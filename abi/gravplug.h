/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gravplug.h — the gravplug plugin ABI, version 1.3.
 *
 * 1.3 appends the pairwise step made even in the relative velocity
 * (gp_outputs.pair_step_even, nb_step_even: a time-symmetric split in one
 * call), source groups (set_source_groups: a target feels no source of its
 * own group) and the 1.2 outputs at explicit points with one excluded
 * source each (compute_field_ex, what GRAPE-6's g6calc_* needs).
 *
 * 1.2 appends what GRAPE-6 and Sapporo2 return beside the force: the jerk
 * (set_state_jerk, get_velocities, compute_forces_ex with gp_outputs, for
 * Hermite integrators), nearest neighbours, neighbour lists
 * (get_neighbours) and the pairwise time step of Pelupessy, Janes &
 * Portegies Zwart (2012) that HOLD and CC need; and two capability bits.
 *
 * 1.1 appends to gp_api the calls that let a plugin hold and predict the
 * particles itself (set_state, predict, get_positions), forces from a
 * subset of sources (set_source_subset) and in-place mass updates
 * (update_masses); to gp_init_args the MPI communicator; and three
 * capability bits. A host checks GRAVPLUG_API_HAS(api, member) before
 * calling an appended member, so a 1.0 plugin keeps working through the
 * 1.0 path.
 *
 * One header for hosts and plugins, C99, usable from C, C++, Fortran
 * (iso_c_binding) and Python (ctypes/cffi). It includes nothing beyond
 * <stddef.h> and <stdint.h>.
 *
 * A plugin is a shared object that exports exactly one symbol:
 *
 *     const gp_api *gravplug_entry(uint32_t abi_major);
 *
 * The host calls it once, after dlopen(path, RTLD_NOW | RTLD_LOCAL), with the
 * ABI major version it was compiled against (GRAVPLUG_ABI_MAJOR). The plugin
 * returns its function table for that major version, or NULL if it does not
 * speak it. The table is static: it lives as long as the .so is loaded.
 *
 * Compatibility policy
 *   - A minor bump only appends members at the END of structs. Nothing is
 *     ever removed, reordered or retyped within a major version.
 *   - Every extensible struct carries its own size: gp_api.struct_size is
 *     set by the plugin; gp_init_args.struct_size and gp_stats.struct_size
 *     are set by the caller. The receiving side never touches a member that
 *     lies beyond the size it was given (LV2's rule), and treats members the
 *     other side did not know about as absent (defaults).
 *   - A major bump is a new table and a new gravplug_entry answer.
 *
 * Ownership
 *   The caller owns every array it passes in or out. A plugin copies what
 *   it keeps and never holds a caller pointer past the call that received
 *   it. Strings returned by the plugin (name, version, gp_param_info text,
 *   last_error) belong to the plugin; see each function for how long they
 *   stay valid.
 *
 * Threads
 *   Plugins keep no global mutable state. Two instances, of one plugin or of
 *   two plugins, may be used from two threads at once. One instance is used
 *   by one thread at a time (the host serialises calls on it). A plugin may
 *   use threads (OpenMP) or a GPU inside a call; it never leaves work running
 *   after a call returns. A GP_CAP_MPI plugin's instances pair up across the
 *   ranks by the order of their init calls on the communicator given
 *   (gp_init_args.mpi_comm): init them in the same order on every rank (one
 *   thread at a time, or threads that each pass a communicator of their
 *   own); once made, each talks over its own duplicate, and two may be used
 *   from two threads at once (MPI_THREAD_MULTIPLE). Its init and set_param
 *   refuse, on every rank, values that differ between the ranks.
 *
 * Errors
 *   Every function that can fail returns a gp_status. On failure the
 *   instance is left as it was before the call (no partial update), and
 *   last_error(s) returns a sentence saying what was wrong and what to do.
 *   A plugin never aborts, exits, or prints to stdout; diagnostics go
 *   through the host's gp_log_fn if one was given.
 *
 * Determinism
 *   The same inputs and parameters on the same plugin give bit-identical
 *   outputs, run after run, whatever the number of threads or GPU blocks:
 *   every sum has a fixed order (no floating-point atomics in accumulation).
 *
 * Units
 *   The ABI is unit-free: positions, masses and G are in whatever consistent
 *   units the host uses (N-body units, G = 1, by default).
 */
#ifndef GRAVPLUG_H
#define GRAVPLUG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GRAVPLUG_ABI_MAJOR 1
#define GRAVPLUG_ABI_MINOR 3

/* The name of the one exported symbol, for dlsym. */
#define GRAVPLUG_ENTRY_SYMBOL "gravplug_entry"

/* Plugins mark gravplug_entry with this; everything else is hidden. */
#if defined(_WIN32)
#  define GRAVPLUG_EXPORT __declspec(dllexport)
#elif defined(__GNUC__)
#  define GRAVPLUG_EXPORT __attribute__((visibility("default")))
#else
#  define GRAVPLUG_EXPORT
#endif

/* ------------------------------------------------------------------------ */
/* Status codes. GP_OK is 0; every other value is a failure.                */
/* ------------------------------------------------------------------------ */
typedef enum gp_status {
    GP_OK                    = 0,
    GP_ERR_INVALID_ARGUMENT  = 1, /* NULL array, n = 0, NaN/Inf, negative mass,
                                     bad index, unparsable parameter value   */
    GP_ERR_BAD_STATE         = 2, /* call out of order (compute before
                                     set_particles, ...)                    */
    GP_ERR_OUT_OF_MEMORY     = 3, /* host or device memory does not fit n    */
    GP_ERR_DEVICE            = 4, /* no usable GPU, or a CUDA error          */
    GP_ERR_UNSUPPORTED       = 5, /* the plugin lacks this capability        */
    GP_ERR_UNKNOWN_PARAMETER = 6, /* set_param/get_param/init: no such name  */
    GP_ERR_ABI_MISMATCH      = 7, /* struct_size too small for the first
                                     published layout                       */
    GP_ERR_INTERNAL          = 8  /* a bug in the plugin: please report it   */
} gp_status;

/* ------------------------------------------------------------------------ */
/* Capability bits of gp_api.capabilities, bit 0 first.                     */
/* ------------------------------------------------------------------------ */
#define GP_CAP_GPU           (UINT64_C(1) << 0) /* runs on a GPU             */
#define GP_CAP_TREE          (UINT64_C(1) << 1) /* approximate (tree) forces */
#define GP_CAP_EXACT         (UINT64_C(1) << 2) /* direct summation          */
#define GP_CAP_ACTIVE_SUBSET (UINT64_C(1) << 3) /* cost follows the active
                                                   count, not n              */
#define GP_CAP_FIELD         (UINT64_C(1) << 4) /* compute_field works       */
#define GP_CAP_POTENTIAL     (UINT64_C(1) << 5) /* pot outputs are filled    */
#define GP_CAP_REFIT         (UINT64_C(1) << 6) /* update_positions is
                                                   cheaper than
                                                   set_particles             */
/* ABI 1.1. A plugin without one of these bits still implements the call,
 * correctly, only without the cost guarantee. */
#define GP_CAP_PREDICT       (UINT64_C(1) << 7) /* predict costs no host
                                                   transfer: the state lives
                                                   with the force engine     */
#define GP_CAP_SOURCE_SUBSET (UINT64_C(1) << 8) /* cost follows the source
                                                   count, not n              */
#define GP_CAP_MPI           (UINT64_C(1) << 9) /* calls are collective over
                                                   the communicator; each
                                                   process passes its own
                                                   particles                 */
/* ABI 1.2. Without a bit a call may still succeed, only slowly, or answer
 * GP_ERR_UNSUPPORTED with a sentence (a tree plugin without jerk). */
#define GP_CAP_JERK          (UINT64_C(1) << 10) /* jerk outputs and third-
                                                    order prediction         */
#define GP_CAP_NEIGHBOURS    (UINT64_C(1) << 11) /* nn, neighbour lists and
                                                    pair_step at a cost of
                                                    the force call's order  */
#define GP_CAP_SOURCE_GROUPS (UINT64_C(1) << 12) /* ABI 1.3: a call with
                                                   source groups costs of
                                                   the order of one without */

/* ------------------------------------------------------------------------ */
/* Parameters, logging, init arguments, statistics.                         */
/* ------------------------------------------------------------------------ */

/* A name = value pair, both as strings (values as set_param parses them). */
typedef struct gp_param {
    const char *name;
    const char *value;
} gp_param;

/* Log callback. Called only from inside a call on the instance, on the
 * calling thread; message is valid during the callback only. */
typedef void (*gp_log_fn)(void *user, int level, const char *message);
enum {
    GP_LOG_ERROR   = 0,
    GP_LOG_WARNING = 1,
    GP_LOG_INFO    = 2,
    GP_LOG_DEBUG   = 3
};

/* Arguments to init. The caller sets struct_size = sizeof(gp_init_args) as
 * it compiled it; a plugin rejects a size smaller than this first published
 * layout with GP_ERR_ABI_MISMATCH. init(&s, NULL) means all defaults. */
typedef struct gp_init_args {
    size_t struct_size;       /* sizeof(gp_init_args) as the caller compiled it */
    const gp_param *params;   /* may be NULL when n_params == 0; applied in
                                 order, as set_param would                   */
    size_t n_params;
    gp_log_fn log;            /* may be NULL: the plugin stays silent         */
    void *log_user;           /* passed back to log unchanged                 */
    int device;               /* GPU ordinal; -1: the plugin's default.
                                 CPU plugins ignore it.                       */
    /* ABI 1.1 (read only when struct_size covers it): */
    const void *mpi_comm;     /* address of an MPI_Comm of the host's MPI
                                 library; NULL: an MPI plugin uses
                                 MPI_COMM_WORLD. The host initialises MPI.
                                 Plugins without GP_CAP_MPI ignore it.      */
} gp_init_args;

typedef enum gp_param_type {
    GP_PARAM_DOUBLE = 0,
    GP_PARAM_INT    = 1,
    GP_PARAM_BOOL   = 2,      /* "true"/"false" (also "1"/"0", "yes"/"no")    */
    GP_PARAM_ENUM   = 3       /* one of the '|'-separated words in allowed    */
} gp_param_type;

/* One parameter, as describe_params lists it. All strings are static. */
typedef struct gp_param_info {
    const char *name;
    gp_param_type type;
    const char *default_value; /* as a string, parseable by set_param         */
    const char *allowed;       /* enums: "bh|bmax|multipole|acceleration";
                                  ranges: "[0,inf)"; otherwise NULL           */
    const char *doc;           /* one line                                    */
} gp_param_info;

/* Cumulative counters since init. The caller sets struct_size before
 * get_stats; the plugin fills only the members that fit in it. */
typedef struct gp_stats {
    size_t   struct_size;      /* set by the caller                          */
    uint64_t force_calls;      /* compute_forces calls that succeeded        */
    uint64_t field_calls;      /* compute_field calls that succeeded         */
    uint64_t tree_builds;      /* full tree (re)builds                        */
    uint64_t tree_refits;      /* moment refits on an old topology            */
    uint64_t pp_interactions;  /* particle-particle interactions evaluated    */
    uint64_t pc_interactions;  /* particle-cell interactions evaluated        */
    double   seconds_build;    /* wall seconds: keys, sort, tree topology     */
    double   seconds_moments;  /* wall seconds: multipole moments, refits     */
    double   seconds_walk;     /* wall seconds: walks and interactions        */
    double   seconds_transfer; /* wall seconds: host<->device copies          */
} gp_stats;

/* ABI 1.2: the outputs of compute_forces_ex. The caller sets struct_size
 * to sizeof(gp_outputs) (a smaller one: GP_ERR_ABI_MISMATCH); every
 * pointer may be NULL except acc, and each is filled in the order of the
 * active index list. With r = x_j - x_i, v = v_j - v_i at the predicted
 * time (velocities as get_velocities answers them) and r2 = |r|^2 + eps^2:
 *   jerk       G sum_j m_j [v / r2^(3/2) - 3 (r.v) r / r2^(5/2)], self
 *              excluded, over the same sources as acc (GP_CAP_JERK);
 *   nn_index   the nearest source other than the particle itself (ties:
 *              the lower index), UINT32_MAX if none; nn_dist2 its squared
 *              unsoftened distance |r|^2, +infinity if none;
 *   pair_step  min over sources j of tau_ij, Huayno's timestep_ij
 *              (Pelupessy et al. 2012) with eta = 1 and its forward time
 *              direction (dir = +1), masses times G, symmetric in i and j
 *              (plugin/base/pair_step.h); +infinity if no source; a tree
 *              plugin is exact for sources summed one by one and a lower
 *              bound for accepted cells, so never above the exact minimum;
 *   nb_radius  (input) n_active radii >= 0: list the sources strictly
 *              inside each, |r|^2 < nb_radius[k]^2 (unsoftened);
 *   nb_step    (input) >= 0; > 0: list the sources with tau_ij < nb_step.
 *              With both, a source is listed when either says so (the
 *              union); the lists are read with get_neighbours.
 * The sources are the massive particles (a massless test particle sources
 * none, so it is nobody's neighbour) of the current source subset, when
 * one is set, as for acc. Neighbours and nn are exact on every plugin.
 * ABI 1.3 appends (a plugin reads them only when struct_size covers them;
 * a host sets them only for a plugin whose abi_minor >= 3):
 *   pair_step_even  min over sources j of min(tau_ij(r, v), tau_ij(r, -v)):
 *              the 1.2 step made even in the relative velocity, the
 *              time-symmetric split's criterion in one call;
 *   nb_step_even (input) >= 0; > 0: list the sources whose even step is
 *              below it (a union with nb_radius and nb_step). */
typedef struct gp_outputs {
    size_t    struct_size;   /* set by the caller: sizeof(gp_outputs)      */
    double   *acc;           /* 3*n_active, required                        */
    double   *pot;           /* n_active                                    */
    double   *jerk;          /* 3*n_active: needs GP_CAP_JERK               */
    uint32_t *nn_index;      /* n_active                                    */
    double   *nn_dist2;      /* n_active                                    */
    double   *pair_step;     /* n_active                                    */
    const double *nb_radius; /* n_active radii (input)                      */
    double    nb_step;       /* > 0 (input)                                 */
    /* ABI 1.3 */
    double   *pair_step_even; /* n_active                                   */
    double    nb_step_even;   /* > 0 (input)                                */
} gp_outputs;

/* ------------------------------------------------------------------------ */
/* The function table.                                                       */
/* ------------------------------------------------------------------------ */
typedef struct gp_solver gp_solver; /* opaque instance */

typedef struct gp_api {
    uint32_t abi_major, abi_minor; /* what the plugin implements             */
    size_t   struct_size;          /* sizeof(gp_api) of the plugin: a host
                                      compiled against a newer minor checks
                                      it before touching a newer member     */
    const char *name;              /* "cpu-direct", "cpu-tree", "cuda-tree"  */
    const char *version;           /* plugin version string                  */
    uint64_t capabilities;         /* GP_CAP_* bits                           */

    /* The parameters this plugin accepts, as a static array; *count gets
     * its length. Needs no instance and works without a GPU. count may not
     * be NULL. */
    const gp_param_info *(*describe_params)(size_t *count);

    /* Creates an instance. args may be NULL (all defaults). On failure *out
     * is set to NULL and last_error(NULL) explains on the calling thread
     * until its next init. A GPU plugin on a machine without a usable GPU
     * fails here with GP_ERR_DEVICE. */
    gp_status (*init)(gp_solver **out, const gp_init_args *args);

    /* Frees the instance and everything it holds. NULL is a no-op. */
    void      (*finalize)(gp_solver *s);

    /* Sets one parameter by name from a string. Unknown name:
     * GP_ERR_UNKNOWN_PARAMETER; bad value: GP_ERR_INVALID_ARGUMENT; both
     * with a sentence naming what is accepted. May be called at any time;
     * takes effect at the next compute call. */
    gp_status (*set_param)(gp_solver *s, const char *name, const char *value);

    /* Writes the current value of a parameter as a string set_param
     * accepts, NUL-terminated, into buf (buflen bytes). Too small a buffer:
     * GP_ERR_INVALID_ARGUMENT. */
    gp_status (*get_param)(gp_solver *s, const char *name, char *buf, size_t buflen);

    /* Replaces the whole particle set: n particles, pos[3n] interleaved xyz,
     * mass[n] >= 0 (zero mass: a massless test particle that feels the
     * field and sources none). Resets the active subset to all particles.
     * n may differ from the previous call. The plugin copies the arrays. */
    gp_status (*set_particles)(gp_solver *s, size_t n, const double *pos, const double *mass);

    /* Moves the same n particles to new positions pos[3n] (masses
     * unchanged). The cheap path for block time steps: a plugin with
     * GP_CAP_REFIT refits its tree instead of rebuilding it. Requires a
     * previous set_particles: otherwise GP_ERR_BAD_STATE. */
    gp_status (*update_positions)(gp_solver *s, const double *pos);

    /* Selects the i-particles of the next compute_forces calls: index[k] is
     * a position in set_particles order, each < n and none repeated.
     * (0, NULL) means all particles. Sources are always all particles. The
     * subset stays in force until replaced or until set_particles. */
    gp_status (*set_active_subset)(gp_solver *s, size_t n_active, const uint32_t *index);

    /* Accelerations acc[3*n_active] and, when pot is not NULL, potentials
     * pot[n_active] of the active particles, in the order of the active
     * index list (particle order when all are active):
     *     a_i   =  G * sum_{j != i} m_j (x_j - x_i) / (r_ij^2 + eps^2)^(3/2)
     *     phi_i = -G * sum_{j != i} m_j / sqrt(r_ij^2 + eps^2)
     * The self term is excluded. */
    gp_status (*compute_forces)(gp_solver *s, double *acc, double *pot);

    /* The field of all particles at m arbitrary points (points[3m]):
     * acc[3m] and, when pot is not NULL, pot[m]. No term is excluded: a
     * point on top of a particle gets that particle's softened term (with
     * eps = 0 such a pair is skipped). Leaves the active subset alone. */
    gp_status (*compute_field)(gp_solver *s, size_t m, const double *points,
                               double *acc, double *pot);

    /* Copies the cumulative counters into *out, up to out->struct_size. */
    gp_status (*get_stats)(gp_solver *s, gp_stats *out);

    /* A sentence about the last failure on s (what was wrong and what to
     * do), or "" if none; valid until the next call on s. last_error(NULL)
     * reports the last failed init on the calling thread. Never NULL. */
    const char *(*last_error)(const gp_solver *s);

    /* ---- ABI 1.1: appended members. A host checks GRAVPLUG_API_HAS
     * before calling one of these. ----------------------------------- */

    /* The kinematic state of a subset: index[k] < n, none repeated, or
     * (n, NULL) for all particles in order ((0, anything) is a no-op).
     * pos/vel/acc are 3*n_sub doubles and t n_sub doubles, packed in index
     * order: particle index[k] was at pos at time t[k], moving with vel and
     * acc. Its source position becomes pos until the next predict.
     * Requires set_particles (GP_ERR_BAD_STATE); every value finite. */
    gp_status (*set_state)(gp_solver *s, size_t n_sub, const uint32_t *index,
                           const double *pos, const double *vel,
                           const double *acc, const double *t);

    /* Moves every particle's source position to time t:
     *     dt = t - t_i;   x_i(t) = x_i + dt * v_i + (0.5 * dt * dt) * a_i
     * in double, evaluated left to right with no fused multiply-add, from
     * the last set_state (a particle never given a state since
     * set_particles or update_positions stays where it is, bit for bit).
     * Runs where the particles live (on the GPU for a GPU plugin, with no
     * host transfer); a tree plugin then refits or rebuilds by its rebuild
     * policy. t must be finite. A prediction whose position or velocity
     * overflows double is refused (GP_ERR_INVALID_ARGUMENT, naming the
     * quantity) and moves nothing. */
    gp_status (*predict)(gp_solver *s, double t);

    /* Copies the current source positions of a subset (same index rules;
     * (n, NULL): all) into pos[3*n_sub]: what the host corrector needs of
     * the active particles after predict, bit for bit what the forces
     * saw. */
    gp_status (*get_positions)(gp_solver *s, size_t n_sub, const uint32_t *index,
                               double *pos);

    /* The j-particles of the next compute_forces and compute_field calls:
     * only these sources are summed. (0, NULL): all (the default, restored
     * by set_particles). A source that is also active still skips itself.
     * Same index rules as set_active_subset. */
    gp_status (*set_source_subset)(gp_solver *s, size_t n_src, const uint32_t *index);

    /* New masses for a subset (same index rules as set_state), finite and
     * >= 0, positions kept: a tree plugin refits its moments instead of
     * rebuilding. */
    gp_status (*update_masses)(gp_solver *s, size_t n_sub, const uint32_t *index,
                               const double *mass);

    /* ---- ABI 1.2: appended members. A host checks GRAVPLUG_API_HAS
     * before calling one of these. ----------------------------------- */

    /* Like set_state, with the jerk (3*n_sub doubles): predict then uses
     * the third-order expressions for these particles,
     *     x(t) = x + dt*v + (0.5*dt*dt)*a + ((dt*dt*dt)/6)*j,
     *     v(t) = v + dt*a + (0.5*dt*dt)*j,
     * left to right in double with no fused multiply-add. set_state (1.1)
     * gives a particle zero jerk, and predict's 1.1 expression for it is
     * unchanged bit for bit (its velocity: v + dt*a). */
    gp_status (*set_state_jerk)(gp_solver *s, size_t n_sub, const uint32_t *index,
                                const double *pos, const double *vel,
                                const double *acc, const double *jerk,
                                const double *t);

    /* The velocities of a subset (same index rules as get_positions) at
     * the positions' current time, bit for bit what the jerk computation
     * sees: a particle given a state since its last predict has its stated
     * vel; a predicted one v + dt*a (set_state) or
     * v + dt*a + (0.5*dt*dt)*j (set_state_jerk), evaluated as predict's
     * positions are; a particle without a state (none given since
     * set_particles or update_positions) does not move and has velocity 0. */
    gp_status (*get_velocities)(gp_solver *s, size_t n_sub, const uint32_t *index,
                                double *vel);

    /* compute_forces with more outputs (gp_outputs above): acc and pot
     * bit for bit what compute_forces gives. The 1.0 rejections apply
     * (acc NULL, no particles) and out NULL, a short struct_size or a bad
     * nb_radius/nb_step are refused before anything runs. set_particles
     * forgets the jerks and the lists; update_positions forgets the
     * state, jerks included. */
    gp_status (*compute_forces_ex)(gp_solver *s, const gp_outputs *out);

    /* The neighbour lists of the last successful compute_forces_ex, which
     * asked for them (nb_radius or nb_step), in CSR form: the neighbours
     * of its active particle k are list[offset[k] .. offset[k+1]), as
     * set_particles indices, ascending; offset has n_active + 1 entries
     * (that call's n_active). *needed (when needed is not NULL) gets the
     * total. If cap is smaller than the total, nothing but *needed is
     * written and GP_ERR_INVALID_ARGUMENT says so; offset NULL:
     * GP_ERR_INVALID_ARGUMENT. No lists (none asked for by the last
     * successful compute_forces_ex, or set_particles since):
     * GP_ERR_BAD_STATE. A compute_forces_ex that fails leaves the lists
     * as they were. */
    gp_status (*get_neighbours)(gp_solver *s, size_t cap, uint64_t *offset,
                                uint32_t *list, size_t *needed);

    /* ---- ABI 1.3: appended members. A host checks GRAVPLUG_API_HAS
     * before calling one of these. ----------------------------------- */

    /* Source groups: group[k] for each of the n particles of set_particles
     * (n must be that count), or group NULL (n ignored) to clear. While
     * set, a force call gives target i nothing from a source j with
     * group[j] == group[i]; UINT32_MAX is in no group and feels every
     * source. Every output (acc, pot, jerk, nn, pair steps, lists) ranges
     * over the sources so selected, intersected with the source subset
     * when one is set. A tree plugin opens every cell holding a source of
     * the target's group down to those sources. set_particles clears the
     * groups. GP_CAP_SOURCE_GROUPS: the cost is of the order of a call
     * without groups. */
    gp_status (*set_source_groups)(gp_solver *s, size_t n, const uint32_t *group);

    /* compute_forces_ex at n explicit points instead of the active
     * particles: positions pos[3n], velocities vel[3n] (may be NULL when
     * neither jerk nor a pair step nor nb_step lists are asked), and
     * exclude[n] (may be NULL: none), a set_particles index point k must
     * not feel (its own particle, as GRAPE-6's i-index), or UINT32_MAX.
     * Every gp_outputs member is filled as for the active particles, in
     * the order of the points (the lists have n + 1 offsets). The sources
     * are the held particles at the last predict time (or as last set),
     * under the source subset and the groups: a point feels the groups'
     * rule as the particle it excludes would (a point excluding none
     * feels every source). The held state is not changed. n = 0 is an
     * empty call (pos, vel and exclude may be NULL; out is still
     * checked), so that an MPI process without points takes part; the
     * refusals: out as compute_forces_ex's, pos NULL or not finite, vel
     * NULL or not finite while jerk, a pair step or nb_step(_even) asks
     * for it, exclude[k] >= n_particles and not UINT32_MAX. */
    gp_status (*compute_field_ex)(gp_solver *s, size_t n, const double *pos,
                                  const double *vel, const uint32_t *exclude,
                                  const gp_outputs *out);
} gp_api;

/* Whether a plugin's table has (and fills) an appended member: its
 * struct_size covers the member and the pointer is not NULL. E.g.
 *     if (GRAVPLUG_API_HAS(api, predict)) ... the 1.1 path ... */
#define GRAVPLUG_API_HAS(api, member)                                         \
    ((api)->struct_size >= offsetof(gp_api, member) + sizeof((api)->member) && \
     (api)->member != NULL)

/* The one symbol every plugin exports. */
typedef const gp_api *(*gravplug_entry_fn)(uint32_t abi_major);
GRAVPLUG_EXPORT const gp_api *gravplug_entry(uint32_t abi_major);

#ifdef __cplusplus
}
#endif

#endif /* GRAVPLUG_H */
