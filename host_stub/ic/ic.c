/*
 * ic.c — gp_ic_make: finds the model, parses its options, seeds the
 * generator, runs the model, moves the result to its centre-of-mass frame.
 */
#include "ic_internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const ic_model *const models[] = {
    &ic_model_plummer, &ic_model_hernquist, &ic_model_nfw, &ic_model_galaxy,
    &ic_model_uniform, &ic_model_kepler,    &ic_model_file, &ic_model_snapshot,
};
#define N_MODELS (sizeof models / sizeof models[0])

static const char *const model_names[] = {
    "plummer", "hernquist", "nfw", "galaxy", "uniform", "kepler", "file", "snapshot", NULL,
};

int ic_fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int by_id(const void *a, const void *b)
{
    uint64_t x = ((const uint64_t *)a)[0], y = ((const uint64_t *)b)[0];
    return x < y ? -1 : x > y;
}

int ic_find_duplicate_id(const uint64_t *id, size_t n, size_t *a, size_t *b)
{
    if (!id || n < 2) return 0;
    uint64_t *pairs = malloc(2 * n * sizeof *pairs); /* (id, index) */
    if (!pairs) return -1;
    for (size_t i = 0; i < n; ++i) {
        pairs[2 * i] = id[i];
        pairs[2 * i + 1] = i;
    }
    qsort(pairs, n, 2 * sizeof *pairs, by_id);
    int found = 0;
    for (size_t i = 1; i < n && !found; ++i)
        if (pairs[2 * i] == pairs[2 * i - 2]) {
            size_t x = (size_t)pairs[2 * i - 1], y = (size_t)pairs[2 * i + 1];
            *a = x < y ? x : y;
            *b = x < y ? y : x;
            found = 1;
        }
    free(pairs);
    return found;
}

static const ic_model *find_model(const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; i < N_MODELS; ++i)
        if (strcmp(models[i]->name, name) == 0) return models[i];
    return NULL;
}

GRAVPLUG_EXPORT const char *const *gp_ic_models(void) { return model_names; }

GRAVPLUG_EXPORT const gp_ic_opt_info *gp_ic_describe(const char *model, size_t *count)
{
    const ic_model *m = find_model(model);
    if (count) *count = m ? m->n_opts : 0;
    return m ? m->opts : NULL;
}

GRAVPLUG_EXPORT const char *gp_ic_summary(const char *model)
{
    const ic_model *m = find_model(model);
    return m ? m->summary : NULL;
}

static size_t opt_index(const ic_vals *v, const char *name)
{
    for (size_t i = 0; i < v->count; ++i)
        if (strcmp(v->info[i].name, name) == 0) return i;
    return (size_t)-1;
}

double ic_num(const ic_vals *v, const char *name)
{
    size_t i = opt_index(v, name);
    return i == (size_t)-1 ? NAN : v->num[i];
}

const char *ic_str(const ic_vals *v, const char *name)
{
    size_t i = opt_index(v, name);
    return i == (size_t)-1 ? NULL : v->str[i];
}

/* Checks x against a range written "(lo,hi)", "[lo,hi]", mixed, with
 * "inf"/"-inf" allowed. A NULL or unparsable range accepts everything. */
static int in_range(double x, const char *range)
{
    if (!range || (range[0] != '(' && range[0] != '[')) return 1;
    char *end;
    double lo = strtod(range + 1, &end);
    if (*end != ',') return 1;
    double hi = strtod(end + 1, &end);
    if (*end != ')' && *end != ']') return 1;
    int lo_open = range[0] == '(', hi_open = *end == ')';
    if (lo_open ? !(x > lo) : !(x >= lo)) return 0;
    if (hi_open ? !(x < hi) : !(x <= hi)) return 0;
    return 1;
}

static int enum_has(const char *allowed, const char *word)
{
    size_t len = strlen(word);
    const char *p = allowed;
    while (p && *p) {
        const char *bar = strchr(p, '|');
        size_t l = bar ? (size_t)(bar - p) : strlen(p);
        if (l == len && strncmp(p, word, len) == 0) return 1;
        p = bar ? bar + 1 : NULL;
    }
    return 0;
}

static int parse_one(const ic_model *m, size_t i, const char *text, ic_vals *v,
                     char *err, size_t errlen)
{
    const gp_ic_opt_info *o = &m->opts[i];
    char *end;
    switch (o->type) {
    case GP_IC_OPT_DOUBLE:
    case GP_IC_OPT_INT: {
        errno = 0;
        double x = strtod(text, &end);
        while (*end == ' ' || *end == '\t') ++end;
        /* ERANGE with a nonzero result is a subnormal: finite, kept */
        if (end == text || *end != '\0' || (errno == ERANGE && x == 0) || !isfinite(x))
            return ic_fail(err, errlen,
                           "Option '%s' of model '%s' must be a finite number; got '%s'.",
                           o->name, m->name, text);
        if (o->type == GP_IC_OPT_INT && x != floor(x))
            return ic_fail(err, errlen,
                           "Option '%s' of model '%s' must be a whole number; got '%s'.",
                           o->name, m->name, text);
        if (!in_range(x, o->allowed))
            return ic_fail(err, errlen,
                           "Option '%s' of model '%s' must lie in %s; got %s.",
                           o->name, m->name, o->allowed, text);
        v->num[i] = x;
        v->str[i] = NULL;
        return 0;
    }
    case GP_IC_OPT_BOOL:
        if (!strcasecmp(text, "true") || !strcmp(text, "1") || !strcasecmp(text, "yes"))
            v->num[i] = 1;
        else if (!strcasecmp(text, "false") || !strcmp(text, "0") || !strcasecmp(text, "no"))
            v->num[i] = 0;
        else
            return ic_fail(err, errlen,
                           "Option '%s' of model '%s' must be true or false; got '%s'.",
                           o->name, m->name, text);
        return 0;
    case GP_IC_OPT_ENUM:
        if (!enum_has(o->allowed, text))
            return ic_fail(err, errlen,
                           "Option '%s' of model '%s' must be one of %s; got '%s'.",
                           o->name, m->name, o->allowed, text);
        v->str[i] = text;
        return 0;
    case GP_IC_OPT_STRING:
        v->str[i] = text;
        return 0;
    }
    return ic_fail(err, errlen, "Option '%s' has an unknown type (a bug in gravplug).", o->name);
}

static void list_options(const ic_model *m, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < m->n_opts && used < len; ++i) {
        int w = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", m->opts[i].name);
        if (w < 0) break;
        used += (size_t)w;
    }
    if (m->n_opts == 0) snprintf(buf, len, "(none)");
}

static int parse_options(const ic_model *m, const gp_ic_opts *opts, ic_vals *v,
                         char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    v->model = m->name;
    v->info = m->opts;
    v->count = m->n_opts;
    /* Defaults first, through the same parser, so a bad default is caught. */
    for (size_t i = 0; i < m->n_opts; ++i)
        if (parse_one(m, i, m->opts[i].default_value, v, err, errlen) != 0) return -1;
    if (!opts) return 0;
    if (opts->n_params > 0 && !opts->params)
        return ic_fail(err, errlen, "The options of model '%s' list %zu settings but give no array.",
                       m->name, opts->n_params);
    for (size_t k = 0; k < opts->n_params; ++k) {
        const gp_param *p = &opts->params[k];
        if (!p->name || !p->value)
            return ic_fail(err, errlen, "Option %zu of model '%s' has no name or no value.",
                           k, m->name);
        size_t i = opt_index(v, p->name);
        if (i == (size_t)-1) {
            char names[512];
            list_options(m, names, sizeof names);
            return ic_fail(err, errlen, "Model '%s' has no option '%s'; its options are: %s.",
                           m->name, p->name, names);
        }
        if (parse_one(m, i, p->value, v, err, errlen) != 0) return -1;
    }
    return 0;
}

int ic_alloc(gp_ic *out, size_t n, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (n > SIZE_MAX / (3 * sizeof(double)))
        return ic_fail(err, errlen, "%zu particles do not fit in memory.", n);
    out->pos = calloc(n ? 3 * n : 1, sizeof(double));
    out->vel = calloc(n ? 3 * n : 1, sizeof(double));
    out->mass = calloc(n ? n : 1, sizeof(double));
    out->id = calloc(n ? n : 1, sizeof(uint64_t));
    if (!out->pos || !out->vel || !out->mass || !out->id) {
        gp_ic_free(out);
        return ic_fail(err, errlen,
                       "Out of memory allocating %zu particles (%.3g GB); use fewer particles.",
                       n, (double)n * 64.0 / 1e9);
    }
    out->n = n;
    for (size_t i = 0; i < n; ++i) out->id[i] = i;
    return 0;
}

int ic_require_n(const char *model, size_t n, char *err, size_t errlen)
{
    if (n == 0)
        return ic_fail(err, errlen, "Model '%s' needs at least one particle; n was 0.", model);
    return 0;
}

void ic_isotropic(gsl_rng *rng, double r, double *x)
{
    double z = 2.0 * gsl_rng_uniform(rng) - 1.0;
    double phi = 2.0 * M_PI * gsl_rng_uniform(rng);
    double s = sqrt(fmax(0.0, 1.0 - z * z));
    x[0] = r * s * cos(phi);
    x[1] = r * s * sin(phi);
    x[2] = r * z;
}

static void shift_to_frame(gp_ic *ic, int positions)
{
    double mt = 0, cx[3] = {0, 0, 0}, cv[3] = {0, 0, 0};
    for (size_t i = 0; i < ic->n; ++i) {
        mt += ic->mass[i];
        for (int k = 0; k < 3; ++k) {
            cx[k] += ic->mass[i] * ic->pos[3 * i + k];
            cv[k] += ic->mass[i] * ic->vel[3 * i + k];
        }
    }
    if (!(mt > 0)) return;
    for (int k = 0; k < 3; ++k) { cx[k] /= mt; cv[k] /= mt; }
    for (size_t i = 0; i < ic->n; ++i)
        for (int k = 0; k < 3; ++k) {
            if (positions) ic->pos[3 * i + k] -= cx[k];
            ic->vel[3 * i + k] -= cv[k];
        }
}

void ic_to_com_frame(gp_ic *ic) { shift_to_frame(ic, 1); }

void ic_apply_frame(gp_ic *ic, const ic_vals *v)
{
    const char *frame = ic_str(v, "frame");
    if (!frame || strcmp(frame, "com") == 0) shift_to_frame(ic, 1);
    else if (strcmp(frame, "momentum") == 0) shift_to_frame(ic, 0);
}

GRAVPLUG_EXPORT void gp_ic_free(gp_ic *ic)
{
    if (!ic) return;
    free(ic->pos);
    free(ic->vel);
    free(ic->mass);
    free(ic->id);
    memset(ic, 0, sizeof *ic);
}

GRAVPLUG_EXPORT int gp_ic_make(const char *model, size_t n, uint64_t seed, const void *opts,
                               gp_ic *out, char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!out) return ic_fail(err, errlen, "gp_ic_make needs somewhere to put the particles (out was NULL).");
    memset(out, 0, sizeof *out);
    const ic_model *m = find_model(model);
    if (!m) {
        char names[256];
        size_t used = 0;
        for (size_t i = 0; i < N_MODELS && used < sizeof names; ++i) {
            int w = snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", models[i]->name);
            if (w < 0) break;
            used += (size_t)w;
        }
        return ic_fail(err, errlen, "Unknown initial-condition model '%s'; the models are: %s.",
                       model ? model : "(null)", names);
    }
    ic_vals v;
    if (parse_options(m, (const gp_ic_opts *)opts, &v, err, errlen) != 0) return -1;

    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng) return ic_fail(err, errlen, "Out of memory creating the random number generator.");
    /* GSL seeds with an unsigned long; mt19937 treats 0 as its default seed
     * 4357, so fold the 64 bits and keep 0 distinct. */
    gsl_rng_set(rng, (unsigned long)(seed ^ (seed >> 32)) + (seed == 0 ? 0x9e3779b9UL : 0));
    int rc = m->make(n, rng, &v, out, err, errlen);
    gsl_rng_free(rng);
    if (rc != 0) {
        gp_ic_free(out);
        return -1;
    }
    return 0;
}
