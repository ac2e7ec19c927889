/* SPDX-License-Identifier: Apache-2.0 */
/*
 * domains.c — the domain boxes of a force pass (domains.h): the coarse
 * tree a rank describes itself with, and the refinement rounds that sharpen
 * it where a neighbour lies. Separate from the LET cut (let.c), which only
 * reads the boxes, and from the wire format (boxes.c).
 */
#include "domains.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "octree/mac.h"
#include "base/base_instance.h"

/* The box around the group spheres of runs [r0, r1), padded outward by
 * a hair so that rounding in a sphere never pokes out. */
static void runs_box(const mpi_tree_targets *T, uint32_t r0, uint32_t r1, mpi_tree_box *b)
{
    for (int a = 0; a < 3; a++) { b->lo[a] = HUGE_VAL; b->hi[a] = -HUGE_VAL; }
    for (uint32_t r = r0; r < r1; r++)
        for (int a = 0; a < 3; a++) {
            double c = T->centre[3 * r + a], rg = T->radius[r];
            if (c - rg < b->lo[a]) b->lo[a] = c - rg;
            if (c + rg > b->hi[a]) b->hi[a] = c + rg;
        }
    for (int a = 0; a < 3; a++) {
        double pad = 1e-12 * (b->hi[a] - b->lo[a] + fabs(b->lo[a]) + fabs(b->hi[a]));
        b->lo[a] -= pad;
        b->hi[a] += pad;
    }
}

/* Splits node k's run of groups in two halves: nodes n (left), n + 1. */
static void split_node(const mpi_tree_targets *T, mpi_tree_box *b, uint32_t *r0, uint32_t *r1, int k, int n)
{
    uint32_t mid = r0[k] + (r1[k] - r0[k]) / 2;
    for (int c = 0; c < 2; c++) {
        mpi_tree_box x = b[0];
        x.left = x.right = -1;
        x.parent = k;
        b[n + c] = x;
        r0[n + c] = c ? mid : r0[k];
        r1[n + c] = c ? r1[k] : mid;
        runs_box(T, r0[n + c], r1[n + c], &b[n + c]);
    }
    b[k].left = n;
    b[k].right = n + 1;
}

/* This rank's domain for the pass (let.h): a binary tree of boxes over
 * its groups in curve order, splitting the widest run first (width times
 * its number of groups), until it has
 * let_boxes leaves (or no run of two groups is left). Returns the number
 * of nodes written to out (room for 2 * let_boxes). */
int mpi_tree_my_boxes(const mpi_tree_targets *T, int mac, double G, double alpha, int let_boxes,
                      uint64_t param_hash, mpi_tree_box *out, uint32_t *r0, uint32_t *r1)
{
    mpi_tree_box b = { .has = T->nruns > 0, .param_hash = param_hash, .gfac = HUGE_VAL,
                 .left = -1, .right = -1, .parent = -1 };
    double amin = HUGE_VAL;
    for (uint32_t r = 0; r < T->nruns && T->amin; r++) amin = T->amin[r] < amin ? T->amin[r] : amin;
    if (mac == GP_MAC_ACCELERATION) {
        double alpha_a = alpha * amin;
        b.gfac = alpha_a > 0 ? sqrt(sqrt(fabs(G) / alpha_a)) * (1 + 1e-12) : HUGE_VAL;
    }
    out[0] = b;
    if (!b.has) return 1;
    runs_box(T, 0, T->nruns, &out[0]);
    r0[0] = 0;
    r1[0] = T->nruns;
    int nodes = 1, leaves = 1, want = let_boxes;
    while (leaves < want) {
        /* the leaf with the largest width x groups that still holds two
         * (width alone spends the budget on the sparse outskirts; the
         * LET's size is decided where the groups are many) */
        int pick = -1;
        double wmax = -1;
        for (int k = 0; k < nodes; k++) {
            if (out[k].left >= 0 || r1[k] - r0[k] < 2) continue;
            double w = 0;
            for (int a = 0; a < 3; a++) w = fmax(w, out[k].hi[a] - out[k].lo[a]);
            w *= (double)(r1[k] - r0[k]);
            if (w > wmax) { wmax = w; pick = k; }
        }
        if (pick < 0) break;
        split_node(T, out, r0, r1, pick, nodes);
        nodes += 2;
        leaves++;
    }
    return nodes;
}

/* Levels of refinement per round: each round splits the pieces that lie
 * near a neighbour three times (halving their width, about), and the
 * next round tests them against the neighbour's pieces of this one, so
 * the refinement follows the boundary as the neighbour describes it, not
 * as its coarse boxes (which can reach deep into this domain) do. */
#define MT_REFINE_LEVELS 3

/* A piece is refined for a neighbour when it lies within this fraction of
 * its width of the neighbour's pieces. The sender's cells that a finer
 * box lets it close are the small ones right at the boundary, so pieces
 * that nearly touch the neighbour's carry nearly all of the gain: measured
 * (2^20 particles, P = 2..16), 0.25 sends 30% fewer box bytes than 1 for
 * LETs at most 0.07% larger; 0.1 saves 8% more for LETs 0.15% larger;
 * 0 (no refinement) doubles the LETs. */
#define MT_NEAR_REACH 0.25

/* Is box b within MT_NEAR_REACH of its width of a leaf of domain d (as
 * its rank has described it so far)? */
static int near_domain(const mpi_tree_box *b, const mpi_tree_domain *d)
{
    double w = 0;
    for (int k = 0; k < 3; k++) w = fmax(w, b->hi[k] - b->lo[k]);
    w *= MT_NEAR_REACH;
    return mpi_tree_box_near_tree(b, w * w, d->b, d->n);
}

/* This rank's domain tree as one neighbour will see it: the coarse tree,
 * refined where it lies near that neighbour; the runs of groups below each
 * node; the pieces still to refine. Grows as needed. */
typedef struct own_tree {
    mpi_tree_box *b;
    uint32_t *r0, *r1;
    int n, cap;
    int *front, *next;
    int nfront, nnext;
} own_tree;

static void own_free(own_tree *t)
{
    free(t->b); free(t->r0); free(t->r1); free(t->front); free(t->next);
    memset(t, 0, sizeof *t);
}

static int own_reserve(own_tree *t, int need)
{
    if (need <= t->cap) return 0;
    int cap = t->cap ? t->cap : 64;
    while (cap < need) cap *= 2;
    mpi_tree_box *b = realloc(t->b, (size_t)cap * sizeof *b);
    if (b) t->b = b;
    uint32_t *r0 = b ? realloc(t->r0, (size_t)cap * sizeof *r0) : NULL;
    if (r0) t->r0 = r0;
    uint32_t *r1 = r0 ? realloc(t->r1, (size_t)cap * sizeof *r1) : NULL;
    if (r1) t->r1 = r1;
    int *f = r1 ? realloc(t->front, (size_t)cap * sizeof *f) : NULL;
    if (f) t->front = f;
    int *x = f ? realloc(t->next, (size_t)cap * sizeof *x) : NULL;
    if (x) t->next = x;
    if (!x) return -1;
    t->cap = cap;
    return 0;
}

/* One refinement round for one neighbour (domain d): each frontier node
 * that still lies near d is split, and so are its pieces while they lie
 * near it, MT_REFINE_LEVELS levels down (or to single groups); the pieces
 * at that depth that still lie near it are the next round's frontier.
 * Returns 0, or -1 when out of memory. */
static int refine_round(const mpi_tree_targets *T, own_tree *t, const mpi_tree_domain *d)
{
    const int levels = MT_REFINE_LEVELS;
    t->nnext = 0;
    for (int f = 0; f < t->nfront; f++) {
        int k = t->front[f];
        if (!near_domain(&t->b[k], d)) continue;
        int stack[2 * MT_REFINE_LEVELS + 4][2], sp = 0;
        stack[sp][0] = k; stack[sp][1] = 0; sp++;
        while (sp > 0) {
            sp--;
            int q = stack[sp][0], depth = stack[sp][1];
            if (t->r1[q] - t->r0[q] < 2) continue;
            if (own_reserve(t, t->n + 2)) return -1;
            int n = t->n;
            split_node(T, t->b, t->r0, t->r1, q, n);
            t->n += 2;
            for (int c = 1; c >= 0; c--) {
                int m = n + c;
                if (t->r1[m] - t->r0[m] < 2 || !near_domain(&t->b[m], d)) continue;
                if (depth + 1 < levels) {
                    stack[sp][0] = m; stack[sp][1] = depth + 1; sp++;
                } else {
                    t->next[t->nnext++] = m;
                }
            }
        }
    }
    int *x = t->front; t->front = t->next; t->next = x;
    t->nfront = t->nnext;
    return 0;
}

/* Every rank's domain tree (boxes.h) as this rank needs it, decoded into
 * dom[0..P): first the coarse trees, to every rank (MPI_Allgatherv);
 * then refinement rounds, point to point: for each neighbour (a rank one
 * of whose coarse leaves lies near one of this rank's), the pieces of
 * this domain that lie near that neighbour's, at the scale of the
 * neighbour's pieces of the previous round, until no rank has a piece
 * left to refine. Each neighbour gets only the boundary it faces, so the
 * boxes a rank sends grow with its surface, like the LETs, not with its
 * volume or with its number of neighbours times its surface. *bytes gets
 * what this rank sent, *rounds the number of rounds, *nodes the largest
 * tree it sent. Collective. */
gp_status mpi_tree_exchange_domains(const mpi_tree_comm *c, const char *fn, const mpi_tree_targets *T,
                                  const mpi_tree_box *mine, int nmine, const uint32_t *r0,
                                  const uint32_t *r1, mpi_tree_domain *dom, uint64_t *bytes,
                                  int *rounds, int *nodes)
{
    const int P = c->size;
    gp_status st = GP_OK;
    *bytes = 0;
    *rounds = 0;
    *nodes = nmine;
    const mpi_tree_box_head head = mpi_tree_box_head_make(mine, nmine);
    size_t mybytes = sizeof head + (size_t)nmine * sizeof(mpi_tree_wire_box);
    char *buf = malloc(mybytes), *all = NULL;
    int *cnt = malloc((size_t)P * sizeof *cnt), *disp = malloc((size_t)P * sizeof *disp);
    own_tree *own = calloc((size_t)P, sizeof *own);
    mpi_tree_buf *tsend = calloc((size_t)P, sizeof *tsend), *trecv = calloc((size_t)P, sizeof *trecv);
    if (!buf || !cnt || !disp || !own || !tsend || !trecv || mybytes > INT32_MAX)
        st = gp_fail(c->base, GP_ERR_OUT_OF_MEMORY,
                     "%s: no memory for %d domain boxes; lower let_boxes", fn, nmine);
    if ((st = mpi_tree_agree(c->base, c->comm, st)) != GP_OK) goto out;
    memcpy(buf, &head, sizeof head);
    mpi_tree_box_encode(&head, mine, nmine, (mpi_tree_wire_box *)(buf + sizeof head));
    int mb = (int)mybytes;
    MPI_Allgather(&mb, 1, MPI_INT, cnt, 1, MPI_INT, c->comm);
    long long total = 0;
    for (int r = 0; r < P; r++) { disp[r] = (int)total; total += cnt[r]; }
    all = total < INT32_MAX ? malloc((size_t)total) : NULL;
    if (!all)
        st = gp_fail(c->base, GP_ERR_OUT_OF_MEMORY,
                     "%s: no memory for %lld bytes of domain boxes; lower let_boxes", fn, total);
    if ((st = mpi_tree_agree(c->base, c->comm, st)) != GP_OK) goto out;
    MPI_Allgatherv(buf, mb, MPI_BYTE, all, cnt, disp, MPI_BYTE, c->comm);
    *bytes += (uint64_t)mybytes * (uint64_t)(P - 1);
    for (int r = 0; r < P && st == GP_OK; r++) {
        int rc = -2;
        if ((size_t)cnt[r] >= sizeof(mpi_tree_box_head)) {
            memcpy(&dom[r].head, all + disp[r], sizeof dom[r].head);
            int nn = dom[r].head.nnodes;
            if (nn >= 1 && (size_t)cnt[r] == sizeof(mpi_tree_box_head) + (size_t)nn * sizeof(mpi_tree_wire_box))
                rc = mpi_tree_domain_append(&dom[r], (const mpi_tree_wire_box *)(all + disp[r] + sizeof(mpi_tree_box_head)), nn);
        }
        if (rc == -1)
            st = gp_fail(c->base, GP_ERR_OUT_OF_MEMORY, "%s: no memory for the domain boxes", fn);
        else if (rc == -2)
            st = gp_fail(c->base, GP_ERR_INTERNAL,
                         "%s: the domain boxes from rank %d are malformed; please report this", fn, r);
    }
    if ((st = mpi_tree_agree(c->base, c->comm, st)) != GP_OK) goto out;
    for (int r = 1; r < P; r++)
        if (dom[r].head.param_hash != dom[0].head.param_hash) {
            /* every rank sees the same table, so every rank says the same */
            st = gp_fail(c->base, GP_ERR_BAD_STATE,
                         "%s: the ranks' parameters differ (rank %d's from rank 0's); set the "
                         "same values on every rank", fn, r);
            goto out;
        }
    /* each neighbour's first frontier: the coarse leaves near its domain */
    for (int q = 0; q < P && st == GP_OK && mine[0].has; q++) {
        if (q == c->rank) continue;
        own_tree *t = &own[q];
        for (int k = 0; k < nmine && st == GP_OK; k++) {
            if (mine[k].left >= 0 || r1[k] - r0[k] < 2 || !near_domain(&mine[k], &dom[q])) continue;
            if (t->n == 0) {       /* the first piece near q: q gets a tree of its own */
                if (own_reserve(t, nmine)) {
                    st = gp_fail(c->base, GP_ERR_OUT_OF_MEMORY, "%s: no memory for domain boxes", fn);
                    break;
                }
                memcpy(t->b, mine, (size_t)nmine * sizeof *mine);
                memcpy(t->r0, r0, (size_t)nmine * sizeof *r0);
                memcpy(t->r1, r1, (size_t)nmine * sizeof *r1);
                t->n = nmine;
            }
            t->front[t->nfront++] = k;
        }
    }
    if ((st = mpi_tree_agree(c->base, c->comm, st)) != GP_OK) goto out;
    for (;;) {
        int go = 0, any = 0;
        for (int q = 0; q < P; q++) go |= own[q].nfront > 0;
        MPI_Allreduce(&go, &any, 1, MPI_INT, MPI_MAX, c->comm);
        if (!any) break;
        (*rounds)++;
        /* refine each neighbour's tree, and send it the nodes this round added */
        for (int q = 0; q < P && st == GP_OK; q++) {
            own_tree *t = &own[q];
            if (!t->nfront) continue;
            int start = t->n;
            if (refine_round(T, t, &dom[q])) {
                st = gp_fail(c->base, GP_ERR_OUT_OF_MEMORY, "%s: no memory for domain boxes", fn);
                break;
            }
            size_t add = (size_t)(t->n - start) * sizeof(mpi_tree_wire_box);
            if (!add) continue;
            tsend[q].p = malloc(add);
            if (!tsend[q].p) {
                st = gp_fail(c->base, GP_ERR_OUT_OF_MEMORY, "%s: no memory for domain boxes", fn);
                break;
            }
            mpi_tree_box_encode(&head, t->b + start, t->n - start, (mpi_tree_wire_box *)tsend[q].p);
            tsend[q].n = tsend[q].cap = add;
            *bytes += add;
            if (t->n > *nodes) *nodes = t->n;
        }
        if ((st = mpi_tree_agree(c->base, c->comm, st)) != GP_OK) goto out;
        st = mpi_tree_exchange(c->base, c->comm, P, tsend, trecv);
        for (int q = 0; q < P; q++) mpi_tree_buf_free(&tsend[q]);
        if (st != GP_OK) goto out;
        for (int r = 0; r < P && st == GP_OK; r++) {
            if (!trecv[r].n) continue;
            int rc = trecv[r].n % sizeof(mpi_tree_wire_box) || r == c->rank
                         ? -2
                         : mpi_tree_domain_append(&dom[r], (const mpi_tree_wire_box *)trecv[r].p,
                                            (int)(trecv[r].n / sizeof(mpi_tree_wire_box)));
            if (rc == -1)
                st = gp_fail(c->base, GP_ERR_OUT_OF_MEMORY, "%s: no memory for the domain boxes", fn);
            else if (rc == -2)
                st = gp_fail(c->base, GP_ERR_INTERNAL,
                             "%s: the domain boxes from rank %d are malformed; please report this",
                             fn, r);
        }
        for (int r = 0; r < P; r++) mpi_tree_buf_free(&trecv[r]);
        if ((st = mpi_tree_agree(c->base, c->comm, st)) != GP_OK) goto out;
    }
out:
    for (int r = 0; r < P; r++) {
        if (tsend) mpi_tree_buf_free(&tsend[r]);
        if (trecv) mpi_tree_buf_free(&trecv[r]);
        if (own) own_free(&own[r]);
    }
    free(buf); free(all); free(cnt); free(disp); free(own); free(tsend); free(trecv);
    return st;
}