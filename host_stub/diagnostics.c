/* SPDX-License-Identifier: Apache-2.0 */
/* diagnostics.c — the diagnostics log (see the header, docs/CONFIG.md). */
#include "diagnostics.h"
#include "file_checks.h"
#include "par.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct rm { double r, m; } rm;

static int by_r(const void *a, const void *b)
{
    double x = ((const rm *)a)->r, y = ((const rm *)b)->r;
    return (x > y) - (x < y);
}

void gh_lagrangian_radii(size_t n, const double *pos, const double *mass,
                         const double *fractions, size_t n_fractions, double *radii)
{
    double c[3] = { 0 }, M = 0;
    for (size_t i = 0; i < n; ++i) {
        for (int k = 0; k < 3; ++k) c[k] += mass[i] * pos[3 * i + k];
        M += mass[i];
    }
    for (int k = 0; k < 3; ++k) c[k] = M > 0 ? c[k] / M : 0;
    rm *a = malloc(n * sizeof *a);
    if (!a) { for (size_t f = 0; f < n_fractions; ++f) radii[f] = NAN; return; }
    for (size_t i = 0; i < n; ++i) {
        double dx = pos[3 * i] - c[0], dy = pos[3 * i + 1] - c[1], dz = pos[3 * i + 2] - c[2];
        double r2 = dx * dx + dy * dy + dz * dz;
        /* a finite distance beyond 1e154 overflows its square: hypot then */
        a[i].r = isfinite(r2) ? sqrt(r2) : hypot(hypot(dx, dy), dz);
        a[i].m = mass[i];
    }
    qsort(a, n, sizeof *a, by_r);
    size_t f = 0;
    double cum = 0;
    for (size_t i = 0; i < n && f < n_fractions; ++i) {
        cum += a[i].m;
        while (f < n_fractions && cum >= fractions[f] * M) radii[f++] = a[i].r;
    }
    while (f < n_fractions) radii[f++] = n ? a[n - 1].r : NAN;
    free(a);
}

int gh_diag_measure(gp_sim *sim, const double *fractions, size_t n_fractions,
                    gh_diag_values *v, char *err, size_t errlen)
{
    size_t n = gp_sim_count(sim);
    memset(v, 0, sizeof *v);
    int failed = gp_sim_energies(sim, &v->K, &v->W) != GP_OK || gp_sim_momenta(sim, v->p, v->L, NULL) != GP_OK;
    if (failed) snprintf(err, errlen, "diagnostics: %s", gp_sim_last_error(sim));
    /* agreed before the sums below, which are collective under MPI: a rank
     * that failed alone (out of memory in its own sums) must not leave the
     * others waiting in them */
    if (gh_par_agree(gh_par_rc(sim, failed), err, errlen) != 0) return -1;
    /* under MPI: sums over the ranks (one process: unchanged) */
    double sums[8] = { v->K, v->W, v->p[0], v->p[1], v->p[2], v->L[0], v->L[1], v->L[2] };
    gh_par_sum(sums, 8);
    v->K = sums[0]; v->W = sums[1];
    memcpy(v->p, &sums[2], sizeof v->p);
    memcpy(v->L, &sums[5], sizeof v->L);
    v->E = v->K + v->W;
    v->virial = v->W != 0 ? 2 * v->K / fabs(v->W) : 0;
    /* Lagrangian radii need every particle: gathered on rank 0, which alone
     * writes the log (the other ranks' radii stay 0) */
    double *pos = NULL, *mass = NULL;
    if (gh_par_gather(sim, &n, &pos, NULL, &mass, NULL, err, errlen) != 0) return -1;
    if (gh_par_rank() == 0)
        gh_lagrangian_radii(n, pos, mass, fractions, n_fractions > 16 ? 16 : n_fractions, v->radii);
    free(pos);
    free(mass);
    return 0;
}

static void write_header(gh_diag *d)
{
    fprintf(d->f, "time\tK\tW\tE\tdE_rel\tpx\tpy\tpz\tLx\tLy\tLz\tvirial");
    for (size_t f = 0; f < d->n_fractions; ++f) {
        char name[32];
        snprintf(name, sizeof name, "r%g", 100 * d->fractions[f]);
        for (char *c = name; *c; ++c) if (*c == '.') *c = '_';
        fprintf(d->f, "\t%s", name);
    }
    fprintf(d->f, "\tlevels\tsteps\tforce_calls\tparticle_forces\tinteractions\tsolver\twall\n");
}

/* Keeps comments, the header and data lines with time <= t_keep. */
static int truncate_after(const char *path, double t_keep, char *err, size_t errlen)
{
    char why[128];
    if (gp_file_output_ok(path, why, sizeof why) != 0) {
        snprintf(err, errlen, "cannot use the diagnostics log %s: %s", path, why);
        return -1;
    }
    /* never read through a link: its target's lines would be copied into the log */
    int ifd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (ifd < 0 && errno == ELOOP) {
        snprintf(err, errlen, "cannot use the diagnostics log %s: it is a symbolic link, which gravhost never "
                 "reads or writes through", path);
        return -1;
    }
    FILE *in = ifd >= 0 ? fdopen(ifd, "r") : NULL;
    if (!in) {
        if (ifd >= 0) close(ifd);
        return 0;   /* no old log: start a fresh one */
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int ofd = gp_file_create_new(tmp, why, sizeof why);
    FILE *out = ofd >= 0 ? fdopen(ofd, "w") : NULL;
    if (!out) {
        if (ofd >= 0) close(ofd);
        fclose(in);
        snprintf(err, errlen, "cannot write %s: %s", tmp, ofd >= 0 ? strerror(errno) : why);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    int failed = 0, e = 0;
    while (!failed && getline(&line, &cap, in) > 0) {
        char *end;
        double t = strtod(line, &end);
        if ((line[0] == '#' || end == line || t <= t_keep) && fputs(line, out) == EOF) { failed = 1; e = errno; }
    }
    free(line);
    fclose(in);
    if (fclose(out) != 0 && !failed) { failed = 1; e = errno; }
    if (!failed && rename(tmp, path) != 0) { failed = 1; e = errno; }
    if (failed) {
        remove(tmp);
        snprintf(err, errlen, "cannot rewrite the diagnostics log %s (a restart keeps its lines up to the "
                 "checkpoint's time): %s; free some space or raise the file size limit (ulimit -f), then restart "
                 "again", path, strerror(e));
        return -1;
    }
    return 1;
}

int gh_diag_open(gh_diag *d, const char *path, int append, double t_keep,
                 const char *meta, const double *fractions, size_t n_fractions,
                 char *err, size_t errlen)
{
    d->fractions = fractions;
    d->n_fractions = n_fractions;
    int existed = 0;
    if (append) {
        existed = truncate_after(path, t_keep, err, errlen);
        if (existed < 0) return -1;
    }
    char why[128];
    if (gp_file_output_ok(path, why, sizeof why) != 0) {
        snprintf(err, errlen, "cannot write the diagnostics log %s: %s", path, why);
        return -1;
    }
    d->f = gp_file_open_log(path, existed, why, sizeof why);
    if (!d->f) {
        snprintf(err, errlen, "cannot write the diagnostics log %s: %s", path, why);
        return -1;
    }
    if (!existed) {
        fprintf(d->f, "%s", meta);
        write_header(d);
    }
    fflush(d->f);
    return 0;
}

int gh_diag_write(gh_diag *d, gp_sim *sim, uint64_t interactions, double wall,
                  char *err, size_t errlen)
{
    gh_diag_values v;
    if (gh_diag_measure(sim, d->fractions, d->n_fractions, &v, err, errlen) != 0) return -1;
    uint64_t counts[64];
    size_t used = 0;
    gp_sim_level_counts(sim, counts, 64, &used);
    uint64_t steps = 0, fc = 0, pf = 0;
    gp_sim_counter(sim, "steps", &steps);
    gp_sim_counter(sim, "force_calls", &fc);
    gp_sim_counter(sim, "particle_forces", &pf);
    if (gh_par_size() > 1) {   /* per-rank counts summed; steps and calls are the same on every rank */
        size_t all_used = (size_t)gh_par_max_int((int)used);
        for (size_t l = 0; l < all_used; ++l) counts[l] = gh_par_sum_u64(l < used ? counts[l] : 0);
        used = all_used;
        pf = gh_par_sum_u64(pf);
    }
    double drift = d->E0 != 0 ? (v.E - d->E0) / fabs(d->E0) : 0;
    /* every rank holds E0 and E, so all stop together (E0 from an edited
     * checkpoint, far below the run's energies, would log inf) */
    if (!isfinite(drift)) {
        snprintf(err, errlen, "at t = %.10g: the energy drift (E - E0) / |E0| overflows: E = %g against the run's "
                 "initial energy E0 = %g (the E0 a checkpoint carried does not belong to this run?)",
                 gp_sim_time(sim), v.E, d->E0);
        return -1;
    }
    if (!d->f) return 0;   /* a rank other than 0 */
    fprintf(d->f, "%.10g\t%.15g\t%.15g\t%.15g\t%.6e\t%.6e\t%.6e\t%.6e\t%.6e\t%.6e\t%.6e\t%.8f",
            gp_sim_time(sim), v.K, v.W, v.E, drift, v.p[0], v.p[1], v.p[2], v.L[0], v.L[1], v.L[2], v.virial);
    for (size_t f = 0; f < d->n_fractions; ++f) fprintf(d->f, "\t%.6g", v.radii[f]);
    fputc('\t', d->f);
    for (size_t l = 0; l < used || l == 0; ++l)
        fprintf(d->f, "%s%llu", l ? "," : "", (unsigned long long)(used ? counts[l] : 0));
    fprintf(d->f, "\t%llu\t%llu\t%llu\t%llu\t%s\t%.3f\n", (unsigned long long)steps,
            (unsigned long long)fc, (unsigned long long)pf, (unsigned long long)interactions,
            gp_sim_solver_name(sim), wall);
    fflush(d->f);
    return 0;
}

void gh_diag_close(gh_diag *d)
{
    if (d->f) fclose(d->f);
    d->f = NULL;
}
