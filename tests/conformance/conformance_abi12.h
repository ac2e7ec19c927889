/* SPDX-License-Identifier: Apache-2.0 */
/*
 * conformance_abi12.h — the ABI 1.2 part of the conformance program.
 */
#ifndef GP_CONFORMANCE_ABI12_H
#define GP_CONFORMANCE_ABI12_H

/* Every 1.2 check, or one skip line for a plugin that speaks 1.0 or 1.1
 * only (abi_minor < 2, or a table too short for the 1.2 members). */
void test_abi12(void);

/* Huayno's timestep_ij transcribed (eta = 1, dir = +1, mu = G (m_i +
 * m_j)): the brute-force reference of the pairwise steps. */
double conf_huayno_tau(const double *xi, const double *vi, double mi, const double *xj,
                       const double *vj, double mj, double G, double eps2);

#endif
