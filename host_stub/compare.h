/* SPDX-License-Identifier: Apache-2.0 */
/* compare.h — `gravhost compare`: force errors of a test solver against a
 * reference on the same particles (compare.c). */
#ifndef GH_COMPARE_H
#define GH_COMPARE_H

#include <stdio.h>

/* argv[0] is "compare", the options follow. Returns the exit status. */
int gh_compare(int argc, char **argv);

/* The usage text of `gravhost compare` (--help prints it on stdout). */
void gh_compare_usage(FILE *f);

#endif
