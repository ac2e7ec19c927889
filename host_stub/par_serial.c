/* SPDX-License-Identifier: Apache-2.0 */
/* par_serial.c — par.h for one process (gravhost): every call trivial. */
#include "par.h"

#include "ckpt_path.h"

#include "ic.h"
#include "memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The rank count mpirun (OpenMPI, or an MPICH-style PMI) gave this
 * process, or 1. */
static long launched_ranks(void)
{
    static const char *const vars[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE" };
    for (size_t i = 0; i < sizeof vars / sizeof *vars; ++i) {
        const char *v = getenv(vars[i]);
        if (v && atol(v) > 1) return atol(v);
    }
    return 1;
}

/* Under mpirun -np P > 1 gravhost hands over to gravhost-mpi beside it
 * (same arguments): gravhost itself never links MPI, and P copies of a
 * one-process run would each take all the particles. */
int gh_par_init(int *argc, char ***argv)
{
    long p = launched_ranks();
    if (p == 1) return 0;
    char self[4096], path[4200];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len > 0) {
        self[len] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) *slash = '\0';
        snprintf(path, sizeof path, "%s/gravhost-mpi", self);
        if (access(path, X_OK) == 0) {
            char **args = *argv;
            args[0] = path;
            execv(path, args);
        }
    }
    (void)argc;
    fprintf(stderr, "gravhost: started as one of %ld MPI ranks, but this gravhost runs one process and there "
            "is no gravhost-mpi beside it: build it (make, with mpicc installed: libopenmpi-dev) or run "
            "without mpirun\n", p);
    return -1;
}
void gh_par_finalize(void) {}
int gh_par_rank(void) { return 0; }
int gh_par_size(void) { return 1; }
void gh_par_sum(double *x, size_t n) { (void)x; (void)n; }
uint64_t gh_par_sum_u64(uint64_t x) { return x; }
void gh_par_allgather_u64(uint64_t x, uint64_t *all) { all[0] = x; }
int gh_par_max_int(int x) { return x; }
int gh_par_agree(int rc, char *err, size_t errlen) { (void)err; (void)errlen; return rc; }
int gh_par_share_text(char **text, int rc, char *err, size_t errlen) { (void)text; (void)err; (void)errlen; return rc; }
int gh_par_same_start(int argc, char **argv, char *err, size_t errlen)
{
    (void)argc; (void)argv; (void)err; (void)errlen;
    return 0;
}

int gh_par_gather(gp_sim *sim, size_t *n_all, double **pos, double **vel, double **mass,
                  uint64_t **ids, char *err, size_t errlen)
{
    size_t n = gp_sim_count(sim);
    *n_all = n;
    double *p = pos ? malloc(3 * n * sizeof *p) : NULL, *v = vel ? malloc(3 * n * sizeof *v) : NULL;
    double *m = mass ? malloc(n * sizeof *m) : NULL;
    uint64_t *id = ids ? malloc(n * sizeof *id) : NULL;
    if ((pos && !p) || (vel && !v) || (mass && !m) || (ids && !id)) {
        free(p); free(v); free(m); free(id);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (gp_sim_get_particles(sim, p, v, m, id) != GP_OK) {
        free(p); free(v); free(m); free(id);
        snprintf(err, errlen, "%s", gp_sim_last_error(sim));
        return -1;
    }
    if (pos) *pos = p;
    if (vel) *vel = v;
    if (mass) *mass = m;
    if (ids) *ids = id;
    return 0;
}

int gh_par_set_particles(gp_sim *sim, size_t n, const double *pos, const double *vel,
                         const double *mass, const uint64_t *ids, char *err, size_t errlen)
{
    if (gp_sim_set_particles(sim, n, pos, vel, mass, ids) == GP_OK) return 0;
    snprintf(err, errlen, "%s", gp_sim_last_error(sim));
    return -1;
}

int gh_par_set_ic(gp_sim *sim, const char *model, size_t n, uint64_t seed, const void *opts, char *err,
                  size_t errlen)
{
    gp_ic ic;
    if (gp_ic_make(model, n, seed, opts, &ic, err, errlen) != 0) return -1;
    int rc = n == 0 ? gh_memory_check(ic.n, gp_sim_solver_name(sim), gp_sim_solver_capabilities(sim),
                                      err, errlen) : 0;
    if (rc == 0) rc = gh_par_set_particles(sim, ic.n, ic.pos, ic.vel, ic.mass, ic.id, err, errlen);
    gp_ic_free(&ic);
    return rc;
}

int gh_par_migrate(gp_sim *sim, char *err, size_t errlen) { (void)sim; (void)err; (void)errlen; return 0; }
void gh_par_attach(gp_sim *sim) { (void)sim; }

int gh_par_check_run(const char *plugin, const char *integrator, size_t n_switches, char *err, size_t errlen)
{
    (void)plugin; (void)integrator; (void)n_switches; (void)err; (void)errlen;
    return 0;
}

int gh_par_ckpt_path(const char *base, int restart, char *out, size_t len, char *err, size_t errlen)
{
    return gh_ckpt_path(base, 0, 1, restart, out, len, err, errlen);
}
