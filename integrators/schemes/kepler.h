/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kepler.h — the unsoftened two-body problem solved in closed form: the
 * relative orbit advanced by universal variables (Danby's f and g
 * functions, Stumpff's c2 and c3), for any eccentricity and either
 * direction of time. cc.c's two_body = "kepler" moves a two-body component
 * with it, as Huayno's CC_KEPLER does.
 */
#ifndef GP_KEPLER_H
#define GP_KEPLER_H

/* Advances the relative position dx and velocity dv (x_1 - x_2, v_1 - v_2)
 * of two bodies with G (m_1 + m_2) = mu over dt (either sign): 0, or -1
 * (dx, dv unchanged) when mu or dx is not positive and finite or the
 * universal anomaly does not converge. Time-reversible to rounding: a step
 * over -dt from the result returns the start. */
int gp_kepler_step(double mu, double dx[3], double dv[3], double dt);

#endif /* GP_KEPLER_H */
