/* SPDX-License-Identifier: Apache-2.0 */
/*
 * conformance_abi12.h — the ABI 1.2 part of the conformance program.
 */
#ifndef GP_CONFORMANCE_ABI12_H
#define GP_CONFORMANCE_ABI12_H

/* Every 1.2 check, or one skip line for a plugin that speaks 1.0 or 1.1
 * only (abi_minor < 2, or a table too short for the 1.2 members). */
void test_abi12(void);

#endif
