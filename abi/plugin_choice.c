/* SPDX-License-Identifier: Apache-2.0 */
/*
 * plugin_choice.c — the plugins on the search path in the order a host
 * that names none should try them, from what each says it is
 * (gp_api.capabilities), so that no host keeps a list of plugin names.
 * The rule is gp_plugin_preference (gravplug_loader.h).
 */
#include <stdlib.h>
#include <string.h>

#include "gravplug_loader.h"

GRAVPLUG_EXPORT int gp_plugin_preference(uint64_t capabilities)
{
    /* an approximate (tree) solver beats an exact one at large n, and on
     * the same algorithm a GPU beats the CPU */
    return ((capabilities & GP_CAP_TREE) ? 2 : 0) + ((capabilities & GP_CAP_GPU) ? 1 : 0);
}

typedef struct candidate {
    char *path, *name;
    uint64_t capabilities;
    int preference;
    size_t order;             /* search order: ties keep it */
} candidate;

typedef struct candidates {
    candidate *v;
    size_t n, cap;
    uint64_t need, refuse;
    int failed;               /* out of memory */
} candidates;

static int collect(const char *path, const char *short_name, void *user)
{
    candidates *c = user;
    gp_plugin *p = NULL;
    if (gp_plugin_open(path, &p, NULL, 0) != GP_OK) return 0;
    uint64_t caps = gp_plugin_api(p)->capabilities;
    gp_plugin_close(p);
    if ((caps & c->need) != c->need || (caps & c->refuse)) return 0;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 8;
        candidate *v = realloc(c->v, cap * sizeof *v);
        if (!v) { c->failed = 1; return 1; }
        c->v = v;
        c->cap = cap;
    }
    candidate *k = &c->v[c->n];
    k->path = strdup(path);
    k->name = strdup(short_name);
    if (!k->path || !k->name) {
        free(k->path);
        free(k->name);
        c->failed = 1;
        return 1;
    }
    k->capabilities = caps;
    k->preference = gp_plugin_preference(caps);
    k->order = c->n++;
    return 0;
}

static int best_first(const void *a, const void *b)
{
    const candidate *x = a, *y = b;
    if (x->preference != y->preference) return x->preference > y->preference ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

GRAVPLUG_EXPORT size_t gp_plugin_list_preferred(uint64_t need, uint64_t refuse,
                                                gp_plugin_choice_fn fn, void *user)
{
    candidates c = { NULL, 0, 0, need, refuse, 0 };
    gp_plugin_list(collect, &c);
    size_t listed = 0;
    if (!c.failed) {
        qsort(c.v, c.n, sizeof *c.v, best_first);
        for (size_t k = 0; k < c.n; ++k) {
            ++listed;
            if (fn && fn(c.v[k].path, c.v[k].name, c.v[k].capabilities, user)) break;
        }
    }
    for (size_t k = 0; k < c.n; ++k) {
        free(c.v[k].path);
        free(c.v[k].name);
    }
    free(c.v);
    return listed;
}
