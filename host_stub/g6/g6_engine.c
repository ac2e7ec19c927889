/* SPDX-License-Identifier: Apache-2.0 */
/* g6_engine.c — see g6_engine.h. */
#include "g6_engine.h"
#include "g6_massless.h"
#include "gravplug_params.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAIL(e, ...) (snprintf((e)->err, sizeof (e)->err, __VA_ARGS__), -1)

static int plugin_fail(g6_engine *e, const char *call, gp_status st)
{
    return FAIL(e, "%s on plugin %s failed (%s): %s", call, e->api->name, gp_status_name(st),
                e->api->last_error(e->s));
}

/* A GP_CAP_MPI plugin's particles on every rank are sources for every
 * rank, so the one process's j-memory this library loads, given by P
 * ranks making the same calls, would be summed P times. It drives such a
 * plugin at P = 1 only. The ranks are counted through the ABI alone (the
 * library links no MPI): each rank holds one particle at the origin, and
 * the other ranks' copies are its neighbours (collective: every rank of
 * an identical client refuses alike). */
static int refuse_ranks(g6_engine *e)
{
    const gp_api *a = e->api;
    if (!(a->capabilities & GP_CAP_MPI)) return 0;
    double pos[3] = {0.0, 0.0, 0.0}, mass = 1.0, acc[3], radius = 1.0;
    uint32_t self = 0;
    uint64_t offset[2];
    size_t others = 0;
    gp_outputs out = {0};
    out.struct_size = sizeof out;
    out.acc = acc;
    out.nb_radius = &radius;
    gp_status st = a->set_param(e->s, "eps", "1");
    if (st == GP_OK) st = a->set_particles(e->s, 1, pos, &mass);
    if (st == GP_OK) st = a->set_active_subset(e->s, 1, &self);
    if (st == GP_OK) st = a->compute_forces_ex(e->s, &out);
    if (st == GP_OK) st = a->get_neighbours(e->s, 0, offset, NULL, &others);
    if (st == GP_ERR_INVALID_ARGUMENT && others > 0)
        return FAIL(e, "plugin %s runs on %zu MPI ranks, and this library gives it one process's "
                       "j-memory: every rank's copy would be a source for every rank. Run the client as "
                       "one process for %s, or, in a client that spreads j-particles over its ranks "
                       "itself, give each rank a one-process plugin, one without GP_CAP_MPI (docs/GRAPE6.md, "
                       "\"Under MPI\")",
                    a->name, others + 1, a->name);
    return st == GP_OK ? 0 : plugin_fail(e, "counting the MPI ranks: compute_forces_ex", st);
}

/* GRAPE-6 clients run as framework workers. Over AMUSE's MPI channel the
 * caller spins on a core while it waits for each call, and the worker
 * spins between calls; OpenMP's default spin-waiting of the plugin's
 * threads then fights them for the cores: ph4 on two cores took 6x longer
 * with two threads than with passive waiting, while phiGRAPE over sockets
 * (nothing spinning) ran alike either way (bench/results/grape6). So the
 * library asks for passive waiting unless the environment chose; libgomp
 * reads it when the plugin loads it. */
static void wait_passively_unless_set(void)
{
    (void)setenv("OMP_WAIT_POLICY", "passive", 0);
}

int g6_engine_open(g6_engine *e, const g6_config *cfg, int device)
{
    memset(e, 0, sizeof *e);
    char err[1024];
    wait_passively_unless_set();
    gp_status st = gp_plugin_open(cfg->plugin, &e->plugin, err, sizeof err);
    if (st != GP_OK) return FAIL(e, "cannot open plugin '%s': %s", cfg->plugin, err);
    e->api = gp_plugin_api(e->plugin);
    const gp_api *a = e->api;
    if (!GRAVPLUG_API_HAS(a, set_state_jerk) || !GRAVPLUG_API_HAS(a, predict) ||
        !GRAVPLUG_API_HAS(a, set_source_subset) || !GRAVPLUG_API_HAS(a, compute_forces_ex) ||
        !GRAVPLUG_API_HAS(a, get_neighbours) || !GRAVPLUG_API_HAS(a, update_masses) ||
        !GRAVPLUG_API_HAS(a, get_positions)) {
        (void)FAIL(e, "plugin %s speaks ABI %u.%u without the held state, jerk and lists of ABI 1.2 "
                "that GRAPE-6's calls need; choose another plugin (GRAVPLUG_G6_PLUGIN)",
             a->name, a->abi_major, a->abi_minor);
        g6_engine_close(e);
        return -1;
    }
    if (!(a->capabilities & GP_CAP_JERK)) {
        (void)FAIL(e, "plugin %s computes no jerk (GP_CAP_JERK), which every g6calc returns; "
                      "choose cuda-direct, cpu-direct or cpu-tree (GRAVPLUG_G6_PLUGIN)", a->name);
        g6_engine_close(e);
        return -1;
    }
    int have_field = GRAVPLUG_API_HAS(a, compute_field_ex);
    if (cfg->route == G6_ROUTE_FIELD && !have_field) {
        (void)FAIL(e, "route = field asked, but plugin %s has no compute_field_ex (ABI 1.3); "
                "use route = auto or held", a->name);
        g6_engine_close(e);
        return -1;
    }
    e->field_route = cfg->route == G6_ROUTE_HELD ? 0 : have_field;
    e->npipes = (size_t)cfg->npipes;
    gp_init_args args = {0};
    args.struct_size = sizeof args;
    args.params = cfg->n_params ? cfg->params : NULL;
    args.n_params = cfg->n_params;
    args.device = cfg->device >= 0 ? cfg->device : device;
    st = a->init(&e->s, &args);
    if (st != GP_OK) {
        (void)FAIL(e, "plugin %s did not start (%s): %s", a->name, gp_status_name(st), a->last_error(NULL));
        g6_engine_close(e);
        return -1;
    }
    if (refuse_ranks(e)) {
        g6_engine_close(e);
        return -1;
    }
    e->src_n = SIZE_MAX;
    return 0;
}

void g6_engine_close(g6_engine *e)
{
    if (e->s) e->api->finalize(e->s);
    gp_plugin_close(e->plugin);
    free(e->mass); free(e->iota); free(e->work_u32); free(e->work);
    free(e->offset); free(e->list); free(e->seen);
    char keep[sizeof e->err];
    memcpy(keep, e->err, sizeof keep);
    memset(e, 0, sizeof *e);
    memcpy(e->err, keep, sizeof keep);
}

static size_t slots_of(const g6_engine *e, size_t jcap) { return jcap + (e->field_route ? 0 : e->npipes); }

/* Scratch for n entries: work (16 doubles each), work_u32 (2 each), iota. */
static int reserve(g6_engine *e, size_t n)
{
    if (n > e->work_cap) {
        double *w = realloc(e->work, n * 16 * sizeof *w);
        if (!w) return FAIL(e, "no memory for the outputs of %zu particles", n);
        e->work = w;
        uint32_t *u = realloc(e->work_u32, n * 2 * sizeof *u);
        if (!u) return FAIL(e, "no memory for the indices of %zu particles", n);
        e->work_u32 = u;
        e->work_cap = n;
    }
    if (n > e->iota_cap) {
        uint32_t *u = realloc(e->iota, n * sizeof *u);
        if (!u) return FAIL(e, "no memory for the indices of %zu particles", n);
        for (size_t k = 0; k < n; ++k) u[k] = (uint32_t)k;
        e->iota = u;
        e->iota_cap = n;
    }
    return 0;
}

/* set_state_jerk of n j-addresses from j-memory. */
static int send_states(g6_engine *e, const g6_jmem *jm, size_t n, const uint32_t *addr)
{
    if (n == 0) return 0;
    if (reserve(e, n)) return -1;
    double *x = e->work, *v = x + 3 * n, *a = v + 3 * n, *j = a + 3 * n, *t = j + 3 * n;
    for (size_t k = 0; k < n; ++k) {
        uint32_t q = addr[k];
        memcpy(x + 3 * k, jm->x + 3 * q, 3 * sizeof(double));
        memcpy(v + 3 * k, jm->v + 3 * q, 3 * sizeof(double));
        memcpy(a + 3 * k, jm->a + 3 * q, 3 * sizeof(double));
        memcpy(j + 3 * k, jm->j + 3 * q, 3 * sizeof(double));
        t[k] = jm->t[q];
    }
    gp_status st = e->api->set_state_jerk(e->s, n, addr, x, v, a, j, t);
    return st == GP_OK ? 0 : plugin_fail(e, "set_state_jerk", st);
}

/* The whole j-memory into a plugin of jm->cap j-slots. */
static int reload(g6_engine *e, g6_jmem *jm)
{
    size_t jcap = jm->cap, n = slots_of(e, jcap);
    double *mass = calloc(jcap, sizeof *mass);
    double *pos = calloc(3 * n, sizeof *pos);
    if (!mass || !pos || reserve(e, jm->n)) {
        free(mass);
        free(pos);
        return FAIL(e, "no memory to load %zu j-particles", jcap);
    }
    memcpy(pos, jm->x, 3 * jcap * sizeof(double));
    memcpy(mass, jm->m, jcap * sizeof(double));
    /* the massless slots (i-particles, unwritten addresses) source nothing */
    double *all_mass = calloc(n, sizeof *all_mass);
    if (!all_mass) {
        free(mass);
        free(pos);
        return FAIL(e, "no memory to load %zu j-particles", jcap);
    }
    memcpy(all_mass, mass, jcap * sizeof(double));
    gp_status st = e->api->set_particles(e->s, n, pos, all_mass);
    free(pos);
    free(all_mass);
    if (st != GP_OK) {
        free(mass);
        return plugin_fail(e, "set_particles", st);
    }
    free(e->mass);
    e->mass = mass;
    unsigned *seen = realloc(e->seen, jcap * sizeof *seen);
    if (!seen) return FAIL(e, "no memory for %zu j-slots", jcap);
    memset(seen, 0, jcap * sizeof *seen);
    e->seen = seen;
    e->jcap = jcap;
    e->src_n = SIZE_MAX;
    e->predicted = 0;
    e->eps_set = 0;
    size_t m = 0;
    uint32_t *addr = e->work_u32;
    for (size_t q = 0; q < jm->n; ++q)
        if (jm->written[q]) addr[m++] = (uint32_t)q;
    /* send_states reuses work: copy the list out of its way first */
    uint32_t *copy = malloc((m ? m : 1) * sizeof *copy);
    if (!copy) return FAIL(e, "no memory to load %zu j-particles", m);
    memcpy(copy, addr, m * sizeof *copy);
    int rc = send_states(e, jm, m, copy);
    free(copy);
    if (rc == 0) g6_jmem_clear_pending(jm);
    return rc;
}

/* The pending addresses: masses first (update_masses where they changed),
 * then their states. */
static int upload(g6_engine *e, g6_jmem *jm)
{
    if (jm->n == 0) return FAIL(e, "g6calc before any g6_set_j_particle: j-memory is empty");
    if (e->jcap == 0 || jm->cap > e->jcap) return reload(e, jm);
    if (jm->n_pend == 0) return 0;
    size_t n = jm->n_pend, nm = 0;
    if (reserve(e, n)) return -1;
    uint32_t *maddr = e->work_u32;
    double *mval = e->work;
    for (size_t k = 0; k < n; ++k) {
        uint32_t q = jm->pend[k];
        if (jm->m[q] != e->mass[q]) {
            maddr[nm] = q;
            mval[nm++] = jm->m[q];
        }
    }
    if (nm) {
        gp_status st = e->api->update_masses(e->s, nm, maddr, mval);
        if (st != GP_OK) return plugin_fail(e, "update_masses", st);
        for (size_t k = 0; k < nm; ++k) e->mass[maddr[k]] = mval[k];
    }
    if (send_states(e, jm, n, jm->pend)) return -1;
    g6_jmem_clear_pending(jm);
    e->predicted = 0;
    return 0;
}

/* Everything the sources need before a force pass: j-memory uploaded,
 * predicted to ti, the source subset [0, nj), the softening. */
static int prepare(g6_engine *e, g6_jmem *jm, double ti, size_t nj, double eps2)
{
    if (upload(e, jm)) return -1;
    gp_status st;
    if (!e->predicted || e->pred_t != ti) {
        st = e->api->predict(e->s, ti);
        if (st != GP_OK) return plugin_fail(e, "predict", st);
        e->predicted = 1;
        e->pred_t = ti;
    }
    size_t want = nj < jm->n ? nj : SIZE_MAX;
    if (want != e->src_n) {
        if (want != SIZE_MAX && reserve(e, want)) return -1;
        st = want == SIZE_MAX ? e->api->set_source_subset(e->s, 0, NULL)
                              : e->api->set_source_subset(e->s, want, e->iota);
        if (st != GP_OK) return plugin_fail(e, "set_source_subset", st);
        e->src_n = want;
    }
    if (!e->eps_set || e->eps2 != eps2) {
        char buf[64];
        snprintf(buf, sizeof buf, "%.17g", sqrt(eps2));
        st = e->api->set_param(e->s, GP_PARAM_SOFTENING, buf);
        if (st != GP_OK) return plugin_fail(e, "set_param eps", st);
        e->eps2 = eps2;
        e->eps_set = 1;
    }
    return 0;
}

/* The plugin's lists of the last force call into lists[k_of[p]]. */
static int take_lists(g6_engine *e, size_t n, const size_t *k_of, const g6_jmem *jm, g6_lists *lists)
{
    if (n + 1 > e->offset_cap) {
        uint64_t *o = realloc(e->offset, (n + 1) * sizeof *o);
        if (!o) return FAIL(e, "no memory for %zu neighbour lists", n);
        e->offset = o;
        e->offset_cap = n + 1;
    }
    size_t needed = 0;
    gp_status st = e->api->get_neighbours(e->s, e->list_cap, e->offset, e->list, &needed);
    if (st == GP_ERR_INVALID_ARGUMENT && needed > e->list_cap) {
        uint32_t *l = realloc(e->list, needed * sizeof *l);
        if (!l) return FAIL(e, "no memory for %zu neighbours", needed);
        e->list = l;
        e->list_cap = needed;
        st = e->api->get_neighbours(e->s, e->list_cap, e->offset, e->list, &needed);
    }
    if (st != GP_OK) return plugin_fail(e, "get_neighbours", st);
    for (size_t p = 0; p < n; ++p)
        if (g6_lists_put(lists, k_of[p], e->list + e->offset[p], (size_t)(e->offset[p + 1] - e->offset[p]),
                         jm->index))
            return FAIL(e, "no memory for the neighbour lists");
    return 0;
}

/* One force pass over n points (positions x, velocities v, packed),
 * scattering into the outputs at positions k_of[p]. Field route: exclude
 * gives each point's own address; held route: the points are the active
 * particles active[] (set by the caller). */
static int force_pass(g6_engine *e, const g6_jmem *jm, size_t n, const size_t *k_of, const double *x,
                      const double *v, const uint32_t *exclude, const uint32_t *active, const double *radius,
                      double *acc, double *jerk, double *pot, uint32_t *nn_addr, double *nn_d2,
                      g6_lists *lists)
{
    double *oa = malloc(n * 8 * sizeof *oa);
    uint32_t *onn = malloc(n * sizeof *onn);
    if (!oa || !onn) {
        free(oa);
        free(onn);
        return FAIL(e, "no memory for the outputs of %zu i-particles", n);
    }
    double *oj = oa + 3 * n, *op = oj + 3 * n, *od = op + n;
    gp_outputs out = {0};
    out.struct_size = sizeof out;
    out.acc = oa;
    out.jerk = oj;
    out.pot = op;
    out.nn_index = onn;
    out.nn_dist2 = od;
    out.nb_radius = radius;
    gp_status st;
    const char *call;
    if (e->field_route) {
        call = "compute_field_ex";
        st = e->api->compute_field_ex(e->s, n, x, v, exclude, &out);
    } else {
        call = "compute_forces_ex";
        st = e->api->set_active_subset(e->s, n, active);
        if (st == GP_OK) st = e->api->compute_forces_ex(e->s, &out);
    }
    int rc = st == GP_OK ? 0 : plugin_fail(e, call, st);
    for (size_t p = 0; rc == 0 && p < n; ++p) {
        size_t k = k_of[p];
        memcpy(acc + 3 * k, oa + 3 * p, 3 * sizeof(double));
        if (jerk) memcpy(jerk + 3 * k, oj + 3 * p, 3 * sizeof(double));
        if (pot) pot[k] = op[p];
        nn_addr[k] = onn[p];
        nn_d2[k] = od[p];
    }
    free(oa);
    free(onn);
    if (rc == 0 && radius && lists) rc = take_lists(e, n, k_of, jm, lists);
    return rc;
}

/* g6_massless.h's additions, at the positions the plugin holds. */
static int add_massless(g6_engine *e, const g6_jmem *jm, size_t jlim, size_t ni, const double *x,
                        const uint32_t *own, const double *h2, uint32_t *nn_addr, double *nn_d2, g6_lists *lists)
{
    uint32_t *addr;
    size_t m = g6_massless_find(jm, jlim, &addr);
    if (m == 0) return 0;
    if (m == (size_t)-1) return FAIL(e, "no memory for the massless j-particles");
    double *pos = malloc(3 * m * sizeof *pos);
    int rc = pos ? 0 : FAIL(e, "no memory for %zu massless j-particles", m);
    if (rc == 0) {
        gp_status st = e->api->get_positions(e->s, m, addr, pos);
        if (st != GP_OK) rc = plugin_fail(e, "get_positions", st);
    }
    if (rc == 0 && g6_massless_add(jm, m, addr, pos, ni, x, own, h2, nn_addr, nn_d2, lists))
        rc = FAIL(e, "no memory for the neighbour lists");
    free(addr);
    free(pos);
    return rc;
}

int g6_engine_calc(g6_engine *e, g6_jmem *jm, double ti, size_t nj, size_t ni,
                   const int *index, const double *x, const double *v, double eps2,
                   const double *h2, double *acc, double *jerk, double *pot, int *nn,
                   g6_lists *lists)
{
    if (!isfinite(ti)) return FAIL(e, "g6_set_ti: the time %g is not finite", ti);
    if (!(eps2 >= 0) || !isfinite(eps2)) return FAIL(e, "eps2 = %g: the softening must be finite and >= 0", eps2);
    if (ni > e->npipes) return FAIL(e, "ni = %zu is more than g6_npipes() = %zu", ni, e->npipes);
    for (size_t k = 0; k < 3 * ni; ++k)
        if (!isfinite(x[k]) || !isfinite(v[k]))
            return FAIL(e, "i-particle %zu (index %d) has a position or velocity that is not finite", k / 3,
                        index[k / 3]);
    int want_lists = 0;
    for (size_t k = 0; h2 && k < ni; ++k) {
        if (isnan(h2[k])) return FAIL(e, "h2[%zu] is NaN", k);
        if (h2[k] > 0) want_lists = 1;
    }
    if (lists && g6_lists_begin(lists, ni)) return FAIL(e, "no memory for %zu neighbour lists", ni);
    if (ni == 0) {
        if (lists) g6_lists_finish(lists);
        return 0;
    }
    if (nj == 0) { /* no sources: nothing to sum, nobody near */
        memset(acc, 0, 3 * ni * sizeof *acc);
        if (jerk) memset(jerk, 0, 3 * ni * sizeof *jerk);
        for (size_t k = 0; k < ni; ++k) {
            if (pot) pot[k] = 0.0;
            if (nn) nn[k] = -1;
        }
        if (lists) {
            if (want_lists) g6_lists_finish(lists);
            else lists->ni = 0;
        }
        return 0;
    }
    if (prepare(e, jm, ti, nj, eps2)) return -1;

    size_t *k_of = malloc(ni * sizeof *k_of);
    uint32_t *own = malloc(ni * 2 * sizeof *own);
    double *radius = want_lists ? malloc(ni * sizeof *radius) : NULL;
    double *px = malloc(ni * 7 * sizeof *px);
    uint32_t *nn_addr = malloc(ni * sizeof *nn_addr);
    if (!k_of || !own || !px || !nn_addr || (want_lists && !radius)) {
        free(k_of); free(own); free(radius); free(px); free(nn_addr);
        return FAIL(e, "no memory for %zu i-particles", ni);
    }
    uint32_t *ids = own + ni;
    double *pv = px + 3 * ni, *nn_d2 = pv + 3 * ni;
    size_t jlim = nj < jm->n ? nj : jm->n;
    for (size_t k = 0; k < ni; ++k) {
        uint32_t q = index[k] < 0 ? UINT32_MAX : g6_index_map_get(&jm->map, index[k]);
        own[k] = q < jlim ? q : UINT32_MAX;
    }
    int rc = 0;
    if (e->field_route) {
        for (size_t k = 0; k < ni; ++k) {
            k_of[k] = k;
            if (radius) radius[k] = h2[k] > 0 ? sqrt(h2[k]) : 0.0;
        }
        rc = force_pass(e, jm, ni, k_of, x, v, own, NULL, radius, acc, jerk, pot, nn_addr, nn_d2, lists);
    } else {
        /* pass p: the p-th occurrence of each j-address, and (p = 0) the
         * points without one in the massless slots */
        unsigned passes = 1;
        for (size_t k = 0; k < ni; ++k)
            if (own[k] != UINT32_MAX && ++e->seen[own[k]] > passes) passes = e->seen[own[k]];
        unsigned *occ = calloc(ni, sizeof *occ);
        if (!occ) rc = FAIL(e, "no memory for %zu i-particles", ni);
        for (size_t k = 0; rc == 0 && k < ni; ++k)
            if (own[k] != UINT32_MAX) occ[k] = --e->seen[own[k]];
        for (size_t k = 0; k < ni; ++k)
            if (own[k] != UINT32_MAX) e->seen[own[k]] = 0;
        for (unsigned p = 0; rc == 0 && p < passes; ++p) {
            size_t m = 0;
            for (size_t k = 0; k < ni; ++k) {
                if (own[k] == UINT32_MAX ? p != 0 : occ[k] != p) continue;
                k_of[m] = k;
                ids[m] = own[k] != UINT32_MAX ? own[k] : (uint32_t)(e->jcap + k);
                memcpy(px + 3 * m, x + 3 * k, 3 * sizeof(double));
                memcpy(pv + 3 * m, v + 3 * k, 3 * sizeof(double));
                if (radius) radius[m] = h2[k] > 0 ? sqrt(h2[k]) : 0.0;
                ++m;
            }
            if (p > 0 && prepare(e, jm, ti, nj, eps2)) {
                rc = -1;
                break;
            }
            double *zero = calloc(3 * m + m, sizeof *zero);
            if (!zero) {
                rc = FAIL(e, "no memory for %zu i-particles", m);
                break;
            }
            double *tt = zero + 3 * m;
            for (size_t q = 0; q < m; ++q) tt[q] = ti;
            gp_status st = e->api->set_state_jerk(e->s, m, ids, px, pv, zero, zero, tt);
            free(zero);
            /* the overwritten j-slots are restored from j-memory before
             * the next pass or call */
            for (size_t q = 0; q < m; ++q)
                if (ids[q] < e->jcap) g6_jmem_mark(jm, ids[q]);
            if (st != GP_OK) {
                rc = plugin_fail(e, "set_state_jerk", st);
                break;
            }
            rc = force_pass(e, jm, m, k_of, px, pv, NULL, ids, radius, acc, jerk, pot, nn_addr, nn_d2, lists);
        }
        free(occ);
    }
    /* GRAPE-6 lists massless j-particles too; the plugin's sources leave
     * them out */
    if (rc == 0) rc = add_massless(e, jm, jlim, ni, x, own, want_lists ? h2 : NULL, nn_addr, nn_d2,
                                   want_lists ? lists : NULL);
    for (size_t k = 0; rc == 0 && nn && k < ni; ++k) nn[k] = nn_addr[k] == UINT32_MAX ? -1 : jm->index[nn_addr[k]];
    free(k_of); free(own); free(radius); free(px); free(nn_addr);
    if (rc == 0 && lists) {
        if (want_lists) g6_lists_finish(lists);
        else lists->ni = 0;
    }
    return rc;
}
