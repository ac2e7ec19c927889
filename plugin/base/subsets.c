/* SPDX-License-Identifier: Apache-2.0 */
/*
 * subsets.c — which particles a call is about: the rules every index list
 * obeys (each index < n, none repeated), the stored copies of the active
 * (target) and source subsets, and the precondition they all share, that
 * set_particles came first.
 */
#include "base/base_instance.h"
#include "base/base_particles.h"
#include "base/base_state.h"

#include <stdlib.h>
#include <string.h>

gp_status gp_need_particles(gp_base *base, const char *fn)
{
    if (!base->p.have)
        return gp_fail(base, GP_ERR_BAD_STATE,
                       "%s was called before set_particles; call set_particles first", fn);
    return GP_OK;
}

/* Keeps a copy of a list that passed the check (nothing kept when there
 * is no memory for it: the next call checks again). */
static void remember_checked(gp_particles *p, size_t n, size_t n_sub, const uint32_t *index)
{
    p->n_checked = 0;
    if (n_sub > p->checked_cap) {
        uint32_t *c = realloc(p->checked, n_sub * sizeof *c);
        if (!c) return;
        p->checked = c;
        p->checked_cap = n_sub;
    }
    if (n_sub) memcpy(p->checked, index, n_sub * sizeof *index);   /* checked may be NULL */
    p->n_checked = n_sub;
    p->checked_for_n = n;
}

gp_status gp_check_subset(gp_base *base, const char *fn, size_t n_sub, const uint32_t *index)
{
    gp_status st = gp_need_particles(base, fn);
    if (st != GP_OK) return st;
    size_t n = base->p.n;
    if (n_sub == 0) return GP_OK;
    if (!index) {
        if (n_sub == n) return GP_OK;
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "%s was given n_sub = %zu with a NULL index array; pass the "
                       "indices, or (n, NULL) with n = %zu for all particles",
                       fn, n_sub, n);
    }
    if (n_sub > n)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "%s was given %zu indices but there are only %zu particles; "
                       "an index may appear at most once", fn, n_sub, n);
    gp_particles *p = &base->p;
    if (p->checked && p->checked_for_n == n && p->n_checked == n_sub &&
        memcmp(p->checked, index, n_sub * sizeof *index) == 0)
        return GP_OK;
    const size_t words = (n + 63) / 64;
    if (!p->seen || p->seen_words != words) {
        free(p->seen);
        p->seen_words = 0;
        p->seen = calloc(words, sizeof *p->seen);
        if (!p->seen)
            return gp_fail(base, GP_ERR_OUT_OF_MEMORY,
                           "%s: no memory for a %zu-bit check map; free memory or use "
                           "fewer particles", fn, n);
        p->seen_words = words;
    }
    uint64_t *seen = p->seen;
    st = GP_OK;
    size_t k = 0;
    for (; k < n_sub; ++k) {
        uint32_t i = index[k];
        if ((size_t)i >= n) {
            st = gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                         "%s: index[%zu] = %u is out of range; indices must be < n = %zu",
                         fn, k, (unsigned)i, n);
            break;
        }
        uint64_t bit = UINT64_C(1) << (i % 64);
        if (seen[i / 64] & bit) {
            st = gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                         "%s: index %u appears twice (again at index[%zu]); list each "
                         "particle once", fn, (unsigned)i, k);
            break;
        }
        seen[i / 64] |= bit;
    }
    /* back to all zero: only the bits set above (every index before k is
     * in range) */
    for (size_t j = 0; j < k; ++j) seen[index[j] / 64] = 0;
    if (st == GP_OK) remember_checked(p, n, n_sub, index);
    return st;
}

gp_status gp_index_list_store(gp_base *base, const char *fn, size_t m, const uint32_t *index,
                              uint32_t **list, size_t *count)
{
    if (m == 0) {
        free(*list);
        *list = NULL;
        *count = base->p.n;
        return GP_OK;
    }
    uint32_t *copy = malloc(m * sizeof *copy);
    if (!copy)
        return gp_fail(base, GP_ERR_OUT_OF_MEMORY,
                       "%s: no memory for %zu indices; free memory or pass fewer", fn, m);
    memcpy(copy, index, m * sizeof *copy);
    free(*list);
    *list = copy;
    *count = m;
    return GP_OK;
}

gp_status gp_check_active(gp_base *base, size_t n_active, const uint32_t *index)
{
    gp_status st = gp_need_particles(base, "set_active_subset");
    if (st != GP_OK) return st;
    if (n_active == 0) return GP_OK; /* all particles */
    if (!index)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "set_active_subset was given n_active = %zu but a NULL "
                       "index array; pass the indices, or (0, NULL) for all particles",
                       n_active);
    return gp_check_subset(base, "set_active_subset", n_active, index);
}

gp_status gp_particles_set_active(gp_base *base, size_t n_active, const uint32_t *index)
{
    gp_status st = gp_check_active(base, n_active, index);
    if (st != GP_OK) return st;
    gp_particles *p = &base->p;
    return gp_index_list_store(base, "set_active_subset", n_active, index, &p->active, &p->n_active);
}

gp_status gp_sources_set(gp_base *base, size_t n_src, const uint32_t *index)
{
    static const char fn[] = "set_source_subset";
    gp_status st = gp_need_particles(base, fn);
    if (st != GP_OK) return st;
    if (n_src && !index)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "set_source_subset was given n_src = %zu but a NULL index "
                       "array; pass the indices, or (0, NULL) for all particles", n_src);
    if (n_src && (st = gp_check_subset(base, fn, n_src, index)) != GP_OK) return st;
    return gp_index_list_store(base, fn, n_src, index, &base->p.src, &base->p.n_src);
}

gp_status gp_sources_replace(gp_base *base, size_t n_src, const uint32_t *index, int *changed)
{
    int was_all = base->p.src == NULL;
    gp_status st = gp_sources_set(base, n_src, index);
    *changed = st == GP_OK && !(was_all && !base->p.src);
    return st;
}
