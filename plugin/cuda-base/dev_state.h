/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dev_state.h — the host side of ABI 1.1 for both CUDA plugins: the
 * kinematic state lives on the device (state_dev.h kernels), so a block
 * step moves O(n_sub) bytes: set_state uploads only the subset (packed in
 * pinned memory, one copy, scattered by index on the device), predict is a
 * kernel (4 bytes come back: "did anything overflow?"), get_positions
 * gathers the subset on the device and downloads only it, update_masses
 * uploads only the subset. Validation is plugin/base's, with the same
 * sentences as the CPU plugins; every copy's seconds go to
 * stats.seconds_transfer.
 *
 * The plugin owns the device positions (double xyz, n triples) and masses;
 * this file owns x0, v, a, t and the flags.
 */
#ifndef GP_DEV_STATE_H
#define GP_DEV_STATE_H

#include "cuda-base/gp_cuda.h"
#include "cuda-base/state_dev.h"
#include "base/base_instance.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_dstate {
    gp_dbuf x0, vel, acc, t, flag;   /* n particles, allocated at the first set_state */
    gp_dbuf third, jerk;             /* ABI 1.2: third with the state, jerk at the
                                        first set_state_jerk                         */
    gp_dbuf in, bad;                 /* a packed subset; the predict overflow flags  */
    size_t n;                        /* particles the buffers hold                   */
    int any;                         /* some flag != 0 on the device                 */
    double t_pred;                   /* time of the last good predict                */
    const uint32_t *index_dev;       /* the last set_state's index list on the device
                                        (NULL: 0 .. n_sub - 1), until the next call here */
    /* a predict to t_pred owed (gp_dstate_defer), of epoch `epoch`, to the
     * positions owed_pos; owed_at: state_dev.h's rule */
    gp_dbuf owed_at;
    uint32_t epoch;
    int owed;
    double *owed_pos;
} gp_dstate;

/* The state's device arrays, as the kernels read them. */
gp_state_dev_ptrs gp_dstate_ptrs(const gp_dstate *ds);

/* set_particles / update_positions: every flag cleared (no transfer). */
gp_status gp_dstate_clear(gp_base *b, gp_cuda *c, gp_dstate *ds);
void gp_dstate_free(gp_dstate *ds);

/* set_state (jerk NULL) and set_state_jerk: validates (plugin/base's
 * checks and sentences; nothing changes on failure), then uploads the
 * subset and scatters it into the state and into pos_dev. host_copy 1:
 * the caller's host copy base->p.pos is current, and the subset's
 * positions are written there too; 0: it is already older than the
 * device's (after predict) and stays so, since writing a scattered subset
 * into it would be random writes across n positions for a copy that is
 * replaced whole when something needs it. */
gp_status gp_dstate_set(gp_base *b, gp_cuda *c, gp_dstate *ds, gp_hbuf *stage, double *pos_dev, int host_copy,
                        size_t n_sub, const uint32_t *index, const double *pos, const double *vel,
                        const double *acc, const double *jerk, const double *t);

/* ABI 1.2: every particle's velocity at the positions' time (n triples,
 * gp_state_velocity's values) into vel_dev, on the device. */
gp_status gp_dstate_velocities(gp_base *b, gp_cuda *c, gp_dstate *ds, double *vel_dev);

/* get_velocities: validates (get_positions' rules), computes the subset's
 * velocities on the device and downloads 3*n_sub doubles (no transfer
 * while no particle has a state: they are all 0). */
gp_status gp_dstate_get_velocities(gp_base *b, gp_cuda *c, gp_dstate *ds, gp_hbuf *stage,
                                   size_t n_sub, const uint32_t *index, double *vel);

/* predict: t finite, then the kernel over all n particles in pos_dev.
 * *moved = 1 when some particle was predicted (the plugin then refits). An
 * overflow is undone exactly and reported. */
gp_status gp_dstate_predict(gp_base *b, gp_cuda *c, gp_dstate *ds, double *pos_dev, double t,
                            int *moved);

/* predict owed rather than done: a plugin whose force pass reads only some
 * positions (cuda-tree's drifted tree) defers the kernel over every
 * particle. The caller has proved that predicting to t cannot overflow
 * (base/predict_lazy.h's bounds), since a deferred predict reports
 * nothing. The same checks as predict; the positions in pos_dev are then
 * what state_dev.h's rule says, and every call here answers as after the
 * done predict: get_positions and get_velocities evaluate the rule for
 * their subset, set_state marks its particles, predict and clear pay or
 * drop what is owed. */
gp_status gp_dstate_defer(gp_base *b, gp_cuda *c, gp_dstate *ds, double *pos_dev, double t);

/* Pays an owed predict: every position and flag as the done predict
 * leaves them (one kernel, no wait). Before anything reads every position. */
gp_status gp_dstate_settle(gp_base *b, gp_cuda *c, gp_dstate *ds);

/* Under an owed predict, the positions of particles index_dev[0 .. n_sub)
 * (a device list) made current (one kernel, no wait). */
gp_status gp_dstate_current(gp_base *b, gp_cuda *c, gp_dstate *ds, const uint32_t *index_dev, size_t n_sub);

/* get_positions from pos_dev: validates, gathers the subset on the device
 * and downloads 3*n_sub doubles. */
gp_status gp_dstate_get(gp_base *b, gp_cuda *c, gp_dstate *ds, gp_hbuf *stage, const double *pos_dev,
                        size_t n_sub, const uint32_t *index, double *pos);

/* update_masses: validates and updates base->p.mass (plugin/base), then
 * uploads the subset and scatters it into mass_dev. */
gp_status gp_dstate_masses(gp_base *b, gp_cuda *c, gp_dstate *ds, gp_hbuf *stage, double *mass_dev,
                           size_t n_sub, const uint32_t *index, const double *mass);

#ifdef __cplusplus
}
#endif

#endif /* GP_DEV_STATE_H */
