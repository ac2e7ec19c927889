/* SPDX-License-Identifier: Apache-2.0 */
/*
 * predict_lazy.h — predict owed rather than done: a CPU plugin whose force
 * pass predicts the sources it reads (cpu-tree's drifted tree) answers
 * predict in O(1) and moves base->p.pos only when a call that reads every
 * position needs it (gp_lazy_settle).
 *
 * What stays exact: the ABI's predict (gravplug.h) moves every stated
 * particle to t with gravplug_predict.h's expressions and refuses a
 * prediction that overflows. A deferred predict evaluates the same
 * expressions wherever a position is read (gp_state_position_at), so every
 * value is the bits an eager predict would have stored; and it is deferred
 * only when bounds kept over every state given since set_particles prove
 * that no position or velocity at t can overflow, so it would not have
 * been refused. Otherwise predict runs at once, with its sentence.
 *
 * A state given after the owed predict (set_state, set_state_jerk) holds
 * its own position until the next predict, as the ABI says: those
 * particles are listed, and settling puts them back after predicting.
 */
#ifndef GP_BASE_PREDICT_LAZY_H
#define GP_BASE_PREDICT_LAZY_H

#include <stddef.h>
#include <stdint.h>

#include "gravplug.h"
#include "base/base_instance.h"

typedef struct gp_lazy_predict {
    int pending;                /* a predict to t is owed to base->p.pos      */
    int have_t;                 /* t is the last predict's time (set_particles
                                   and update_positions forget it)            */
    double t;
    /* over every state given since set_particles: largest |x|, |v|, |a|,
     * |j| and the range of the states' times */
    double xmax, vmax, amax, jmax, tmin, tmax;
    int have_bounds;
    size_t nfresh;              /* states given since the last predict       */
    uint32_t *fresh;            /* their particles, listed while one is owed */
    size_t cap;
} gp_lazy_predict;

/* Forgets everything (set_particles, update_positions: positions given anew). */
void gp_lazy_reset(gp_lazy_predict *z);
void gp_lazy_free(gp_lazy_predict *z);

/* Before set_state / set_state_jerk of n_sub particles: room to list
 * them while a predict is owed, else that predict is paid first (so
 * nothing is lost; only its status can fail). */
gp_status gp_lazy_reserve(gp_lazy_predict *z, gp_base *base, size_t n_sub);
/* After a successful set_state / set_state_jerk of the same arguments
 * (jerk NULL for set_state): widens the bounds and lists the particles. */
void gp_lazy_note_state(gp_lazy_predict *z, size_t n_sub, const uint32_t *index,
                        const double *pos, const double *vel, const double *acc,
                        const double *jerk, const double *t);

/* Whether predicting every state given since set_particles to t provably
 * stays finite (so a deferred predict, which reports nothing, would not
 * have been refused). cuda-tree keeps these bounds for its device state. */
int gp_lazy_safe_to_defer(const gp_lazy_predict *z, double t);

/* predict(t): owed when allowed and provably safe, else done now
 * (gp_state_predict, its checks and sentences). */
gp_status gp_lazy_predict_to(gp_lazy_predict *z, gp_base *base, double t, int allow);

/* After an eager predict to t that the caller made itself (gp_state_predict,
 * where it must be undoable, as over MPI ranks): nothing owed, every
 * stated particle at its prediction to t. */
void gp_lazy_predicted(gp_lazy_predict *z, double t);

/* Pays what is owed: base->p.pos and the state's marks become exactly
 * what the eager calls would have left. */
gp_status gp_lazy_settle(gp_lazy_predict *z, gp_base *base);

/* Whether every stated particle's source position is its prediction to
 * z->t (a predict, owed or done, and no state given since): what a pass
 * that predicts its own sources relies on. */
static inline int gp_lazy_all_predicted(const gp_lazy_predict *z)
{
    return z->have_t && z->nfresh == 0;
}

/* get_positions under an owed predict: the predictions evaluated for the
 * subset alone (index rules as get_positions); settles first when states
 * were given since. */
gp_status gp_lazy_positions(gp_lazy_predict *z, gp_base *base, size_t n_sub,
                            const uint32_t *index, double *pos);

#endif /* GP_BASE_PREDICT_LAZY_H */
