/* SPDX-License-Identifier: Apache-2.0 */
/* settings.c — the shared parser of the integrators' parameter tables (see settings.h). */
#include "settings.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const gp_setting *gp_setting_find(const gp_setting *table, size_t n, const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; i < n; ++i)
        if (strcmp(table[i].name, name) == 0) return &table[i];
    return NULL;
}

static double *dbl(const gp_setting *s, void *base) { return (double *)((char *)base + s->offset); }
static int *integer(const gp_setting *s, void *base) { return (int *)((char *)base + s->offset); }

static void list_choices(const gp_setting *s, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int i = 0; s->choices[i]; ++i) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", i ? ", " : "", s->choices[i]);
    }
}

gp_status gp_setting_parse(const gp_setting *s, const char *value, void *base, char *why, size_t len)
{
#define REFUSE(...) do { snprintf(why, len, __VA_ARGS__); return GP_ERR_INVALID_ARGUMENT; } while (0)
    if (!value) REFUSE("integrator parameter %s: value is NULL", s->name);
    if (s->type == GP_SETTING_CHOICE) {
        for (int i = 0; s->choices[i]; ++i)
            if (strcmp(value, s->choices[i]) == 0) { *integer(s, base) = i; return GP_OK; }
        char list[256];
        list_choices(s, list, sizeof list);
        REFUSE("integrator parameter %s: \"%s\" is not one of %s", s->name, value, list);
    }
    char *end = NULL;
    if (s->type == GP_SETTING_INT) {
        errno = 0;
        long l = strtol(value, &end, 10);
        if (errno || end == value || *end || l < s->min || l > s->max)
            REFUSE("integrator parameter %s: \"%s\" is not an integer in [%d, %d]", s->name, value,
                   (int)s->min, (int)s->max);
        *integer(s, base) = (int)l;
        return GP_OK;
    }
    if (s->word && strcmp(value, s->word) == 0) { *dbl(s, base) = s->word_value; return GP_OK; }
    double v = strtod(value, &end);
    if (end == value || *end || !isfinite(v))
        REFUSE("integrator parameter %s: \"%s\" is not a finite number", s->name, value);
    if (s->min_open ? !(v > s->min) : v < s->min) {
        if (s->word)
            REFUSE("integrator parameter %s must be %s %g or \"%s\" (got %s)", s->name,
                   s->min_open ? ">" : ">=", s->min, s->word, value);
        REFUSE("integrator parameter %s must be %s %g (got %s)", s->name, s->min_open ? ">" : ">=", s->min, value);
    }
    *dbl(s, base) = v;
    return GP_OK;
#undef REFUSE
}

void gp_setting_defaults(const gp_setting *table, size_t n, void *base)
{
    char why[256];
    for (size_t i = 0; i < n; ++i) (void)gp_setting_parse(&table[i], table[i].deflt, base, why, sizeof why);
}

int gp_setting_format(const gp_setting *s, const void *base, char *buf, size_t len)
{
    void *b = (void *)base;
    switch (s->type) {
    case GP_SETTING_CHOICE: return snprintf(buf, len, "%s", s->choices[*integer(s, b)]);
    case GP_SETTING_INT: return snprintf(buf, len, "%d", *integer(s, b));
    case GP_SETTING_DOUBLE: break;
    }
    double v = *dbl(s, b);
    if (s->word && v == s->word_value) return snprintf(buf, len, "%s", s->word);
    return snprintf(buf, len, "%.17g", v);
}

double gp_setting_value(const gp_setting *s, const void *base)
{
    void *b = (void *)base;
    return s->type == GP_SETTING_DOUBLE ? *dbl(s, b) : (double)*integer(s, b);
}

void gp_setting_store(const gp_setting *s, void *base, double v)
{
    if (s->type == GP_SETTING_DOUBLE) *dbl(s, base) = v;
    else *integer(s, base) = (int)v;
}

int gp_setting_check(const gp_setting *s, double v, char *why, size_t len)
{
    if (s->type == GP_SETTING_DOUBLE) {
        if (s->word && v == s->word_value) return 0;
        if (isfinite(v) && (s->min_open ? v > s->min : v >= s->min)) return 0;
        snprintf(why, len, "is %g (must be finite and %s %g%s%s)", v, s->min_open ? ">" : ">=", s->min,
                 s->word ? ", or the value of " : "", s->word ? s->word : "");
        return -1;
    }
    double hi = s->max;
    if (s->type == GP_SETTING_CHOICE) {
        int count = 0;
        while (s->choices[count]) ++count;
        hi = count - 1;
    }
    double lo = s->type == GP_SETTING_CHOICE ? 0 : s->min;
    if (v >= lo && v <= hi && v == floor(v)) return 0;
    snprintf(why, len, "is %g (must be %d .. %d)", v, (int)lo, (int)hi);
    return -1;
}
