/*
 * timestep_criteria.h — per-particle time-step criteria for block schemes.
 *
 *   softening  dt = eta * sqrt(eps / |a|)           (GOTHIC, Gadget)
 *   jerk       dt = eta * |a| / |da/dt|             (Aarseth-like, 2nd order;
 *              da/dt estimated from the accelerations at both ends of the
 *              particle's last step, so it costs no extra force call)
 *   min        the smaller of the two
 *   velocity   dt = eta * |v| / |a|: for a circular orbit r/v, the orbital
 *              time over 2 pi, so it follows each particle's own dynamical
 *              time (a wider spread of levels than "softening"); a particle
 *              at rest falls back to "softening"
 * Without a jerk estimate yet (the first step) "jerk" falls back to the
 * softening criterion, or to eta * |v| / |a| when eps = 0.
 */
#ifndef GP_TIMESTEP_CRITERIA_H
#define GP_TIMESTEP_CRITERIA_H

/* a: acceleration now; a_old: at the start of the last step (NULL: none);
 * dt_prev: that step's length; v: velocity now. Returns +inf when the
 * particle feels no force. */
double gp_criterion_dt(int criterion, double eta, double eps,
                       const double *a, const double *a_old, double dt_prev,
                       const double *v);

#endif
