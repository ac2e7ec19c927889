/* SPDX-License-Identifier: Apache-2.0 */
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

#include "core/settings.h"
#include "core/timestep_levels.h"

enum { GP_CRIT_SOFTENING = 0, GP_CRIT_JERK = 1, GP_CRIT_MIN = 2, GP_CRIT_VELOCITY = 3 };
/* hold's further choices (hold.c): eta times the plugin's pairwise step
 * (ABI 1.2 pair_step), and "auto", pair where the plugin offers it
 * (GP_CAP_NEIGHBOURS) and softening elsewhere. Not per-particle, so the
 * block schemes do not list them. */
enum { GP_CRIT_PAIR = 4, GP_CRIT_AUTO = 5 };
/* Their names, as the parameter criterion takes them (NULL-terminated). */
extern const char *const gp_criterion_names[];

/* The settings every block-step scheme (block-rk2, block-kdk, hold,
 * hold-kdk) takes, and its table rows: GP_BLOCK_SETTINGS in the scheme's
 * own table. */
typedef struct gp_block_settings {
    double dt;          /* dt_max: level 0; level l steps dt_max / 2^l */
    double eta;         /* the criterion's accuracy */
    int criterion;      /* GP_CRIT_* */
    double eps;         /* the criterion's softening; < 0: the solver's */
    int max_level;      /* deepest level below dt_max */
    double shadow;      /* a particle whose level changed moves by shadow *
                         * (h_old^2 - h_new^2) a; 0: not (block-rk2, block-kdk) */
    double eta_jerk;    /* > 0: no step longer than eta_jerk |a| / |da/dt|
                         * either (gp_jerk_bound); 0: off (block-rk2, block-kdk) */
} gp_block_settings;

/* A block scheme's settings in its gp_sim. */
#define GP_BLOCK_SET(sim) ((const gp_block_settings *)(sim)->settings)

/* The rows one at a time (hold and cc take their own selection). */
#define GP_BLOCK_SETTING_DT                                                                        \
    GP_SETTING_POSITIVE(gp_block_settings, dt, "0.0625",                                          \
                        "dt_max: the largest step (level 0); levels below it are dt_max / 2^l")
#define GP_BLOCK_SETTING_ETA                                                                       \
    GP_SETTING_POSITIVE(gp_block_settings, eta, "0.2",                                            \
                        "accuracy parameter of the time-step criterion (smaller: smaller steps)")
#define GP_BLOCK_SETTING_EPS                                                                       \
    { "eps", GP_SETTING_DOUBLE, "solver",                                                          \
      "softening length used by the criterion; \"solver\": the solver's eps",                      \
      offsetof(gp_block_settings, eps), 0.0, 0.0, 0, NULL, "solver", -1.0 }
#define GP_BLOCK_SETTING_MAX_LEVEL                                                                 \
    { "max_level", GP_SETTING_INT, "20", "deepest level allowed (smallest step dt_max / 2^max_level)", \
      offsetof(gp_block_settings, max_level), 0, GP_LEVELS_MAX, 0, NULL, NULL, 0 }

#define GP_BLOCK_SETTINGS                                                                          \
    GP_BLOCK_SETTING_DT, GP_BLOCK_SETTING_ETA,                                                     \
    { "criterion", GP_SETTING_CHOICE, "softening",                                                 \
      "time-step criterion: softening eta*sqrt(eps/|a|), jerk, min, or velocity eta*|v|/|a|",      \
      offsetof(gp_block_settings, criterion), 0, 0, 0, gp_criterion_names, NULL, 0 },              \
    GP_BLOCK_SETTING_EPS, GP_BLOCK_SETTING_MAX_LEVEL

/* The row of the parameter shadow (block-rk2, block-kdk): 0, the default,
 * leaves a particle where it is when its level changes (also what a
 * checkpoint without the row stores); k > 0 moves it by k (h_old^2 -
 * h_new^2) a (gp_shadow_shift; 1/8 is leapfrog's shadow energy). */
#define GP_BLOCK_SHADOW_SETTING                                                                    \
    GP_SETTING_NONNEGATIVE(gp_block_settings, shadow, "0",                                        \
                           "level-switch shift k: a particle whose step changes from h_old to "  \
                           "h_new moves by k (h_old^2 - h_new^2) a; 0.125 keeps leapfrog's "      \
                           "shadow energy E - h^2|a|^2/8 continuous (no drift from switches); "   \
                           "0: off")

/* The row of the parameter eta_jerk (block-rk2, block-kdk): 0, the
 * default, leaves the criterion alone (also what a checkpoint without the
 * row stores); eta_jerk > 0 also bounds every step by gp_jerk_bound. */
#define GP_BLOCK_JERK_SETTING                                                                      \
    GP_SETTING_NONNEGATIVE(gp_block_settings, eta_jerk, "0",                                      \
                           "also no step longer than eta_jerk |a| / |da/dt|, da/dt from the "    \
                           "accelerations at both ends of the particle's last step (no extra "   \
                           "force call): catches a that changes fast where |a| is small; pays "  \
                           "on make run's model at 1, hurts small N (Plummer 4096, galaxy "      \
                           "8000: docs/INTEGRATORS.md); 0: off")

/* dt, or eta_jerk |a| / |da/dt| when that is shorter, da/dt = (a - a_old)
 * / dt_prev: a second, independent bound besides the criterion, with its
 * own eta. The criterion "min" takes the same bound with the criterion's
 * eta, about 5x too tight for softening's eta: thousands of near-empty
 * block steps and levels that flicker. With its own eta it shortens only
 * the steps of particles whose force turns over within a few steps
 * (docs/INTEGRATORS.md, "The jerk bound"). No bound without a_old or with
 * dt_prev <= 0 or eta_jerk <= 0. */
double gp_jerk_bound(double dt, double eta_jerk, const double *a, const double *a_old, double dt_prev);

/* The shadow-energy shift of a particle whose step changed from h_old to
 * h_new right after its correction (x, a synchronised there):
 *     x += k (h_old^2 - h_new^2) a,   k = 1/8 in theory:
 * leapfrog (and block-rk2 on one level) conserves E - h^2 |a|^2 / 8
 * between steps to O(h^4) (exactly for a harmonic potential); with k = 1/8
 * the move changes the particle's potential energy by -(h_old^2 - h_new^2)
 * |a|^2 / 8 to first order, so that conserved quantity, not the energy, is
 * continuous across the switch (docs/INTEGRATORS.md, "Level-switch shift";
 * measured best on the galaxy at N = 50000: k = 1/4 at eta 0.2). */
static inline void gp_shadow_shift(double *x, const double *a, double k, double h_old, double h_new)
{
    double s = (h_old * h_old - h_new * h_new) * k;
    for (int c = 0; c < 3; ++c) x[c] += s * a[c];
}

/* a: acceleration now; a_old: at the start of the last step (NULL: none);
 * dt_prev: that step's length; v: velocity now. Returns +inf when the
 * particle feels no force. */
double gp_criterion_dt(int criterion, double eta, double eps,
                       const double *a, const double *a_old, double dt_prev,
                       const double *v);

#endif
