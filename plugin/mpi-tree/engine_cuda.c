/* SPDX-License-Identifier: Apache-2.0 */
/*
 * engine_cuda.c — the cuda-tree sub-instance behind mpi-tree's
 * `engine = cuda-tree` (engine_cuda.h). One rank, one sub-instance, on the
 * device the host chose (gp_init_args.device).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_cuda.h"
#include "gravplug_loader.h"
#include "mapped_file.h"
#include "base/base_instance.h"
#include "base/base_params.h"

#define CUDA_TREE_FILE "gravplug-cuda-tree.so"

/* What maps onto cuda-tree one to one (same names, same meanings).
 * Not mapped: delta_acc (mpi-tree refuses mac = acceleration with this
 * engine: cuda-tree would judge cells by its local-only |a|), rebuild
 * (each side keeps its own policy), group_size, leaf_size, keys,
 * wide_split (cuda-tree has its own tree shape). */
const char *const mpi_tree_engine_mapped_params[] = { "G", "eps", "theta", "mac", "order", "precision", NULL };
enum { N_MAPPED = 6 };

struct mpi_tree_engine {
    gp_plugin *plugin;      /* through the loader: its trust rules and checks */
    const gp_api *api;
    gp_solver *sub;
    char path[4096];
    int have;               /* the sub-instance holds this rank's particles */
    int stale;              /* MTE_POSITIONS | MTE_PARTICLES since the last sync */
    char pushed[N_MAPPED][64];   /* values last given to cuda-tree */
    /* the worker thread (mpi_tree_engine_run) */
    int has_worker, quit, pending;
    pthread_t worker;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    void (*job)(void *);
    void *job_arg;
};

static void *worker_main(void *arg)
{
    mpi_tree_engine *e = arg;
    pthread_mutex_lock(&e->mu);
    for (;;) {
        while (!e->pending && !e->quit) pthread_cond_wait(&e->cv, &e->mu);
        if (e->quit) break;
        pthread_mutex_unlock(&e->mu);
        e->job(e->job_arg);
        pthread_mutex_lock(&e->mu);
        e->pending = 0;
        pthread_cond_broadcast(&e->cv);
    }
    pthread_mutex_unlock(&e->mu);
    return NULL;
}

static void worker_start(mpi_tree_engine *e)
{
    if (pthread_mutex_init(&e->mu, NULL)) return;
    if (pthread_cond_init(&e->cv, NULL)) { pthread_mutex_destroy(&e->mu); return; }
    e->has_worker = pthread_create(&e->worker, NULL, worker_main, e) == 0;
    if (!e->has_worker) {
        pthread_cond_destroy(&e->cv);
        pthread_mutex_destroy(&e->mu);
    }
}

void mpi_tree_engine_run(mpi_tree_engine *e, void (*job)(void *), void *arg)
{
    if (!e->has_worker) { job(arg); return; }
    pthread_mutex_lock(&e->mu);
    e->job = job;
    e->job_arg = arg;
    e->pending = 1;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

void mpi_tree_engine_wait(mpi_tree_engine *e)
{
    if (!e->has_worker) return;
    pthread_mutex_lock(&e->mu);
    while (e->pending) pthread_cond_wait(&e->cv, &e->mu);
    pthread_mutex_unlock(&e->mu);
}

/* Where mpi-tree's .so lives: cuda-tree is looked for beside it (the
 * mapped file, since the loader loads through /proc/self/fd). */
static void default_path(char *out, size_t len)
{
    char me[4096] = "";
    if (gp_mapped_file((const void *)default_path, NULL, me, sizeof me) != 0) {
        Dl_info info;
        if (dladdr((void *)default_path, &info) && info.dli_fname)
            snprintf(me, sizeof me, "%s", info.dli_fname);
    }
    const char *slash = strrchr(me, '/');
    if (slash)
        snprintf(out, len, "%.*s/%s", (int)(slash - me), me, CUDA_TREE_FILE);
    else
        snprintf(out, len, "%s", CUDA_TREE_FILE);
}

void mpi_tree_engine_close(mpi_tree_engine *e)
{
    if (!e) return;
    if (e->has_worker) {
        pthread_mutex_lock(&e->mu);
        while (e->pending) pthread_cond_wait(&e->cv, &e->mu);
        e->quit = 1;
        pthread_cond_broadcast(&e->cv);
        pthread_mutex_unlock(&e->mu);
        pthread_join(e->worker, NULL);
        pthread_cond_destroy(&e->cv);
        pthread_mutex_destroy(&e->mu);
    }
    if (e->sub && e->api) e->api->finalize(e->sub);
    gp_plugin_close(e->plugin);
    free(e);
}

int mpi_tree_engine_open(mpi_tree_engine **out, const char *path, int device, char *why, size_t len)
{
    *out = NULL;
    mpi_tree_engine *e = calloc(1, sizeof *e);
    if (!e) {
        snprintf(why, len, "engine cuda-tree: no memory for the engine; free memory or use "
                           "engine = cpu-tree");
        return -1;
    }
    if (path && path[0]) snprintf(e->path, sizeof e->path, "%s", path);
    else default_path(e->path, sizeof e->path);
    char msg[2048];
    if (gp_plugin_open(e->path, &e->plugin, msg, sizeof msg) != GP_OK) {
        snprintf(why, len, "engine cuda-tree: cannot load the cuda-tree plugin %s (%s); build it "
                           "(make cuda), point engine_plugin at it, or use engine = cpu-tree",
                 e->path, msg);
        mpi_tree_engine_close(e);
        return -1;
    }
    e->api = gp_plugin_api(e->plugin);
    if (e->api->struct_size < sizeof(gp_api)) {
        snprintf(why, len, "engine cuda-tree: %s is not a gravplug plugin of ABI %d.%d or later; "
                           "point engine_plugin at gravplug-cuda-tree.so or use engine = cpu-tree",
                 e->path, GRAVPLUG_ABI_MAJOR, GRAVPLUG_ABI_MINOR);
        e->api = NULL;
        mpi_tree_engine_close(e);
        return -1;
    }
    gp_init_args args = { .struct_size = sizeof args, .device = device };
    gp_status st = e->api->init(&e->sub, &args);
    if (st != GP_OK || !e->sub) {
        const char *m = e->api->last_error(NULL);
        snprintf(why, len, "engine cuda-tree: the cuda-tree plugin could not start (%s); use "
                           "engine = cpu-tree, or run where a CUDA device is visible",
                 m && m[0] ? m : "init failed without a reason");
        e->sub = NULL;
        mpi_tree_engine_close(e);
        return -1;
    }
    e->stale = MTE_PARTICLES;
    worker_start(e);
    *out = e;
    return 0;
}

void mpi_tree_engine_mark(mpi_tree_engine *e, int what)
{
    if (e) e->stale |= what;
}

static int fail_sub(mpi_tree_engine *e, const char *call, char *why, size_t len)
{
    snprintf(why, len, "engine cuda-tree: cuda-tree's %s failed: %s", call,
             e->api->last_error(e->sub));
    return -1;
}

/* Brings the sub-instance's parameters and particles up to date. */
static int sync(mpi_tree_engine *e, gp_base *base, const double *mass, char *why, size_t len)
{
    for (int k = 0; k < N_MAPPED; k++) {
        char v[64];
        if (gp_base_get_param(base, mpi_tree_engine_mapped_params[k], v, sizeof v) != GP_OK) {
            snprintf(why, len, "engine cuda-tree: parameter %s has no value; please report this",
                     mpi_tree_engine_mapped_params[k]);
            return -1;
        }
        if (!strcmp(v, e->pushed[k])) continue;
        if (e->api->set_param(e->sub, mpi_tree_engine_mapped_params[k], v) != GP_OK)
            return fail_sub(e, "set_param", why, len);
        memcpy(e->pushed[k], v, sizeof v);
    }
    const gp_particles *p = &base->p;
    if (e->stale & MTE_PARTICLES || !e->have) {
        e->have = 0;
        if (e->api->set_particles(e->sub, p->n, p->pos, mass) != GP_OK)
            return fail_sub(e, "set_particles", why, len);
        e->have = 1;
    } else if (e->stale & MTE_POSITIONS) {
        if (e->api->update_positions(e->sub, p->pos) != GP_OK)
            return fail_sub(e, "update_positions", why, len);
    }
    e->stale = 0;
    return 0;
}

int mpi_tree_engine_forces(mpi_tree_engine *e, gp_base *base, const double *mass, double *acc, double *pot,
               char *why, size_t len)
{
    const gp_particles *p = &base->p;
    if (sync(e, base, mass, why, len)) return -1;
    if (e->api->set_active_subset(e->sub, p->active ? p->n_active : 0, p->active) != GP_OK)
        return fail_sub(e, "set_active_subset", why, len);
    if (e->api->compute_forces(e->sub, acc, pot) != GP_OK)
        return fail_sub(e, "compute_forces", why, len);
    return 0;
}

int mpi_tree_engine_field(mpi_tree_engine *e, gp_base *base, const double *mass, size_t m, const double *points,
              double *acc, double *pot, char *why, size_t len)
{
    if (sync(e, base, mass, why, len)) return -1;
    if (e->api->compute_field(e->sub, m, points, acc, pot) != GP_OK)
        return fail_sub(e, "compute_field", why, len);
    return 0;
}

void mpi_tree_engine_interactions(mpi_tree_engine *e, uint64_t *pp, uint64_t *pc)
{
    gp_stats st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    *pp = *pc = 0;
    if (e && e->sub && e->api->get_stats && e->api->get_stats(e->sub, &st) == GP_OK) {
        *pp = st.pp_interactions;
        *pc = st.pc_interactions;
    }
}
