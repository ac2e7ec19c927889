/* SPDX-License-Identifier: Apache-2.0 */
/*
 * make.c — gp_ic_make and gp_ic_make_range: finds the model, parses its
 * options, then either draws a sampled model block by block (each block
 * with its own seeded generator, ic.h) and moves it to its frame with
 * sums combined block by block, or runs a whole-set model (kepler, file,
 * snapshot). A whole sampled set of more than one block is made on the
 * OpenMP threads, a run of blocks each.
 */
#include "model.h"

#include <errno.h>
#include <omp.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The models, in the order gravic --list shows them: adding one is its own
 * file (an ic_model named ic_model_NAME) plus one word here. */
#define GP_IC_MODELS(X) X(plummer) X(hernquist) X(nfw) X(galaxy) X(uniform) X(kepler) X(file) X(snapshot)

#define GP_IC_DECLARE(name) extern const ic_model ic_model_##name;
GP_IC_MODELS(GP_IC_DECLARE)
#define GP_IC_ENTRY(name) &ic_model_##name,
static const ic_model *const models[] = { GP_IC_MODELS(GP_IC_ENTRY) };
#define N_MODELS (sizeof models / sizeof models[0])
#define GP_IC_NAME(name) #name,
static const char *const model_names[] = { GP_IC_MODELS(GP_IC_NAME) NULL };

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
        size_t i = ic_opt_index(v, p->name);
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

/* ---- the blocks of a sampled model ------------------------------------------- */

#define BLOCK ((size_t)GP_IC_BLOCK)

/* Keeps particles [lo, hi) of ic (indices into its arrays). */
static void keep_range(gp_ic *ic, size_t lo, size_t hi)
{
    size_t k = hi - lo;
    if (lo > 0) {
        memmove(ic->pos, ic->pos + 3 * lo, 3 * k * sizeof *ic->pos);
        memmove(ic->vel, ic->vel + 3 * lo, 3 * k * sizeof *ic->vel);
        memmove(ic->mass, ic->mass + lo, k * sizeof *ic->mass);
        memmove(ic->id, ic->id + lo, k * sizeof *ic->id);
    }
    size_t had = ic->n;
    ic->n = k;
    if (k == had) return;
    /* shrinking: a failed realloc keeps the larger block, which is fine */
    void *p;
    if ((p = realloc(ic->pos, (k ? 3 * k : 1) * sizeof *ic->pos))) ic->pos = p;
    if ((p = realloc(ic->vel, (k ? 3 * k : 1) * sizeof *ic->vel))) ic->vel = p;
    if ((p = realloc(ic->mass, (k ? k : 1) * sizeof *ic->mass))) ic->mass = p;
    if ((p = realloc(ic->id, (k ? k : 1) * sizeof *ic->id))) ic->id = p;
}

/* Who fills which rows of the block sums: this process the blocks that
 * begin in its range, share (NULL: one process, all blocks) the rest. */
typedef struct exchange {
    gp_ic_share_fn share;
    void *ctx;
    size_t n_blocks, own_first, own_count;
} exchange;

static int share_sums(const exchange *x, int status, double *sums, size_t width, char *err,
                      size_t errlen)
{
    if (!x->share) return status;
    return x->share(x->ctx, status, sums, width, x->n_blocks, x->own_first, x->own_count, err, errlen);
}

/* Adds the rows of sums in block order (the first row as it is), so the
 * total does not depend on how the blocks were spread over processes. */
static void add_rows(const double *sums, size_t n_blocks, size_t width, double *total)
{
    for (size_t k = 0; k < width; ++k) total[k] = sums[k];
    for (size_t b = 1; b < n_blocks; ++b)
        for (size_t k = 0; k < width; ++k) total[k] += sums[b * width + k];
}

/* Particles [lo, hi) of a sampled model's set of n: draws every block
 * that overlaps the range (whole, so the block sums are whole), moves the
 * particles to the model's frame with the set's sums, applies the model's
 * whole-set step, keeps the range. */
static int make_blocks(const ic_model *m, const ic_vals *v, size_t n, uint64_t seed, size_t lo,
                       size_t hi, gp_ic_share_fn share, void *share_ctx, gp_ic *out, char *err,
                       size_t errlen)
{
    ic_stream s = {0};
    gsl_rng *rng = NULL;
    double *sums = NULL;
    /* the blocks [b0, b1) overlap the range: particles [first, end) */
    size_t b0 = lo / BLOCK, b1 = lo < hi ? (hi - 1) / BLOCK + 1 : b0;
    size_t first = lo < hi ? b0 * BLOCK : lo, end = lo < hi ? (b1 * BLOCK < n ? b1 * BLOCK : n) : lo;
    exchange x = {share, share_ctx, (n + BLOCK - 1) / BLOCK, (lo + BLOCK - 1) / BLOCK, 0};
    x.own_count = (hi + BLOCK - 1) / BLOCK - x.own_first;

    int rc = m->prepare(n, v, &s, err, errlen);
    if (rc == 0) rc = ic_alloc(out, end - first, err, errlen);
    if (rc == 0) {
        sums = calloc(x.n_blocks * IC_FRAME_SUMS, sizeof *sums);
        rng = gsl_rng_alloc(gsl_rng_mt19937);
        if (!sums || !rng)
            rc = ic_fail(err, errlen, "Out of memory setting up the blocks of %zu particles.", n);
    }
    for (size_t b = b0; rc == 0 && b < b1; ++b) {
        size_t at = b * BLOCK - first, count = n - b * BLOCK < BLOCK ? n - b * BLOCK : BLOCK;
        if (ic_seed_block(rng, seed, b) != 0) {
            rc = ic_fail(err, errlen, "This GSL's mt19937 generator is not laid out as GSL 2 lays it out, "
                                      "so its blocks cannot be seeded; build gravplug against GSL 2.");
            break;
        }
        s.draw(s.state, rng, b * BLOCK, count, &out->pos[3 * at], &out->vel[3 * at], &out->mass[at]);
        for (size_t i = 0; i < count; ++i) out->id[at + i] = (uint64_t)(b * BLOCK + i);
        if (b >= x.own_first && b < x.own_first + x.own_count)
            ic_frame_sums(count, &out->pos[3 * at], &out->vel[3 * at], &out->mass[at], &sums[b * IC_FRAME_SUMS]);
    }
    /* every process reaches this exchange once its options are parsed, so a
     * failure on one (say, out of memory) stops all of them */
    rc = share_sums(&x, rc, sums, IC_FRAME_SUMS, err, errlen);
    const char *frame = ic_str(v, "frame");
    if (rc == 0 && (!frame || strcmp(frame, "none") != 0)) {
        double total[IC_FRAME_SUMS];
        add_rows(sums, x.n_blocks, IC_FRAME_SUMS, total);
        ic_frame_shift(total, !frame || strcmp(frame, "com") == 0, out->n, out->pos, out->vel);
    }
    if (rc == 0 && s.block_sum) {
        for (size_t b = x.own_first; b < x.own_first + x.own_count; ++b) {
            size_t at = b * BLOCK - first, count = n - b * BLOCK < BLOCK ? n - b * BLOCK : BLOCK;
            sums[b] = s.block_sum(s.state, count, &out->vel[3 * at], &out->mass[at]);
        }
        rc = share_sums(&x, 0, sums, 1, err, errlen);
        if (rc == 0) {
            double total;
            add_rows(sums, x.n_blocks, 1, &total);
            s.apply_total(s.state, total, out->n, out->vel);
        }
    }
    if (rc == 0) keep_range(out, lo - first, hi - first);
    else gp_ic_free(out);
    if (s.release) s.release(s.state);
    gsl_rng_free(rng);
    free(sums);
    return rc;
}

/* ---- a whole sampled set on the OpenMP threads ---------------------------------- */

/* Each thread makes its run of whole blocks with make_blocks, the threads
 * share their block sums as MPI ranks do (a barrier instead of an
 * allgather), and the slices are joined in order. make_blocks gives the
 * same bits for any tiling, so the set is the same for any thread count.
 * Initial conditions of 2^20 particles and more are a visible part of a
 * run's setup otherwise. */
typedef struct shared_sums {
    double *rows;      /* n_blocks x width, each thread writes the rows it owns */
    int *status;       /* one per thread */
    char (*errs)[512]; /* one per thread */
} shared_sums;

/* gp_ic_share_fn over the threads of the enclosing parallel region; every
 * thread calls it the same number of times (gp_ic_make_range's rule). A
 * failed thread may have no sums at all, so they are read only on success. */
static int share_by_barrier(void *ctx, int status, double *sums, size_t width, size_t n_blocks,
                            size_t own_first, size_t own_count, char *err, size_t errlen)
{
    shared_sums *s = ctx;
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    s->status[t] = status;
    if (status != 0) snprintf(s->errs[t], sizeof s->errs[t], "%s", err ? err : "");
    else memcpy(s->rows + own_first * width, sums + own_first * width, own_count * width * sizeof *sums);
#pragma omp barrier
    int failed = -1;
    for (int k = 0; k < nt && failed < 0; ++k)
        if (s->status[k] != 0) failed = k;
    if (failed >= 0) {
        if (err && errlen) snprintf(err, errlen, "%s", s->errs[failed]);
    } else {
        memcpy(sums, s->rows, n_blocks * width * sizeof *sums);
    }
    /* nobody writes the rows again (a second exchange) before all have read */
#pragma omp barrier
    return failed >= 0 ? -1 : 0;
}

/* The slices in thread order into out; a thread the runtime did not start
 * left its slice empty. */
static int join(gp_ic *parts, int nt, size_t n, gp_ic *out, char *err, size_t errlen)
{
    if (ic_alloc(out, n, err, errlen) != 0) return -1;
    size_t at = 0;
    for (int t = 0; t < nt; ++t) {
        size_t k = parts[t].n;
        if (!k) continue;
        memcpy(out->pos + 3 * at, parts[t].pos, 3 * k * sizeof *out->pos);
        memcpy(out->vel + 3 * at, parts[t].vel, 3 * k * sizeof *out->vel);
        memcpy(out->mass + at, parts[t].mass, k * sizeof *out->mass);
        memcpy(out->id + at, parts[t].id, k * sizeof *out->id);
        at += k;
    }
    return 0;
}

static int make_on_threads(const ic_model *m, const ic_vals *v, size_t n, uint64_t seed, gp_ic *out,
                           char *err, size_t errlen)
{
    size_t n_blocks = (n + BLOCK - 1) / BLOCK;
    int nt = omp_in_parallel() ? 1 : omp_get_max_threads();
    if ((size_t)nt > n_blocks) nt = (int)n_blocks;
    if (nt <= 1) return make_blocks(m, v, n, seed, 0, n, NULL, NULL, out, err, errlen);

    gp_ic *parts = calloc((size_t)nt, sizeof *parts);
    shared_sums s = { calloc(n_blocks * IC_FRAME_SUMS, sizeof(double)), calloc((size_t)nt, sizeof(int)),
                      calloc((size_t)nt, sizeof *s.errs) };
    int rc = 0;
    if (!parts || !s.rows || !s.status || !s.errs) {
        rc = ic_fail(err, errlen, "Out of memory setting up the threads for %zu particles.", n);
    } else {
#pragma omp parallel num_threads(nt)
        {
            int t = omp_get_thread_num(), got = omp_get_num_threads();
            /* whole blocks per thread, so each block is drawn once */
            size_t lo = n_blocks * (size_t)t / (size_t)got * BLOCK;
            size_t hi = n_blocks * (size_t)(t + 1) / (size_t)got * BLOCK;
            if (hi > n) hi = n;
            char e[512]; /* its own: the exchange keeps the threads' sentences in s.errs */
            if (make_blocks(m, v, n, seed, lo, hi, share_by_barrier, &s, &parts[t], e, sizeof e) != 0) {
                /* a failure goes through the exchange, so every thread has the same sentence */
                if (t == 0 && err && errlen) snprintf(err, errlen, "%s", e);
#pragma omp atomic write
                rc = -1;
            }
        }
        if (rc == 0) rc = join(parts, nt, n, out, err, errlen);
    }
    for (int t = 0; parts && t < nt; ++t) gp_ic_free(&parts[t]);
    free(parts);
    free(s.rows);
    free(s.status);
    free(s.errs);
    return rc;
}

/* ---- the entry points -------------------------------------------------------- */

/* The model, its parsed options, and out emptied; -1 with err. */
static int begin(const char *model, const void *opts, gp_ic *out, const ic_model **m, ic_vals *v,
                 char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!out) return ic_fail(err, errlen, "gp_ic_make needs somewhere to put the particles (out was NULL).");
    memset(out, 0, sizeof *out);
    *m = find_model(model);
    if (!*m) {
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
    return parse_options(*m, (const gp_ic_opts *)opts, v, err, errlen);
}

/* A whole-set model, its generator seeded as block 0. */
static int make_whole(const ic_model *m, const ic_vals *v, size_t n, uint64_t seed, gp_ic *out,
                      char *err, size_t errlen)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng) return ic_fail(err, errlen, "Out of memory creating the random number generator.");
    ic_seed_block(rng, seed, 0);
    int rc = m->make(n, rng, v, out, err, errlen);
    gsl_rng_free(rng);
    if (rc != 0) gp_ic_free(out);
    return rc;
}

GRAVPLUG_EXPORT int gp_ic_make(const char *model, size_t n, uint64_t seed, const void *opts,
                               gp_ic *out, char *err, size_t errlen)
{
    const ic_model *m;
    ic_vals v;
    if (begin(model, opts, out, &m, &v, err, errlen) != 0) return -1;
    if (!m->prepare) return make_whole(m, &v, n, seed, out, err, errlen);
    return make_on_threads(m, &v, n, seed, out, err, errlen);
}

GRAVPLUG_EXPORT int gp_ic_make_range(const char *model, size_t n, uint64_t seed, const void *opts,
                                     size_t lo, size_t hi, gp_ic_share_fn share, void *share_ctx,
                                     gp_ic *out, char *err, size_t errlen)
{
    const ic_model *m;
    ic_vals v;
    if (begin(model, opts, out, &m, &v, err, errlen) != 0) return -1;
    if (!m->prepare) {
        if (make_whole(m, &v, n, seed, out, err, errlen) != 0) return -1;
        if (lo > hi || hi > out->n) {
            size_t total = out->n;
            gp_ic_free(out);
            return ic_fail(err, errlen, "The range [%zu, %zu) does not lie inside the %zu particles of "
                                        "model '%s'; ask for a range within them.", lo, hi, total, m->name);
        }
        keep_range(out, lo, hi);
        return 0;
    }
    if (lo > hi || hi > n)
        return ic_fail(err, errlen, "The range [%zu, %zu) does not lie inside the %zu particles asked "
                                    "for; ask for a range within [0, %zu).", lo, hi, n, n);
    if (!share && (lo != 0 || hi != n))
        return ic_fail(err, errlen, "Particles [%zu, %zu) of %zu need a share function, which gives "
                                    "every process the block sums of the others (for the frame "
                                    "shift); pass one, or ask for [0, %zu).", lo, hi, n, n);
    return make_blocks(m, &v, n, seed, lo, hi, share, share_ctx, out, err, errlen);
}

GRAVPLUG_EXPORT int gp_ic_makes_ranges(const char *model)
{
    const ic_model *m = find_model(model);
    return m ? m->prepare != NULL : -1;
}
