/* SPDX-License-Identifier: Apache-2.0 */
/* numfmt.h — doubles printed in the shortest form that reads back equal. */
#ifndef GH_NUMFMT_H
#define GH_NUMFMT_H

#include <stddef.h>

/* Writes v into buf as the shortest of %.15g, %.16g, %.17g that strtod
 * turns back into exactly v (0.15, not 0.14999999999999999). Returns buf. */
char *gh_fmt_double(char *buf, size_t len, double v);

/* If text is a number, rewrites it into buf in the shortest round-trip
 * form; otherwise copies it unchanged. Returns buf. */
char *gh_fmt_number_text(char *buf, size_t len, const char *text);

#endif
