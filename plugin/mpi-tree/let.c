/* SPDX-License-Identifier: Apache-2.0 */
/* let.c — packing and unpacking local essential trees (see let.h). */
#include "let.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "octree/mac.h"

/* Relative safety margin of the box tests against rounding in the walk
 * (whose own tests carry a few ulp of error): far above 1e-16, far below
 * anything that changes which cells are sent in practice. */
#define MT_LET_MARGIN 1e-9

void mpi_tree_buf_free(mpi_tree_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

static int buf_reserve(mpi_tree_buf *b, size_t extra)
{
    if (b->n + extra <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + extra) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

/* A closed cell's moments on the wire: m, com, s (its box and bmax stay
 * home: let.h). */
enum { LET_CLOSED_DOUBLES = 10, LET_HEAD = 4 };

static size_t moments_bytes(int closed)
{
    return closed ? LET_CLOSED_DOUBLES * sizeof(double) : sizeof(gp_moments);
}

/* Would every group whose sphere lies inside box accept this cell? The
 * walk's test (octree/cpu_traverse.h) at the box's nearest point, with a margin. */
static int closed_for_box(const oct_wcell *wc, int accel, double lcap, const mpi_tree_box *box)
{
    if (wc->count <= 1) return 0;
    double rc = accel ? oct_accel_rcrit(wc, box->gfac, lcap) : (double)wc->rcrit;
    if (!(rc < HUGE_VAL)) return 0;
    double e2 = 0, off2 = 0, diag2 = 0;
    for (int a = 0; a < 3; a++) {
        double lo = box->lo[a], hi = box->hi[a], c = wc->com[a];
        double e = c < lo ? lo - c : (c > hi ? c - hi : 0);
        double mid = c - 0.5 * (lo + hi);
        e2 += e * e;
        off2 += mid * mid;
        diag2 += (hi - lo) * (hi - lo);
    }
    double scale = sqrt(off2) + sqrt(diag2);
    double need = rc * (1 + MT_LET_MARGIN) + MT_LET_MARGIN * scale;
    if (!(e2 > need * need)) return 0;
    /* the box (enlarged, float, as the walk stores it) must miss the domain
     * along some axis by more than the margin */
    double gap = MT_LET_MARGIN * scale;
    for (int a = 0; a < 3; a++) {
        double clo = wc->com[a] + (double)wc->blo[a], chi = wc->com[a] + (double)wc->bhi[a];
        if (box->lo[a] - chi > gap || clo - box->hi[a] > gap) return 1;
    }
    return 0;
}

static int closed_for_node(const oct_wcell *wc, int accel, double lcap, const mpi_tree_box *box,
                           int nbox, int k, int depth)
{
    if (closed_for_box(wc, accel, lcap, &box[k])) return 1;
    int l = box[k].left, r = box[k].right;
    if (l <= k || r <= k || l >= nbox || r >= nbox || depth > 64) return 0;
    return closed_for_node(wc, accel, lcap, box, nbox, l, depth + 1) &&
           closed_for_node(wc, accel, lcap, box, nbox, r, depth + 1);
}

static int closed_for_domain(const oct_wcell *wc, int accel, double lcap, const mpi_tree_box *box,
                             int nbox)
{
    return closed_for_node(wc, accel, lcap, box, nbox, 0, 0);
}

/* A cell's geometry as the cut reads it: its record when the tree has
 * records, else the same numbers from the AVX-512 walk's columns. A force
 * pass prepares only the layout its walk reads: that O(cells) pass is
 * paid on every block step, a sizeable part of it
 * (bench/results/mpi-tree/raw/mpi-tree.md, "cell_geometry"). */
static oct_wcell cell_geometry(const oct_tree *t, uint32_t c)
{
    if (t->prepared_layouts & OCT_PREPARE_RECORDS) return t->wcells[c];
    const oct_cell_columns *col = &t->col;
    oct_wcell w = { .com = { col->cx[c], col->cy[c], col->cz[c] }, .rcrit = col->rcrit[c],
                    .count = col->count[c], .first = col->first[c], .nchild = col->nchild[c] };
    for (int a = 0; a < 3; a++) {
        w.blo[a] = col->blo[a][c];
        w.bhi[a] = col->bhi[a][c];
    }
    return w;
}

int mpi_tree_let_pack(const oct_tree *t, oct_drift *drift, int mac, double lcap,
                      const mpi_tree_box *box, int nbox, const oct_jerk_sources *js,
                      mpi_tree_buf *out, uint32_t *ncells, uint32_t *npart)
{
    *ncells = *npart = 0;
    if (!box->has || t->nsrc == 0) return 0;
    const int accel = mac == GP_MAC_ACCELERATION;
    /* breadth-first: queue[q] is the source cell that becomes LET cell q */
    size_t qcap = 64, qn = 1;
    uint32_t *queue = malloc(qcap * sizeof *queue);
    mpi_tree_let_cell *cells = malloc(qcap * sizeof *cells);
    mpi_tree_buf parts = { 0 }, pvel = { 0 };
    if (!queue || !cells) goto oom;
    queue[0] = 0;
    for (size_t q = 0; q < qn; q++) {
        uint32_t c = queue[q];
        if (drift) oct_drift_cells(drift, c, 1);
        const oct_wcell wc = cell_geometry(t, c);
        const gp_cell *cl = &t->st.cells[c];
        mpi_tree_let_cell lc = { .mo = t->st.mom[c], .count = cl->count };
        if (closed_for_domain(&wc, accel, lcap, box, nbox)) {
            lc.closed = 1;
        } else if (cl->nchild == 0) {
            if (drift) oct_drift_leaf(drift, c);
            lc.first = *npart;
            if (buf_reserve(&parts, (size_t)cl->count * 4 * sizeof(double))) goto oom;
            double *d = (double *)(parts.p + parts.n);
            for (uint32_t i = cl->begin; i < cl->begin + cl->count; i++) {
                *d++ = t->sx[i]; *d++ = t->sy[i]; *d++ = t->sz[i]; *d++ = t->sm[i];
            }
            parts.n += (size_t)cl->count * 4 * sizeof(double);
            if (js) {
                if (buf_reserve(&pvel, (size_t)cl->count * 3 * sizeof(double))) goto oom;
                double *v = (double *)(pvel.p + pvel.n);
                for (uint32_t i = cl->begin; i < cl->begin + cl->count; i++) {
                    *v++ = js->vx[i]; *v++ = js->vy[i]; *v++ = js->vz[i];
                }
                pvel.n += (size_t)cl->count * 3 * sizeof(double);
            }
            *npart += cl->count;
        } else {
            if (qn + cl->nchild > qcap) {
                while (qn + cl->nchild > qcap) qcap *= 2;
                uint32_t *nq = realloc(queue, qcap * sizeof *nq);
                if (!nq) goto oom;
                queue = nq;
                mpi_tree_let_cell *nc = realloc(cells, qcap * sizeof *nc);
                if (!nc) goto oom;
                cells = nc;
            }
            lc.nchild = cl->nchild;
            lc.first = (uint32_t)qn;
            for (uint32_t k = 0; k < cl->nchild; k++) queue[qn++] = cl->child + k;
        }
        cells[q] = lc;
    }
    *ncells = (uint32_t)qn;
    /* the receiver's length unit, from the leaves' whole boxes before the
     * closed ones lose theirs (tree_state.c's rule, in integers: any order) */
    long long esum = 0, ecount = 0;
    size_t mbytes = 0;
    for (size_t q = 0; q < qn; q++) {
        mbytes += moments_bytes(cells[q].closed);
        if (!cells[q].nchild) oct_length_leaf(gp_moments_size(&cells[q].mo), &esum, &ecount);
    }
    const int e_len = oct_length_exponent(esum, ecount, gp_moments_size(&cells[0].mo));
    const size_t cjerk = js ? qn * OCT_JERK_CELL * sizeof(double) : 0;
    size_t bytes = LET_HEAD * sizeof(uint32_t) + qn * 4 * sizeof(uint32_t) + mbytes + parts.n + cjerk + pvel.n;
    if (buf_reserve(out, bytes)) goto oom;
    /* masses travel in the sender's unit 2^e_mass (tree_state.c) */
    uint32_t head[LET_HEAD] = { *ncells, *npart, (uint32_t)t->e_mass, (uint32_t)e_len };
    char *o = out->p + out->n;
    memcpy(o, head, sizeof head);
    o += sizeof head;
    for (size_t q = 0; q < qn; q++, o += 4 * sizeof(uint32_t)) {
        uint32_t f[4] = { cells[q].count, cells[q].nchild, cells[q].first, cells[q].closed };
        memcpy(o, f, sizeof f);
    }
    for (size_t q = 0; q < qn; q++) {
        const gp_moments *mo = &cells[q].mo;
        if (cells[q].closed) {
            double d[LET_CLOSED_DOUBLES] = { mo->m, mo->com[0], mo->com[1], mo->com[2], mo->s[0],
                                             mo->s[1], mo->s[2], mo->s[3], mo->s[4], mo->s[5] };
            memcpy(o, d, sizeof d);
        } else {
            memcpy(o, mo, sizeof *mo);
        }
        o += moments_bytes(cells[q].closed);
    }
    if (parts.n) memcpy(o, parts.p, parts.n);
    o += parts.n;
    /* a jerk pass: every LET cell's velocity and dS/dt, then the particles'
     * velocities (tree_jerk.h) */
    for (size_t q = 0; js && q < qn; q++, o += OCT_JERK_CELL * sizeof(double))
        memcpy(o, &js->cv[OCT_JERK_CELL * (size_t)queue[q]], OCT_JERK_CELL * sizeof(double));
    if (pvel.n) memcpy(o, pvel.p, pvel.n);
    out->n += bytes;
    free(queue);
    free(cells);
    mpi_tree_buf_free(&parts);
    mpi_tree_buf_free(&pvel);
    return 0;
oom:
    free(queue);
    free(cells);
    mpi_tree_buf_free(&parts);
    mpi_tree_buf_free(&pvel);
    *ncells = *npart = 0;
    return -1;
}

/* Cell c's four numbers from the wire (its moments come after all of them). */
static mpi_tree_let_cell cell_numbers(const char *fp, size_t c)
{
    uint32_t f[4];
    memcpy(f, fp + c * sizeof f, sizeof f);
    return (mpi_tree_let_cell){ .count = f[0], .nchild = f[1], .first = f[2], .closed = f[3] };
}

int mpi_tree_let_unpack(const void *data, size_t bytes, oct_tree *let, double **jerk_buf,
                        oct_jerk_sources *js)
{
    memset(let, 0, sizeof *let);
    if (jerk_buf) *jerk_buf = NULL;
    if (bytes == 0) return 0;
    uint32_t head[LET_HEAD];
    if (bytes < sizeof head) return -2;
    memcpy(head, data, sizeof head);
    size_t nc = head[0], np = head[1];
    int e_mass = (int)(int32_t)head[2], e_len = (int)(int32_t)head[3];
    /* the sender clamps both exponents to +-1000 (tree_state.c) */
    if (e_mass < -1000 || e_mass > 1000 || e_len < -1000 || e_len > 1000) return -2;
    if (nc == 0 || nc > (bytes - sizeof head) / (4 * sizeof(uint32_t))) return -2;
    if (np > bytes / (4 * sizeof(double))) return -2;
    const char *fp = (const char *)data + sizeof head;   /* the cells' numbers */
    /* The packer's breadth-first order, exactly: an open cell's children are
     * the next unclaimed cells and a leaf's particles the next unclaimed
     * particles, so every cell but the root has one parent and every
     * particle one leaf; an internal cell holds what its children hold. A
     * buffer that breaks this would make a tree that counts sources twice
     * or not at all, so it is refused, not walked. */
    size_t nclosed = 0, next_cell = 1, next_part = 0;
    for (size_t c = 0; c < nc; c++) {
        mpi_tree_let_cell lc = cell_numbers(fp, c);
        if (lc.closed) {
            if (lc.closed != 1 || lc.nchild != 0 || lc.first != 0 || lc.count == 0) return -2;
            nclosed++;
        } else if (lc.nchild == 0) {
            if (lc.first != next_part || lc.count > np - next_part) return -2;
            next_part += lc.count;
        } else {
            if (lc.nchild > 8 || lc.first != next_cell || lc.nchild > nc - next_cell) return -2;
            uint64_t held = 0;
            for (uint32_t k = 0; k < lc.nchild; k++) held += cell_numbers(fp, lc.first + k).count;
            if (held != lc.count) return -2;
            next_cell += lc.nchild;
        }
    }
    if (next_cell != nc || next_part != np) return -2;
    /* sizes in 64 bits: on a 32-bit size_t a forged header must not wrap */
    const uint64_t fixed = sizeof head + (uint64_t)nc * 4 * sizeof(uint32_t);
    const uint64_t mbytes = (uint64_t)nclosed * moments_bytes(1) + (uint64_t)(nc - nclosed) * moments_bytes(0);
    const uint64_t jerk_bytes = jerk_buf ? ((uint64_t)nc * OCT_JERK_CELL + (uint64_t)np * 3) * sizeof(double) : 0;
    if ((uint64_t)bytes != fixed + mbytes + (uint64_t)np * 4 * sizeof(double) + jerk_bytes) return -2;
    const char *mp = (const char *)data + fixed;   /* the cells' moments */
    const char *pp = mp + mbytes;
    size_t ns = np + 2 * nclosed;
    if (ns > UINT32_MAX / 2) return -2;
    let->nsrc = (uint32_t)ns;
    let->sx = malloc(ns * sizeof *let->sx); let->sy = malloc(ns * sizeof *let->sy);
    let->sz = malloc(ns * sizeof *let->sz); let->sm = malloc(ns * sizeof *let->sm);
    let->sid = malloc(ns * sizeof *let->sid);
    let->st.cells = malloc(nc * sizeof *let->st.cells);
    let->st.mom = malloc(nc * sizeof *let->st.mom);
    let->wcells = malloc(nc * sizeof *let->wcells);
    let->payf = malloc(nc * sizeof *let->payf);
    if (!let->sx || !let->sy || !let->sz || !let->sm || !let->sid || !let->st.cells ||
        !let->st.mom || !let->wcells || !let->payf)
        goto oom;
    let->st.ncells = (uint32_t)nc;
    let->st.cap = nc;
    let->st.nlevels = 1;
    let->e_mass = e_mass;      /* sm and the moments' m, s are in its unit */
    let->e_len = e_len;        /* as the receiver would measure it on the whole cells */
    let->e_len_given = 1;
    for (size_t i = 0; i < np; i++) {
        double q[4];
        memcpy(q, pp + i * sizeof q, sizeof q);
        let->sx[i] = q[0]; let->sy[i] = q[1]; let->sz[i] = q[2]; let->sm[i] = q[3];
        let->sid[i] = (uint32_t)-4;
    }
    size_t pseudo = np;
    for (size_t c = 0; c < nc; c++) {
        mpi_tree_let_cell lc = cell_numbers(fp, c);
        if (lc.closed) {
            /* m, com, s; a box of zero size at the com (let.h) */
            double d[LET_CLOSED_DOUBLES];
            memcpy(d, mp, sizeof d);
            memset(&lc.mo, 0, sizeof lc.mo);
            lc.mo.m = d[0];
            for (int a = 0; a < 3; a++) lc.mo.com[a] = lc.mo.lo[a] = lc.mo.hi[a] = d[1 + a];
            for (int k = 0; k < 6; k++) lc.mo.s[k] = d[4 + k];
        } else {
            memcpy(&lc.mo, mp, sizeof lc.mo);
        }
        mp += moments_bytes(lc.closed);
        gp_cell *g = &let->st.cells[c];
        let->st.mom[c] = lc.mo;
        *g = (gp_cell){ .begin = 0, .count = lc.count, .child = 0, .nchild = 0, .level = 0,
                        .parent = 0 };
        if (lc.closed) {
            /* the fallback leaf: the cell's mass in two halves at its com */
            g->begin = (uint32_t)pseudo;
            g->count = 2;
            for (int h = 0; h < 2; h++, pseudo++) {
                let->sx[pseudo] = lc.mo.com[0]; let->sy[pseudo] = lc.mo.com[1];
                let->sz[pseudo] = lc.mo.com[2]; let->sm[pseudo] = 0.5 * lc.mo.m;
                let->sid[pseudo] = (uint32_t)-4;
            }
        } else if (lc.nchild == 0) {
            g->begin = lc.first;
        } else {
            g->child = lc.first;
            g->nchild = lc.nchild;
        }
    }
    if (oct_tree_alloc_columns(let)) goto oom;
    if (jerk_buf) {
        /* source velocities (a closed cell's two halves move with it) and
         * the cells' numbers, laid out as oct_jerk_sources_make lays them */
        double *b = malloc((3 * ns + OCT_JERK_CELL * nc) * sizeof *b);
        if (!b) goto oom;
        double *vx = b, *vy = vx + ns, *vz = vy + ns, *cv = vz + ns;
        const char *jp = pp + np * 4 * sizeof(double);
        memcpy(cv, jp, nc * OCT_JERK_CELL * sizeof(double));
        const char *vp = jp + nc * OCT_JERK_CELL * sizeof(double);
        for (size_t i = 0; i < np; i++) {
            double v[3];
            memcpy(v, vp + i * sizeof v, sizeof v);
            vx[i] = v[0]; vy[i] = v[1]; vz[i] = v[2];
        }
        for (size_t c = 0; c < nc; c++) {
            const gp_cell *g = &let->st.cells[c];
            if (g->nchild || g->begin < np) continue;   /* not a closed cell's halves */
            for (uint32_t h = 0; h < g->count; h++) {
                vx[g->begin + h] = cv[OCT_JERK_CELL * c];
                vy[g->begin + h] = cv[OCT_JERK_CELL * c + 1];
                vz[g->begin + h] = cv[OCT_JERK_CELL * c + 2];
            }
        }
        *jerk_buf = b;
        *js = (oct_jerk_sources){ vx, vy, vz, cv };
    }
    return 0;
oom:
    oct_tree_free(let);
    return -1;
}
