/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tree-prepare.c — the float cells the walks read (oct_tree_prepare_cells,
 * tree_state.c). A cell's box relative to its com, enlarged by the MAC's
 * margin, and its r_crit are rounded outward to float: the box may only
 * grow and r_crit only rise, or a walk could accept a cell that the double
 * test would open. Checked for every cell against the double values:
 *   - outward: (double)blo <= lo - pad - com, (double)bhi >= hi + pad - com,
 *     (double)rcrit >= r_crit (geometric MACs);
 *   - tight: the next float inward would break that (so the rounding is
 *     to the neighbouring float, not a looser bound);
 *   - the two layouts (records for the portable walk, columns for the
 *     AVX-512 walk) hold the same numbers;
 *   - the columns prepared alone (as the AVX-512 walk asks for them) are
 *     the same bytes as those prepared with the records.
 * Sets: a clustered cloud, the same at 1e-30, 1e30 and 1e-41 scale (tiny,
 * huge and subnormal floats), a cloud with outliers at 1e25, a cloud straddling zero
 * (negative and positive offsets, boxes through 0), and coincident
 * particles (boxes of zero size), and masses of 1e300 (M l^2 beyond double,
 * the acceleration MAC's other branch); bh, bmax, multipole and
 * acceleration.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "octree/mac.h"
#include "octree/tree_state.h"

static double urand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return ((*s >> 8) & 0xffffff) / (double)0x1000000;
}

/* Is f the float just outside v on the given side (dir -1: f <= v and the
 * next float up is > v; +1: f >= v and the next float down is < v)? */
static int tight(float f, double v, int dir)
{
    if (dir < 0) return (double)f <= v && (double)nextafterf(f, INFINITY) > v;
    return (double)f >= v && (double)nextafterf(f, -INFINITY) < v;
}

/* Every column of every cell, packed (for byte comparisons). */
#define COLUMN_BYTES (3 * sizeof(double) + 16 * sizeof(float) + 3 * sizeof(uint32_t))
static void save_columns(const oct_cell_columns *c, size_t nc, void *out)
{
    char *o = out;
#define PUT(arr, T) do { memcpy(o, (arr), nc * sizeof(T)); o += nc * sizeof(T); } while (0)
    PUT(c->cx, double); PUT(c->cy, double); PUT(c->cz, double);
    PUT(c->rcrit, float); PUT(c->m, float); PUT(c->d2max, float); PUT(c->tr, float);
    for (int a = 0; a < 3; a++) { PUT(c->blo[a], float); PUT(c->bhi[a], float); }
    for (int k = 0; k < 6; k++) PUT(c->s[k], float);
    PUT(c->count, uint32_t); PUT(c->first, uint32_t); PUT(c->nchild, uint32_t);
#undef PUT
}

/* Every column of every cell overwritten with 0xff bytes. */
static void poison_columns(const oct_cell_columns *c, size_t nc)
{
    memset(c->cx, 0xff, nc * sizeof(double)); memset(c->cy, 0xff, nc * sizeof(double));
    memset(c->cz, 0xff, nc * sizeof(double));
    memset(c->rcrit, 0xff, nc * sizeof(float)); memset(c->m, 0xff, nc * sizeof(float));
    memset(c->d2max, 0xff, nc * sizeof(float)); memset(c->tr, 0xff, nc * sizeof(float));
    for (int a = 0; a < 3; a++) { memset(c->blo[a], 0xff, nc * sizeof(float)); memset(c->bhi[a], 0xff, nc * sizeof(float)); }
    for (int k = 0; k < 6; k++) memset(c->s[k], 0xff, nc * sizeof(float));
    memset(c->count, 0xff, nc * sizeof(uint32_t)); memset(c->first, 0xff, nc * sizeof(uint32_t));
    memset(c->nchild, 0xff, nc * sizeof(uint32_t));
}

/* Bad cells of one set under one MAC (both layouts prepared). */
static int check_set(const char *what, size_t n, const double *pos, const double *mass, int mac)
{
    oct_tree t;
    if (oct_tree_build(&t, n, pos, mass, 32, 8, GP_KEY_PEANO_HILBERT) || oct_tree_moments(&t))
        bail("out of memory");
    oct_tree_prepare_cells(&t, mac, 0.5, OCT_PREPARE_RECORDS | OCT_PREPARE_COLUMNS);
    int bad = 0;
    for (uint32_t c = 0; c < t.st.ncells; c++) {
        const gp_moments *mo = &t.st.mom[c];
        const oct_wcell *w = &t.wcells[c];
        int cell_bad = 0;
        for (int a = 0; a < 3; a++) {
            double pad = GP_MAC_BOX_MARGIN * (mo->hi[a] - mo->lo[a]);
            cell_bad |= !tight(w->blo[a], mo->lo[a] - pad - mo->com[a], -1);
            cell_bad |= !tight(w->bhi[a], mo->hi[a] + pad - mo->com[a], +1);
            cell_bad |= memcmp(&w->blo[a], &t.col.blo[a][c], sizeof(float)) != 0 ||
                        memcmp(&w->bhi[a], &t.col.bhi[a][c], sizeof(float)) != 0;
        }
        if (mac != GP_MAC_ACCELERATION) {
            double rc = gp_mac_rcrit((gp_mac_kind)mac, 0.5, mo);
            cell_bad |= rc < 1e38 ? !tight(w->rcrit, rc, +1) : w->rcrit != HUGE_VALF;
        }
        cell_bad |= memcmp(&w->rcrit, &t.col.rcrit[c], sizeof(float)) != 0;
        if (cell_bad && bad++ < 3)
            diag("%s, mac %d, cell %u: box [%a, %a] r_crit %a", what, mac, c, (double)w->blo[0],
                 (double)w->bhi[0], (double)w->rcrit);
    }
    /* the columns prepared alone (the AVX-512 walk's request) hold the
     * same bytes */
    oct_cell_columns both = t.col;
    size_t nc = t.st.ncells;
    void *saved = malloc(nc * COLUMN_BYTES);
    if (!saved) bail("out of memory");
    save_columns(&both, nc, saved);
    poison_columns(&t.col, nc);   /* so that a column left unwritten shows */
    if (oct_tree_moments(&t)) bail("out of memory");
    oct_tree_prepare_cells(&t, mac, 0.5, OCT_PREPARE_COLUMNS);
    void *alone = malloc(nc * COLUMN_BYTES);
    if (!alone) bail("out of memory");
    save_columns(&t.col, nc, alone);
    if (memcmp(saved, alone, nc * COLUMN_BYTES) != 0) {
        if (bad++ < 3) diag("%s, mac %d: the columns prepared alone differ from those prepared with the records", what, mac);
    }
    free(saved);
    free(alone);
    oct_tree_free(&t);
    return bad;
}

int main(void)
{
    const size_t n = 6000;
    double *base = malloc(3 * n * sizeof *base), *pos = malloc(3 * n * sizeof *pos);
    double *mass = malloc(n * sizeof *mass), *heavy = malloc(n * sizeof *heavy);
    if (!base || !pos || !mass || !heavy) bail("out of memory");
    unsigned seed = 7;
    for (size_t i = 0; i < n; i++) {
        double r = pow(urand(&seed), 2.0) * (i < n / 3 ? 0.05 : 1.0);   /* a clump and a halo */
        for (int a = 0; a < 3; a++) base[3 * i + a] = r * (2 * urand(&seed) - 1) + (i < n / 3 ? 0.3 : 0.0);
        mass[i] = (0.5 + urand(&seed)) / (double)n;
    }
    const char *names[] = { "cloud", "cloud at 1e-30", "cloud at 1e30", "outliers at 1e25",
                            "cloud straddling 0", "coincident particles",
                            "cloud at 1e-41 (subnormal floats)",
                            "masses of 1e300 at 1e10 (M l^2 beyond double)" };
    const int macs[] = { GP_MAC_BH, GP_MAC_BMAX, GP_MAC_MULTIPOLE, GP_MAC_ACCELERATION };
    for (int set = 0; set < 8; set++) {
        for (size_t i = 0; i < 3 * n; i++) {
            double x = base[i];
            pos[i] = set == 1 ? x * 1e-30 : set == 2 ? x * 1e30 : set == 4 ? x - 0.3 : set == 6 ? x * 1e-41 : set == 7 ? x * 1e10 : x;
        }
        if (set == 3)
            for (size_t i = 0; i < 20; i++) pos[3 * i + i % 3] = (i % 2 ? -1e25 : 1e25) * (double)(i + 1);
        if (set == 5)
            for (size_t i = 0; i < n; i++)
                for (int a = 0; a < 3; a++) pos[3 * i + a] = base[3 * (i % 40) + a];   /* 40 points */
        int bad = 0;
        for (size_t i = 0; i < n; i++) heavy[i] = mass[i] * (set == 7 ? 1e300 * (double)n : 1.0);
        for (int k = 0; k < 4; k++) bad += check_set(names[set], n, pos, heavy, macs[k]);
        ok(bad == 0, "%s: every cell's float box and r_crit rounded outward to the next float, "
                     "the same in both layouts and in the columns prepared alone, under bh, bmax, multipole "
                     "and acceleration (%d bad)",
           names[set], bad);
    }
    free(base); free(pos); free(mass); free(heavy);
    return done_testing();
}
