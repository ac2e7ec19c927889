/* SPDX-License-Identifier: Apache-2.0 */
/* tree_state.c — building and refitting the CPU tree plugins' trees (see tree_state.h). */
#include "octree/tree_state.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "octree/mac.h"

/* Below this many particles the build's index passes (ranks, masses,
 * group_of) stay on one thread: at 50k two threads were slower (the
 * first touch of freshly allocated arrays dominates). */
#define BUILD_PASS_PARALLEL_MIN 131072

void oct_tree_free(oct_tree *t)
{
    free(t->order); free(t->rank);
    free(t->x); free(t->y); free(t->z); free(t->m);
    free(t->gbegin); free(t->gcount); free(t->group_of);
    if (!t->src_alias) { free(t->sx); free(t->sy); free(t->sz); }
    free(t->sm); free(t->sid);
    gp_host_tree_free(&t->st);
    free(t->wcells);
    free(t->payf);
    free(t->col_block);
    memset(t, 0, sizeof *t);
}

/* One block for all cell columns, each column 64-byte aligned: 3 of
 * doubles, then 19 of 4-byte values. */
int oct_tree_alloc_columns(oct_tree *t)
{
    size_t nc = t->st.ncells;
    size_t s8 = (nc * sizeof(double) + 63) / 64 * 64, s4 = (nc * sizeof(float) + 63) / 64 * 64;
    char *b = aligned_alloc(64, nc ? 3 * s8 + 19 * s4 : 64);   /* a multiple of 64, never 0 */
    if (!b) return -1;
    free(t->col_block);   /* a second call replaces the block, not leaks it */
    t->col_block = b;
    oct_cell_columns *c = &t->col;
    c->cx = (double *)(b); c->cy = (double *)(b + s8); c->cz = (double *)(b + 2 * s8);
    char *f = b + 3 * s8;   /* the 4-byte columns, s4 apart */
    c->rcrit = (float *)(f);
    c->count = (uint32_t *)(f + s4);
    c->first = (uint32_t *)(f + 2 * s4);
    c->nchild = (uint32_t *)(f + 3 * s4);
    for (int a = 0; a < 3; a++) {
        c->blo[a] = (float *)(f + (4 + a) * s4);
        c->bhi[a] = (float *)(f + (7 + a) * s4);
    }
    c->m = (float *)(f + 10 * s4);
    for (int k = 0; k < 6; k++) c->s[k] = (float *)(f + (11 + k) * s4);
    c->d2max = (float *)(f + 17 * s4);
    c->tr = (float *)(f + 18 * s4);
    return 0;
}

/* The leaves of `tr` cut at group_size (cells of more than group_size
 * particles opened, the rest taken whole), in key order, with their
 * parents: emit(begin, count, parent) for each. A tree built with any leaf
 * size up to group_size has the cells of one built with group_size on top
 * (a cell is split by its count alone, the same way), so both give the
 * same leaves. Depth-first with children in order: key order, no sort. */
static void group_leaves(const gp_host_tree *tr, uint32_t group_size,
                         void (*emit)(void *ctx, uint32_t b, uint32_t c, uint32_t parent),
                         void *ctx)
{
    uint32_t stack[8 * (GP_KEY_MAX_LEVEL + 2)];
    int sp = 0;
    stack[sp++] = 0;
    while (sp > 0) {
        const gp_cell *c = &tr->cells[stack[--sp]];
        if (c->count > group_size && c->nchild > 0) {
            for (uint32_t k = c->nchild; k-- > 0;) stack[sp++] = c->child + k;
            continue;
        }
        emit(ctx, c->begin, c->count, c->parent);
    }
}

/* The runs: consecutive leaves of one parent merged while they fit in one
 * group (an octree leaf is often far below the size limit), deepest-level
 * leaves larger than a group cut into chunks. Counted first (count_chunks,
 * an upper bound), then written (add_leaf). */
typedef struct runs_acc {
    uint32_t group_size, ng, cur_parent, *gb, *gc;
} runs_acc;

static void add_leaf(void *ctx, uint32_t b, uint32_t c, uint32_t parent)
{
    runs_acc *r = ctx;
    if (r->ng > 0 && parent == r->cur_parent && r->gc[r->ng - 1] + c <= r->group_size) {
        r->gc[r->ng - 1] += c;
        return;
    }
    while (c > 0) {
        uint32_t take = c < r->group_size ? c : r->group_size;
        r->gb[r->ng] = b;
        r->gc[r->ng] = take;
        r->ng++;
        b += take;
        c -= take;
    }
    r->cur_parent = parent;
}

static void count_chunks(void *ctx, uint32_t b, uint32_t c, uint32_t parent)
{
    (void)b; (void)parent;
    runs_acc *r = ctx;
    r->ng += gp_tree_group_chunks(c, r->group_size);
}

int oct_runs_of_tree(const gp_host_tree *tr, uint32_t group_size, uint32_t *n_runs,
                     uint32_t **begin, uint32_t **count)
{
    *n_runs = 0;
    *begin = *count = NULL;
    runs_acc r = { .group_size = group_size };
    group_leaves(tr, group_size, count_chunks, &r);
    size_t cap = r.ng ? r.ng : 1;   /* merging only ever lowers the count */
    r.gb = malloc(cap * sizeof *r.gb);
    r.gc = malloc(cap * sizeof *r.gc);
    if (!r.gb || !r.gc) { free(r.gb); free(r.gc); return -1; }
    r.ng = 0;
    r.cur_parent = UINT32_MAX;
    group_leaves(tr, group_size, add_leaf, &r);
    *n_runs = r.ng;
    *begin = r.gb;
    *count = r.gc;
    return 0;
}

int oct_make_runs(const uint64_t *keys, uint32_t n, uint32_t group_size, uint32_t *n_runs,
                 uint32_t **begin, uint32_t **count)
{
    gp_host_tree gt = { 0 };
    *n_runs = 0;
    *begin = *count = NULL;
    if (gp_host_tree_build(&gt, keys, n, group_size)) return -1;
    int rc = oct_runs_of_tree(&gt, group_size, n_runs, begin, count);
    gp_host_tree_free(&gt);
    return rc;
}

static int make_groups(oct_tree *t, const uint64_t *keys, uint32_t group_size, uint32_t leaf_size)
{
    uint32_t n = (uint32_t)t->n, ng = 0;
    t->group_of = malloc((size_t)(n ? n : 1) * sizeof *t->group_of);
    if (!t->group_of) return -1;
    /* every particle a source, in leaves no larger than a group: the
     * source tree's top is the tree of group-size leaves, no second build */
    int rc = t->src_alias && t->st.ncells > 0 && leaf_size <= group_size
                 ? oct_runs_of_tree(&t->st, group_size, &ng, &t->gbegin, &t->gcount)
                 : oct_make_runs(keys, n, group_size, &ng, &t->gbegin, &t->gcount);
    if (rc) return -1;
    t->ngroups = ng;
    t->max_group = group_size;
    if (oct_split_loose_groups(t->x, t->y, t->z, &t->ngroups, &t->gbegin, &t->gcount)) return -1;
    ng = t->ngroups;
    const uint32_t *gb = t->gbegin, *gc = t->gcount;
    uint32_t *gof = t->group_of;
#pragma omp parallel for schedule(static) if (n >= BUILD_PASS_PARALLEL_MIN)
    for (uint32_t g = 0; g < ng; g++)
        for (uint32_t i = gb[g]; i < gb[g] + gc[g]; i++) gof[i] = g;
    return 0;
}

/* Loose: the sphere radius exceeds 1e4 times the smallest nonzero step
 * between key-consecutive particles (O(count), an upper bound of the
 * nearest-neighbour spacing). */
static int loose(const double *x, const double *y, const double *z, uint32_t b, uint32_t c)
{
    if (c < 2) return 0;
    double centre[3], r;
    gp_group_sphere(x, y, z, NULL, b, c, centre, &r);
    double s2 = HUGE_VAL;
    for (uint32_t i = b + 1; i < b + c; i++) {
        double dx = x[i] - x[i - 1], dy = y[i] - y[i - 1], dz = z[i] - z[i - 1];
        double d2 = dx * dx + dy * dy + dz * dz;
        if (d2 > 0 && d2 < s2) s2 = d2;
    }
    return s2 < HUGE_VAL && r * r > 1e8 * s2;
}

/* oct_split_loose_groups' predicate, in the shape oct_split_runs takes. */
static int loose_run(const double *x, const double *y, const double *z, uint32_t b, uint32_t c,
                     const void *ctx)
{
    (void)ctx;
    return loose(x, y, z, b, c);
}

int oct_split_runs(const double *x, const double *y, const double *z, uint32_t n_runs,
                   const uint32_t *begin, const uint32_t *count, oct_split_test split,
                   const void *ctx, uint32_t *n_out, uint32_t **begin_out, uint32_t **count_out)
{
    uint32_t cap = n_runs + 16, out = 0;
    uint32_t *nb = malloc(cap * sizeof *nb), *nc = malloc(cap * sizeof *nc);
    unsigned char *first = malloc(n_runs ? n_runs : 1);
    uint32_t stack[2 * 64][2];
    if (!nb || !nc || !first) { free(nb); free(nc); free(first); return -1; }
    /* each run's own test, on the threads (a pass over every particle);
     * the few runs that split are halved below, in order */
#pragma omp parallel for schedule(static) if (n_runs >= 2048)
    for (uint32_t g = 0; g < n_runs; g++) first[g] = split(x, y, z, begin[g], count[g], ctx) != 0;
    for (uint32_t g = 0; g < n_runs; g++) {
        int sp = 0, top = 1;
        stack[sp][0] = begin[g]; stack[sp][1] = count[g]; sp++;
        while (sp > 0) {
            sp--;
            uint32_t b = stack[sp][0], c = stack[sp][1];
            int halve = sp + 2 <= (int)(sizeof stack / sizeof stack[0]) &&
                        (top ? first[g] : split(x, y, z, b, c, ctx));
            top = 0;
            if (halve) {
                uint32_t h = c / 2;               /* second half first: key order kept */
                stack[sp][0] = b + h; stack[sp][1] = c - h; sp++;
                stack[sp][0] = b; stack[sp][1] = h; sp++;
                continue;
            }
            if (out == cap) {
                cap *= 2;
                uint32_t *tb = realloc(nb, cap * sizeof *nb), *tc = tb ? realloc(nc, cap * sizeof *nc) : NULL;
                if (tb) nb = tb;
                if (!tb || !tc) { free(nb); free(tc ? tc : nc); free(first); return -1; }
                nc = tc;
            }
            nb[out] = b; nc[out] = c; out++;
        }
    }
    free(first);
    *begin_out = nb; *count_out = nc; *n_out = out;
    return 0;
}

int oct_split_loose_groups(const double *x, const double *y, const double *z, uint32_t *n_runs,
                          uint32_t **begin, uint32_t **count)
{
    uint32_t n, *nb, *nc;
    if (oct_split_runs(x, y, z, *n_runs, *begin, *count, loose_run, NULL, &n, &nb, &nc)) return -1;
    free(*begin); free(*count);
    *begin = nb; *count = nc; *n_runs = n;
    return 0;
}

static void fill_sorted(oct_tree *t, const double *pos)
{
    size_t n = t->n;
#pragma omp parallel for schedule(static) if (n > 8192)
    for (size_t i = 0; i < n; i++) {
        /* the host's order is not the key order (a galaxy's initial
         * conditions: random), so each read misses the cache at large n;
         * asking early overlaps the misses (bench/results/cpu-tree/raw/cpu-tree.md,
         * "refit prefetch") */
        if (i + 16 < n) __builtin_prefetch(&pos[3 * (size_t)t->order[i + 16]]);
        const double *p = &pos[3 * (size_t)t->order[i]];
        t->x[i] = p[0]; t->y[i] = p[1]; t->z[i] = p[2];
    }
    if (t->src_alias) return;
#pragma omp parallel for schedule(static) if (t->nsrc > 8192)
    for (size_t k = 0; k < t->nsrc; k++) {
        uint32_t i = t->sid[k];
        t->sx[k] = t->x[i]; t->sy[k] = t->y[i]; t->sz[k] = t->z[i];
    }
}

/* Source masses in units of 2^e_mass, the heaviest rounded down to a power
 * of two: cell masses and m x products in the moments then stay far from
 * overflow whatever the input's mass unit (1e300 or 1e-50), and the scaling
 * is exact (a power of two), so ordinary inputs give the same bits. The
 * walk multiplies its sums back (cpu_walk_group.c). */
static void scale_masses(oct_tree *t)
{
    double mmax = 0;
    const uint32_t ns = t->nsrc, *sid = t->sid;
    const double *ms = t->m;
#pragma omp parallel for schedule(static) reduction(max : mmax) if (ns >= BUILD_PASS_PARALLEL_MIN)
    for (uint32_t k = 0; k < ns; k++) {
        double m = ms[sid[k]];
        mmax = m > mmax ? m : mmax;
    }
    int e = mmax > 0 ? ilogb(mmax) : 0;
    e = e < -1000 ? -1000 : e > 1000 ? 1000 : e;
    t->e_mass = e;
    const double inv = ldexp(1.0, -e);
    double *sm = t->sm;
#pragma omp parallel for schedule(static) if (ns >= BUILD_PASS_PARALLEL_MIN)
    for (uint32_t k = 0; k < ns; k++) sm[k] = ms[sid[k]] * inv;
}

int oct_tree_build(oct_tree *t, size_t n, const double *pos, const double *mass,
                  uint32_t group_size, uint32_t leaf_size, gp_key_kind keys_kind)
{
    return oct_tree_build_in(t, n, pos, mass, group_size, leaf_size, keys_kind, NULL);
}

int oct_tree_build_in(oct_tree *t, size_t n, const double *pos, const double *mass,
                      uint32_t group_size, uint32_t leaf_size, gp_key_kind keys_kind,
                      const gp_cube *cube)
{
    memset(t, 0, sizeof *t);
    t->n = n;
    t->keys = keys_kind;
    uint64_t *keys = malloc(n * sizeof *keys);
    uint64_t *skeys = NULL;
    t->order = malloc(n * sizeof *t->order);
    t->rank = malloc(n * sizeof *t->rank);
    t->x = malloc(n * sizeof *t->x); t->y = malloc(n * sizeof *t->y);
    t->z = malloc(n * sizeof *t->z); t->m = malloc(n * sizeof *t->m);
    if (!keys || !t->order || !t->rank || !t->x || !t->y || !t->z || !t->m) goto oom;

    if (cube) {
        memcpy(t->lo, cube->lo, sizeof t->lo);
        t->inv_cell = cube->inv_cell;
    } else
        gp_host_root_cube(n, pos, pos + 1, pos + 2, 3, t->lo, &t->inv_cell);
    gp_host_make_keys(n, pos, pos + 1, pos + 2, 3, keys_kind, t->lo, t->inv_cell, keys);
    for (size_t i = 0; i < n; i++) t->order[i] = (uint32_t)i;
    if (gp_host_sort_keys(n, keys, t->order)) goto oom;
    uint32_t nsrc = 0;
    const uint32_t *order = t->order;
    uint32_t *rank = t->rank;
    double *ms = t->m;
#pragma omp parallel for schedule(static) reduction(+ : nsrc) if (n >= BUILD_PASS_PARALLEL_MIN)
    for (size_t i = 0; i < n; i++) {
        rank[order[i]] = (uint32_t)i;
        ms[i] = mass[order[i]];
        nsrc += ms[i] > 0;
    }
    t->nsrc = nsrc;
    size_t ns = nsrc ? nsrc : 1;
    t->src_alias = nsrc == n && n > 0;
    if (t->src_alias) { t->sx = t->x; t->sy = t->y; t->sz = t->z; }
    else {
        t->sx = malloc(ns * sizeof *t->sx); t->sy = malloc(ns * sizeof *t->sy);
        t->sz = malloc(ns * sizeof *t->sz);
    }
    t->sm = malloc(ns * sizeof *t->sm);
    t->sid = malloc(ns * sizeof *t->sid);
    /* every particle a source: the source tree's keys are the keys */
    const uint64_t *src_keys = keys;
    if (!t->src_alias) src_keys = skeys = malloc(ns * sizeof *skeys);
    if (!t->sx || !t->sy || !t->sz || !t->sm || !t->sid || !src_keys) goto oom;
    if (t->src_alias) {
        uint32_t *sid = t->sid;
#pragma omp parallel for schedule(static) if (n >= BUILD_PASS_PARALLEL_MIN)
        for (size_t i = 0; i < n; i++) sid[i] = (uint32_t)i;
    } else {
        for (size_t i = 0, k = 0; i < n; i++)
            if (t->m[i] > 0) { t->sid[k] = (uint32_t)i; skeys[k] = keys[i]; k++; }
    }
    scale_masses(t);
    fill_sorted(t, pos);
    if (nsrc > 0 && gp_host_tree_build(&t->st, src_keys, nsrc, leaf_size)) goto oom;
    if (make_groups(t, keys, group_size, leaf_size)) goto oom;
    if (nsrc > 0) {
        if (gp_host_tree_moments(&t->st, t->sx, t->sy, t->sz, t->sm)) goto oom;
        t->wcells = malloc((size_t)t->st.ncells * sizeof *t->wcells);
        t->payf = malloc((size_t)t->st.ncells * sizeof *t->payf);
        if (!t->wcells || !t->payf) goto oom;
        if (oct_tree_alloc_columns(t)) goto oom;
    }
    free(keys);
    free(skeys);
    return 0;
oom:
    free(keys);
    free(skeys);
    oct_tree_free(t);
    return -1;
}

int oct_tree_refit(oct_tree *t, const double *pos, const double *mass, int moments)
{
    if (mass) {
        /* a particle left out of the source tree (massless at the build)
         * that now has mass needs a new topology */
        size_t n = t->n, k = 0;
        for (size_t i = 0; i < n; i++) {
            if (k < t->nsrc && t->sid[k] == i) { k++; continue; }
            if (mass[t->order[i]] > 0) return 1;
        }
        for (size_t i = 0; i < n; i++) t->m[i] = mass[t->order[i]];
        scale_masses(t);
    }
    fill_sorted(t, pos);
    t->moments_stale = 1;
    t->prepared = 0;
    return moments ? oct_tree_moments(t) : 0;
}

int oct_tree_moments(oct_tree *t)
{
    t->prepared = 0;
    if (t->nsrc > 0 && gp_host_tree_moments(&t->st, t->sx, t->sy, t->sz, t->sm)) return -1;
    t->moments_stale = 0;
    return 0;
}

/* v rounded to a float upward (round_up) or downward (round_down): the
 * nearest float, then one step in the bit pattern when it fell on the
 * wrong side. Without branches: each cell rounds nine numbers whose side
 * is a coin toss, and mispredicted branches took ~40% of the preparation
 * (perf). A step up is +1 on the bits of a positive float and -1 on a
 * negative one (a step down the reverse); +0 steps up to the smallest
 * subnormal, and -0 never needs a step up (a v that rounds to -0 is below
 * it), nor +0 a step down. */
static float round_up(double v)
{
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    uint32_t away = (uint32_t)((int32_t)u >> 31) | 1u;   /* +1, or -1 when negative */
    u += away & (0u - (uint32_t)((double)f < v));
    memcpy(&f, &u, sizeof f);
    return f;
}

static float round_down(double v)
{
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    uint32_t away = (uint32_t)((int32_t)u >> 31) | 1u;
    u -= away & (0u - (uint32_t)((double)f > v));
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The length unit of the float payload and of the float walk: 2^e with e
 * the mean exponent of the leaves' sizes (integers, so deterministic), so
 * relative coordinates are O(1) in float whatever the input's length unit
 * (1e-30 or 1e30), and scaling by a power of two is exact. The typical
 * leaf, not the root box: a particle at 1e30 beside a bulk at 1 must not
 * push the bulk's separations below float's range (it is summed in double
 * instead: out of OCT_FLOAT_RANGE, cpu_walk_group.c). Float then covers any system
 * whose separations lie within ~1e+-18 of that unit. */
static int length_exponent(const oct_tree *t)
{
    if (!t->nsrc) return 0;
    const gp_host_tree *h = &t->st;
    long long sum = 0, count = 0;   /* integers: the same sum in any order */
#pragma omp parallel for schedule(static) reduction(+ : sum, count) if (h->ncells > 4096)
    for (uint32_t c = 0; c < h->ncells; c++) {
        if (h->cells[c].nchild) continue;
        oct_length_leaf(gp_moments_size(&h->mom[c]), &sum, &count);
    }
    return oct_length_exponent(sum, count, gp_moments_size(&h->mom[0]));
}

int oct_length_exponent(long long sum, long long count, double root_size)
{
    long long e = count ? (sum >= 0 ? sum / count : -((-sum) / count))
                        : (root_size > 0 && isfinite(root_size) ? ilogb(root_size) : 0);
    return e < -1000 ? -1000 : e > 1000 ? 1000 : (int)e;
}

/* Cell c's walk data from its moments mo: the record (rec) and the
 * columns (columns). il: 2^-e_len; mscale: 2^e_mass. */
static inline void prepare_cell(oct_tree *t, uint32_t c, const gp_moments *mo, int mac,
                                double theta, double il, double mscale, int rec, int columns)
{
    const gp_cell *cl = &t->st.cells[c];
    float blo[3], bhi[3];
    for (int a = 0; a < 3; a++) {
        double pad = GP_MAC_BOX_MARGIN * (mo->hi[a] - mo->lo[a]);
        blo[a] = round_down(mo->lo[a] - pad - mo->com[a]);
        bhi[a] = round_up(mo->hi[a] + pad - mo->com[a]);
    }
    double rc = gp_mac_rcrit((gp_mac_kind)mac, theta, mo);
    /* acceleration: store (M l^2)^(1/4) with M in the input's unit (the
     * same bits as with unscaled masses: a power of two), so the walk's
     * per-group r_crit is one multiply by (G / (delta_acc |a_old|))^(1/4)
     * (cpu_walk_portable.c), not a divide and two square roots per visited cell;
     * where M l^2 overflows double, the root is taken first */
    if (mac == GP_MAC_ACCELERATION) {
        double m_in = rc * mscale;
        rc = isfinite(m_in) || !isfinite(rc) ? sqrt(sqrt(m_in))
                                             : sqrt(sqrt(rc)) * pow(2.0, t->e_mass / 4.0);
    }
    const float rcrit = rc < 1e38 ? round_up(rc) : HUGE_VALF;
    const uint32_t first = cl->nchild ? cl->child : cl->begin;
    double smax = 0;
    for (int k = 0; k < 6; k++) smax = fabs(mo->s[k]) > smax ? fabs(mo->s[k]) : smax;
    double sl[6];   /* second moment in units of 2^e_mass L^2 */
    for (int k = 0; k < 6; k++) sl[k] = mo->s[k] * il * il;
    smax = smax * il * il;
    /* float kernels form s d^2 and d^2 (d in units of L): both must stay
     * below ~1e34 */
    const int fits = mo->m < 1e30 && smax < 1e30;
    const float d2max = fits ? (float)fmin(1e34, 1e34 / fmax(smax, 1.0)) : 0.0f;
    if (rec) {
        oct_wcell *w = &t->wcells[c];
        for (int a = 0; a < 3; a++) {
            w->com[a] = mo->com[a];
            w->blo[a] = blo[a];
            w->bhi[a] = bhi[a];
        }
        w->rcrit = rcrit;
        w->count = cl->count;
        w->first = first;
        w->nchild = cl->nchild;
        oct_payload_f *pf = &t->payf[c];
        pf->m = (float)mo->m;
        for (int k = 0; k < 6; k++) pf->s[k] = (float)sl[k];
        pf->d2max = d2max;
    }
    if (columns) {
        oct_cell_columns *col = &t->col;
        col->cx[c] = mo->com[0]; col->cy[c] = mo->com[1]; col->cz[c] = mo->com[2];
        col->rcrit[c] = rcrit;
        col->count[c] = cl->count; col->first[c] = first; col->nchild[c] = cl->nchild;
        for (int a = 0; a < 3; a++) { col->blo[a][c] = blo[a]; col->bhi[a][c] = bhi[a]; }
        col->m[c] = (float)mo->m;
        /* the AVX-512 kernels take the traceless quadrupole 3 S - tr(S) I */
        double tr = sl[0] + sl[1] + sl[2];
        for (int k = 0; k < 6; k++) col->s[k][c] = (float)(3.0 * sl[k] - (k < 3 ? tr : 0.0));
        col->tr[c] = (float)tr;
        col->d2max[c] = d2max;
    }
}

void oct_tree_prepare_cells(oct_tree *t, int mac, double theta, int layouts)
{
    /* columns only where they were allocated; the root's record always (the
     * AVX walks test the root from it) */
    if (!t->col_block) layouts = OCT_PREPARE_RECORDS;
    /* a second call on the same moments (the field after the forces, a
     * diagnostic, a block step that moved nothing) finds them ready */
    int had = 0;
    if (t->prepared && t->prepared_mac == mac && t->prepared_theta == theta) {
        had = t->prepared_layouts;
        layouts &= ~had;
        if (!layouts) return;
    }
    const int records = layouts & OCT_PREPARE_RECORDS, columns = layouts & OCT_PREPARE_COLUMNS;
    uint32_t nc = t->nsrc ? t->st.ncells : 0;
    /* a layout added to prepared cells (the records a walk's fallback asks
     * for while other threads walk the columns) leaves the length unit and
     * the root's record, which walks are reading, as they are */
    if (!had && !t->e_len_given) t->e_len = length_exponent(t);
    /* payload in float: s / L^2 (masses are already in units of 2^e_mass) */
    const double il = ldexp(1.0, -t->e_len);
    const double mscale = ldexp(1.0, t->e_mass);
#pragma omp parallel for schedule(static) if (nc > 4096)
    for (uint32_t c = 0; c < nc; c++)
        prepare_cell(t, c, &t->st.mom[c], mac, theta, il, mscale, c == 0 ? !had : records,
                     columns);
    t->prepared = 1;
    t->prepared_mac = mac;
    t->prepared_theta = theta;
    t->prepared_layouts = had | layouts;
}

void oct_tree_prepare_cell(oct_tree *t, uint32_t c, const gp_moments *mo)
{
    const int layouts = t->prepared_layouts;
    prepare_cell(t, c, mo, t->prepared_mac, t->prepared_theta, ldexp(1.0, -t->e_len),
                 ldexp(1.0, t->e_mass), c == 0 || (layouts & OCT_PREPARE_RECORDS),
                 (layouts & OCT_PREPARE_COLUMNS) && t->col_block);
}

static void prepare_records(void *owner)
{
    oct_tree *t = owner;
    oct_tree_prepare_cells(t, t->prepared_mac, t->prepared_theta, OCT_PREPARE_RECORDS);
}

oct_sources oct_tree_sources(oct_tree *t)
{
    oct_sources s = { .n = t->nsrc, .x = t->sx, .y = t->sy, .z = t->sz, .m = t->sm, .id = t->sid,
                     .ncells = t->nsrc ? t->st.ncells : 0, .cells = t->wcells, .mom = t->st.mom, .payf = t->payf,
                     .col = t->col_block && (t->prepared_layouts & OCT_PREPARE_COLUMNS) ? &t->col : NULL,
                     .e_mass = t->e_mass, .e_len = t->e_len };
    if (!(t->prepared_layouts & OCT_PREPARE_RECORDS)) {
        s.prepare_records = prepare_records;
        s.owner = t;
    }
    return s;
}
