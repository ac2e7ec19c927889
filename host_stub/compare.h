/* SPDX-License-Identifier: Apache-2.0 */
/* compare.h — `gravhost compare`: force errors of a test solver against a
 * reference on the same particles (compare.c). */
#ifndef GH_COMPARE_H
#define GH_COMPARE_H

/* argv: the arguments after "compare". Returns the exit status. */
int gh_compare(int argc, char **argv);

#endif
