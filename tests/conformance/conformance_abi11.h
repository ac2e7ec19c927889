/* SPDX-License-Identifier: Apache-2.0 */
/*
 * conformance_abi11.h — the ABI 1.1 part of the conformance program.
 */
#ifndef GP_CONFORMANCE_ABI11_H
#define GP_CONFORMANCE_ABI11_H

/* Every 1.1 check, or one skip line for a plugin that speaks 1.0 only. */
void test_abi11(void);

#endif
