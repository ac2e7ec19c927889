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

/* Would every group whose sphere lies inside box accept this cell? The
 * walk's test (octree/cpu_walk.c) at the box's nearest point, with a margin. */
static int closed_for_box(const oct_wcell *wc, int accel, const mpi_tree_box *box)
{
    if (wc->count <= 1) return 0;
    double rc = accel ? (double)wc->rcrit * box->gfac : (double)wc->rcrit;
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

static int closed_for_node(const oct_wcell *wc, int accel, const mpi_tree_box *box, int nbox, int k,
                           int depth)
{
    if (closed_for_box(wc, accel, &box[k])) return 1;
    int l = box[k].left, r = box[k].right;
    if (l <= k || r <= k || l >= nbox || r >= nbox || depth > 64) return 0;
    return closed_for_node(wc, accel, box, nbox, l, depth + 1) &&
           closed_for_node(wc, accel, box, nbox, r, depth + 1);
}

static int closed_for_domain(const oct_wcell *wc, int accel, const mpi_tree_box *box, int nbox)
{
    return closed_for_node(wc, accel, box, nbox, 0, 0);
}

int mpi_tree_let_pack(const oct_tree *t, int mac, const mpi_tree_box *box, int nbox,
                      const oct_jerk_sources *js, mpi_tree_buf *out, uint32_t *ncells,
                      uint32_t *npart)
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
        const oct_wcell *wc = &t->wcells[c];
        const gp_cell *cl = &t->st.cells[c];
        mpi_tree_let_cell lc = { .mo = t->st.mom[c], .count = cl->count };
        if (closed_for_domain(wc, accel, box, nbox)) {
            lc.closed = 1;
        } else if (cl->nchild == 0) {
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
    const size_t cjerk = js ? qn * OCT_JERK_CELL * sizeof(double) : 0;
    size_t bytes = 3 * sizeof(uint32_t) + qn * sizeof(mpi_tree_let_cell) + parts.n + cjerk + pvel.n;
    if (buf_reserve(out, bytes)) goto oom;
    /* masses travel in the sender's unit 2^e_mass (tree_state.c) */
    uint32_t head[3] = { *ncells, *npart, (uint32_t)t->e_mass };
    char *o = out->p + out->n;
    memcpy(o, head, sizeof head);
    o += sizeof head;
    memcpy(o, cells, qn * sizeof *cells);
    o += qn * sizeof *cells;
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

int mpi_tree_let_unpack(const void *data, size_t bytes, oct_tree *let, double **jerk_buf,
                        oct_jerk_sources *js)
{
    memset(let, 0, sizeof *let);
    if (jerk_buf) *jerk_buf = NULL;
    if (bytes == 0) return 0;
    uint32_t head[3];
    if (bytes < sizeof head) return -2;
    memcpy(head, data, sizeof head);
    size_t nc = head[0], np = head[1];
    int e_mass = (int)(int32_t)head[2];
    if (e_mass < -1100 || e_mass > 1100) return -2;
    const size_t jerk_bytes = jerk_buf ? (nc * OCT_JERK_CELL + np * 3) * sizeof(double) : 0;
    if (nc == 0 ||
        bytes != sizeof head + nc * sizeof(mpi_tree_let_cell) + np * 4 * sizeof(double) + jerk_bytes)
        return -2;
    const char *cp = (const char *)data + sizeof head;
    const char *pp = cp + nc * sizeof(mpi_tree_let_cell);
    size_t nclosed = 0;
    for (size_t c = 0; c < nc; c++) {
        mpi_tree_let_cell lc;
        memcpy(&lc, cp + c * sizeof lc, sizeof lc);
        nclosed += lc.closed != 0;
        if (!lc.closed && lc.nchild == 0 && ((size_t)lc.first + lc.count > np)) return -2;
        if (!lc.closed && lc.nchild > 0 && (lc.nchild > 8 || (size_t)lc.first + lc.nchild > nc ||
                                            lc.first <= c))
            return -2;
    }
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
    for (size_t i = 0; i < np; i++) {
        double q[4];
        memcpy(q, pp + i * sizeof q, sizeof q);
        let->sx[i] = q[0]; let->sy[i] = q[1]; let->sz[i] = q[2]; let->sm[i] = q[3];
        let->sid[i] = (uint32_t)-4;
    }
    size_t pseudo = np;
    for (size_t c = 0; c < nc; c++) {
        mpi_tree_let_cell lc;
        memcpy(&lc, cp + c * sizeof lc, sizeof lc);
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
