/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dlopen-swap.h — for the loader test: a dlopen that, once armed,
 * re-points a symbolic link just before the real dlopen runs, as an
 * attacker racing the loader between its check and its load would. Linked
 * into a program that links the loader, it is the loader's dlopen.
 */
#ifndef GP_TEST_DLOPEN_SWAP_H
#define GP_TEST_DLOPEN_SWAP_H

/* At the next dlopen, link becomes a symbolic link to target. */
void dlopen_swap_arm(const char *link, const char *target);

#endif /* GP_TEST_DLOPEN_SWAP_H */
