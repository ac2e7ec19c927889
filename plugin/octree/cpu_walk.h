/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu_walk.h — the CPU group walk (cpu-tree and mpi-tree): one i-group against the source tree.
 *
 * For a group (a sphere around up to group_size targets) the walk descends
 * the source tree depth-first, asks the MAC (octree/mac.h) about each cell,
 * and appends what it accepts to two interaction lists held as SoA arrays:
 * cells (relative com, mass, second moment) and particles (relative
 * position, mass, id). When a list fills up, or at the end, it is flushed
 * through a tight loop over the list for every target — each target's sum
 * runs over the list in blocks of OCT_LANES lanes, each lane with its own
 * partial sum (in mixed mode: float partial sums of 4 terms added to double
 * lane sums), lanes added in a fixed order at the end. That loop vectorises
 * (baseline, AVX2 and AVX-512 clones chosen once at load time, the latter
 * two with fused multiply-adds). In the float modes intrinsics take over:
 * on AVX-512 machines the hardware 1/sqrt estimate plus one Newton step,
 * two targets per pass, float blocks of 16 terms (cpu_lists_avx512.c); on AVX2
 * machines the same scheme on 8 lanes with a correctly rounded 1/sqrt
 * (cpu_lists_avx2.c; the levels: cpu_lists.h). Each kernel's
 * order depends only on the group and
 * the tree, never on threads: output is bit-identical whatever
 * OMP_NUM_THREADS is, on a given machine.
 *
 * The traversal is written once (cpu_traverse.h) and visited three ways,
 * one file each: cpu_walk_portable.c one cell at a time from the records;
 * in the float modes on AVX2 and AVX-512 machines cpu_walk_avx2.c and
 * cpu_walk_avx512.c, where a cell's children are decided together from
 * cell columns (oct_cell_columns), with the same tests and answers as
 * oct_walk_accepts; cells then carry the traceless quadrupole.
 * cpu_walk_group.c drives a walk and picks the variant.
 *
 * Positions in the lists are relative to the group centre, so float
 * interactions (single, mixed) keep their precision far from the origin.
 * Float modes also measure lengths in units of 2^e_len and masses in units
 * of 2^e_mass (the tree's box and heaviest mass, oct_sources), so float
 * covers any input scale double does (1e-30 .. 1e30 lengths, 1e-50 ..
 * 1e300 masses); the sums are scaled back in double at the end. Powers of
 * two scale exactly: inputs of ordinary scale give the same bits as with
 * no scaling. The self id is whatever src->id holds (key-sorted index for
 * the full tree, particle index for a source-subset tree); targets pass
 * the matching kind in oct_group.self.
 */
#ifndef GP_OCTREE_CPU_WALK_H
#define GP_OCTREE_CPU_WALK_H

#include <stddef.h>
#include <stdint.h>

#include <math.h>

#include "octree/mac.h"
#include "octree/moments.h"

#define OCT_LANES 16

typedef enum oct_precision { OCT_SINGLE = 0, OCT_MIXED = 1, OCT_DOUBLE = 2 } oct_precision;

/* What the walk needs to know about a source cell: one 64-byte line. */
typedef struct oct_wcell {
    double com[3];
    float rcrit;         /* geometric MACs: r_crit; acceleration: (M l^2)^(1/4), rounded up */
    uint32_t count;      /* particles below the cell                         */
    float blo[3], bhi[3];/* box relative to com, margin added, rounded outward */
    uint32_t first;      /* first child (internal) or first source (leaf)    */
    uint32_t nchild;     /* number of children, 0 for a leaf                 */
} oct_wcell;

/* A cell's multipole payload in float (single and mixed modes). */
typedef struct oct_payload_f {
    float m, s[6];
    float d2max;   /* float modes accept the cell only closer than this (squared):
                      keeps every product in the float kernels finite */
} oct_payload_f;

/* The same cell data as columns (one array per field, indexed by cell),
 * for the AVX walks: the children of a cell are consecutive cells, so
 * one masked vector load per field brings all (up to 8) of them, and the
 * MAC is decided for all children at once without a branch per cell. */
typedef struct oct_cell_columns {
    double *cx, *cy, *cz;        /* com                                      */
    float *rcrit;                /* as oct_wcell                              */
    uint32_t *count, *first, *nchild;
    float *blo[3], *bhi[3];      /* as oct_wcell                              */
    float *m, *d2max;            /* as oct_payload_f                          */
    float *s[6];                 /* traceless quadrupole 3 S - tr(S) I (float) */
    float *tr;                   /* tr(S)                                    */
} oct_cell_columns;

/* The cell layouts a walk reads, which oct_tree_prepare_cells fills:
 * records (oct_wcell + oct_payload_f per cell) for the portable walk,
 * columns (oct_cell_columns) for the AVX-512 and AVX2 walks, which read the root's
 * record only. Filling just one halves the preparation, which a block step
 * with few active particles pays in full. */
enum { OCT_PREPARE_RECORDS = 1, OCT_PREPARE_COLUMNS = 2 };
/* The layout a walk at precision prec reads on this CPU. */
int oct_walk_layouts(oct_precision prec);

/* The massive particles in key order and the tree over them. */
typedef struct oct_sources {
    uint32_t n;
    const double *x, *y, *z, *m;
    const uint32_t *id;      /* key-sorted index of each source (self test) */
    uint32_t ncells;
    const oct_wcell *cells;
    const gp_moments *mom;      /* double payload                            */
    const oct_payload_f *payf;   /* float payload                             */
    const oct_cell_columns *col; /* the cells again, as columns (may be NULL)  */
    int e_mass;                 /* m, mom[].m, payf[].m are in units of 2^e_mass */
    int e_len;                  /* float payload and float walk: lengths in
                                   units of 2^e_len (double walk: none)      */
    /* The double walk a float walk falls back on reads the records. When
     * only the columns were prepared, the walk asks for the records through
     * this call, once, serialised among threads: a fallback is rare, and
     * preparing both layouts for it every time costs every block step. */
    void (*prepare_records)(void *owner);
    void *owner;
    /* A drifted tree (tree_drift.h): the walk makes each cell and leaf
     * current before it reads it. NULL: everything is current. */
    struct oct_drift *drift;
} oct_sources;

typedef struct oct_walk_params {
    int mac;                 /* gp_mac_kind used for this pass              */
    int quadrupole;          /* 1: cells carry quadrupoles                  */
    oct_precision prec;
    double eps2;
    double G;
    double alpha;            /* delta_acc, for the acceleration MAC         */
    double lcap;             /* acceleration MAC: r_crit >= lcap x the stored
                                box's side (oct_accel_rcrit); 0: no bound    */
} oct_walk_params;

/* One group of targets. x/y/z absolute positions; self[k] the key-sorted
 * index of the source to skip for target k, or -1 (field points). amin:
 * the group's smallest previous |a| (acceleration MAC only). Results (G
 * applied) go to ax/ay/az/pot[k]. */
typedef struct oct_group {
    uint32_t n;
    const double *x, *y, *z;
    const int32_t *self;
    double centre[3], radius, amin;
    double *ax, *ay, *az, *pot;
} oct_group;

/* The acceleration MAC's factor of group g: (G / (delta_acc min|a_old|))^(1/4),
 * +inf when it has no |a_old|. */
static inline double oct_walk_gfac(const oct_walk_params *p, const oct_group *g)
{
    const double alpha_a = p->alpha * g->amin;
    return alpha_a > 0 ? sqrt(sqrt(fabs(p->G) / alpha_a)) : HUGE_VAL;
}

/* The acceleration MAC's r_crit of cell wc for a group: (M l^2)^(1/4) gfac,
 * and with theta_max at least l / theta_max (GADGET-4's ErrTolThetaMax:
 * the relative criterion alone accepts far cells at wide angles, whose
 * errors share a sign in the potentials). l is read from the stored box,
 * its largest side over 1 + 2 margins (rounded outward, so never below the
 * cell's own l): lcap = 1 / ((1 + 2 GP_MAC_BOX_MARGIN) theta_max), 0 for no
 * bound (oct_walk_lcap). */
static inline double oct_accel_rcrit(const oct_wcell *wc, double gfac, double lcap)
{
    double rc = (double)wc->rcrit * gfac;
    if (lcap > 0) {
        double side = 0;
        for (int a = 0; a < 3; a++) {
            double s = (double)wc->bhi[a] - (double)wc->blo[a];
            side = s > side ? s : side;
        }
        rc = fmax(rc, side * lcap);
    }
    return rc;
}

static inline double oct_walk_lcap(double theta_max)
{
    return theta_max > 0 ? 1.0 / ((1.0 + 2.0 * GP_MAC_BOX_MARGIN) * theta_max) : 0.0;
}

/* The walk's one test: does the group sphere (gc, rg) accept cell wc?
 * d = com - gc and d2 = |d|^2 come back for the caller's list. (The AVX
 * walks' vector forms of it take the same decisions; octree/tree_jerk.c
 * takes them through this.) */
static inline int oct_walk_accepts(const oct_wcell *wc, const double gc[3], double rg, int accel,
                                   double gfac, double lcap, double d[3], double *d2)
{
    d[0] = wc->com[0] - gc[0]; d[1] = wc->com[1] - gc[1]; d[2] = wc->com[2] - gc[2];
    *d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    /* acceleration: (G M l^2 / alpha_a)^(1/4) = (M l^2)^(1/4) * gfac */
    double rcrit = accel ? oct_accel_rcrit(wc, gfac, lcap) : (double)wc->rcrit;
    return wc->count > 1 && gp_mac_accept_distance(*d2, rg, rcrit) &&
           gp_mac_box_clear_rel(wc->blo, wc->bhi, -d[0], -d[1], -d[2], rg);
}

typedef struct oct_workspace oct_workspace;

/* What a walk summed, as indices: the accepted cells and the sources of
 * the opened leaves, each in the order the walk met them. A pass that
 * walks the same group again with the same decisions (the jerk,
 * octree/tree_jerk.c) reads these instead of repeating the traversal. */
typedef struct oct_walk_lists {
    const uint32_t *cell, *part;
    uint32_t ncell, npart;
} oct_walk_lists;

/* A workspace for groups of up to max_group targets; NULL when out of memory. */
oct_workspace *oct_workspace_new(uint32_t max_group);
void oct_workspace_free(oct_workspace *ws);

/* Walks one group; adds the pp and pc interaction counts. */
void oct_walk_group(const oct_sources *src, const oct_walk_params *p, oct_workspace *ws,
                   const oct_group *g, uint64_t *pp, uint64_t *pc);

/* Whether the walks of ws record their lists (off after oct_workspace_new).
 * Recording costs an append per accepted cell and per opened leaf. */
void oct_workspace_record(oct_workspace *ws, int on);

/* The lists of the last oct_walk_group of ws when it recorded them and it
 * walked group g over the cells of src; NULL otherwise (not recording, a
 * later walk, or no memory to record). */
const oct_walk_lists *oct_walk_recorded(const oct_workspace *ws, const oct_sources *src,
                                        const oct_group *g);

#endif /* GP_OCTREE_CPU_WALK_H */
