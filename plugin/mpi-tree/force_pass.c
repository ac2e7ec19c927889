/* SPDX-License-Identifier: Apache-2.0 */
/*
 * force_pass.c — one collective force pass (force_pass.h): the order of
 * the exchanges and the walk over local tree + LETs. Kept out of the ABI
 * entries so that forces, the acceleration MAC's pre-pass and the field
 * share one path.
 */
#include "force_pass.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "domains.h"
#include "let.h"
#include "base/base_instance.h"

/* Walks every run over the local tree and then the LETs lets[0..nlet),
 * adding in that order; results to acc/pot by slot. lets_only: the LETs
 * alone (engine = cuda-tree, whose local part is added afterwards). A jerk
 * pass (ps->jk.js) adds each run's jerk the same way, from the local tree's
 * jerk sources and the LETs' ljs[0..nlet), each set's right after its walk
 * so that it reads the cells and particles that walk recorded. */
static int walk_all(oct_tree *tree, const mpi_tree_pass *ps, const mpi_tree_targets *T,
                    oct_tree *lets, const oct_jerk_sources *ljs, int nlet, double *acc,
                    double *pot, uint64_t *pp_out, uint64_t *pc_out)
{
    const int threads = ps->threads, lets_only = ps->lets_only;
    const oct_walk_params *wp = &ps->wp;
    const int jerk = ps->jk.js != NULL;
    const uint32_t G = tree->max_group ? tree->max_group : 64;
    uint32_t maxrun = 0;
    for (uint32_t r = 0; r < T->nruns; r++) maxrun = T->rc[r] > maxrun ? T->rc[r] : maxrun;
    const uint32_t W = maxrun > G ? maxrun : G;
    oct_sources local = oct_tree_sources(tree);
    local.drift = ps->drift;
    oct_sources *remote = malloc((size_t)(nlet ? nlet : 1) * sizeof *remote);
    if (!remote) return -1;
    for (int k = 0; k < nlet; k++) remote[k] = oct_tree_sources(&lets[k]);
    uint64_t pp = 0, pc = 0;
    int failed = 0;
    /* out of memory here leaves slots missing: their threads fail below */
    (void)oct_spaces_reserve(ps->spaces, threads, W);
#pragma omp parallel num_threads(threads) reduction(+ : pp, pc) reduction(| : failed)
    {
        oct_workspace *ws = oct_spaces_walk(ps->spaces, omp_get_thread_num());
        double *buf = malloc((jerk ? 14 : 8) * (size_t)W * sizeof *buf);
        oct_jerk_workspace *jws = jerk ? oct_spaces_jerk(ps->spaces, omp_get_thread_num()) : NULL;
        int ok_mem = ws && buf && (!jerk || jws);
        if (!ok_mem) failed = 1;
        else oct_workspace_record(ws, jerk);   /* each jerk reads its set's walk */
#pragma omp for schedule(dynamic, 1)
        for (uint32_t r = 0; r < T->nruns; r++) {
            if (!ok_mem) continue;
            uint32_t b = T->rb[r], nt = T->rc[r];
            double *sum = buf + 4 * (size_t)W;
            oct_group grp = { .n = nt, .x = T->x + b, .y = T->y + b, .z = T->z + b,
                             .self = T->self + b, .amin = T->amin ? T->amin[r] : 0,
                             .radius = T->radius[r], .ax = buf, .ay = buf + W, .az = buf + 2 * W,
                             .pot = buf + 3 * W };
            memcpy(grp.centre, &T->centre[3 * r], sizeof grp.centre);
            /* each set's jerk right after its walk, from the walk's record:
             * local tree, then the LETs (the same order as the sums) */
            double *jsum = buf + 8 * (size_t)W, *jg = buf + 11 * (size_t)W;
            const double *tv = jerk ? ps->jk.tv + 3 * (size_t)b : NULL;
            int bad = 0;
            if (lets_only) {   /* engine = cuda-tree adds the local part later */
                for (uint32_t j = 0; j < 4 * W; j++) sum[j] = 0;
                if (jerk) bad = oct_jerk_group(&local, ps->jk.js, wp, jws, &grp, NULL, tv, jsum);
            } else {
                oct_walk_group(&local, wp, ws, &grp, &pp, &pc);
                for (uint32_t j = 0; j < nt; j++) {
                    sum[j] = grp.ax[j]; sum[W + j] = grp.ay[j];
                    sum[2 * W + j] = grp.az[j]; sum[3 * W + j] = grp.pot[j];
                }
                if (jerk)
                    bad = oct_jerk_group(&local, ps->jk.js, wp, jws, &grp, oct_walk_recorded(ws, &local, &grp),
                                         tv, jsum);
            }
            for (int k = 0; k < nlet; k++) {
                if (remote[k].n == 0) continue;
                oct_walk_group(&remote[k], wp, ws, &grp, &pp, &pc);
                for (uint32_t j = 0; j < nt; j++) {
                    sum[j] += grp.ax[j]; sum[W + j] += grp.ay[j];
                    sum[2 * W + j] += grp.az[j]; sum[3 * W + j] += grp.pot[j];
                }
                if (!jerk || bad) continue;
                bad = oct_jerk_group(&remote[k], &ljs[k], wp, jws, &grp, oct_walk_recorded(ws, &remote[k], &grp),
                                     tv, jg);
                for (uint32_t j = 0; j < 3 * nt; j++) jsum[j] += jg[j];
            }
            for (uint32_t j = 0; j < nt; j++) {
                size_t o = T->slot[b + j];
                acc[3 * o] = sum[j]; acc[3 * o + 1] = sum[W + j]; acc[3 * o + 2] = sum[2 * W + j];
                if (pot) pot[o] = sum[3 * W + j];
            }
            if (!jerk) continue;
            if (bad) { failed = 1; continue; }
            for (uint32_t j = 0; j < nt; j++)
                for (int d = 0; d < 3; d++) ps->jk.jerk[3 * T->slot[b + j] + d] = jsum[3 * j + d];
        }
        free(buf);
    }
    free(remote);
    *pp_out += pp;
    *pc_out += pc;
    return failed ? -1 : 0;
}

gp_status mpi_tree_force_pass(const mpi_tree_comm *c, oct_tree *tree, const mpi_tree_pass *ps,
                              const mpi_tree_targets *T, double *acc, double *pot, uint64_t *pp,
                              uint64_t *pc, mpi_tree_let_traffic *traffic)
{
    const int P = c->size;
    gp_status st = GP_OK;
    const char *fn = ps->fn;
    const int mac = ps->mac;
    /* phase clock, for the debug line at the end: where a rank's time
     * goes at large P (the waits are the agreements that follow a phase) */
    double ph[8];
    ph[0] = gp_wtime();
    /* the layout the walk reads (the LETs are cut from either), and the
     * records the jerk walks; a drifted tree's cells are made on demand */
    if (!ps->drift)
        oct_tree_prepare_cells(tree, mac, ps->theta,
                               oct_walk_layouts(ps->wp.prec) | (ps->jk.js ? OCT_PREPARE_RECORDS : 0) |
                                   (ps->both_layouts ? OCT_PREPARE_RECORDS | OCT_PREPARE_COLUMNS : 0));
    ph[1] = gp_wtime();
    /* the coarse tree; exchange_domains refines it per neighbour */
    const int maxbox = 2 * ps->let_boxes + 2;
    mpi_tree_box *mine = malloc((size_t)maxbox * sizeof *mine);
    uint32_t *r0 = malloc((size_t)maxbox * sizeof *r0), *r1 = malloc((size_t)maxbox * sizeof *r1);
    int nmine = mine && r0 && r1 ? mpi_tree_my_boxes(T, mac, ps->wp.G, ps->wp.alpha,
                                                        ps->let_boxes, ps->param_hash, mine, r0, r1) : 0;
    mpi_tree_domain *dom = calloc((size_t)P, sizeof *dom);
    mpi_tree_buf *send = calloc((size_t)P, sizeof *send), *recv = calloc((size_t)P, sizeof *recv);
    oct_tree *lets = calloc((size_t)(P > 1 ? P - 1 : 1), sizeof *lets);
    oct_jerk_sources *ljs = calloc((size_t)(P > 1 ? P - 1 : 1), sizeof *ljs);
    double **ljbuf = calloc((size_t)(P > 1 ? P - 1 : 1), sizeof *ljbuf);
    if (!mine || !r0 || !r1 || !dom || !send || !recv || !lets || !ljs || !ljbuf)
        st = gp_fail(c->base, GP_ERR_OUT_OF_MEMORY, "%s: no memory for the exchange tables", fn);
    if ((st = mpi_tree_agree(c->base, c->comm, st)) != GP_OK) goto out;
    uint64_t box_bytes = 0;
    int rounds = 0, nodes = nmine;
    st = mpi_tree_exchange_domains(c, fn, T, mine, nmine, r0, r1, dom, &box_bytes, &rounds, &nodes);
    if (st != GP_OK) goto out;
    double t0 = gp_wtime();
    ph[2] = t0;
    uint64_t sent = 0, got = 0, sent_cells = 0, sent_parts = 0;
    for (int r = 0; r < P && st == GP_OK; r++) {
        if (r == c->rank) continue;
        uint32_t nc, np;
        /* rank r's domain: refined where it faces another, when r counted
         * this rank as a neighbour; else its coarse tree */
        if (mpi_tree_let_pack(tree, ps->drift, mac, ps->wp.lcap, dom[r].b, dom[r].n, ps->jk.js,
                              &send[r], &nc, &np))
            st = gp_fail(c->base, GP_ERR_OUT_OF_MEMORY,
                         "%s: no memory for the local essential tree of rank %d; use more "
                         "ranks or a smaller theta", fn, r);
        sent += send[r].n;
        sent_cells += nc;
        sent_parts += np;
    }
    ph[3] = gp_wtime();
    if ((st = mpi_tree_agree(c->base, c->comm, st)) != GP_OK) goto out;
    if ((st = mpi_tree_exchange(c->base, c->comm, P, send, recv)) != GP_OK) goto out;
    ph[4] = gp_wtime();
    int nlet = 0;
    for (int r = 0; r < P && st == GP_OK; r++) {
        if (r == c->rank) continue;
        got += recv[r].n;
        int rc = mpi_tree_let_unpack(recv[r].p, recv[r].n, &lets[nlet],
                                     ps->jk.js ? &ljbuf[nlet] : NULL, &ljs[nlet]);
        if (rc == -1)
            st = gp_fail(c->base, GP_ERR_OUT_OF_MEMORY,
                         "%s: no memory for the local essential tree from rank %d", fn, r);
        else if (rc == -2)
            st = gp_fail(c->base, GP_ERR_INTERNAL,
                         "%s: the local essential tree from rank %d is malformed; please "
                         "report this", fn, r);
        else {
            oct_tree_prepare_cells(&lets[nlet], mac, ps->theta,
                                   oct_walk_layouts(ps->wp.prec) |
                                       (ps->jk.js ? OCT_PREPARE_RECORDS : 0));
            nlet++;
        }
        mpi_tree_buf_free(&recv[r]);
    }
    c->base->stats.seconds_transfer += gp_wtime() - t0;
    traffic->sent = sent;
    traffic->recv = got;
    traffic->sent_total += sent;
    traffic->recv_total += got;
    if ((st = mpi_tree_agree(c->base, c->comm, st)) != GP_OK) goto out;
    ph[5] = gp_wtime();
    if (walk_all(tree, ps, T, lets, ljs, nlet, acc, pot, pp, pc))
        st = gp_fail(c->base, GP_ERR_OUT_OF_MEMORY,
                     "%s: no memory for the walk buffers; free memory or use fewer threads", fn);
    ph[6] = gp_wtime();
    st = mpi_tree_agree(c->base, c->comm, st);
    ph[7] = gp_wtime();
    /* the numbers bench/mpi-tree-scaling and tests/mpi/mpi-accuracy read: LET
     * bytes this rank sent and received, its domain's nodes and the bytes
     * of domain boxes it sent (the coarse tree to every rank, the
     * refinement rounds to its neighbours) */
    gp_log(c->base, GP_LOG_DEBUG,
           "%s: LET bytes sent %llu received %llu; domain %d boxes, %llu bytes; sent %llu cells "
           "%llu particles (rank %d of %d); %d refinement rounds",
           fn, (unsigned long long)sent, (unsigned long long)got, nodes,
           (unsigned long long)box_bytes, (unsigned long long)sent_cells,
           (unsigned long long)sent_parts, c->rank, P, rounds);
    gp_log(c->base, GP_LOG_DEBUG,
           "%s: phases (ms): cells %.3f, domain boxes %.3f, LET pack %.3f, LET exchange (with the "
           "wait for the slowest pack) %.3f, LETs unpacked and prepared %.3f, walk %.3f, wait for the "
           "slowest walk %.3f",
           fn, 1e3 * (ph[1] - ph[0]), 1e3 * (ph[2] - ph[1]), 1e3 * (ph[3] - ph[2]), 1e3 * (ph[4] - ph[3]),
           1e3 * (ph[5] - ph[4]), 1e3 * (ph[6] - ph[5]), 1e3 * (ph[7] - ph[6]));
out:
    for (int r = 0; r < P - 1 && lets; r++) oct_tree_free(&lets[r]);
    for (int r = 0; r < P - 1 && ljbuf; r++) free(ljbuf[r]);
    free(ljs); free(ljbuf);
    for (int r = 0; r < P; r++) {
        if (send) mpi_tree_buf_free(&send[r]);
        if (recv) mpi_tree_buf_free(&recv[r]);
        if (dom) mpi_tree_domain_free(&dom[r]);
    }
    free(mine); free(r0); free(r1); free(dom);
    free(send); free(recv); free(lets);
    return st;
}