/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu-walk-emu.cc — runs the CUDA kernels' own source on the CPU: the
 * cuda-tree walk (plugin/cuda-tree/walk.cuh) and the cuda-direct kernel
 * (plugin/cuda-direct/direct_kernel.cuh) compiled by g++ through
 * tests/gpu/gpu-emu.h, a warp emulator that also checks that every lane
 * reaches every full-mask primitive. The tree is built on the host by
 * plugin/octree (the same per-cell steps the GPU build runs), the records by
 * the walk's own gp_wcell_make. Compared with a double direct sum.
 *
 * What this does NOT cover: the GPU build pipeline (CUB, launches, memory),
 * real warp scheduling, rsqrtf's approximation. gpu-accuracy does, on a GPU.
 */
#include "gpu-emu.h"
#include "cuda-tree/walk.cuh"
#include "cuda-direct/direct_kernel.cuh"
extern "C" {
#include "octree/host_tree.h"
}
#include "tap.h"
#include "testlib.h"

#include <vector>

static const size_t N = 512;

struct Ref { std::vector<double> acc, pot; };

static uint64_t rng_state = 12345;
static double uniform01()
{
    uint64_t z = (rng_state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

/* Plummer radii (cut at 20), isotropic: pos.size() / 3 particles. */
static void plummer_positions(std::vector<double> &pos)
{
    for (size_t i = 0; i < pos.size() / 3; ++i) {
        double X = uniform01(), r = 1.0 / sqrt(pow(X, -2.0 / 3.0) - 1.0);
        if (r > 20) r = 20;
        double ct = 2 * uniform01() - 1, ph = 2 * M_PI * uniform01(), st = sqrt(1 - ct * ct);
        pos[3 * i] = r * st * cos(ph); pos[3 * i + 1] = r * st * sin(ph); pos[3 * i + 2] = r * ct;
    }
}

/* field of all particles at pts (self: index to skip or -1) */
static void direct_ref(const std::vector<double> &pos, const std::vector<double> &mass, double eps,
                       const std::vector<double> &pts, const std::vector<long> &self, Ref &r)
{
    size_t m = pts.size() / 3, n = mass.size();
    r.acc.assign(3 * m, 0);
    r.pot.assign(m, 0);
    for (size_t i = 0; i < m; ++i) {
        double a[3] = {0, 0, 0}, p = 0;
        for (size_t j = 0; j < n; ++j) {
            if ((long)j == self[i]) continue;
            double d[3] = {pos[3 * j] - pts[3 * i], pos[3 * j + 1] - pts[3 * i + 1], pos[3 * j + 2] - pts[3 * i + 2]};
            double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + eps * eps;
            if (r2 == 0) continue;
            double ri = 1 / sqrt(r2);
            for (int c = 0; c < 3; ++c) a[c] += mass[j] * d[c] * ri * ri * ri;
            p += mass[j] * ri;
        }
        for (int c = 0; c < 3; ++c) r.acc[3 * i + c] = a[c];
        r.pot[i] = p;
    }
}


static void check(const char *what, const std::vector<double> &got, const std::vector<double> &want, int dim,
                  double med, double p99, double mx)
{
    tl_errstat e = tl_relerr(want.size() / dim, dim, got.data(), want.data());
    diag("%s: median %.3g, 99th %.3g, max %.3g", what, e.median, e.p99, e.max);
    ok(e.median <= med && e.p99 <= p99 && e.max <= mx, "%s within (%.0e, %.0e, %.0e)", what, med, p99, mx);
}

/* ---- the tree on the host, laid out as the GPU build lays it out -------- */
struct Tree {
    std::vector<double> x, y, z, m;
    std::vector<gp_f4> f4;
    std::vector<uint32_t> perm;
    std::vector<uint64_t> keys; /* sorted */
    gp_host_tree t;
    double center[3];
};

static void build(const std::vector<double> &pos, const std::vector<double> &mass, Tree &T)
{
    size_t n = mass.size();
    double lo[3], inv;
    gp_host_root_cube(n, &pos[0], &pos[1], &pos[2], 3, lo, &inv);
    std::vector<uint64_t> keys(n);
    gp_host_make_keys(n, &pos[0], &pos[1], &pos[2], 3, GP_KEY_PEANO_HILBERT, lo, inv, keys.data());
    T.perm.resize(n);
    for (size_t i = 0; i < n; ++i) T.perm[i] = (uint32_t)i;
    if (gp_host_sort_keys(n, keys.data(), T.perm.data()) != 0) bail("sort failed");
    for (int a = 0; a < 3; ++a) T.center[a] = pos[3 * T.perm[n / 2] + a];
    T.x.resize(n); T.y.resize(n); T.z.resize(n); T.m.resize(n); T.f4.resize(n);
    for (size_t s = 0; s < n; ++s) {
        uint32_t o = T.perm[s];
        T.x[s] = pos[3 * o] - T.center[0];
        T.y[s] = pos[3 * o + 1] - T.center[1];
        T.z[s] = pos[3 * o + 2] - T.center[2];
        T.m[s] = mass[o];
        T.f4[s] = gp_f4{(float)T.x[s], (float)T.y[s], (float)T.z[s], (float)T.m[s]};
    }
    memset(&T.t, 0, sizeof T.t);
    if (gp_host_tree_build(&T.t, keys.data(), (uint32_t)n, GP_TREE_LEAF_SIZE) != 0) bail("tree build failed");
    T.keys = keys;
    if (gp_host_tree_moments(&T.t, T.x.data(), T.y.data(), T.z.data(), T.m.data()) != 0) bail("moments failed");
}

struct WalkOut { std::vector<double> acc, pot; unsigned long long pp, pc, overflow; };

/* i-records: sorted particles sel[] (or points when pts is given) */
static WalkOut walk(Tree &T, int mode, int quad, int mac, double theta, double dacc, double eps,
                    const std::vector<uint32_t> &sel, std::vector<float> *aold,
                    const std::vector<double> *pts)
{
    size_t ni = pts ? pts->size() / 3 : sel.size();
    std::vector<gp_f4> rec((size_t)GP_WREC_FIELDS * T.t.ncells);
    for (uint32_t c = 0; c < T.t.ncells; ++c) {
        gp_wcell w = gp_wcell_make(&T.t.mom[c], mac, theta);
        gp_wrec_store(rec.data(), T.t.ncells, c, &w, &T.t.cells[c]);
    }
    std::vector<gp_f4> ipos(ni);
    std::vector<uint32_t> islot(ni), iself(ni), iorig(ni);
    std::vector<float> iaold(ni);
    for (size_t k = 0; k < ni; ++k) {
        if (pts) {
            ipos[k] = gp_f4{(float)((*pts)[3 * k] - T.center[0]), (float)((*pts)[3 * k + 1] - T.center[1]),
                            (float)((*pts)[3 * k + 2] - T.center[2]), 0.f};
            islot[k] = (uint32_t)k;
        } else {
            uint32_t s = sel[k];
            ipos[k] = gp_f4{T.f4[s].x, T.f4[s].y, T.f4[s].z, 0.f};
            islot[k] = (uint32_t)k;
            iself[k] = s;
            iorig[k] = T.perm[s];
            iaold[k] = aold ? (*aold)[T.perm[s]] : 0.f;
        }
    }
    const uint32_t slots = WALK_WARPS * 2; /* two blocks */
    std::vector<uint32_t> stacks((size_t)slots * GP_TREE_STACK);
    uint32_t next = 0;
    unsigned long long counters[4] = {0, 0, 0, 0};
    std::vector<gp_d4> out(ni);
    gp_walk_args A;
    memset(&A, 0, sizeof A);
    A.ipos = ipos.data();
    A.islot = islot.data();
    A.iself = pts ? nullptr : iself.data();
    A.iorig = pts ? nullptr : iorig.data();
    A.iaold = pts ? nullptr : iaold.data();
    A.ni = (uint32_t)ni;
    A.ppos = T.f4.data();
    A.cells = T.t.cells;
    A.rec = rec.data();
    A.ncells = T.t.ncells;
    A.stacks = stacks.data();
    A.warp_slots = slots;
    A.next_group = &next;
    A.counters = counters;
    A.mode = mode;
    A.quad = quad;
    A.accel = mac == GP_MAC_ACCELERATION;
    A.G = 1.0f;
    A.delta_acc = (float)dacc;
    A.eps2 = eps * eps;
    A.out = out.data();
    A.aold = (pts || !aold) ? nullptr : aold->data();
    std::function<void()> k;
    if (mode == 0) k = [&] { walk_kernel<0>(A); };
    else if (mode == 1) k = [&] { walk_kernel<1>(A); };
    else k = [&] { walk_kernel<2>(A); };
    emu::launch(dim3(2), dim3(WALK_THREADS), 32, k);
    WalkOut w;
    w.acc.resize(3 * ni);
    w.pot.resize(ni);
    for (size_t i = 0; i < ni; ++i) {
        w.acc[3 * i] = out[i].x; w.acc[3 * i + 1] = out[i].y; w.acc[3 * i + 2] = out[i].z;
        w.pot[i] = out[i].w;
    }
    w.pp = counters[0];
    w.pc = counters[1];
    w.overflow = counters[2];
    return w;
}

/* i-groups (group_runs): a run starts wherever the group cell changes. The
 * reference finds each record's group cell by particle ranges (begin,
 * count), where the kernel descends by key digits: two routes to one cell. */
static void test_groups()
{
    const uint32_t n = 20000;
    std::vector<double> pos(3 * n), mass(n, 1.0 / n);
    plummer_positions(pos); /* cells of every size */
    Tree T;
    build(pos, mass, T);
    std::vector<uint32_t> sel; /* key order: a dense run, then every 37th */
    for (uint32_t s = 0; s < n; ++s)
        if (s < n / 8 || s % 37 == 0) sel.push_back(s);
    const uint32_t ni = (uint32_t)sel.size();
    std::vector<uint64_t> rk(ni);
    for (uint32_t k = 0; k < ni; ++k) rk[k] = T.keys[sel[k]];
    for (uint32_t cell_max : {32u, 700u, 4096u, n}) {
        std::vector<uint32_t> want(ni), got(ni), got_pts(ni);
        uint32_t prev = 0, worst = 0;
        for (uint32_t k = 0; k < ni; ++k) {
            uint32_t c = 0;
            while (T.t.cells[c].count > cell_max && T.t.cells[c].nchild > 0) {
                const gp_cell p = T.t.cells[c];
                for (uint32_t j = p.child; j < p.child + p.nchild; ++j)
                    if (T.t.cells[j].begin <= sel[k] && sel[k] < T.t.cells[j].begin + T.t.cells[j].count) c = j;
                if (T.t.cells[c].level != p.level + 1) bail("a particle in none of its cell's children");
            }
            want[k] = k == 0 || c != prev;
            prev = c;
            if (T.t.cells[c].nchild > 0 && T.t.cells[c].count > worst) worst = T.t.cells[c].count;
        }
        emu::launch(dim3((ni + 255) / 256), dim3(256), 256,
                    [&] { group_runs(T.keys.data(), sel.data(), ni, T.t.cells, T.keys.data(), cell_max, got.data()); });
        emu::launch(dim3((ni + 255) / 256), dim3(256), 256,
                    [&] { group_runs(rk.data(), nullptr, ni, T.t.cells, T.keys.data(), cell_max, got_pts.data()); });
        uint32_t runs = 0, bad = 0, bad_pts = 0;
        for (uint32_t k = 0; k < ni; ++k) {
            runs += want[k];
            bad += got[k] != want[k];
            bad_pts += got_pts[k] != want[k];
        }
        ok(bad == 0 && worst <= cell_max, "groups in cells of <= %u sources: %u runs over %u records, %u run starts differ "
           "from the host's cells; the largest group cell that is not a leaf holds %u", cell_max, runs, ni, bad, worst);
        ok(bad_pts == 0, "the same runs from the records' keys alone (field points): %u differ", bad_pts);
    }
    gp_host_tree_free(&T.t);
}

static void pick(const Ref &r, const std::vector<uint32_t> &orig, Ref &o)
{
    o.acc.resize(3 * orig.size());
    o.pot.resize(orig.size());
    for (size_t k = 0; k < orig.size(); ++k) {
        for (int c = 0; c < 3; ++c) o.acc[3 * k + c] = r.acc[3 * orig[k] + c];
        o.pot[k] = r.pot[orig[k]];
    }
}

int main()
{
    plan_lazy();
    std::vector<double> pos(3 * N), mass(N, 1.0 / N);
    plummer_positions(pos);
    mass[5] = 0; /* a massless particle */
    std::vector<long> self(N);
    for (size_t i = 0; i < N; ++i) self[i] = (long)i;
    Ref ref, ref_e;
    direct_ref(pos, mass, 0.0, pos, self, ref);
    direct_ref(pos, mass, 0.01, pos, self, ref_e);

    Tree T;
    build(pos, mass, T);
    diag("host tree: %u cells, %u levels", T.t.ncells, T.t.nlevels);
    test_groups();
    std::vector<uint32_t> all(N);
    for (size_t s = 0; s < N; ++s) all[s] = (uint32_t)s;
    Ref want, want_e;
    pick(ref, T.perm, want);
    pick(ref_e, T.perm, want_e);

    /* theta = 0: every cell opened, the walk is a direct sum */
    for (int mode = 0; mode < 3; ++mode) {
        WalkOut w = walk(T, mode, 1, GP_MAC_BH, 0.0, 0, 0.0, all, nullptr, nullptr);
        ok(emu::S().failures == 0 && w.overflow == 0, "walk mode %d theta=0 ran (%s)", mode, emu::S().first_failure);
        ok(w.pc == 0 && w.pp == (unsigned long long)N * N, "theta=0: no cells, N^2 = %llu pairs (got pp %llu pc %llu)",
           (unsigned long long)N * N, w.pp, w.pc);
        char what[64];
        snprintf(what, sizeof what, "walk mode %d theta=0 acc", mode);
        double tol = 1e-4; /* positions are float in every mode */
        check(what, w.acc, want.acc, 3, tol / 10, tol, tol);
        snprintf(what, sizeof what, "walk mode %d theta=0 pot", mode);
        check(what, w.pot, want.pot, 1, tol / 10, tol, tol);
    }
    /* the MACs at their usual settings, quadrupole, mixed */
    const struct { int mac; double theta, dacc; double med; const char *name; } macs[] = {
        {GP_MAC_BH, 0.5, 0, 1e-3, "bh"}, {GP_MAC_BMAX, 0.5, 0, 1e-3, "bmax"},
        {GP_MAC_MULTIPOLE, 0.5, 0, 1e-3, "multipole"}, {GP_MAC_ACCELERATION, 0.5, 1.0 / 128, 5e-3, "acceleration"}};
    for (auto &mc : macs) {
        std::vector<float> aold(N, 0.f);
        WalkOut w = walk(T, 1, 1, mc.mac, mc.theta, mc.dacc, 0.01, all, &aold, nullptr);
        if (mc.mac == GP_MAC_ACCELERATION) {
            size_t set = 0;
            for (float a : aold) set += a > 0;
            ok(set == N - 0 || set >= N - 1, "the first call stored |a| for %zu of %zu particles", set, N);
            w = walk(T, 1, 1, mc.mac, mc.theta, mc.dacc, 0.01, all, &aold, nullptr);
        }
        ok(emu::S().failures == 0 && w.overflow == 0, "walk mac %s ran", mc.name);
        ok(w.pc > 0, "mac %s accepts cells (pp %llu, pc %llu)", mc.name, w.pp, w.pc);
        char what[64];
        snprintf(what, sizeof what, "walk %s acc", mc.name);
        check(what, w.acc, want_e.acc, 3, mc.med, 10 * mc.med, 1.0);
        snprintf(what, sizeof what, "walk %s pot", mc.name);
        check(what, w.pot, want_e.pot, 1, mc.med, 10 * mc.med, 1.0);
    }
    {
        WalkOut a = walk(T, 1, 0, GP_MAC_BH, 0.5, 0, 0.01, all, nullptr, nullptr);
        WalkOut b = walk(T, 1, 0, GP_MAC_BH, 0.5, 0, 0.01, all, nullptr, nullptr);
        check("walk monopole acc", a.acc, want_e.acc, 3, 5e-3, 5e-2, 1.0);
        ok(a.acc == b.acc && a.pot == b.pot, "two walks give the same bits");
    }
    {   /* a subset: every 37th sorted particle (few, spread out: wide groups) */
        std::vector<uint32_t> sel, orig;
        for (size_t s = 0; s < N; s += 37) { sel.push_back((uint32_t)s); orig.push_back(T.perm[s]); }
        WalkOut w = walk(T, 1, 1, GP_MAC_BH, 0.5, 0, 0.01, sel, nullptr, nullptr);
        Ref ws;
        pick(ref_e, orig, ws);
        ok(emu::S().failures == 0, "subset walk ran");
        check("walk subset acc", w.acc, ws.acc, 3, 1e-3, 1e-2, 1.0);
    }
    {   /* field points, one on top of a particle */
        std::vector<double> pts(3 * 100);
        for (size_t k = 0; k < 100; ++k)
            for (int c = 0; c < 3; ++c) pts[3 * k + c] = pos[3 * (k * 5) + c] * 1.3 + 0.05;
        for (int c = 0; c < 3; ++c) pts[c] = pos[3 * 9 + c];
        std::vector<long> none(100, -1);
        Ref fr;
        direct_ref(pos, mass, 0.01, pts, none, fr);
        WalkOut w = walk(T, 1, 1, GP_MAC_BH, 0.0, 0, 0.01, all, nullptr, &pts);
        check("walk field theta=0 acc", w.acc, fr.acc, 3, 1e-5, 1e-4, 1e-4);
        check("walk field theta=0 pot", w.pot, fr.pot, 1, 1e-5, 1e-4, 1e-4);
        w = walk(T, 1, 1, GP_MAC_BH, 0.5, 0, 0.01, all, nullptr, &pts);
        check("walk field theta=0.5 acc", w.acc, fr.acc, 3, 1e-3, 1e-2, 1.0);
    }

    {   /* a far outlier (1e22, r^2 beyond float): walk_is_safe fails for
         * every group, so the outlier loops (r^2 test per pair, double
         * fall-back for the pairs with the outlier) carry the whole walk.
         * Masses x 1e20, so that the outlier's pull (M / r^2) is a normal
         * float, not below FLT_MIN (the plugin scales masses to keep it so) */
        std::vector<double> pos2(pos), mass2(mass);
        pos2[3 * 7] = 1e22;
        for (double &m : mass2) m *= 1e20;
        Ref r2;
        direct_ref(pos2, mass2, 0.01, pos2, self, r2);
        Tree T2;
        build(pos2, mass2, T2);
        Ref want2;
        pick(r2, T2.perm, want2);
        for (int mode = 0; mode < 3; ++mode) {
            WalkOut w = walk(T2, mode, 1, GP_MAC_BH, 0.5, 0, 0.01, all, nullptr, nullptr);
            ok(emu::S().failures == 0 && w.overflow == 0 && w.pc > 0,
               "walk mode %d with an outlier at 1e22 ran, cells accepted (pp %llu, pc %llu)", mode, w.pp, w.pc);
            char what[64];
            snprintf(what, sizeof what, "walk mode %d outlier acc", mode);
            check(what, w.acc, want2.acc, 3, 1e-4, 1e-3, 1e-3);
            snprintf(what, sizeof what, "walk mode %d outlier pot", mode);
            check(what, w.pot, want2.pot, 1, 1e-4, 1e-3, 1e-3);
        }
        gp_host_tree_free(&T2.t);
    }

    /* ---- the direct kernel ------------------------------------------------ */
    {
        const uint32_t n = 700; /* not a multiple of the tile; two i-blocks */
        /* its own cloud: more particles than the tree tests' N */
        std::vector<double> p1(3 * n), m1(n, 1.0 / n);
        plummer_positions(p1);
        m1[5] = 0; /* a massless particle */
        std::vector<float4> jp(n);
        std::vector<gp_d4> jpd(n);
        for (uint32_t j = 0; j < n; ++j) {
            jp[j] = float4{(float)(p1[3 * j] - T.center[0]), (float)(p1[3 * j + 1] - T.center[1]),
                           (float)(p1[3 * j + 2] - T.center[2]), (float)m1[j]};
            jpd[j] = gp_d4{p1[3 * j] - T.center[0], p1[3 * j + 1] - T.center[1], p1[3 * j + 2] - T.center[2], m1[j]};
        }
        std::vector<long> s1(n);
        for (uint32_t i = 0; i < n; ++i) s1[i] = i;
        for (int e = 0; e < 2; ++e) {
            double eps = e ? 0.01 : 0.0;
            Ref r1;
            direct_ref(p1, m1, eps, p1, s1, r1);
            for (int mode = 0; mode < 3; ++mode) {
                const uint32_t nseg = 3, ntiles = (n + DIRECT_BLOCK - 1) / DIRECT_BLOCK, tps = (ntiles + nseg - 1) / nseg;
                std::vector<gp_d4> seg((size_t)nseg * n), out(n);
                dim3 grid((n + DIRECT_IPB - 1) / DIRECT_IPB, nseg);
                std::function<void()> k;
                bool g = eps == 0;
                if (mode == 0) k = [&] { if (g) direct_kernel<0, true>(jp.data(), n, tps, jp.data(), nullptr, 1, n, eps * eps, seg.data());
                                         else direct_kernel<0, false>(jp.data(), n, tps, jp.data(), nullptr, 1, n, eps * eps, seg.data()); };
                else if (mode == 1) k = [&] { if (g) direct_kernel<1, true>(jp.data(), n, tps, jp.data(), nullptr, 1, n, eps * eps, seg.data());
                                              else direct_kernel<1, false>(jp.data(), n, tps, jp.data(), nullptr, 1, n, eps * eps, seg.data()); };
                else k = [&] { if (g) direct_kernel<2, true>(jpd.data(), n, tps, jpd.data(), nullptr, 1, n, eps * eps, seg.data());
                               else direct_kernel<2, false>(jpd.data(), n, tps, jpd.data(), nullptr, 1, n, eps * eps, seg.data()); };
                emu::launch(grid, dim3(DIRECT_BLOCK), DIRECT_BLOCK, k);
                emu::launch(dim3((n + 255) / 256), dim3(256), 256, [&] { direct_reduce(seg.data(), nseg, n, out.data()); });
                std::vector<double> acc(3 * n), pt(n);
                for (uint32_t i = 0; i < n; ++i) {
                    acc[3 * i] = out[i].x; acc[3 * i + 1] = out[i].y; acc[3 * i + 2] = out[i].z; pt[i] = out[i].w;
                }
                ok(emu::S().failures == 0, "direct kernel mode %d eps %g ran", mode, eps);
                char what[64];
                snprintf(what, sizeof what, "direct mode %d eps %g acc", mode, eps);
                double tol = mode == 2 ? 1e-12 : 1e-4;
                check(what, acc, r1.acc, 3, tol / 10, tol, tol);
                snprintf(what, sizeof what, "direct mode %d eps %g pot", mode, eps);
                check(what, pt, r1.pot, 1, tol / 10, tol, tol);
            }
        }
    }
    gp_host_tree_free(&T.t);
    if (emu::S().failures) diag("emulator: %ld failure(s), first: %s", emu::S().failures, emu::S().first_failure);
    return done_testing();
}
