/* SPDX-License-Identifier: Apache-2.0 */
/*
 * state_dev.h — ABI 1.1 on the device, for both CUDA plugins: the
 * kinematic state (x0, v, a, t and a flag per particle) lives in device
 * memory; set_state scatters a packed subset into it, predict moves the
 * source positions there, get_positions gathers a subset. The kernels are
 * in state_dev.cuh, included by each plugin's .cu (each .so has its own
 * copy). Every launcher returns a cudaError_t as an int and runs on
 * `stream`; pointers are device pointers.
 *
 * flag[i]: 0 no state (predict leaves particle i alone), 1 pos == x0
 * (set_state since the last predict), 2 pos == the prediction to t_pred —
 * the same meaning as gp_particles.stated in plugin/base, so a failed
 * predict is undone exactly. third[i] (ABI 1.2): 1 when particle i was
 * given a jerk (set_state_jerk), so it is predicted to third order; jerk
 * may be NULL while no third[i] is 1.
 *
 * A predict may be owed rather than done (dev_state.h, gp_dstate_defer):
 * while predict to `t` of epoch E is owed, particle i's position is
 *     pos[i]                     flag 0 (no state: it does not move);
 *     x0 (= pos[i])              owed_at[i] == E (a state given since);
 *     its prediction to t        otherwise,
 * the bits the done predict would have stored, and settling stores them.
 */
#ifndef GP_STATE_DEV_H
#define GP_STATE_DEV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The held state of every particle, as the kernels read it. */
typedef struct gp_state_dev_ptrs {
    double *x0, *vel, *acc, *jerk, *t; /* jerk: NULL until a set_state_jerk */
    uint8_t *flag, *third;
    uint32_t *owed_at;                 /* NULL: no predict owed            */
    uint32_t epoch;                    /* the owed predict's epoch         */
} gp_state_dev_ptrs;

/* Particle index[k] (k if index is NULL) takes x0 = pos = in_pos[k], vel,
 * acc, t, flag 1 (owed_at = epoch while a predict is owed) and, with
 * in_jerk (NULL: set_state, zero jerk), its jerk and third = 1 (else
 * third = 0). in_* are packed in subset order (3
 * doubles each, t 1). */
int gp_state_dev_scatter(const uint32_t *index, uint32_t n_sub, const double *in_pos,
                         const double *in_vel, const double *in_acc, const double *in_jerk,
                         const double *in_t, gp_state_dev_ptrs s, double *pos, void *stream);

/* pos[i] of every flagged particle = x0 + dt*v + (0.5*dt*dt)*a, plus
 * ((dt*dt*dt)/6)*j when third[i], dt = tp - t[i], left to right with
 * IEEE double rounding and no fused multiply-add (__dmul_rn/__dadd_rn),
 * exactly gp_predict_coord / gp_predict_coord3 of gravplug_predict.h.
 * bad[0] (bad[0..1] zeroed by the launcher) becomes 1 if a position is
 * not finite, bad[1] if a velocity at tp (gp_state_dev_velocity's) is not. */
int gp_state_dev_predict(uint32_t n, double tp, gp_state_dev_ptrs s, double *pos, int *bad,
                         void *stream);

/* After a failed predict: flag 1 -> pos = x0, flag 2 -> pos = prediction to
 * t_prev. After a good one (undo == 0): flag 1 -> 2. */
int gp_state_dev_finish(uint32_t n, int undo, double t_prev, gp_state_dev_ptrs s, double *pos,
                        void *stream);

/* out[k] (3 doubles) = the velocity of particle index[k] (k if index is
 * NULL), k < n_sub, at the positions' time: 0 without state (flag 0), the
 * stated one (flag 1), else v + dt*a (+ (0.5*dt*dt)*j when third), dt =
 * t_pred - t — unfused, exactly plugin/base's gp_state_velocity. */
int gp_state_dev_velocity(const uint32_t *index, uint32_t n_sub, double t_pred, gp_state_dev_ptrs s,
                          double *out, void *stream);

/* While a predict to tp is owed (s.owed_at): pos[index[k]] (index NULL:
 * every particle, k < n_sub) made what the owed predict gives it (the rule
 * above), and with settle (index NULL) the flags too: 2 where predicted,
 * 1 where a state was given since. */
int gp_state_dev_owed(const uint32_t *index, uint32_t n_sub, double tp, int settle, gp_state_dev_ptrs s,
                      double *pos, void *stream);

/* out[k] = pos[index[k]] (3 doubles), k < n_sub. */
int gp_state_dev_gather(const double *pos, const uint32_t *index, uint32_t n_sub, double *out,
                        void *stream);

/* mass[index[k]] = in[k] (index NULL: k), k < n_sub. */
int gp_state_dev_masses(const uint32_t *index, uint32_t n_sub, const double *in, double *mass,
                        void *stream);

#ifdef __cplusplus
}
#endif

#endif /* GP_STATE_DEV_H */
