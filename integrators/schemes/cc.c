/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cc.c — CC, the connected-components split of Pelupessy, Jänes &
 * Portegies Zwart (2012, New Astronomy 17, 711; Huayno's CC_SPLIT), on a
 * plugin that gives pairwise time steps (ABI 1.2).
 *
 * One step of a set s over h: the graph on s with an edge wherever
 * eta * tau_ij < |h| (tau_ij: Huayno's pairwise step, from the plugin's
 * neighbour lists with nb_step = |h| / eta; force_pair.c) falls into
 * connected components; those of two or more particles, C_1 .. C_m, are
 * the fast systems, the singletons the rest R. With H_s = sum_i H_Ci +
 * (T_R + V_RR + V_RC + sum_i<j V_CiCj):
 *
 *     CC(s, h) = prod_i CC(C_i, h/2)  E(h)  prod_i CC(C_i, h/2)
 *
 * E(h) is one leapfrog step of the rest with every component held: "cc"
 * D_R(h/2) K(h) D_R(h/2), "cc-kdk" K(h/2) D_R(h) K(h/2), where a kick K
 * moves R with the force of all of s and each C_i with the force of
 * s minus C_i (the interactions between components are slow: no edge
 * joins them). Each component is a system of its own below: its graph,
 * its components, its rest. A set without components takes a leapfrog
 * step. Against HOLD (hold.c, one fast set F with all its internal
 * interactions on the deep steps), CC leaves the interactions between
 * separate fast groups on the slow step.
 *
 * Time steps as in hold's pairwise mode: the graph of a call is taken at
 * the middle of its step, predicted from its start, with the pairs that
 * either the velocities or their opposites list (gp_pair_midpoint), so a
 * backward step from the other end finds the same graph to O(h^2).
 *
 * Calls: a graph (three compute_forces_ex, active and sources s: the
 * acceleration for the midpoint velocities, the lists with +v and -v;
 * two on an ABI 1.3 plugin, whose lists by nb_step_even are their union) per
 * call of two or more particles; a kick is one plugin call for R (sources s)
 * and one per component (sources s minus C_i): the ABI has one source set
 * per call, so m components cost m calls; with ABI 1.3 source groups at a
 * call's cost (GP_CAP_SOURCE_GROUPS: cpu-direct) one call, groups = the
 * components (the same forces, to rounding). On cpu-direct the pair work is
 * what the scheme needs; each call also sends every position
 * (update_positions), so a level with many components costs O(N) a call
 * on the host, and on a tree plugin a tree build per call.
 *
 * Two-body components (two_body): "split" (the default) splits them again
 * like any other; "kepler" moves each by its closed-form orbit over its
 * step (kepler.c), as Huayno's CC_KEPLER does: exact for H_C, so the
 * levels below it, their graphs and their kicks are not paid. The orbit is
 * the unsoftened one, so it is refused on a solver with eps > 0 (Huayno
 * applies it regardless); mu = G (m_1 + m_2), G from the solver
 * (GP_PARAM_GRAVITY), read once a top step. Huayno's CCC, which integrates each component about
 * its centre of mass, is not built: here a component's centre moves in the
 * same sums as its members.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/sim_core.h"
#include "core/stopping.h"
#include "gravplug_params.h"
#include "kepler.h"
#include "solver/force.h"
#include "solver/force_pair.h"
#include "split_step.h"
#include "timestep_criteria.h"

/* The block rows first, so GP_BLOCK_SET reads them. */
typedef struct cc_settings {
    gp_block_settings block;
    int two_body;       /* CC_TWO_BODY_* */
} cc_settings;
enum { CC_TWO_BODY_SPLIT, CC_TWO_BODY_KEPLER };
static const char *const two_body_names[] = { "split", "kepler", NULL };

static const gp_setting settings[] = {
    GP_BLOCK_SETTING_DT,
    GP_SETTING_POSITIVE(gp_block_settings, eta, "0.1",
                        "accuracy parameter: a pair with eta * tau_ij < h (tau_ij its free-fall and "
                        "fly-by time, from the plugin) is resolved below the step h"),
    GP_BLOCK_SETTING_MAX_LEVEL,
    { "two_body", GP_SETTING_CHOICE, "split",
      "a component of two particles: \"split\" again like any other, or \"kepler\": moved by its exact "
      "unsoftened orbit (Huayno's CC_KEPLER; needs the solver's eps = 0)",
      offsetof(cc_settings, two_body), 0, 0, 0, two_body_names, NULL, 0 },
};

static int kepler_pairs(const gp_sim *sim)
{
    return ((const cc_settings *)sim->settings)->two_body == CC_TWO_BODY_KEPLER;
}

static gp_status oom(gp_sim *sim) { return gp_split_oom(sim, "cc"); }

static gp_status need_pairs(gp_sim *sim)
{
    if (!sim->api || !sim->solver) return gp_sim_need_solver(sim);
    if (gp_pair_available(sim, 1)) return GP_OK;
    return gp_sim_fail(sim, GP_ERR_UNSUPPORTED,
                       "cc splits by the plugin's pairwise time steps and their neighbour lists (ABI 1.2 "
                       "compute_forces_ex and get_neighbours), which the %s solver does not offer%s; use "
                       "hold, or a plugin such as cpu-direct",
                       sim->solver_name, sim->reduce ? " to a solver shared by several processes" : "");
}

/* two_body = "kepler" solves the unsoftened two-body problem: refused
 * where the forces are softened. */
static gp_status need_unsoftened(gp_sim *sim)
{
    double eps = 0.0;
    if (!kepler_pairs(sim) || !gp_params_softening(sim->api, sim->solver, &eps) || eps == 0.0) return GP_OK;
    return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT,
                       "cc's two_body = \"kepler\" moves a two-body component along its unsoftened Kepler "
                       "orbit, but the %s solver softens the forces (eps = %g): set the solver's eps to 0, "
                       "or two_body = \"split\"", sim->solver_name, eps);
}

/* H_C of a two-body component s over h from t, in closed form: the centre
 * of mass drifts, the relative orbit takes a Kepler step. */
static gp_status kepler_pair(gp_sim *sim, gp_split_priv *p, const uint32_t *s, double t, double h, int depth)
{
    size_t i = s[0], j = s[1];
    double mi = sim->mass[i], mj = sim->mass[j], m = mi + mj;
    double *xi = sim->pos + 3 * i, *xj = sim->pos + 3 * j, *vi = sim->vel + 3 * i, *vj = sim->vel + 3 * j;
    if (m > 0.0) {
        double dx[3], dv[3], xc[3], vc[3];
        for (int c = 0; c < 3; ++c) {
            dx[c] = xi[c] - xj[c];
            dv[c] = vi[c] - vj[c];
            vc[c] = (mi * vi[c] + mj * vj[c]) / m;
            xc[c] = (mi * xi[c] + mj * xj[c]) / m + h * vc[c];
        }
        if (gp_kepler_step(p->gravity * m, dx, dv, h) != 0)
            return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT,
                               "cc: particles %zu and %zu have no Kepler orbit to follow over %g (they "
                               "coincide, or a value is not finite): use two_body = \"split\"", i, j, h);
        for (int c = 0; c < 3; ++c) {
            xi[c] = xc[c] + (mj / m) * dx[c];
            xj[c] = xc[c] - (mi / m) * dx[c];
            vi[c] = vc[c] + (mj / m) * dv[c];
            vj[c] = vc[c] - (mi / m) * dv[c];
        }
    } else {
        for (int c = 0; c < 3; ++c) {   /* two massless bodies: no orbit */
            xi[c] += h * vi[c];
            xj[c] += h * vj[c];
        }
    }
    p->ptime[i] = p->ptime[j] = t + h;
    gp_split_levels(sim, s, 2, depth);
    gp_stopping_after_drift(sim, s, 2);
    return GP_OK;
}

static gp_status start(gp_sim *sim)
{
    gp_status st = gp_split_make_priv(sim, "cc");
    if (st != GP_OK) return st;
    gp_split_anchor(sim, sim->time);
    return GP_OK;
}

static gp_status load(gp_sim *sim, const double *in)
{
    (void)in;
    return gp_split_make_priv(sim, "cc");
}

/* Union-find with path halving over places in s; the smaller place roots. */
typedef struct cc_graph {
    uint32_t *up;       /* ns: parent place */
    uint32_t *local;    /* n: particle -> place in s, UINT32_MAX outside */
} cc_graph;

static uint32_t root(uint32_t *up, uint32_t a)
{
    while (up[a] != a) {
        up[a] = up[up[a]];
        a = up[a];
    }
    return a;
}

static void join(void *ctx, size_t k, uint32_t particle)
{
    cc_graph *g = ctx;
    uint32_t j = g->local[particle];
    if (j == UINT32_MAX) return;   /* not in s (the sources are s: never) */
    uint32_t a = root(g->up, (uint32_t)k), b = root(g->up, j);
    if (a != b) g->up[a < b ? b : a] = a < b ? a : b;
}

gp_status gp_cc_components(gp_sim *sim, const uint32_t *s, size_t ns, double h, uint32_t *order,
                           size_t *bounds, size_t *ncomp)
{
    *ncomp = 0;
    bounds[0] = 0;
    if (ns < 2) {
        memcpy(order, s, ns * sizeof *order);
        return GP_OK;
    }
    cc_graph g = { malloc(ns * sizeof *g.up), malloc(sim->n * sizeof *g.local) };
    uint32_t *size = calloc(ns, sizeof *size);
    size_t *first = malloc(ns * sizeof *first);
    gp_status st = GP_OK;
    if (!g.up || !g.local || !size || !first) { st = oom(sim); goto out; }
    for (size_t i = 0; i < sim->n; ++i) g.local[i] = UINT32_MAX;
    for (size_t k = 0; k < ns; ++k) g.local[s[k]] = (uint32_t)k, g.up[k] = (uint32_t)k;
    /* an edge where eta * tau_ij < |h|: the plugin lists tau_ij < |h| / eta */
    st = gp_pair_midpoint(sim, s, ns, h, fabs(h) / GP_BLOCK_SET(sim)->eta, NULL, join, &g);
    if (st != GP_OK) goto out;
    /* each root is its component's first member in s order */
    for (size_t k = 0; k < ns; ++k) size[root(g.up, (uint32_t)k)]++;
    size_t at = 0;
    for (size_t k = 0; k < ns; ++k)
        if (g.up[k] == k && size[k] > 1) {
            first[k] = at;
            bounds[(*ncomp)++] = at;
            at += size[k];
        }
    bounds[*ncomp] = at;
    size_t rest = at;
    for (size_t k = 0; k < ns; ++k) {
        uint32_t r = root(g.up, (uint32_t)k);
        if (size[r] > 1) order[first[r]++] = s[k];
        else order[rest++] = s[k];
    }
out:
    free(g.up); free(g.local); free(size); free(first);
    return st;
}

/* The slow kick over dt of a set s split into components order[bounds[i]
 * .. bounds[i+1]) and the rest order[bounds[m] .. ns): the rest from all
 * of s, each component from s minus itself. All forces at the current
 * positions (kicks change velocities only, so their order is free). */
static gp_status kick_split(gp_sim *sim, gp_split_priv *p, const uint32_t *s, size_t ns,
                            const uint32_t *order, const size_t *bounds, size_t m, double dt)
{
    size_t nr = ns - bounds[m];
    double *acc = malloc(3 * ns * sizeof *acc);
    uint32_t *others = malloc(ns * sizeof *others);
    gp_status st = GP_OK;
    if (!acc || !others) { st = oom(sim); goto out; }
    if (m > 0 && gp_force_has_groups(sim)) {
        /* ABI 1.3: the rest and every component in one call, a component's
         * members grouped so that they feel s minus itself */
        uint32_t *group = malloc(sim->n * sizeof *group);
        if (!group) { st = oom(sim); goto out; }
        for (size_t i = 0; i < sim->n; ++i) group[i] = UINT32_MAX;
        for (size_t i = 0; i < m; ++i)
            for (size_t k = bounds[i]; k < bounds[i + 1]; ++k) group[order[k]] = (uint32_t)i;
        st = gp_force_grouped(sim, sim->pos, ns, order, ns, s, group, acc);
        free(group);
        if (st == GP_OK) gp_split_kick(sim, order, ns, acc, dt);
        goto out;
    }
    if (nr) {
        st = gp_force_from_sources(sim, sim->pos, nr, order + bounds[m], ns, s, p->mask, acc);
        if (st != GP_OK) goto out;
        gp_split_kick(sim, order + bounds[m], nr, acc, dt);
    }
    for (size_t i = 0; i < m; ++i) {
        const uint32_t *c = order + bounds[i];
        size_t nc = bounds[i + 1] - bounds[i], no = 0;
        /* s minus C_i: order without its slice */
        for (size_t k = 0; k < ns; ++k)
            if (k < bounds[i] || k >= bounds[i + 1]) others[no++] = order[k];
        st = gp_force_from_sources(sim, sim->pos, nc, c, no, others, p->mask, acc);
        if (st != GP_OK) goto out;
        gp_split_kick(sim, c, nc, acc, dt);
    }
out:
    free(acc);
    free(others);
    return st;
}

/* CC(s, h) from time t (every particle of s there). */
static gp_status cc(gp_sim *sim, gp_split_priv *p, const uint32_t *s, size_t ns, double t, double h,
                    int depth, int kdk)
{
    if (ns == 0) return GP_OK;
    if (ns == 2 && kepler_pairs(sim)) return kepler_pair(sim, p, s, t, h, depth);
    uint32_t *order = malloc(ns * sizeof *order);
    size_t *bounds = malloc((ns / 2 + 1) * sizeof *bounds), m = 0;
    double *acc = malloc(3 * ns * sizeof *acc);
    gp_status st = GP_OK;
    if (!order || !bounds || !acc) { st = oom(sim); goto out; }
    if (depth < GP_BLOCK_SET(sim)->max_level) st = gp_cc_components(sim, s, ns, h, order, bounds, &m);
    else {
        memcpy(order, s, ns * sizeof *order);
        bounds[0] = 0;
    }
    if (st != GP_OK) goto out;
    gp_split_levels(sim, order + bounds[m], ns - bounds[m], depth);
    if (m == 0) {                      /* a leapfrog step of s */
        if (kdk) {
            st = gp_force_from_sources(sim, sim->pos, ns, s, ns, s, p->mask, acc);
            if (st != GP_OK) goto out;
            gp_split_kick(sim, s, ns, acc, 0.5 * h);
            gp_split_drift(sim, s, ns, h, t + h);
            st = gp_force_from_sources(sim, sim->pos, ns, s, ns, s, p->mask, acc);
            if (st == GP_OK) gp_split_kick(sim, s, ns, acc, 0.5 * h);
        } else {
            gp_split_drift(sim, s, ns, 0.5 * h, t + 0.5 * h);
            st = gp_force_from_sources(sim, sim->pos, ns, s, ns, s, p->mask, acc);
            if (st != GP_OK) goto out;
            gp_split_kick(sim, s, ns, acc, h);
            gp_split_drift(sim, s, ns, 0.5 * h, t + h);
        }
        goto out;
    }
    const uint32_t *rest = order + bounds[m];
    size_t nr = ns - bounds[m];
    for (size_t i = 0; i < m && st == GP_OK; ++i)
        st = cc(sim, p, order + bounds[i], bounds[i + 1] - bounds[i], t, 0.5 * h, depth + 1, kdk);
    if (st != GP_OK) goto out;
    if (kdk) {
        st = kick_split(sim, p, s, ns, order, bounds, m, 0.5 * h);
        if (st != GP_OK) goto out;
        gp_split_drift(sim, rest, nr, h, t + h);
        st = kick_split(sim, p, s, ns, order, bounds, m, 0.5 * h);
    } else {
        gp_split_drift(sim, rest, nr, 0.5 * h, t + 0.5 * h);
        st = kick_split(sim, p, s, ns, order, bounds, m, h);
        gp_split_drift(sim, rest, nr, 0.5 * h, t + h);
    }
    for (size_t i = 0; i < m && st == GP_OK; ++i)
        st = cc(sim, p, order + bounds[i], bounds[i + 1] - bounds[i], t + 0.5 * h, 0.5 * h, depth + 1, kdk);
out:
    free(order);
    free(bounds);
    free(acc);
    return st;
}

static gp_status step_either(gp_sim *sim, double t_end, int kdk)
{
    gp_split_priv *p = sim->priv;
    gp_status st = need_pairs(sim);
    if (st == GP_OK) st = need_unsoftened(sim);
    if (st != GP_OK) return st;
    if (kepler_pairs(sim)) gp_params_gravity(sim->api, sim->solver, &p->gravity);
    int partial;
    double h = gp_split_top_step(sim, t_end, &partial), t = sim->time;
    for (size_t i = 0; i < sim->n; ++i) p->ptime[i] = t;
    st = cc(sim, p, p->all, sim->n, t, h, 0, kdk);
    if (st != GP_OK) return st;        /* mid-step: the run is over */
    return gp_split_top_step_done(sim, t_end, partial, "cc");
}

static gp_status step_dkd(gp_sim *sim, double t_end) { return step_either(sim, t_end, 0); }
static gp_status step_kdk(gp_sim *sim, double t_end) { return step_either(sim, t_end, 1); }

const gp_integrator_def gp_scheme_cc = {
    .name = "cc",
    /* not GP_SCHEME_MPI: its step graphs are built from each rank's own lists */
    .flags = GP_SCHEME_BLOCK_STEPS | GP_SCHEME_TOP_STEPS,
    .summary = "CC (Pelupessy et al. 2012, Huayno's CC_SPLIT): connected components of the pairwise time-step graph, each integrated on its own below dt; drift-kick-drift slow steps; needs ABI 1.2 pair steps",
    GP_SETTINGS_TABLE(settings, cc_settings),
    .start = start, .step = step_dkd, .stop = gp_split_stop, .load = load,
};

const gp_integrator_def gp_scheme_cc_kdk = {
    .name = "cc-kdk",
    .flags = GP_SCHEME_BLOCK_STEPS | GP_SCHEME_TOP_STEPS,
    .summary = "CC with kick-drift-kick slow steps (Huayno's CC_KDK)",
    GP_SETTINGS_TABLE(settings, cc_settings),
    .start = start, .step = step_kdk, .stop = gp_split_stop, .load = load,
};
