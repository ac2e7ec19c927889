/* SPDX-License-Identifier: Apache-2.0 */
/* tree-accuracy: cpu-tree against cpu-direct on a 20k Plummer sphere, with
 * error bounds pinned a margin above what was measured (bench/results/cpu-tree/
 * has the full tables), so an accuracy regression fails here. Also:
 * quadrupoles beat monopoles, the acceleration MAC's theta_max bounds its
 * error and its potentials' bias, theta = 0 in double is exact, results do not
 * depend on the thread count, refits track rebuilds, rebuild=N counts,
 * active subsets cost in proportion, massless particles source nothing,
 * compute_field goes through the tree, a few points take exact sums, the
 * same particles sent again keep the tree.
 *
 * Plugins are found through GP_BUILD (default: build) as
 * $GP_BUILD/plugins/gravplug-NAME.so. */
#include "tap.h"

#include <stdint.h>

#include "gravplug.h"
#include "gravplug_loader.h"
#include "plugin-by-name.h"
#include "testlib.h"

#define N 20000
#define NS 1000            /* sample checked against direct summation */

static double pos[3 * N], mass[N], acc[3 * N], pot[N];
static double racc[3 * NS], rpot[NS];
static uint32_t sample[NS];
static const gp_api *tree_api, *direct_api;

static uint64_t rs = 12345;
static double urand(void)
{
    rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
    return ((double)(rs >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* Plummer sphere, scale length 3pi/16 (Henon units), M = 1 */
static void plummer(size_t n, double *p, double *m)
{
    const double a = 3.0 * 3.14159265358979 / 16.0;
    for (size_t i = 0; i < n; i++) {
        double r = a / sqrt(pow(urand() * 0.999, -2.0 / 3.0) - 1.0);
        double z = 2 * urand() - 1, ph = 2 * 3.14159265358979 * urand(), s = sqrt(1 - z * z);
        p[3 * i] = r * s * cos(ph); p[3 * i + 1] = r * s * sin(ph); p[3 * i + 2] = r * z;
        m[i] = 1.0 / (double)n;
    }
}

static gp_solver *tree(const char *kv)
{
    gp_solver *s;
    if (tree_api->init(&s, NULL) != GP_OK) return NULL;
    tl_set_params(tree_api, s, kv);
    return s;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* rebuild=auto's tests: the positions moved from `from` by up to amp/2 in
 * each coordinate (into moved_pos), then a force call on na active
 * particles (0, NULL: all) */
static double moved_pos[3 * N];
static void moved_call(gp_solver *s, const double *from, double amp, size_t na, const uint32_t *idx)
{
    for (size_t i = 0; i < 3 * N; i++) moved_pos[i] = from[i] + amp * (urand() - 0.5);
    tree_api->update_positions(s, moved_pos);
    tree_api->set_active_subset(s, na, idx);
    tree_api->compute_forces(s, acc, NULL);
}

/* ... and what they made of the tree: builds and refits, then s freed */
static void builds_and_refits(gp_solver *s, uint64_t builds, uint64_t refits, const char *what)
{
    gp_stats st = { .struct_size = sizeof st };
    tree_api->get_stats(s, &st);
    ok(st.tree_builds == builds && st.tree_refits == refits,
       "rebuild=auto: %s: %llu builds, %llu refits (%llu, %llu)", what, (unsigned long long)builds,
       (unsigned long long)refits, (unsigned long long)st.tree_builds, (unsigned long long)st.tree_refits);
    tree_api->finalize(s);
}

typedef struct errs { double med, p99, pot_med, pot_bias; } errs;

static errs errors(void)
{
    static double e[NS], ep[NS];
    for (int k = 0; k < NS; k++) {
        const double *a = &acc[3 * sample[k]], *b = &racc[3 * k];
        double d2 = 0, n2 = 0;
        for (int c = 0; c < 3; c++) { d2 += (a[c] - b[c]) * (a[c] - b[c]); n2 += b[c] * b[c]; }
        e[k] = sqrt(d2 / n2);
        ep[k] = fabs(pot[sample[k]] - rpot[k]) / fabs(rpot[k]);
    }
    /* the potentials' mean signed error: a MAC whose errors share a sign
     * shifts the potential energy */
    double bias = 0;
    for (int k = 0; k < NS; k++) bias += (pot[sample[k]] - rpot[k]) / fabs(rpot[k]);
    qsort(e, NS, sizeof *e, cmpd);
    qsort(ep, NS, sizeof *ep, cmpd);
    return (errs){ e[NS / 2], e[(int)(0.99 * NS)], ep[NS / 2], bias / NS };
}

/* all-particle forces with the given settings; returns the error stats */
static errs run(const char *kv)
{
    gp_solver *s = tree(kv);
    tree_api->set_particles(s, N, pos, mass);
    if (strstr(kv, "acceleration")) tree_api->compute_forces(s, acc, pot); /* gives |a_old| */
    tree_api->compute_forces(s, acc, pot);
    tree_api->finalize(s);
    errs e = errors();
    diag("%-58s median %.3e  99%% %.3e  pot median %.3e  pot bias %+.2e", kv, e.med, e.p99, e.pot_med,
         e.pot_bias);
    return e;
}

int main(void)
{
    tree_api = tl_plugin_by_name("cpu-tree");
    direct_api = tl_plugin_by_name("cpu-direct");
    if (!tree_api || !direct_api) skip_all("cpu-tree or cpu-direct plugin not built");
    plan(33);
    plummer(N, pos, mass);
    for (int k = 0; k < NS; k++) sample[k] = (uint32_t)(k * (N / NS) + (int)(urand() * (N / NS))); /* distinct */
    gp_solver *d;
    direct_api->init(&d, NULL);
    direct_api->set_param(d, "eps", "0.01");
    direct_api->set_particles(d, N, pos, mass);
    direct_api->set_active_subset(d, NS, sample);
    direct_api->compute_forces(d, racc, rpot);

    /* Pinned bounds: measured values (gcc 12, x86-64, see the diag lines)
     * times about 1.5. Errors depend on the particle set, not the machine. */
    errs bh5q = run("eps=0.01 mac=bh theta=0.5 order=quadrupole");
    ok(bh5q.med < 2.0e-4 && bh5q.p99 < 1.2e-3, "bh theta 0.5 quadrupole: median %.2e < 2.0e-4, 99%% %.2e < 1.2e-3", bh5q.med, bh5q.p99);
    ok(bh5q.pot_med < 2.0e-5, "bh theta 0.5 quadrupole: potential median %.2e < 2.0e-5", bh5q.pot_med);
    errs bh5m = run("eps=0.01 mac=bh theta=0.5 order=monopole");
    ok(bh5m.med < 2.5e-3, "bh theta 0.5 monopole: median %.2e < 2.5e-3", bh5m.med);
    ok(bh5q.med < 0.3 * bh5m.med, "quadrupoles cut the median error (%.2e vs %.2e)", bh5q.med, bh5m.med);
    errs bm7 = run("eps=0.01 mac=bmax theta=0.7");
    ok(bm7.med < 6e-4 && bm7.p99 < 3e-3, "bmax theta 0.7: median %.2e < 6e-4, 99%% %.2e < 3e-3", bm7.med, bm7.p99);
    errs wsm = run("eps=0.01 mac=multipole theta=1.0");
    ok(wsm.med < 9e-4 && wsm.p99 < 4e-3, "multipole theta 1.0: median %.2e < 9e-4, 99%% %.2e < 4e-3", wsm.med, wsm.p99);
    errs acc5 = run("eps=0.01 mac=acceleration delta_acc=0.005");
    ok(acc5.med < 4e-4 && acc5.p99 < 1.5e-3, "acceleration 0.005: median %.2e < 4e-4, 99%% %.2e < 1.5e-3", acc5.med, acc5.p99);
    /* theta_max bounds the acceleration criterion's opening angle: a loose
     * delta_acc alone accepts far cells at wide angles */
    errs loose = run("eps=0.01 mac=acceleration delta_acc=0.05 theta_max=0");
    errs capped = run("eps=0.01 mac=acceleration delta_acc=0.05 theta_max=0.5");
    errs acc5u = run("eps=0.01 mac=acceleration delta_acc=0.005 theta_max=0");
    ok(capped.med < 1.2 * bh5q.med && loose.med > 5 * bh5q.med,
       "theta_max 0.5 bounds a loose acceleration MAC (delta 0.05) to bh 0.5's error: median %.2e "
       "(bh %.2e; unbounded %.2e)", capped.med, bh5q.med, loose.med);
    ok(fabs(acc5.pot_bias) < 0.2 * fabs(acc5u.pot_bias),
       "acceleration 0.005: the default theta_max 1 cuts the potentials' mean error from %.1e to %.1e",
       acc5u.pot_bias, acc5.pot_bias);
    errs sgl = run("eps=0.01 mac=bh theta=0.5 precision=single");
    ok(sgl.med < 2.0e-4, "single precision bh 0.5: median %.2e < 2.0e-4", sgl.med);
    errs ex = run("eps=0.01 theta=0 precision=double");
    ok(ex.med < 1e-13 && ex.p99 < 1e-12, "theta 0, double: exact to rounding (median %.1e, 99%% %.1e)", ex.med, ex.p99);
    errs exm = run("eps=0.01 theta=0 precision=mixed");
    ok(exm.med < 1e-6, "theta 0, mixed: float interactions only (median %.1e)", exm.med);

    /* thread count does not change a bit */
    {
        static double a1[3 * N], a2[3 * N];
        gp_solver *s1 = tree("eps=0.01 threads=1"), *s2 = tree("eps=0.01 threads=2");
        tree_api->set_particles(s1, N, pos, mass); tree_api->compute_forces(s1, a1, NULL);
        tree_api->set_particles(s2, N, pos, mass); tree_api->compute_forces(s2, a2, NULL);
        ok(memcmp(a1, a2, sizeof a1) == 0, "1 and 2 threads give bit-identical accelerations");
        tree_api->finalize(s1); tree_api->finalize(s2);
    }

    /* refit vs rebuild after a small move; rebuild=N counting */
    {
        static double moved[3 * N], ar[3 * N], ab[3 * N];
        for (size_t i = 0; i < 3 * N; i++) moved[i] = pos[i] + 0.002 * (urand() - 0.5);
        gp_solver *sr = tree("eps=0.01 rebuild=3"), *sb = tree("eps=0.01 rebuild=always");
        tree_api->set_particles(sr, N, pos, mass); tree_api->compute_forces(sr, ar, NULL);
        tree_api->set_particles(sb, N, pos, mass); tree_api->compute_forces(sb, ab, NULL);
        tree_api->update_positions(sr, moved); tree_api->compute_forces(sr, ar, NULL);
        tree_api->update_positions(sb, moved); tree_api->compute_forces(sb, ab, NULL);
        static double e[N];
        for (size_t i = 0; i < N; i++) {
            double d2 = 0, n2 = 0;
            for (int c = 0; c < 3; c++) { d2 += (ar[3 * i + c] - ab[3 * i + c]) * (ar[3 * i + c] - ab[3 * i + c]); n2 += ab[3 * i + c] * ab[3 * i + c]; }
            e[i] = sqrt(d2 / n2);
        }
        qsort(e, N, sizeof *e, cmpd);
        ok(e[N / 2] < 2e-4, "refit forces match rebuilt ones to tree accuracy (median %.2e)", e[N / 2]);
        gp_stats st = { .struct_size = sizeof st };
        tree_api->update_positions(sr, pos); tree_api->compute_forces(sr, ar, NULL);
        tree_api->update_positions(sr, moved); tree_api->compute_forces(sr, ar, NULL);
        tree_api->get_stats(sr, &st);
        ok(st.tree_builds == 2 && st.tree_refits == 2,
           "rebuild=3: 4 calls after set_particles -> 2 builds, 2 refits (%llu, %llu)",
           (unsigned long long)st.tree_builds, (unsigned long long)st.tree_refits);
        tree_api->finalize(sr); tree_api->finalize(sb);
    }

    /* rebuild=auto weighs an aging tree, not a dearer population: on a
     * tree refitted to unchanged positions, block-step-like calls that
     * alternate the dense centre with the outskirts cost what they cost on
     * the fresh tree, so nothing is rebuilt (a single cost per particle,
     * set by the outskirts, read the centre's as the tree's excess) */
    {
        static double r2[N], sorted[N];
        for (size_t i = 0; i < N; i++)
            sorted[i] = r2[i] = pos[3 * i] * pos[3 * i] + pos[3 * i + 1] * pos[3 * i + 1] + pos[3 * i + 2] * pos[3 * i + 2];
        qsort(sorted, N, sizeof *sorted, cmpd);
        static uint32_t inner[64], outer[2000];
        uint32_t ni = 0, no = 0;
        for (uint32_t i = 0; i < N; i++) {
            if (r2[i] <= sorted[63] && ni < 64) inner[ni++] = i;
            else if (r2[i] >= sorted[N - 2000] && no < 2000) outer[no++] = i;
        }
        gp_solver *s = tree("eps=0.01 rebuild=auto");
        gp_stats st = { .struct_size = sizeof st }, s0 = st;
        tree_api->set_particles(s, N, pos, mass);
        tree_api->set_active_subset(s, no, outer);
        tree_api->compute_forces(s, acc, NULL);
        tree_api->get_stats(s, &s0);
        uint64_t pp_in = 0, pc_in = 0;
        for (int k = 0; k < 100; k++) {
            tree_api->update_positions(s, pos);
            tree_api->set_active_subset(s, ni, inner);
            gp_stats b = { .struct_size = sizeof b }, a = b;
            tree_api->get_stats(s, &b);
            tree_api->compute_forces(s, acc, NULL);
            tree_api->get_stats(s, &a);
            pp_in = a.pp_interactions - b.pp_interactions;
            pc_in = a.pc_interactions - b.pc_interactions;
            tree_api->update_positions(s, pos);
            tree_api->set_active_subset(s, no, outer);
            tree_api->compute_forces(s, acc, NULL);
        }
        tree_api->get_stats(s, &st);
        double per_in = (double)(pp_in + pc_in) / ni;
        double per_out = (double)(s0.pp_interactions + s0.pc_interactions) / no;
        ok(per_in > 1.2 * per_out && st.tree_builds == 1 && st.tree_refits == 200,
           "rebuild=auto: 200 refits to unchanged positions, the centre (%.0f interactions a particle) "
           "alternating with the outskirts (%.0f): %llu build, %llu refits",
           per_in, per_out, (unsigned long long)st.tree_builds, (unsigned long long)st.tree_refits);
        tree_api->finalize(s);
    }

    /* rebuild=auto keeps the cost baselines across its own rebuilds: a
     * class whose first call after a rebuild comes on an aged tree is
     * weighed against its cost on the fresher tree before, so that aging
     * is seen (were the baselines reset at every rebuild, the aged cost
     * would become the baseline and the tree would go on aging). Moves of
     * 0.2 scramble the tree; moves of 1e-6 only make the next call refit
     * or rebuild. */
    {
        static uint32_t half[N / 2];
        for (uint32_t i = 0; i < N / 2; i++) half[i] = 2 * i;
        gp_solver *s = tree("eps=0.01 rebuild=auto");
        tree_api->set_particles(s, N, pos, mass);          /* build 1; every particle: fresh */
        tree_api->compute_forces(s, acc, NULL);
        moved_call(s, pos, 1e-6, N / 2, half);             /* half, on a tree one call old */
        moved_call(s, moved_pos, 0.2, N / 2, half);        /* half, scrambled: excess */
        moved_call(s, moved_pos, 1e-6, N / 2, half);       /* build 2 (rebuild due) */
        moved_call(s, moved_pos, 0.2, 0, NULL);            /* every particle, scrambled again */
        moved_call(s, moved_pos, 1e-6, N / 2, half);       /* build 3: the aging was seen */
        builds_and_refits(s, 3, 3, "a class first called on an aged tree after a rebuild is "
                                   "weighed against its cost before it");
    }

    /* ... and a call on a tree built for it sets its class's baseline
     * anew: a baseline first read on an aged tree (the half below, after a
     * scramble) gives way to the fresh cost, so the next aging is seen */
    {
        static uint32_t half[N / 2];
        for (uint32_t i = 0; i < N / 2; i++) half[i] = 2 * i;
        gp_solver *s = tree("eps=0.01 rebuild=auto");
        tree_api->set_particles(s, N, pos, mass);          /* build 1 */
        tree_api->compute_forces(s, acc, NULL);
        moved_call(s, pos, 0.2, N / 2, half);              /* half's baseline, on an aged tree */
        moved_call(s, moved_pos, 1e-6, 0, NULL);           /* every particle: excess */
        moved_call(s, moved_pos, 1e-6, N / 2, half);       /* build 2: half, fresh */
        moved_call(s, moved_pos, 0.05, N / 2, half);       /* half, aged less than its first */
        moved_call(s, moved_pos, 1e-6, N / 2, half);       /* build 3 */
        builds_and_refits(s, 3, 3, "a call on a tree built for it resets its class's baseline");
    }

    /* active subsets: cost follows the active count */
    {
        gp_solver *s = tree("eps=0.01");
        gp_stats a = { .struct_size = sizeof a }, b = a, c = a;
        tree_api->set_particles(s, N, pos, mass);
        tree_api->compute_forces(s, acc, NULL);
        tree_api->get_stats(s, &a);
        uint32_t few[200];
        for (int k = 0; k < 200; k++) few[k] = (uint32_t)(k * 97);
        tree_api->set_active_subset(s, 200, few);
        tree_api->compute_forces(s, acc, NULL);
        tree_api->get_stats(s, &b);
        double all = (double)(a.pp_interactions + a.pc_interactions);
        double some = (double)(b.pp_interactions + b.pc_interactions) - all;
        ok(some < 0.03 * all, "1%% active costs %.2f%% of the interactions of all active", 100 * some / all);
        (void)c;
        tree_api->finalize(s);
    }

    /* subset_spheres = whole: an active particle's force does not depend on
     * which others are active (the sphere of its whole tree group): the
     * bits of a full call, for a scattered subset and for one particle */
    {
        static double full[3 * N], part[3 * 200], pfull[N], ppart[200];
        gp_solver *s = tree("eps=0.01 subset_spheres=whole");
        tree_api->set_particles(s, N, pos, mass);
        tree_api->compute_forces(s, full, pfull);
        uint32_t few[200];
        for (int k = 0; k < 200; k++) few[k] = (uint32_t)(k * 97 + 3);
        int same = tree_api->set_active_subset(s, 200, few) == GP_OK &&
                   tree_api->compute_forces(s, part, ppart) == GP_OK;
        for (int k = 0; k < 200 && same; k++)
            same = memcmp(&part[3 * k], &full[3 * few[k]], 3 * sizeof(double)) == 0 &&
                   memcmp(&ppart[k], &pfull[few[k]], sizeof(double)) == 0;
        int one = tree_api->set_active_subset(s, 1, few + 7) == GP_OK &&
                  tree_api->compute_forces(s, part, ppart) == GP_OK &&
                  memcmp(part, &full[3 * few[7]], 3 * sizeof(double)) == 0;
        ok(same && one, "subset_spheres = whole: 200 scattered active particles, and one alone, "
           "get a full call's bits");
        /* the default (spheres around the active particles) does not
         * (direct_max = 0: one particle alone would get its exact sum) */
        tree_api->set_param(s, "subset_spheres", "active");
        tree_api->set_param(s, "direct_max", "0");
        tree_api->set_active_subset(s, 1, few + 7);
        tree_api->compute_forces(s, part, ppart);
        ok(memcmp(part, &full[3 * few[7]], 3 * sizeof(double)) != 0,
           "subset_spheres = active: one particle alone walks with its own sphere (other bits)");
        tree_api->finalize(s);
    }

    /* direct_max: an active subset of at most that many particles gets
     * its exact sums over every source, and the moved tree is left for the
     * next larger call (no refit); one more particle goes through the tree */
    {
        static double moved[3 * N], xa[3 * 9], xp[9], da[3 * 9], dp[9];
        for (size_t i = 0; i < 3 * N; i++) moved[i] = pos[i] + 0.002 * (urand() - 0.5);
        uint32_t few[9];
        for (int k = 0; k < 9; k++) few[k] = (uint32_t)(k * 2203 + 11);
        gp_solver *dm;
        direct_api->init(&dm, NULL);
        direct_api->set_param(dm, "eps", "0.01");
        direct_api->set_particles(dm, N, moved, mass);
        direct_api->set_active_subset(dm, 9, few);
        direct_api->compute_forces(dm, da, dp);
        direct_api->finalize(dm);
        gp_solver *s = tree("eps=0.01 direct_max=8");
        gp_stats s0 = { .struct_size = sizeof s0 }, s1 = s0, s2 = s0;
        tree_api->set_particles(s, N, pos, mass);
        tree_api->compute_forces(s, acc, NULL);
        tree_api->get_stats(s, &s0);
        tree_api->update_positions(s, moved);
        int okc = tree_api->set_active_subset(s, 8, few) == GP_OK &&
                  tree_api->compute_forces(s, xa, xp) == GP_OK;
        tree_api->get_stats(s, &s1);
        double worst = tl_relerr(8, 3, xa, da).max;
        for (int k = 0; k < 8; k++) {
            double ep = fabs(xp[k] - dp[k]) / fabs(dp[k]);
            worst = ep > worst ? ep : worst;
        }
        ok(okc && worst < 1e-13 && s1.tree_refits == s0.tree_refits &&
               s1.tree_builds == s0.tree_builds && s1.pp_interactions - s0.pp_interactions == 8 * (uint64_t)N &&
               s1.pc_interactions == s0.pc_interactions,
           "direct_max = 8, 8 active after a move: cpu-direct's forces and potentials (worst %.1e), "
           "8 x N pairs, no refit", worst);
        tree_api->set_active_subset(s, 9, few);
        tree_api->compute_forces(s, xa, NULL);
        tree_api->get_stats(s, &s2);
        worst = tl_relerr(9, 3, xa, da).max;
        ok(s2.tree_refits + s2.tree_builds == s1.tree_refits + s1.tree_builds + 1 &&
               worst > 1e-9 && worst < 1e-2,
           "9 active: the tree, refitted to the move (worst error %.1e: the tree's)", worst);
        /* the same bits with 1 and 2 threads, and direct_max = 0 is the tree */
        static double e1[3 * 8], e2[3 * 8];
        gp_solver *t1 = tree("eps=0.01 direct_max=8 threads=1"), *t2 = tree("eps=0.01 direct_max=8 threads=2");
        tree_api->set_particles(t1, N, moved, mass); tree_api->set_active_subset(t1, 8, few);
        tree_api->set_particles(t2, N, moved, mass); tree_api->set_active_subset(t2, 8, few);
        int same = tree_api->compute_forces(t1, e1, NULL) == GP_OK &&
                   tree_api->compute_forces(t2, e2, NULL) == GP_OK && memcmp(e1, e2, sizeof e1) == 0;
        tree_api->set_param(t1, "direct_max", "0");
        tree_api->compute_forces(t1, e2, NULL);
        ok(same && memcmp(e1, e2, sizeof e1) != 0,
           "8 exact sums: the same bits with 1 and 2 threads; direct_max = 0 walks the tree instead");
        tree_api->finalize(t1); tree_api->finalize(t2);
        /* a result beyond double: the tree's refusal with a sentence, not inf */
        static double big[3 * N], heavy[N];
        for (size_t i = 0; i < 3 * N; i++) big[i] = pos[i] * 1e-30;
        for (size_t i = 0; i < N; i++) heavy[i] = mass[i] * 1e300;
        gp_solver *sb = tree("eps=0 direct_max=8");
        tree_api->set_particles(sb, N, big, heavy);
        tree_api->set_active_subset(sb, 8, few);
        gp_status st = tree_api->compute_forces(sb, xa, NULL);
        const char *msg = tree_api->last_error(sb);
        ok(st != GP_OK && msg && *msg,
           "8 active whose forces overflow double: an error with a sentence (%s)", msg ? msg : "");
        tree_api->finalize(sb);
        tree_api->finalize(s);
    }

    /* massless particles source nothing: adding them leaves the massive
     * particles' forces within tree accuracy and adds no interactions */
    {
        static double p2[3 * (N + 2000)], m2[N + 2000], a2[3 * (N + 2000)];
        memcpy(p2, pos, sizeof pos);
        memcpy(m2, mass, sizeof mass);
        for (int i = N; i < N + 2000; i++) {
            for (int k = 0; k < 3; k++) p2[3 * i + k] = 3 * (urand() - 0.5);
            m2[i] = 0;
        }
        gp_solver *s = tree("eps=0.01 theta=0 precision=double");
        tree_api->set_particles(s, N + 2000, p2, m2);
        tree_api->compute_forces(s, a2, NULL);
        gp_stats st = { .struct_size = sizeof st };
        tree_api->get_stats(s, &st);
        ok(st.pc_interactions == 0 && st.pp_interactions == (uint64_t)(N + 2000) * N,
           "theta 0 with 2000 massless particles: (N+2000) x N pairs, no massless sources");
        double worst = 0;
        for (int k = 0; k < NS; k++) {
            const double *x = &a2[3 * sample[k]], *y = &racc[3 * k];
            double dd = sqrt((x[0] - y[0]) * (x[0] - y[0]) + (x[1] - y[1]) * (x[1] - y[1]) + (x[2] - y[2]) * (x[2] - y[2]));
            double r = dd / sqrt(y[0] * y[0] + y[1] * y[1] + y[2] * y[2]);
            worst = r > worst ? r : worst;
        }
        ok(worst < 1e-12, "massive particles feel exactly what they felt without the massless ones (%.1e)", worst);
        tree_api->finalize(s);
    }

    /* compute_field through the tree */
    {
        enum { M = N, MD = 2000 };  /* as many points as particles; direct check on MD */
        static double pts[3 * M], pm[M], fa[3 * M], fp[M], da[3 * MD], dp[MD], e[MD];
        plummer(M, pts, pm);   /* points where a coupled code's particles would be */
        gp_solver *s = tree("eps=0.01 mac=bh theta=0.5");
        gp_stats s0 = { .struct_size = sizeof s0 }, st = s0;
        tree_api->set_particles(s, N, pos, mass);
        tree_api->compute_forces(s, acc, NULL);
        tree_api->get_stats(s, &s0);
        tree_api->compute_field(s, M, pts, fa, fp);
        tree_api->get_stats(s, &st);
        direct_api->set_active_subset(d, 0, NULL);
        direct_api->compute_field(d, MD, pts, da, dp);
        for (int i = 0; i < MD; i++) {
            double d2 = 0, n2 = 0;
            for (int c = 0; c < 3; c++) { d2 += (fa[3 * i + c] - da[3 * i + c]) * (fa[3 * i + c] - da[3 * i + c]); n2 += da[3 * i + c] * da[3 * i + c]; }
            e[i] = sqrt(d2 / n2);
        }
        qsort(e, MD, sizeof *e, cmpd);
        double ipf = (double)(s0.pp_interactions + s0.pc_interactions) / N;
        double ipp = (double)(st.pp_interactions + st.pc_interactions - s0.pp_interactions - s0.pc_interactions) / M;
        ok(e[MD / 2] < 2e-4, "compute_field: median error %.2e < 2e-4", e[MD / 2]);
        ok(ipp < 0.5 * N && ipp < 3 * ipf,
           "compute_field walks the tree: %.0f interactions per point (forces: %.0f per particle, N = %d)",
           ipp, ipf, N);
        tree_api->finalize(s);
    }

    /* a few points (direct_max or fewer) take exact sums: a host that sends
     * the particles again before each field call (gp_sim between steps)
     * builds no tree for them */
    {
        static const double few[9] = { 0.1, 0.2, 0.3, -1.0, 0.5, 0.25, 2.0, -2.0, 1.0 };
        double fa[9], fp[3], da[9], dp[3], worst = 0;
        gp_solver *s = tree("eps=0.01 mac=bh theta=0.5");
        gp_stats st = { .struct_size = sizeof st }, sf = st;
        tree_api->set_particles(s, N, pos, mass);
        gp_status rc = tree_api->compute_field(s, 3, few, fa, fp);
        tree_api->get_stats(s, &st);
        direct_api->set_active_subset(d, 0, NULL);
        direct_api->compute_field(d, 3, few, da, dp);
        for (int i = 0; i < 3; i++) {
            for (int c = 0; c < 3; c++)
                worst = fmax(worst, fabs(fa[3 * i + c] - da[3 * i + c]) / fabs(da[3 * i + c]));
            worst = fmax(worst, fabs(fp[i] - dp[i]) / fabs(dp[i]));
        }
        ok(rc == GP_OK && st.tree_builds == 0 && worst < 1e-12,
           "compute_field of 3 points after set_particles: cpu-direct's sums (%.1e apart), "
           "%llu trees built", worst, (unsigned long long)st.tree_builds);
        tree_api->compute_forces(s, acc, NULL);
        tree_api->get_stats(s, &sf);
        ok(sf.tree_builds == 1, "... and the first force call builds it (%llu)",
           (unsigned long long)sf.tree_builds);
        tree_api->finalize(s);
    }

    /* set_particles given the particles the tree was built from keeps the
     * tree (gp_sim re-sends them before each field call between steps):
     * no build, and the bits of a fresh instance; a change of one
     * coordinate or one mass, or an update_positions, builds again */
    {
        enum { M = 64 };
        static double pts[3 * M], fa[3 * M], fp[M], ga[3 * M], gp[M], p2[3 * N], m2[N];
        for (int i = 0; i < 3 * M; i++) pts[i] = 2 * urand() - 1;
        const char *kv = "eps=0.01 mac=acceleration delta_acc=0.002";
        gp_solver *s = tree(kv), *f = tree(kv);
        gp_stats st = { .struct_size = sizeof st };
        tree_api->set_particles(f, N, pos, mass);
        tree_api->compute_field(f, M, pts, ga, gp);
        tree_api->set_particles(s, N, pos, mass);
        tree_api->compute_field(s, M, pts, fa, fp);
        int same = 1;
        for (int round = 0; round < 3; round++) {
            tree_api->set_particles(s, N, pos, mass);
            same &= tree_api->compute_field(s, M, pts, fa, fp) == GP_OK &&
                    memcmp(fa, ga, sizeof fa) == 0 && memcmp(fp, gp, sizeof fp) == 0;
        }
        tree_api->set_particles(s, N, pos, mass);
        tree_api->compute_forces(s, acc, pot);
        static double facc[3 * N], fpot[N];
        tree_api->set_particles(f, N, pos, mass);
        tree_api->compute_forces(f, facc, fpot);
        same &= memcmp(acc, facc, sizeof acc) == 0 && memcmp(pot, fpot, sizeof pot) == 0;
        tree_api->get_stats(s, &st);
        ok(same && st.tree_builds == 1,
           "set_particles of the same particles keeps the tree: %llu built for 5 field or force calls, "
           "a fresh instance's bits", (unsigned long long)st.tree_builds);
        memcpy(p2, pos, sizeof p2);
        memcpy(m2, mass, sizeof m2);
        p2[3 * 17 + 1] = nextafter(p2[3 * 17 + 1], 10.0);
        uint64_t before = st.tree_builds;
        tree_api->set_particles(s, N, p2, mass);
        tree_api->compute_field(s, M, pts, fa, fp);
        tree_api->get_stats(s, &st);
        uint64_t moved = st.tree_builds - before;
        m2[5] *= 1.5;
        tree_api->set_particles(s, N, p2, m2);
        tree_api->compute_field(s, M, pts, fa, fp);
        tree_api->get_stats(s, &st);
        uint64_t reweighed = st.tree_builds - before - moved;
        /* kept, then moved before any walk: the build is of the moved ones */
        static double p3[3 * N];
        for (int i = 0; i < 3 * N; i++) p3[i] = p2[i] + 0.01 * (urand() - 0.5);
        tree_api->set_particles(f, N, p3, m2);
        tree_api->compute_field(f, M, pts, ga, gp);
        tree_api->set_particles(s, N, p2, m2);
        tree_api->update_positions(s, p3);
        tree_api->compute_field(s, M, pts, fa, fp);
        tree_api->get_stats(s, &st);
        uint64_t updated = st.tree_builds - before - moved - reweighed;
        int same_moved = memcmp(fa, ga, sizeof fa) == 0;
        /* kept, then a mass updated before any walk */
        const uint32_t i5 = 5;
        const double m5 = 2 * m2[5];
        tree_api->set_particles(s, N, p3, m2);
        tree_api->update_masses(s, 1, &i5, &m5);
        tree_api->compute_field(s, M, pts, fa, fp);
        m2[5] = m5;
        tree_api->set_particles(f, N, p3, m2);
        tree_api->compute_field(f, M, pts, ga, gp);
        ok(moved == 1 && reweighed == 1 && updated == 1 && same_moved && memcmp(fa, ga, sizeof fa) == 0,
           "... and builds again after one coordinate moved by an ulp (%llu), one mass changed (%llu), "
           "an update_positions (%llu), with a fresh instance's bits (after update_masses too)",
           (unsigned long long)moved, (unsigned long long)reweighed, (unsigned long long)updated);
        tree_api->finalize(s);
        tree_api->finalize(f);
    }
    direct_api->finalize(d);
    return done_testing();
}
