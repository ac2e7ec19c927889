/* SPDX-License-Identifier: Apache-2.0 */
/*
 * integrators-stopping.c — the stopping conditions of gp_sim_evolve
 * (stopping.c): collisions found at block steps match a brute-force search
 * on the state there, the evolve returns early at that time, and
 * number_of_steps, timeout and out_of_box stop it; bad settings are
 * refused with a sentence.
 */
#include "integrators-common.h"

#define N 200

/* A hermite run on cpu-direct (softening eps) of n particles with radii r,
 * collision detection on; mode >= 0 sets collision_by_neighbours. */
static gp_sim *hermite_collisions(const char *eps, size_t n, const double *pos, const double *vel,
                                  const double *mass, const uint64_t *ids, const char *dt, const double *r,
                                  int mode)
{
    gp_sim *sim = sim_on_direct(eps);
    gp_sim_set_particles(sim, n, pos, vel, mass, ids);
    gp_sim_set_integrator(sim, "hermite");
    gp_sim_set_integrator_param(sim, "dt", dt);
    gp_sim_set_radii(sim, r);
    gp_sim_stop_enable(sim, GP_STOP_COLLISION, 1);
    if (mode >= 0) gp_sim_stop_set_param(sim, "collision_by_neighbours", mode);
    return sim;
}

/* Brute-force overlapping pairs of the current (predicted) state. */
static size_t brute_pairs(gp_sim *sim, size_t n, const double *r, uint64_t *a, uint64_t *b, size_t max)
{
    static double p[3 * N];
    uint64_t ids[N];
    gp_sim_get_particles(sim, p, NULL, NULL, ids);
    size_t k = 0;
    for (size_t i = 0; i < n; ++i)
        for (size_t j = i + 1; j < n; ++j) {
            double dx = p[3 * i] - p[3 * j], dy = p[3 * i + 1] - p[3 * j + 1], dz = p[3 * i + 2] - p[3 * j + 2];
            if (dx * dx + dy * dy + dz * dz < (r[i] + r[j]) * (r[i] + r[j]) && k < max) {
                a[k] = ids[i]; b[k] = ids[j]; k++;
            }
        }
    return k;
}

static int same_pairs(const uint64_t *a, const uint64_t *b, size_t n,
                      const uint64_t *c, const uint64_t *d, size_t m)
{
    if (n != m) return 0;
    for (size_t i = 0; i < n; ++i) {
        int found = 0;
        for (size_t j = 0; j < m && !found; ++j)
            found = (a[i] == c[j] && b[i] == d[j]) || (a[i] == d[j] && b[i] == c[j]);
        if (!found) return 0;
    }
    return 1;
}

int main(void)
{
    plan(31);

    /* two bodies falling onto each other head-on, radii 0.05 each */
    double pos[6] = { -1, 0, 0, 1, 0, 0 }, vel[6] = { 0 }, mass[2] = { 0.5, 0.5 };
    double rad[2] = { 0.05, 0.05 };
    uint64_t ids[2] = { 7, 9 };
    gp_sim *sim = sim_on_direct("0.001");
    if (!sim) bail("cpu-direct did not open");
    is_int(gp_sim_set_radii(sim, rad), GP_ERR_BAD_STATE, "radii before particles: bad state");
    gp_sim_set_particles(sim, 2, pos, vel, mass, ids);
    gp_sim_set_integrator_param(sim, "dt", "0.25");
    is_int(gp_sim_set_radii(sim, rad), GP_OK, "radii set");
    is_int(gp_sim_stop_enable(sim, GP_STOP_COLLISION, 1), GP_OK, "collision detection enabled");
    is_int(gp_sim_evolve(sim, 10.0), GP_OK, "evolve returns GP_OK at the collision");
    /* free fall from separation 2 to contact: t = pi/2 * sqrt(2^3 / 2) ~ 3.14 */
    double t = gp_sim_time(sim);
    ok(t > 2.5 && t < 3.2 && (gp_sim_stop_set(sim) & GP_STOP_COLLISION),
       "it stops early, near the free-fall time (t = %.4f)", t);
    uint64_t a[4] = { 0 }, b[4] = { 0 };
    ok(gp_sim_stop_count(sim, GP_STOP_COLLISION) == 1
       && gp_sim_stop_particles(sim, GP_STOP_COLLISION, 4, a, b) == GP_OK && a[0] == 7 && b[0] == 9,
       "the colliding pair is reported by id (%llu, %llu)", (unsigned long long)a[0], (unsigned long long)b[0]);
    double p[6];
    gp_sim_get_particles(sim, p, NULL, NULL, NULL);
    ok(fabs(p[3] - p[0]) < 0.1, "the bodies overlap where it stopped (separation %.4f)", p[3] - p[0]);
    is_int(gp_sim_evolve(sim, t + 0.5), GP_OK, "the next evolve clears and re-checks");
    ok(gp_sim_time(sim) == t || (gp_sim_stop_set(sim) & GP_STOP_COLLISION),
       "still overlapping: it stops again at once");
    is_int(gp_sim_stop_enable(sim, GP_STOP_COLLISION, 0), GP_OK, "collision detection disabled");
    gp_sim_evolve(sim, t + 0.5);
    ok(gp_sim_time(sim) == t + 0.5 && gp_sim_stop_set(sim) == 0, "disabled: the evolve reaches its end");
    gp_sim_free(sim);

    /* a cluster with block steps: every check matches brute force */
    static double cp[3 * N], cv[3 * N], cm[N], cr[N];
    small_cluster(N, 5, cp, cv, cm);
    tl_rng rng = { 17 };
    for (size_t i = 0; i < N; ++i) cr[i] = 0.02 * tl_uniform(&rng);
    sim = sim_on_direct("0.01");
    gp_sim_set_particles(sim, N, cp, cv, cm, NULL);
    gp_sim_set_integrator_param(sim, "dt", "0.0625");
    gp_sim_set_radii(sim, cr);
    gp_sim_stop_enable(sim, GP_STOP_COLLISION, 1);
    int agree = 1, stops = 0;
    static uint64_t ga[1024], gb[1024], ba[1024], bb[1024];
    for (int k = 0; k < 200 && gp_sim_time(sim) < 4.0; ++k) {
        gp_sim_evolve(sim, 4.0);
        size_t got = gp_sim_stop_count(sim, GP_STOP_COLLISION);
        gp_sim_stop_particles(sim, GP_STOP_COLLISION, 1024, ga, gb);
        size_t want = brute_pairs(sim, N, cr, ba, bb, 1024);
        if (got) stops++;
        if (!same_pairs(ga, gb, got, ba, bb, want)) agree = 0;
    }
    ok(agree && stops > 0, "block-rk2 on %d bodies: the pairs found at %d stops equal brute force", N, stops);
    uint64_t steps = 0;
    gp_sim_counter(sim, "steps", &steps);
    diag("%d collision stops in %llu block steps", stops, (unsigned long long)steps);

    /* the same count, x mirrored: the last order is reversed, so the
     * incremental sort gives up for a full one; still exact */
    for (size_t i = 0; i < N; ++i) cp[3 * i] = -cp[3 * i];
    gp_sim_set_particles(sim, N, cp, cv, cm, NULL);
    gp_sim_set_radii(sim, cr);
    gp_sim_evolve(sim, gp_sim_time(sim) + 1.0);
    {
        size_t got = gp_sim_stop_count(sim, GP_STOP_COLLISION);
        gp_sim_stop_particles(sim, GP_STOP_COLLISION, 1024, ga, gb);
        size_t want = brute_pairs(sim, N, cr, ba, bb, 1024);
        ok(got > 0 && same_pairs(ga, gb, got, ba, bb, want),
           "after the set is mirrored the pairs still equal brute force (%zu)", got);
    }

    /* a different particle count: radii must be set again */
    gp_sim_set_particles(sim, N - 1, cp, cv, cm, NULL);
    ok(gp_sim_evolve(sim, 5.0) == GP_ERR_BAD_STATE && strstr(gp_sim_last_error(sim), "gp_sim_set_radii"),
       "radii of another count are refused: %s", gp_sim_last_error(sim));
    gp_sim_stop_enable(sim, GP_STOP_COLLISION, 0);

    /* number of steps */
    gp_sim_stop_enable(sim, GP_STOP_NUMBER_OF_STEPS, 1);
    is_int(gp_sim_stop_set_param(sim, "number_of_steps", 3), GP_OK, "number_of_steps = 3");
    uint64_t s0 = 0, s1 = 0;
    gp_sim_counter(sim, "steps", &s0);
    gp_sim_evolve(sim, 100.0);
    gp_sim_counter(sim, "steps", &s1);
    ok(s1 - s0 == 3 && gp_sim_stop_set(sim) == GP_STOP_NUMBER_OF_STEPS && gp_sim_time(sim) < 100.0,
       "the evolve stops after 3 steps (%llu)", (unsigned long long)(s1 - s0));
    gp_sim_stop_enable(sim, GP_STOP_NUMBER_OF_STEPS, 0);

    /* timeout: a wall clock limit far below one step's cost */
    gp_sim_stop_set_param(sim, "timeout", 1e-12);
    gp_sim_stop_enable(sim, GP_STOP_TIMEOUT, 1);
    gp_sim_counter(sim, "steps", &s0);
    gp_sim_evolve(sim, 100.0);
    gp_sim_counter(sim, "steps", &s1);
    ok(s1 - s0 == 1 && gp_sim_stop_set(sim) == GP_STOP_TIMEOUT, "timeout: the evolve stops after its first step");
    gp_sim_stop_enable(sim, GP_STOP_TIMEOUT, 0);
    gp_sim_free(sim);

    /* out of box: one body leaves a box of size 2 around the origin */
    double op[6] = { 0, 0, 0, 1, 0, 0 }, ov[6] = { -1, 0, 0, 2, 0, 0 }, om[2] = { 1e-6, 1e-6 };
    sim = sim_on_direct("0.01");
    gp_sim_set_particles(sim, 2, op, ov, om, ids);
    gp_sim_set_integrator(sim, "leapfrog");
    gp_sim_set_integrator_param(sim, "dt", "0.01");
    gp_sim_stop_enable(sim, GP_STOP_OUT_OF_BOX, 1);
    gp_sim_stop_set_param(sim, "out_of_box_size", 2.0);
    gp_sim_stop_set_param(sim, "out_of_box_use_center_of_mass", 0);
    gp_sim_evolve(sim, 1.0);
    uint64_t out[2] = { 0 };
    t = gp_sim_time(sim);
    ok(gp_sim_stop_count(sim, GP_STOP_OUT_OF_BOX) == 1 && gp_sim_stop_particles(sim, GP_STOP_OUT_OF_BOX, 2, out, NULL) == GP_OK
       && out[0] == 9 && t > 0.49 && t < 0.52,
       "out of box: body 9 leaves at t = %.3f", t);

    /* bad settings */
    ok(gp_sim_stop_set_param(sim, "number_of_steps", 0.5) == GP_ERR_INVALID_ARGUMENT
       && strstr(gp_sim_last_error(sim), "number_of_steps"), "number_of_steps 0.5 refused: %s", gp_sim_last_error(sim));
    is_int(gp_sim_stop_set_param(sim, "timeout", -1), GP_ERR_INVALID_ARGUMENT, "negative timeout refused");
    is_int(gp_sim_stop_set_param(sim, "collision_by_neighbours", 2), GP_ERR_INVALID_ARGUMENT,
           "collision_by_neighbours 2 refused");
    ok(gp_sim_stop_set_param(sim, "bogus", 1) == GP_ERR_UNKNOWN_PARAMETER
       && strstr(gp_sim_last_error(sim), "out_of_box_size"), "unknown parameter refused, naming the known ones");
    is_int(gp_sim_stop_enable(sim, 1u << 9, 1), GP_ERR_INVALID_ARGUMENT, "an unknown condition bit is refused");
    double bad[2] = { 0.1, -1 };
    is_int(gp_sim_set_radii(sim, bad), GP_ERR_INVALID_ARGUMENT, "a negative radius is refused");
    double v = 0;
    ok(gp_sim_stop_get_param(sim, "out_of_box_size", &v) == GP_OK && v == 2.0, "parameters read back");
    gp_sim_free(sim);

    /* Hermite (ABI 1.2 force calls): collisions from the plugin's nearest
     * neighbours of each block step's active particles */
    double hp[6] = { -1, 0, 0, 1, 0, 0 }, hv[6] = { 0 };
    sim = hermite_collisions("0.001", 2, hp, hv, mass, ids, "0.25", rad, -1);
    is_int(gp_sim_evolve(sim, 10.0), GP_OK, "hermite: evolve returns GP_OK at the collision");
    t = gp_sim_time(sim);
    ok(t > 2.5 && t < 3.2 && gp_sim_stop_count(sim, GP_STOP_COLLISION) == 1
       && gp_sim_stop_particles(sim, GP_STOP_COLLISION, 4, a, b) == GP_OK && a[0] == 7 && b[0] == 9,
       "hermite: the head-on pair (7, 9) is found by its nearest neighbours, once, at t = %.4f", t);
    gp_sim_free(sim);

    /* a cluster, equal radii: every pair found is a true overlap, by
     * neighbours; with collision_by_neighbours = 0 the sweep finds them all */
    for (int mode = 1; mode >= 0; --mode) {
        small_cluster(N, 5, cp, cv, cm);
        for (size_t i = 0; i < N; ++i) cr[i] = 0.004;
        sim = hermite_collisions("0.01", N, cp, cv, cm, NULL, "0.0625", cr, mode);
        int good = 1, hstops = 0;
        for (int k = 0; k < 100 && gp_sim_time(sim) < 2.0; ++k) {
            if (gp_sim_evolve(sim, 2.0) != GP_OK) { good = 0; break; }
            size_t got = gp_sim_stop_count(sim, GP_STOP_COLLISION);
            gp_sim_stop_particles(sim, GP_STOP_COLLISION, 1024, ga, gb);
            size_t want = brute_pairs(sim, N, cr, ba, bb, 1024);
            if (got) hstops++;
            for (size_t q = 0; q < got; ++q) {   /* each found pair is among brute force's */
                int in = 0;
                for (size_t w = 0; w < want && !in; ++w)
                    in = (ga[q] == ba[w] && gb[q] == bb[w]) || (ga[q] == bb[w] && gb[q] == ba[w]);
                good = good && in;
            }
            if (!mode) good = good && same_pairs(ga, gb, got, ba, bb, want);
        }
        ok(good && hstops > 0, "hermite on %d bodies, %s: the pairs at %d stops (to t = %.3f) are %s", N,
           mode ? "by neighbours" : "by sweep", hstops, gp_sim_time(sim),
           mode ? "true overlaps" : "brute force's, all of them");
        gp_sim_free(sim);
    }

    /* what the neighbour rule leaves out (as ph4): a large body that is no
     * one's nearest neighbour but overlaps two of them */
    {
        double qp[12] = { 0, 0, 0, 0.1, 0, 0, 0.3, 0, 0, 0.35, 0, 0 }, qv[12] = { 0 };
        double qm[4] = { 1e-9, 1e-9, 1e-9, 1e-9 }, qr[4] = { 0.01, 0.001, 0.5, 0.001 };
        uint64_t qid[4] = { 1, 2, 3, 4 };
        size_t found[2] = { 0, 0 };
        for (int mode = 1; mode >= 0; --mode) {
            sim = hermite_collisions("0.001", 4, qp, qv, qm, qid, "0.25", qr, mode);
            gp_sim_evolve(sim, 1.0);
            found[mode] = gp_sim_stop_count(sim, GP_STOP_COLLISION);
            if (mode) gp_sim_stop_particles(sim, GP_STOP_COLLISION, 4, a, b);
            gp_sim_free(sim);
        }
        ok(found[1] == 1 && a[0] == 3 && b[0] == 4,
           "by neighbours: only the pair (3, 4) of mutual nearest neighbours (%zu pair(s))", found[1]);
        ok(found[0] == 3, "by sweep: all three overlaps with the large body (%zu)", found[0]);
    }

    return done_testing();
}
