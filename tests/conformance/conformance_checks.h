/* SPDX-License-Identifier: Apache-2.0 */
/*
 * conformance_checks.h — what the parts of the conformance program share:
 * the plugin under test, its accuracy class and the checking helpers
 * (conformance.c holds the 1.0 contract, conformance_abi11.c the 1.1 one).
 */
#ifndef GP_CONFORMANCE_CHECKS_H
#define GP_CONFORMANCE_CHECKS_H

#include <stddef.h>
#include <stdint.h>

#include "gravplug.h"

extern const gp_api *api;
extern int quick;                      /* GP_CONFORMANCE_QUICK: small sizes */
extern int is_exact, exact_double;     /* accuracy class */
extern double tol_median, tol_high;    /* class tolerances */

int has_cap(uint64_t c);
int has_param(const char *name);
gp_solver *make_solver(void);          /* init with defaults, or bail */
/* Expects status want and a non-empty sentence from last_error(s). */
int rejects(gp_status got, gp_status want, gp_solver *s, const char *what);
int same_bits(const double *a, const double *b, size_t n);
/* acc (and pot) against a reference, by the plugin's class; one or two ok()s. */
int close_to_ref(size_t m, const double *acc, const double *ref_acc,
                 const double *pot, const double *ref_pot, const char *what);
/* A Plummer sphere with every 10th particle massless. */
void make_set(size_t n, uint64_t seed, double *pos, double *mass);

#endif
