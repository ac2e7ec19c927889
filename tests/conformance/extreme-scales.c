/* SPDX-License-Identifier: Apache-2.0 */
/* extreme-scales: every plugin, in every precision it offers, gives the
 * right forces for a Plummer sphere whose lengths are scaled by 1e-30 ..
 * 1e30 and whose masses by 1e-50 .. 1e300, and refuses with a sentence, instead of answering GP_OK with inf or NaN,
 * where the true result overflows double.
 *
 * Gravity is scale-free: with x -> sx x, m -> sm m, eps -> sx eps, the
 * accelerations scale by sm / sx^2 and the potentials by sm / sx. The
 * reference is cpu-direct at unit scale, scaled; each plugin must match
 * it to its own accuracy (exact plugins 1e-6, tree plugins their tree
 * error) at every scale, through compute_forces and compute_field.
 *
 * Plugins: argv[1..], or else $GP_BUILD (default: the build tree it was
 * compiled in)/plugins/gravplug-{cpu-direct,
 * cpu-tree}.so and, where built, the CUDA plugins on the CPU emulation of
 * CUDA ($GP_BUILD/emu/plugins). */
#include "tap.h"

#include <stdint.h>
#include <unistd.h>

#include "gravplug.h"
#include "gravplug_loader.h"
#include "plugin-by-name.h"

#define N 2000
#define NF 64   /* field points */

static double pos[3 * N], mass[N], pts[3 * NF];
static double ref_acc[2][3 * N], ref_pot[2][N];      /* [eps index] */
static double ref_facc[2][3 * NF], ref_fpot[2][NF];
static const gp_api *ref;
static size_t ref_n;                                 /* particles of the reference */
static double spos[3 * N], smass[N], spts[3 * NF], acc[3 * N], pot[N], facc[3 * NF], fpot[NF];
static const double eps0[2] = { 0.0, 0.01 };

static uint64_t rs = 4242;
static double urand(void)
{
    rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
    return ((double)(rs >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static void plummer(size_t n, double *p, double *m)
{
    for (size_t i = 0; i < n; i++) {
        double r = 0.59 / sqrt(pow(urand() * 0.99, -2.0 / 3.0) - 1.0);
        double z = 2 * urand() - 1, ph = 6.283185307179586 * urand(), s = sqrt(1 - z * z);
        p[3 * i] = r * s * cos(ph); p[3 * i + 1] = r * s * sin(ph); p[3 * i + 2] = r * z;
        if (m) m[i] = (0.5 + urand()) / (double)n;
    }
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median and max relative error of m vectors (acc, 3 each) and scalars
 * (pot) against the reference times the scale factors; NaN when any value
 * is not finite. */
static void rel_errors(size_t m, const double *a, const double *p, const double *ra,
                       const double *rp, double fa, double fp, double *med, double *max,
                       double *pmed)
{
    static double e[N], ep[N];
    int finite = 1;
    for (size_t k = 0; k < m; k++) {
        double d2 = 0, n2 = 0;
        for (int c = 0; c < 3; c++) {
            double want = ra[3 * k + c] * fa;
            finite &= isfinite(a[3 * k + c]);
            d2 += (a[3 * k + c] - want) / fa * ((a[3 * k + c] - want) / fa);
            n2 += ra[3 * k + c] * ra[3 * k + c];
        }
        e[k] = sqrt(d2 / n2);
        finite &= isfinite(p[k]);
        ep[k] = fabs(p[k] / fp - rp[k]) / fabs(rp[k]);
    }
    qsort(e, m, sizeof *e, cmpd);
    qsort(ep, m, sizeof *ep, cmpd);
    *med = finite ? e[m / 2] : NAN;
    *max = finite ? e[m - 1] : NAN;
    *pmed = finite ? ep[m / 2] : NAN;
}

static int has_param(const gp_api *api, const char *name)
{
    size_t np = 0;
    const gp_param_info *pi = api->describe_params(&np);
    for (size_t k = 0; k < np; k++)
        if (!strcmp(pi[k].name, name)) return 1;
    return 0;
}

static const double sx_list[] = { 1e-30, 1e-20, 1e-10, 1.0, 1e10, 1e20, 1e30 };
static const double sm_list[] = { 1e-50, 1.0, 1e300 };
#define NSX (sizeof sx_list / sizeof *sx_list)
#define NSM (sizeof sm_list / sizeof *sm_list)

/* cpu-direct at unit scale on the first n particles, with and without
 * softening. */
static void reference(size_t n)
{
    if (ref_n == n) return;
    for (int ke = 0; ke < 2; ke++) {
        gp_solver *d;
        char epsbuf[64];
        snprintf(epsbuf, sizeof epsbuf, "%.17g", eps0[ke]);
        if (ref->init(&d, NULL) != GP_OK || ref->set_param(d, "eps", epsbuf) != GP_OK ||
            ref->set_particles(d, n, pos, mass) != GP_OK ||
            ref->compute_forces(d, ref_acc[ke], ref_pot[ke]) != GP_OK ||
            ref->compute_field(d, NF, pts, ref_facc[ke], ref_fpot[ke]) != GP_OK)
            bail("cpu-direct failed on the unit-scale reference");
        ref->finalize(d);
    }
    double amax = 0;
    for (size_t i = 0; i < 3 * n; i++) amax = fabs(ref_acc[0][i]) > amax ? fabs(ref_acc[0][i]) : amax;
    diag("unit problem: %zu particles, largest |a| component %.3g (eps 0)", n, amax);
    ref_n = n;
}

/* One plugin in one precision (prec NULL: the plugin has none) across all
 * scales, with and without softening. */
static void run_plugin(const gp_api *api, const char *prec)
{
    /* the CUDA emulation runs a warp at a time on one core: fewer particles */
    const size_t n = api->capabilities & GP_CAP_GPU ? 256 : N;
    reference(n);
    const int exact = (api->capabilities & GP_CAP_EXACT) != 0;
    /* accuracy: exact plugins to float rounding at worst (a GPU's mixed
     * mode), trees to their error at the default theta */
    const double tol_med = exact ? 1e-6 : 3e-3, tol_max = exact ? 1e-4 : 0.1;
    const char *pname = prec ? prec : "default";
    for (size_t a = 0; a < NSX; a++)
        for (size_t b = 0; b < NSM; b++)
            for (int ke = 0; ke < 2; ke++) {
                double sx = sx_list[a], sm = sm_list[b];
                double fa = sm / (sx * sx), fp = sm / sx;
                /* the unit problem's |a| reach ~12 (diag below): scaled by
                 * 1e300 they fit, by >= 1e310 the larger ones overflow */
                int overflow = fa > 1e305;
                gp_solver *s = NULL;
                if (api->init(&s, NULL) != GP_OK) {
                    ok(0, "%s %s: init failed: %s", api->name, pname, api->last_error(NULL));
                    continue;
                }
                char epsbuf[64];
                snprintf(epsbuf, sizeof epsbuf, "%.17g", eps0[ke] * sx);
                gp_status st = api->set_param(s, "eps", epsbuf);
                if (st == GP_OK && prec) st = api->set_param(s, "precision", prec);
                for (size_t i = 0; i < 3 * n; i++) spos[i] = pos[i] * sx;
                for (size_t i = 0; i < n; i++) smass[i] = mass[i] * sm;
                for (size_t i = 0; i < 3 * NF; i++) spts[i] = pts[i] * sx;
                if (st == GP_OK) st = api->set_particles(s, n, spos, smass);
                if (st != GP_OK) {
                    ok(0, "%s %s x%g m%g eps%g: setup failed: %s", api->name, pname, sx,
                          sm, eps0[ke], api->last_error(s));
                    api->finalize(s);
                    continue;
                }
                for (size_t i = 0; i < 3 * n; i++) acc[i] = 0;
                gp_status sf = api->compute_forces(s, acc, pot);
                gp_status sg = api->compute_field(s, NF, spts, facc, fpot);
                if (overflow) {
                    const char *msg = api->last_error(s);
                    ok(sf != GP_OK && sg != GP_OK && msg && *msg,
                          "%s %s lengths x%g masses x%g eps %g: results overflow double -> "
                          "error with a sentence (forces %d, field %d: %s)",
                          api->name, pname, sx, sm, eps0[ke], (int)sf, (int)sg, msg ? msg : "");
                } else {
                    double med, max, pmed, fmed, fmax, fpmed;
                    rel_errors(n, acc, pot, ref_acc[ke], ref_pot[ke], fa, fp, &med, &max, &pmed);
                    rel_errors(NF, facc, fpot, ref_facc[ke], ref_fpot[ke], fa, fp, &fmed, &fmax, &fpmed);
                    int pass = sf == GP_OK && sg == GP_OK && med < tol_med && max < tol_max &&
                               pmed < tol_med && fmed < tol_med && fmax < tol_max && fpmed < tol_med;
                    ok(pass,
                          "%s %s lengths x%g masses x%g eps %g: acc median %.1e max %.1e, pot "
                          "median %.1e; field %.1e %.1e %.1e (status %d %d)",
                          api->name, pname, sx, sm, eps0[ke], med, max, pmed, fmed, fmax, fpmed,
                          (int)sf, (int)sg);
                }
                api->finalize(s);
            }
}

int main(int argc, char **argv)
{
    /* GP_BUILD, else the build tree this test was compiled in */
    const char *b = getenv("GP_BUILD");
    char build[1024];
    snprintf(build, sizeof build, "%s/..", GP_BUILD_PLUGIN_DIR);
    if (!b) b = build;
    char path[4][4096];
    const char *paths[8];
    int np = 0;
    if (argc > 1) {
        for (int i = 1; i < argc && np < 8; i++) paths[np++] = argv[i];
    } else {
        snprintf(path[0], sizeof path[0], "%s/plugins/gravplug-cpu-direct.so", b);
        snprintf(path[1], sizeof path[1], "%s/plugins/gravplug-cpu-tree.so", b);
        snprintf(path[2], sizeof path[2], "%s/emu/plugins/gravplug-cuda-direct.so", b);
        snprintf(path[3], sizeof path[3], "%s/emu/plugins/gravplug-cuda-tree.so", b);
        for (int i = 0; i < 4; i++)
            if (i < 2 || access(path[i], R_OK) == 0) paths[np++] = path[i];
            else diag("%s not built: not checked", path[i]);
    }
    char refpath[4096];
    snprintf(refpath, sizeof refpath, "%s/plugins/gravplug-cpu-direct.so", b);
    ref = tl_plugin_at(refpath);
    if (!ref) skip_all("cpu-direct (the reference) is not built");
    plan_lazy();

    plummer(N, pos, mass);
    plummer(NF, pts, NULL);

    for (int k = 0; k < np; k++) {
        const gp_api *api = tl_plugin_at(paths[k]);
        if (!api) {
            ok(0, "%s loads", paths[k]);
            continue;
        }
        if (!has_param(api, "precision")) {
            run_plugin(api, NULL);
            continue;
        }
        static const char *precs[] = { "double", "mixed", "single" };
        for (int q = 0; q < 3; q++) run_plugin(api, precs[q]);
    }
    return done_testing();
}
