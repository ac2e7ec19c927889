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
 * predict is undone exactly.
 */
#ifndef GP_STATE_DEV_H
#define GP_STATE_DEV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Particle index[k] (k if index is NULL) takes x0 = pos = in_pos[k], vel,
 * acc, t and flag 1. in_* are packed in subset order (3 doubles each, t 1). */
int gp_state_dev_scatter(const uint32_t *index, uint32_t n_sub, const double *in_pos,
                         const double *in_vel, const double *in_acc, const double *in_t,
                         double *x0, double *pos, double *vel, double *acc, double *t,
                         uint8_t *flag, void *stream);

/* pos[i] of every flagged particle = x0 + dt*v + (0.5*dt*dt)*a, dt = tp -
 * t[i], with IEEE double rounding and no fused multiply-add
 * (__dmul_rn/__dadd_rn), exactly gp_predict_coord of plugin/base.
 * *bad (zeroed by the launcher) becomes 1 if any result is not finite. */
int gp_state_dev_predict(uint32_t n, double tp, const double *x0, const double *vel,
                         const double *acc, const double *t, const uint8_t *flag, double *pos,
                         int *bad, void *stream);

/* After a failed predict: flag 1 -> pos = x0, flag 2 -> pos = prediction to
 * t_prev. After a good one (undo == 0): flag 1 -> 2. */
int gp_state_dev_finish(uint32_t n, int undo, double t_prev, const double *x0, const double *vel,
                        const double *acc, const double *t, uint8_t *flag, double *pos, void *stream);

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
