/* SPDX-License-Identifier: Apache-2.0 */
/*
 * diagnostics.h — the diagnostics log (TSV, columns in docs/CONFIG.md):
 * energies and their drift, momenta, virial ratio, Lagrangian radii,
 * particles per level, costs and wall time.
 */
#ifndef GH_DIAGNOSTICS_H
#define GH_DIAGNOSTICS_H

#include <stdio.h>

#include "gp_sim.h"

typedef struct gh_diag {
    FILE *f;
    double E0;            /* energy at t = 0 (restored on restart) */
    size_t n_fractions;
    const double *fractions;
} gh_diag;

/* The values of one log line (also used by tests and benches). */
typedef struct gh_diag_values {
    double K, W, E, p[3], L[3], virial;
    double radii[16];
} gh_diag_values;

/* Computes energies, momenta and Lagrangian radii of sim now. */
int gh_diag_measure(gp_sim *sim, const double *fractions, size_t n_fractions,
                    gh_diag_values *out, char *err, size_t errlen);

/* Lagrangian radii of n particles about their centre of mass. */
void gh_lagrangian_radii(size_t n, const double *pos, const double *mass,
                         const double *fractions, size_t n_fractions, double *radii);

/* Opens the log: a fresh one with metadata and header, or (append) the
 * existing one with lines after t_keep dropped (a restart). */
int gh_diag_open(gh_diag *d, const char *path, int append, double t_keep,
                 const char *meta, const double *fractions, size_t n_fractions,
                 char *err, size_t errlen);

/* Measures and writes one line. */
int gh_diag_write(gh_diag *d, gp_sim *sim, uint64_t interactions, double wall,
                  char *err, size_t errlen);

void gh_diag_close(gh_diag *d);

#endif
