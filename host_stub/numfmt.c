/* SPDX-License-Identifier: Apache-2.0 */
/*
 * numfmt.c — shortest round-trip formatting of doubles. %.17g always reads
 * back exactly but shows binary noise (0.14999999999999999); %.15g is what
 * people wrote but not always exact. Try 15, 16, 17 digits and keep the
 * first that parses back to the same bits.
 */
#include "numfmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *gh_fmt_double(char *buf, size_t len, double v)
{
    if (!buf || len == 0) return buf;
    for (int digits = 15; digits <= 17; ++digits) {
        snprintf(buf, len, "%.*g", digits, v);
        if (!isfinite(v) || strtod(buf, NULL) == v) break;
    }
    return buf;
}

char *gh_fmt_number_text(char *buf, size_t len, const char *text)
{
    char *end;
    double v = strtod(text, &end);
    if (end != text && *end == '\0' && isfinite(v)) return gh_fmt_double(buf, len, v);
    snprintf(buf, len, "%s", text);
    return buf;
}
