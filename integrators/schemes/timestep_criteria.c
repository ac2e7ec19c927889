/* SPDX-License-Identifier: Apache-2.0 */
/* timestep_criteria.c — see the header. */
#include "timestep_criteria.h"

#include <math.h>


static double norm3(const double *x) { return sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]); }

static double softening_dt(double eta, double eps, const double *a, const double *v)
{
    double amag = norm3(a);
    if (amag == 0.0) return INFINITY;
    if (eps > 0.0) return eta * sqrt(eps / amag);
    double vmag = norm3(v);
    return vmag > 0.0 ? eta * vmag / amag : INFINITY;
}

/* eta |a| / |da/dt|, da/dt = (a - a_old) / dt_prev (the jerk and min
 * criteria, and the jerk bound); +inf when a did not change. */
static double jerk_dt(double eta, const double *a, const double *a_old, double dt_prev)
{
    double j[3] = { (a[0] - a_old[0]) / dt_prev, (a[1] - a_old[1]) / dt_prev,
                    (a[2] - a_old[2]) / dt_prev };
    double jmag = norm3(j), amag = norm3(a);
    return jmag > 0.0 ? eta * amag / jmag : INFINITY;
}

const char *const gp_criterion_names[] = { "softening", "jerk", "min", "velocity", NULL };

double gp_criterion_dt(int criterion, double eta, double eps,
                       const double *a, const double *a_old, double dt_prev,
                       const double *v)
{
    if (criterion == GP_CRIT_VELOCITY) {
        double amag = norm3(a), vmag = norm3(v);
        return amag > 0.0 && vmag > 0.0 ? eta * vmag / amag : amag > 0.0 ? softening_dt(eta, eps, a, v) : INFINITY;
    }
    double ds = softening_dt(eta, eps, a, v);
    if (criterion == GP_CRIT_SOFTENING || !a_old || !(dt_prev > 0.0)) return ds;
    double dj = jerk_dt(eta, a, a_old, dt_prev);
    if (criterion == GP_CRIT_JERK) return dj;
    return dj < ds ? dj : ds;
}

double gp_jerk_bound(double dt, double eta_jerk, const double *a, const double *a_old, double dt_prev)
{
    if (!(eta_jerk > 0.0) || !a_old || !(dt_prev > 0.0)) return dt;
    double dj = jerk_dt(eta_jerk, a, a_old, dt_prev);
    return dj < dt ? dj : dt;
}
