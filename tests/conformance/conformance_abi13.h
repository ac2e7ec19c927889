/* SPDX-License-Identifier: Apache-2.0 */
/*
 * conformance_abi13.h — the ABI 1.3 part of the conformance program.
 */
#ifndef GP_CONFORMANCE_ABI13_H
#define GP_CONFORMANCE_ABI13_H

/* Every 1.3 check, or one skip line for a plugin that speaks 1.2 or
 * older only (abi_minor < 3, or a table too short for the 1.3 members). */
void test_abi13(void);

#endif
