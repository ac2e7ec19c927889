/* SPDX-License-Identifier: Apache-2.0 */
/*
 * integrators-checkpoint.c — a run restarted from a checkpoint continues
 * bit for bit like the uninterrupted run (final positions, velocities and
 * level counts compared byte by byte), for each integrator, including a
 * checkpoint taken between block steps when the levels are not in sync.
 * Also: block-rk2 with every particle on level 0 is exactly rk2.
 */
#include "integrators-common.h"
#include "sim/crc32c.h"

#define N 256

static double pos0[3 * N], vel0[3 * N], mass0[N];

static gp_sim *make(const char *integ, const char *k1, const char *v1, const char *k2, const char *v2)
{
    gp_sim *sim = sim_on_direct("0.05");
    if (!sim) return NULL;
    if (gp_sim_set_particles(sim, N, pos0, vel0, mass0, NULL) != GP_OK
        || gp_sim_set_integrator(sim, integ) != GP_OK
        || (k1 && gp_sim_set_integrator_param(sim, k1, v1) != GP_OK)
        || (k2 && gp_sim_set_integrator_param(sim, k2, v2) != GP_OK)) {
        diag("%s", gp_sim_last_error(sim));
        gp_sim_free(sim);
        return NULL;
    }
    return sim;
}

/* Uninterrupted: n_steps steps (or evolve to t_mid), checkpoint, evolve to
 * t_end. Restarted: load the checkpoint in a fresh sim, evolve to t_end. */
static void check_restart(const char *integ, const char *k1, const char *v1,
                          const char *k2, const char *v2, int n_steps, double t_mid, double t_end)
{
    const char *path = "integrators-checkpoint.tmp.ckpt";
    static double pa[3 * N], va[3 * N], pb[3 * N], vb[3 * N];
    uint64_t la[64], lb[64];
    size_t nla = 0, nlb = 0;
    gp_sim *a = make(integ, k1, v1, k2, v2), *b = sim_on_direct("0.05");
    int good = a && b;
    if (good) {
        for (int s = 0; good && s < n_steps; ++s) good = gp_sim_step(a, t_end) == GP_OK;
        if (good && !n_steps) good = gp_sim_evolve(a, t_mid) == GP_OK;
        int synced_at_save = gp_sim_synchronised(a);
        char blob[] = "caller data";
        good = good && gp_sim_checkpoint_save(a, path, blob, sizeof blob) == GP_OK;
        good = good && gp_sim_evolve(a, t_end) == GP_OK;
        char got[32] = "";
        size_t got_len = 0;
        good = good && gp_sim_checkpoint_load(b, path, got, sizeof got, &got_len) == GP_OK;
        good = good && got_len == sizeof blob && strcmp(got, blob) == 0;
        good = good && gp_sim_evolve(b, t_end) == GP_OK;
        good = good && gp_sim_get_particles(a, pa, va, NULL, NULL) == GP_OK
                    && gp_sim_get_particles(b, pb, vb, NULL, NULL) == GP_OK;
        gp_sim_level_counts(a, la, 64, &nla);
        gp_sim_level_counts(b, lb, 64, &nlb);
        if (!good) diag("%s / %s", gp_sim_last_error(a), gp_sim_last_error(b));
        if (n_steps && (strncmp(integ, "block", 5) == 0 || strcmp(integ, "hermite") == 0)) {
            diag("levels in use at the end: %zu", nla);
            good = good && !synced_at_save;
        }
    }
    ok(good && memcmp(pa, pb, sizeof pa) == 0 && memcmp(va, vb, sizeof va) == 0
           && nla == nlb && memcmp(la, lb, nla * sizeof *la) == 0
           && gp_sim_time(a) == gp_sim_time(b),
       "%s: restarted run is bit-identical to the uninterrupted one (t = %g)", integ, t_end);
    remove(path);
    gp_sim_free(a);
    gp_sim_free(b);
}


/* Rewrites the format 4 checkpoint at path as format 3 wrote it (the
 * header without n_particle_saved, no per-particle block, both CRCs
 * recomputed): 0 on success. The header is 248 bytes in format 3 and 256
 * in format 4; version at byte 8, header_crc at 16. */
static int to_format3(const char *path, size_t n_particle_doubles)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    static unsigned char b[1 << 20], o[1 << 20];
    size_t len = fread(b, 1, sizeof b, f);
    fclose(f);
    const size_t h3 = 248, h4 = 256, t_last_end = h4 + N * (10 * 8 + 2 * 8 + 1);
    size_t skip = n_particle_doubles * 8;
    if (len < t_last_end + skip + 8) return -1;
    memcpy(o, b, h3);
    memcpy(o + h3, b + h4, t_last_end - h4);
    memcpy(o + h3 + (t_last_end - h4), b + t_last_end + skip, len - 8 - t_last_end - skip);
    size_t body = len - 8 - (h4 - h3) - skip;
    uint64_t v = 3, z = 0;
    memcpy(o + 8, &v, 8);
    memcpy(o + 16, &z, 8);
    uint64_t hc = gp_crc32c(0, o, h3);
    memcpy(o + 16, &hc, 8);
    uint64_t tc = gp_crc32c(0, o, body);
    memcpy(o + body, &tc, 8);
    f = fopen(path, "wb");
    if (!f) return -1;
    int good = fwrite(o, 1, body + 8, f) == body + 8;
    return fclose(f) == 0 && good ? 0 : -1;
}

/* A format 3 file still loads for a scheme with no per-particle state
 * (and continues bit for bit); for hermite it is refused with a sentence. */
static void check_format3(void)
{
    const char *path = "integrators-checkpoint.v3.ckpt";
    static double pa[3 * N], va[3 * N], pb[3 * N], vb[3 * N];
    gp_sim *a = make("block-rk2", "eta", "0.05", "dt", "0.5"), *b = sim_on_direct("0.05");
    int good = a && b;
    for (int s = 0; good && s < 5; ++s) good = gp_sim_step(a, 1.0) == GP_OK;
    good = good && gp_sim_checkpoint_save(a, path, NULL, 0) == GP_OK && to_format3(path, 0) == 0
           && gp_sim_checkpoint_load(b, path, NULL, 0, NULL) == GP_OK
           && gp_sim_evolve(a, 1.0) == GP_OK && gp_sim_evolve(b, 1.0) == GP_OK
           && gp_sim_get_particles(a, pa, va, NULL, NULL) == GP_OK
           && gp_sim_get_particles(b, pb, vb, NULL, NULL) == GP_OK;
    if (!good) diag("format 3: %s / %s", a ? gp_sim_last_error(a) : "", b ? gp_sim_last_error(b) : "");
    ok(good && memcmp(pa, pb, sizeof pa) == 0 && memcmp(va, vb, sizeof va) == 0,
       "a format 3 checkpoint (block-rk2, between block steps) still loads and continues bit for bit");
    gp_sim_free(a);
    gp_sim_free(b);
    a = make("hermite", "eta", "0.02", "dt", "0.5");
    b = sim_on_direct("0.05");
    good = a && b;
    for (int s = 0; good && s < 3; ++s) good = gp_sim_step(a, 1.0) == GP_OK;
    good = good && gp_sim_checkpoint_save(a, path, NULL, 0) == GP_OK && to_format3(path, 3 * N) == 0;
    gp_status st = good ? gp_sim_checkpoint_load(b, path, NULL, 0, NULL) : GP_OK;
    const char *why = b ? gp_sim_last_error(b) : "";
    diag("hermite as format 3: %s", why);
    ok(good && st != GP_OK && strstr(why, "version 3") && strstr(why, "hermite"),
       "a started hermite in a format 3 checkpoint is refused with a sentence");
    gp_sim_free(a);
    gp_sim_free(b);
    remove(path);
}

int main(void)
{
    plan(19);
    small_cluster(N, 7, pos0, vel0, mass0);
    check_restart("leapfrog", "dt", "0.01", NULL, NULL, 0, 0.25, 0.5);
    check_restart("rk2", "dt", "0.01", NULL, NULL, 0, 0.25, 0.5);
    check_restart("rk4", "dt", "0.02", NULL, NULL, 0, 0.25, 0.5);
    check_restart("rk8pd", "rtol", "1e-6", "h0", "0.01", 5, 0, 0.2);
    check_restart("block-rk2", "eta", "0.05", "dt", "0.125", 0, 0.25, 0.5);
    check_restart("block-rk2", "eta", "0.05", "dt", "0.5", 7, 0, 1.0);
    check_restart("block-kdk", "eta", "0.05", "dt", "0.5", 7, 0, 1.0);
    /* and a shadow shift */
    check_restart("block-rk2", "eta", "0.05", "shadow", "0.125", 7, 0, 1.0);
    check_restart("block-kdk", "eta", "0.05", "shadow", "0.125", 7, 0, 1.0);
    /* and the jerk bound (a setting row after shadow's) */
    check_restart("block-rk2", "eta", "0.05", "eta_jerk", "0.5", 7, 0, 1.0);
    check_restart("block-kdk", "eta", "0.05", "eta_jerk", "0.5", 7, 0, 1.0);
    /* hermite: its jerks travel in the checkpoint (format 4); saved
     * synchronised at t = 0.25 and between block steps */
    check_restart("hermite", "eta", "0.02", "dt", "0.125", 0, 0.25, 0.5);
    check_restart("hermite", "eta", "0.02", "dt", "0.5", 7, 0, 1.0);
    check_format3();

    /* block-rk2 with everybody on level 0 is the shared-step rk2 */
    gp_sim *blk = make("block-rk2", "eta", "1e9", "dt", "0.015625");
    gp_sim *sh = make("rk2", "dt", "0.015625", NULL, NULL);
    static double p1[3 * N], v1[3 * N], p2[3 * N], v2[3 * N];
    int good = blk && sh && gp_sim_evolve(blk, 0.5) == GP_OK && gp_sim_evolve(sh, 0.5) == GP_OK
               && gp_sim_get_particles(blk, p1, v1, NULL, NULL) == GP_OK
               && gp_sim_get_particles(sh, p2, v2, NULL, NULL) == GP_OK;
    ok(good && memcmp(p1, p2, sizeof p1) == 0 && memcmp(v1, v2, sizeof v1) == 0,
       "block-rk2 on a single level reproduces shared-step rk2 bit for bit");
    gp_sim_free(blk);
    gp_sim_free(sh);

    /* block-kdk on a single level is the leapfrog (positions bit for bit) */
    blk = make("block-kdk", "eta", "1e9", "dt", "0.015625");
    sh = make("leapfrog", "dt", "0.015625", NULL, NULL);
    good = blk && sh && gp_sim_evolve(blk, 0.5) == GP_OK && gp_sim_evolve(sh, 0.5) == GP_OK
           && gp_sim_get_particles(blk, p1, v1, NULL, NULL) == GP_OK
           && gp_sim_get_particles(sh, p2, v2, NULL, NULL) == GP_OK;
    double dv = 0;
    for (int k = 0; k < 3 * N; ++k) dv = fmax(dv, fabs(v1[k] - v2[k]));
    ok(good && memcmp(p1, p2, sizeof p1) == 0, "block-kdk on a single level reproduces leapfrog positions bit for bit");
    ok(good && dv < 1e-14, "... and its synchronised velocities to rounding (max difference %.1e)", dv);
    gp_sim_free(blk);
    gp_sim_free(sh);

    /* a shadow shift only acts where a level changes: on one level it is
     * still rk2 bit for bit */
    blk = make("block-rk2", "eta", "1e9", "shadow", "0.125");
    sh = make("rk2", "dt", "0.0625", NULL, NULL);
    good = blk && sh && gp_sim_set_integrator_param(blk, "dt", "0.0625") == GP_OK
           && gp_sim_evolve(blk, 0.5) == GP_OK && gp_sim_evolve(sh, 0.5) == GP_OK
           && gp_sim_get_particles(blk, p1, v1, NULL, NULL) == GP_OK
           && gp_sim_get_particles(sh, p2, v2, NULL, NULL) == GP_OK;
    ok(good && memcmp(p1, p2, sizeof p1) == 0 && memcmp(v1, v2, sizeof v1) == 0,
       "block-rk2 shadow=0.125 on a single level is still rk2 bit for bit");
    gp_sim_free(blk);
    gp_sim_free(sh);
    return done_testing();
}
