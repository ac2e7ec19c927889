/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu-plugin.h — what the GPU tests share: find a plugin .so in the build
 * tree (GP_BUILD/plugins, else the directory compiled in), dlopen it
 * RTLD_LOCAL and get its table. Header only.
 */
#ifndef GP_TEST_GPU_PLUGIN_H
#define GP_TEST_GPU_PLUGIN_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gravplug.h"
#include "tap.h"

#ifndef GP_BUILD_PLUGIN_DIR
#  define GP_BUILD_PLUGIN_DIR "build/plugins"
#endif

typedef struct gpu_plugin {
    void *handle;
    const gp_api *api;
    char path[1024];
} gpu_plugin;

/* 0 on success; otherwise a sentence in why. */
static inline int gpu_plugin_open(gpu_plugin *p, const char *name, char *why, size_t whylen)
{
    const char *b = getenv("GP_BUILD");
    if (b && *b) snprintf(p->path, sizeof p->path, "%s/plugins/gravplug-%s.so", b, name);
    else snprintf(p->path, sizeof p->path, "%s/gravplug-%s.so", GP_BUILD_PLUGIN_DIR, name);
    p->api = NULL;
    p->handle = dlopen(p->path, RTLD_NOW | RTLD_LOCAL);
    if (!p->handle) {
        snprintf(why, whylen, "cannot load %s: %s", p->path, dlerror());
        return -1;
    }
    gravplug_entry_fn entry = (gravplug_entry_fn)dlsym(p->handle, GRAVPLUG_ENTRY_SYMBOL);
    if (!entry) {
        snprintf(why, whylen, "%s has no %s", p->path, GRAVPLUG_ENTRY_SYMBOL);
        return -1;
    }
    p->api = entry(GRAVPLUG_ABI_MAJOR);
    if (!p->api) {
        snprintf(why, whylen, "%s does not speak ABI %d", p->path, GRAVPLUG_ABI_MAJOR);
        return -1;
    }
    return 0;
}

/* An instance with up to two parameters (k2, or k1 and k2, may be NULL),
 * or NULL with the plugin's sentence as a diag line. */
static inline gp_solver *gpu_plugin_make(const gp_api *api, const char *k1, const char *v1,
                                         const char *k2, const char *v2)
{
    gp_param kv[2] = {{k1, v1}, {k2, v2}};
    gp_init_args a;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    a.params = kv;
    a.n_params = k2 ? 2 : k1 ? 1 : 0;
    a.device = -1;
    gp_solver *s = NULL;
    gp_status st = api->init(&s, &a);
    if (st != GP_OK) {
        diag("%s init: %s", api->name, api->last_error(NULL));
        return NULL;
    }
    return s;
}

/* The instance's statistics (zeros where the plugin keeps none). */
static inline gp_stats gpu_plugin_stats(const gp_api *api, gp_solver *s)
{
    gp_stats st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    api->get_stats(s, &st);
    return st;
}

#endif /* GP_TEST_GPU_PLUGIN_H */
