/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hold.c — HOLD, the symplectic individual-time-step integrator of
 * Pelupessy, Jänes & Portegies Zwart (2012, New Astronomy 17, 711), from
 * a recursive splitting of the Hamiltonian, on any plugin.
 *
 * One step of a set s over h, with s split into slow S (criterion step
 * >= |h|) and fast F (the rest), H_s = H_F + (T_S + V_SS + V_SF):
 *
 *     HOLD(s, h) = HOLD(F, h/2)  E_S(h)  HOLD(F, h/2)
 *
 * E_S(h) is one leapfrog step of the slow set with the fast set held in
 * place: "hold" uses D_S(h/2) K(h) D_S(h/2), "hold-kdk" K(h/2) D_S(h)
 * K(h/2) (Huayno's HOLD_DKD and HOLD_KDK), where a kick K moves S with
 * the force of all of s and F with the force of S (V_SS + V_SF), and D_S
 * drifts S alone. The slow-fast interaction is thus integrated with the
 * slow step. A fast set of one particle joins the slow set (it has no
 * self-interaction to resolve). Every operator is a symplectic drift or
 * kick and the composition is symmetric, so the scheme is second order
 * and time-reversible when the split is.
 *
 * Each kick is one plugin call: active subset = the kicked set, source
 * subset = the set it feels (gp_force_from_sources, force.c).
 *
 * Time steps. The paper's criterion is pairwise, and that is the default
 * ("auto") where the plugin computes it (ABI 1.2 pair_step with
 * GP_CAP_NEIGHBOURS; force_pair.c): a particle's criterion step for a
 * fast set F is eta * min over j in F of tau_ij, Huayno's timestep_ij.
 * Evaluated as the per-particle criteria are (below), at the middle of
 * the step it decides, predicted from its start by Taylor series (with
 * the acceleration and jerk there), and made even in the velocities: the
 * plugin's approach-rate correction takes the forward direction with
 * eta = 1 (it extrapolates over the pair's own step, not over eta times
 * it), so it is asked with the velocities and with their opposites and
 * the smaller step kept (gp_pair_midpoint: three plugin calls; two with
 * an ABI 1.3 plugin, whose pair_step_even is that minimum). Taken at
 * the start, as Huayno does, the split was not reversible (the reversal
 * test came back to 0.16 instead of rounding).
 *
 * The per-particle criteria (softening eta*sqrt(eps/|a|), or velocity
 * eta*|v|/|a|), the fallback on plugins without pair steps, take the total
 * acceleration, symmetrised in time by evaluating it at the middle
 * of the step it decides: a call HOLD(s, h) that has a fast set F
 * evaluates, for F, the criterion at t + h/2 (every particle drifted
 * there from where it is held), and both halves HOLD(F, h/2) split with
 * those values. The two halves mirror each other under time reversal, and
 * a backward step predicts the same midpoint from the other end, to
 * O(h^2): the split is time-symmetric to that order, not exactly (a
 * particle whose criterion step lies within O(h^2) of a power of two may
 * be split differently going back). The top step evaluates it for every
 * particle at its own midpoint; the top call's split and its halves' use
 * those values (the same midpoint, the same positions: no second call).
 *
 * Cost, in force-particle evaluations per top step dt (cost model in
 * docs/INTEGRATORS.md): a particle slow at depth L (step dt/2^L) is
 * active in one kick per call at its own depth and at every depth above
 * (hold: about 2 * 2^L; hold-kdk two, 1.5 on average at its own depth
 * where the end kick of a call is reused by the next: about 3.5 * 2^L),
 * plus one criterion evaluation per call at each depth above: against
 * 2^L for a block leapfrog on the same levels.
 *
 * State between steps: every particle synchronised at sim->time; for
 * hold-kdk, sim->acc holds the top-level accelerations (from all sources)
 * when the last step ended with no fast set (a flag says so: the next
 * step's first kick reuses them; a checkpoint clears it).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/sim_core.h"
#include "solver/force.h"
#include "solver/force_pair.h"
#include "split_step.h"
#include "timestep_criteria.h"

/* hold's criterion choices: the block schemes' names (the same indices,
 * jerk and min refused at the start) and the pairwise ones. */
static const char *const criterion_names[] = { "softening", "jerk", "min", "velocity", "pair", "auto", NULL };

static const gp_setting settings[] = {
    GP_BLOCK_SETTING_DT, GP_BLOCK_SETTING_ETA,
    { "criterion", GP_SETTING_CHOICE, "auto",
      "time-step criterion: pair (eta times the plugin's pairwise step, ABI 1.2), softening "
      "eta*sqrt(eps/|a|), velocity eta*|v|/|a|, or auto (pair where the plugin computes it fast, "
      "else softening)",
      offsetof(gp_block_settings, criterion), 0, 0, 0, criterion_names, NULL, 0 },
    GP_BLOCK_SETTING_EPS, GP_BLOCK_SETTING_MAX_LEVEL,
};

typedef gp_split_priv hold_priv;

static gp_status oom(gp_sim *sim) { return gp_split_oom(sim, "hold"); }

/* st agreed over the processes sharing the solver (gp_sim_agree): hold's
 * scratch is allocated just before collective calls, and a process out of
 * memory alone must not leave the others waiting in them. */
static gp_status agreed(gp_sim *sim, gp_status st)
{
    return gp_sim_agree(sim, st, "hold: the step was not taken");
}

static gp_status make_priv(gp_sim *sim)
{
    int crit = GP_BLOCK_SET(sim)->criterion;
    if (crit == GP_CRIT_JERK || crit == GP_CRIT_MIN)
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT,
                           "hold evaluates its time-step criterion at the middle of each step, from the state "
                           "there, so it takes criterion pair, auto, softening or velocity; \"jerk\" and \"min\" "
                           "need the history of a particle's steps, which would break the time symmetry");
    gp_status st = gp_split_make_priv(sim, "hold");
    if (st != GP_OK) return st;
    gp_sim_criterion_eps(sim, GP_BLOCK_SET(sim)->eps, &((hold_priv *)sim->priv)->eps);
    return GP_OK;
}

/* Whether this step splits with pairwise steps: "pair" demands them,
 * "auto" takes them where the plugin computes them fast (decided at every
 * step: the solver may have been swapped). */
static gp_status choose_criterion(gp_sim *sim, hold_priv *p)
{
    int crit = GP_BLOCK_SET(sim)->criterion;
    p->pair = crit == GP_CRIT_PAIR || (crit == GP_CRIT_AUTO && gp_pair_fast(sim));
    if (crit == GP_CRIT_PAIR && !gp_pair_available(sim, 0))
        return gp_sim_fail(sim, GP_ERR_UNSUPPORTED,
                           "hold's criterion \"pair\" needs the plugin's pairwise steps (ABI 1.2 "
                           "compute_forces_ex), which the %s solver does not offer%s; use criterion "
                           "auto or softening, or a plugin such as cpu-direct",
                           sim->solver_name, sim->reduce ? " to a solver shared by several processes" : "");
    return GP_OK;
}

static gp_status start(gp_sim *sim)
{
    gp_status st = make_priv(sim);
    if (st != GP_OK) return st;
    gp_split_anchor(sim, sim->time);
    return GP_OK;
}

/* A checkpoint drops the cached top-level kick in both runs: a tree plugin
 * rebuilds at the resync point, and a diagnostic call in between would
 * otherwise let only the continuing run reuse forces of the old tree. */
static void save(const gp_sim *sim, double *out)
{
    hold_priv *p = sim->priv;
    if (p) p->acc_valid = 0;
    out[0] = 0.0;
}

static gp_status load(gp_sim *sim, const double *in)
{
    gp_status st = make_priv(sim);
    if (st != GP_OK) return st;
    ((hold_priv *)sim->priv)->acc_valid = in[0] != 0.0;
    return GP_OK;
}

/* Per-particle criterion steps tau[k] of the nf particles f[] at time tm,
 * from the total acceleration there: every particle drifted from its own
 * position time to tm (sim->work), one call with active f, all sources. */
static gp_status criterion_at(gp_sim *sim, hold_priv *p, const uint32_t *f, size_t nf,
                              double tm, double *tau)
{
    const uint64_t cpu0 = gp_sim_cpu_ns();
    double *acc = malloc(3 * (nf ? nf : 1) * sizeof *acc);   /* a process may hold none of f */
    gp_status st = agreed(sim, acc ? GP_OK : oom(sim));
    if (st != GP_OK) { free(acc); return st; }
    for (size_t i = 0; i < sim->n; ++i) {
        double d = tm - p->ptime[i];
        for (int c = 0; c < 3; ++c) sim->work[3 * i + c] = sim->pos[3 * i + c] + d * sim->vel[3 * i + c];
    }
    st = gp_force_active(sim, sim->work, nf, f, acc);
    if (st == GP_OK) {
        sim->criterion_forces += nf;
        sim->criterion_pairs += (uint64_t)nf * sim->n;
        sim->criterion_calls++;
    }
    if (st == GP_OK)
        for (size_t k = 0; k < nf; ++k)
            tau[k] = gp_criterion_dt(GP_BLOCK_SET(sim)->criterion, GP_BLOCK_SET(sim)->eta, p->eps, acc + 3 * k, NULL, 0.0,
                                     sim->vel + 3 * (size_t)f[k]);
    free(acc);
    sim->criterion_cpu_ns += gp_sim_cpu_ns() - cpu0;
    return st;
}

gp_status gp_hold_pair_steps(gp_sim *sim, const uint32_t *s, size_t ns, double h, double *tau)
{
    gp_status st = gp_pair_midpoint(sim, s, ns, h, 0.0, tau, NULL, NULL);
    if (st == GP_OK)
        for (size_t k = 0; k < ns; ++k) tau[k] *= GP_BLOCK_SET(sim)->eta;
    return st;
}

/* The criterion steps of the nf particles f[] for a step of length h
 * from t (every particle of f at t): pairwise among f, or per-particle
 * from the total acceleration, both at the step's midpoint. */
static gp_status criterion(gp_sim *sim, hold_priv *p, const uint32_t *f, size_t nf, double t, double h,
                           double *tau)
{
    if (p->pair) return gp_hold_pair_steps(sim, f, nf, h, tau);
    return criterion_at(sim, p, f, nf, t + 0.5 * h, tau);
}

/* Whether a call at this depth evaluates the criterion for its fast set.
 * Depth 0 does not: the top call's evaluation is at the same midpoint
 * from the same positions, so its values are reused (one evaluation per
 * top step saved, the split unchanged; pairwise, F's minimum over all is
 * attained in F, since tau_ij < h makes j fast too). Reusing an enclosing call's values deeper
 * down (every other depth) saved more force work but broke the reversal
 * test on cpu-direct (bench/results/hold/raw/hold.md, "cutting hold's force
 * work"). */
static int fresh_criterion(int depth)
{
    return depth > 0;
}

/* Kicks S from s and F from S over dt (both at the current positions). */
static gp_status kick_sf(gp_sim *sim, hold_priv *p, const uint32_t *s, size_t ns,
                         const uint32_t *S, size_t nS, const uint32_t *F, size_t nF,
                         double *aS, double *aF, double dt)
{
    gp_status st = gp_force_from_sources(sim, sim->pos, nF, F, nS, S, p->mask, aF);
    if (st == GP_OK) st = gp_force_from_sources(sim, sim->pos, nS, S, ns, s, p->mask, aS);
    if (st != GP_OK) return st;
    gp_split_kick(sim, F, nF, aF, dt);
    gp_split_kick(sim, S, nS, aS, dt);
    return GP_OK;
}

/* HOLD(s, h) from time t. tau_s: the criterion steps of s (s order):
 * pairwise at t over s, or per-particle at the enclosing call's midpoint.
 * cache (3 ns doubles): on entry, when *cached, a(s <- s) at the current
 * positions; on return, the same after this call if it had no fast set
 * (*cached = 1), else *cached = 0. */
static gp_status hold(gp_sim *sim, hold_priv *p, const uint32_t *s, size_t ns, const double *tau_s,
                      double t, double h, int depth, double *cache, int *cached, int kdk)
{
    /* under a collective solver a process may hold none of s (ns = 0): it
     * still makes every call, with non-NULL empty sets */
    size_t room = ns ? ns : 1;
    uint32_t *S = malloc(room * sizeof *S), *F = malloc(room * sizeof *F);
    double *aS = malloc(3 * room * sizeof *aS), *aF = NULL, *tauF = NULL, *cF = NULL;
    gp_status st = agreed(sim, S && F && aS ? GP_OK : oom(sim));
    if (st != GP_OK) goto out;
    size_t nS = 0, nF = 0;
    double ah = fabs(h);
    for (size_t k = 0; k < ns; ++k) {
        if (depth >= GP_BLOCK_SET(sim)->max_level || tau_s[k] >= ah) S[nS++] = s[k];
        else F[nF++] = s[k];
    }
    /* the split's shape over all processes: F's size summed */
    int64_t nF_all = gp_sim_global_sum(sim, (int64_t)nF);
    if (nF_all <= 1) {                 /* a lone fast particle joins the slow set */
        memcpy(S, s, ns * sizeof *S);
        nS = ns;
        nF = 0;
        nF_all = 0;
    }
    gp_split_levels(sim, S, nS, depth);

    if (nF_all == 0 && !kdk) {         /* drift-kick-drift of s */
        *cached = 0;
        gp_split_drift(sim, s, ns, 0.5 * h, t + 0.5 * h);
        st = gp_force_from_sources(sim, sim->pos, ns, s, ns, s, p->mask, aS);
        if (st != GP_OK) goto out;
        gp_split_kick(sim, s, ns, aS, h);
        gp_split_drift(sim, s, ns, 0.5 * h, t + h);
        goto out;
    }
    if (nF_all == 0) {                 /* leapfrog of s, with the end kick kept */
        if (*cached) memcpy(aS, cache, 3 * ns * sizeof *aS);
        else st = gp_force_from_sources(sim, sim->pos, ns, s, ns, s, p->mask, aS);
        if (st != GP_OK) goto out;
        gp_split_kick(sim, s, ns, aS, 0.5 * h);
        gp_split_drift(sim, s, ns, h, t + h);
        st = gp_force_from_sources(sim, sim->pos, ns, s, ns, s, p->mask, aS);
        if (st != GP_OK) goto out;
        gp_split_kick(sim, s, ns, aS, 0.5 * h);
        memcpy(cache, aS, 3 * ns * sizeof *aS);
        *cached = 1;
        goto out;
    }

    *cached = 0;
    size_t froom = nF ? nF : 1;
    aF = malloc(3 * froom * sizeof *aF);
    tauF = malloc(froom * sizeof *tauF);
    cF = malloc(3 * froom * sizeof *cF);
    st = agreed(sim, aF && tauF && cF ? GP_OK : oom(sim));
    if (st != GP_OK) goto out;
    /* both halves split with the criterion at this step's midpoint */
    if (fresh_criterion(depth)) st = criterion(sim, p, F, nF, t, h, tauF);
    else
        for (size_t k = 0, j = 0; k < ns && j < nF; ++k)   /* F is a subsequence of s */
            if (s[k] == F[j]) tauF[j++] = tau_s[k];   /* depth 0: the top's values */
    int fcached = 0;
    if (st == GP_OK) st = hold(sim, p, F, nF, tauF, t, 0.5 * h, depth + 1, cF, &fcached, kdk);
    if (st != GP_OK) goto out;
    if (kdk) {                         /* K(h/2) D_S(h) K(h/2) */
        st = kick_sf(sim, p, s, ns, S, nS, F, nF, aS, aF, 0.5 * h);
        if (st != GP_OK) goto out;
        gp_split_drift(sim, S, nS, h, t + h);
        st = kick_sf(sim, p, s, ns, S, nS, F, nF, aS, aF, 0.5 * h);
    } else {                           /* D_S(h/2) K(h) D_S(h/2) */
        gp_split_drift(sim, S, nS, 0.5 * h, t + 0.5 * h);
        st = kick_sf(sim, p, s, ns, S, nS, F, nF, aS, aF, h);
        gp_split_drift(sim, S, nS, 0.5 * h, t + h);
    }
    if (st == GP_OK) st = hold(sim, p, F, nF, tauF, t + 0.5 * h, 0.5 * h, depth + 1, cF, &fcached, kdk);
out:
    free(S); free(F); free(aS); free(aF); free(tauF); free(cF);
    return st;
}

static gp_status step_either(gp_sim *sim, double t_end, int kdk)
{
    hold_priv *p = sim->priv;
    gp_status st = choose_criterion(sim, p);
    if (st != GP_OK) return st;
    int partial;
    double h = gp_split_top_step(sim, t_end, &partial), t = sim->time;
    size_t n = sim->n;
    double *tau = malloc(n * sizeof *tau);
    st = agreed(sim, tau ? GP_OK : oom(sim));
    if (st != GP_OK) { free(tau); return st; }
    for (size_t i = 0; i < n; ++i) p->ptime[i] = t;
    /* the cached kick holds while the solver and the masses are those it
     * was computed with (new particles restart the integrator, and a
     * checkpoint clears it in both runs); the resync point at every top
     * step (a fresh set_particles) does not invalidate it */
    int cached = p->acc_valid && p->acc_swaps == sim->solver_swaps && p->acc_masses == sim->mass_updates;
    p->acc_valid = 0;
    if (GP_BLOCK_SET(sim)->max_level == 0) for (size_t i = 0; i < n; ++i) tau[i] = INFINITY;   /* leapfrog */
    else st = criterion(sim, p, p->all, n, t, h, tau);
    if (st == GP_OK) st = hold(sim, p, p->all, n, tau, t, h, 0, sim->acc, &cached, kdk);
    free(tau);
    if (st != GP_OK) return st;        /* mid-step: the run is over */
    p->acc_valid = cached;
    p->acc_swaps = sim->solver_swaps;
    p->acc_masses = sim->mass_updates;
    return gp_split_top_step_done(sim, t_end, partial, "hold");
}

static gp_status step_dkd(gp_sim *sim, double t_end) { return step_either(sim, t_end, 0); }
static gp_status step_kdk(gp_sim *sim, double t_end) { return step_either(sim, t_end, 1); }

const gp_integrator_def gp_scheme_hold = {
    .name = "hold",
    .flags = GP_SCHEME_BLOCK_STEPS | GP_SCHEME_TOP_STEPS | GP_SCHEME_MPI | GP_SCHEME_BACKWARD | GP_SCHEME_TIME_SYMMETRIC,
    .summary = "HOLD (Pelupessy et al. 2012): symplectic individual time steps, recursive slow/fast split below dt (pairwise steps from the plugin), drift-kick-drift slow steps",
    GP_SETTINGS_TABLE(settings, gp_block_settings),
    .start = start, .step = step_dkd, .stop = gp_split_stop, .n_saved = 1, .save = save, .load = load,
};

const gp_integrator_def gp_scheme_hold_kdk = {
    .name = "hold-kdk",
    .flags = GP_SCHEME_BLOCK_STEPS | GP_SCHEME_TOP_STEPS | GP_SCHEME_MPI | GP_SCHEME_BACKWARD | GP_SCHEME_TIME_SYMMETRIC,
    .summary = "HOLD with kick-drift-kick slow steps (Huayno's HOLD_KDK): two kicks a level, the leapfrog on one level",
    GP_SETTINGS_TABLE(settings, gp_block_settings),
    .start = start, .step = step_kdk, .stop = gp_split_stop, .n_saved = 1, .save = save, .load = load,
};
