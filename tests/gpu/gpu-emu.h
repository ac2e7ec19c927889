/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu-emu.h — just enough of CUDA to run this project's kernels on the CPU
 * with g++, for tests on machines without a GPU (tests/gpu/gpu-walk-emu.cc).
 *
 * Every CUDA thread of a synchronising group (a warp for warp-level code, a
 * block for __syncthreads code) is a coroutine; the group runs in
 * rounds: each live thread runs until its next barrier or its end. Warp
 * primitives (__shfl_*, __ballot_sync, __syncwarp) and __syncthreads(_or)
 * are barriers plus an exchange array. After every round the scheduler
 * checks what CUDA requires: no thread of the group has finished while
 * others wait (a lane that skips a full-mask shuffle, or exits before a
 * __syncthreads), and threads waiting at a __syncthreads all wait at the
 * same one (a __syncthreads in divergent code). Warp primitives may wait
 * at different call sites, as sm_70 and later allow; but a round where
 * some threads of a block wait at a __syncthreads and others at a warp
 * primitive is reported too, though legal in CUDA: rounds would release
 * the __syncthreads before the others reach it.
 *
 * Deterministic: a kernel runs on the calling OS thread (state is
 * thread_local, so two host threads may each run kernels), and atomics are
 * plain read-modify-writes.
 * rsqrtf is 1/sqrtf (the GPU's is within 2 ulp of it).
 */
#ifndef GP_CUDA_EMU_H
#define GP_CUDA_EMU_H

#include <sys/mman.h>
#include <ucontext.h>

/* On x86-64 the coroutines switch stacks by a few instructions of their own
 * (emu::switch_stack). glibc's swapcontext and getcontext save the signal
 * mask through a system call each time: millions of them in one test, most
 * of an emulated kernel's time. AddressSanitizer must see every stack
 * switch, and intercepts swapcontext alone, so an instrumented build, like
 * any other CPU, keeps ucontext. */
#if defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define GP_EMU_ASAN 1
#  endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#  define GP_EMU_ASAN 1
#endif
/* A build marked for shadow stacks (-fcf-protection) keeps it too: a
 * return into another stack would fault where the kernel enables them. */
#if defined(__x86_64__) && !defined(GP_EMU_ASAN) && !(defined(__CET__) && (__CET__ & 2))
#  define GP_EMU_OWN_SWITCH 1
#endif
#if defined(__has_include)
#  if __has_include(<valgrind/valgrind.h>)
#    include <valgrind/valgrind.h> /* coroutine stacks made known to memcheck */
#    define GP_EMU_VALGRIND 1
#  endif
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>

/* With GP_CUDA_EMU_RUNTIME the real cuda_runtime_api.h provides the types
 * (dim3, float4, cudaError_t, ...) and tests/gpu/gpu-emu-runtime.cc the
 * functions; otherwise the few types the kernels need are defined here. */
#ifdef GP_CUDA_EMU_RUNTIME
#  include <cuda_runtime_api.h>
#  include "gpu-emu-counts.h" /* launches counted, as the runtime counts copies */
#endif
#undef __global__
#undef __device__
#undef __host__
#undef __launch_bounds__
#undef __shared__
#define __global__
#define __device__
#define __host__
#define __launch_bounds__(...)
#define __shared__ static thread_local /* one copy per block: blocks run one at a time */
#ifndef __forceinline__
#  define __forceinline__ inline
#endif
#ifndef restrict
#  define restrict __restrict__
#endif

#ifndef GP_CUDA_EMU_RUNTIME
struct dim3 {
    unsigned x, y, z;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
struct float4 { float x, y, z, w; };
#endif

namespace emu {
enum { MAXT = 256, STACK = 256 * 1024 };
struct state {
    int n = 0, cur = 0;
#ifdef GP_EMU_OWN_SWITCH
    void *sched_sp;        /* the scheduler's stack while a thread runs */
    void *sp[MAXT];        /* each waiting thread's stack */
#else
    ucontext_t sched;
    ucontext_t ctx[MAXT];
#endif
    bool done[MAXT];
    const void *site[MAXT]; /* the __syncthreads a thread waits at; null: a warp primitive */
    uint64_t xchg[MAXT];
    char *stacks = nullptr;
    std::function<void()> fn;
    long failures = 0;
    char first_failure[256] = "";
    char last_failure[256] = "";
    /* a thread that ends (an engine's worker) gives its stacks back */
    ~state() { if (stacks) munmap(stacks, (size_t)MAXT * STACK); }
};
inline state &S() { static thread_local state s; return s; }
struct idx3 { unsigned x, y, z; };
inline idx3 &thread_idx() { static thread_local idx3 v; return v; }
inline idx3 &block_idx() { static thread_local idx3 v; return v; }
inline idx3 &block_dim() { static thread_local idx3 v; return v; }
inline idx3 &grid_dim() { static thread_local idx3 v; return v; }
inline unsigned &tid_base() { static thread_local unsigned v; return v; }

#ifdef GP_EMU_OWN_SWITCH
/* Pushes the callee-saved registers (System V ABI) on the running stack,
 * stores its pointer in *from, and resumes the stack `to`: one saved by
 * an earlier call, or one made by start_stack. MXCSR and the x87 control
 * word are the same for every coroutine of a host thread, so stay. */
__attribute__((naked, noinline)) static void switch_stack(void **from, void *to)
{
    __asm__ volatile("pushq %rbp\n\t"
                     "pushq %rbx\n\t"
                     "pushq %r12\n\t"
                     "pushq %r13\n\t"
                     "pushq %r14\n\t"
                     "pushq %r15\n\t"
                     "movq %rsp, (%rdi)\n\t"
                     "movq %rsi, %rsp\n\t"
                     "popq %r15\n\t"
                     "popq %r14\n\t"
                     "popq %r13\n\t"
                     "popq %r12\n\t"
                     "popq %rbx\n\t"
                     "popq %rbp\n\t"
                     "ret\n\t");
}

inline void thread_main()
{
    state &s = S();
    s.fn();
    s.done[s.cur] = true;
    void *unused;
    switch_stack(&unused, s.sched_sp); /* never resumed */
    __builtin_unreachable();
}

/* A stack [lo, lo + size) that switch_stack starts in thread_main: six
 * register slots, then thread_main as the return address, above it a null
 * one, so thread_main begins with the stack aligned as after a call. */
inline void *start_stack(char *lo, size_t size)
{
    uintptr_t top = ((uintptr_t)lo + size) & ~(uintptr_t)15;
    void **sp = (void **)top;
    *--sp = nullptr;
    *--sp = (void *)&thread_main;
    for (int r = 0; r < 6; ++r) *--sp = nullptr;
    return sp;
}
#else
inline void trampoline()
{
    state &s = S();
    s.fn();
    s.done[s.cur] = true; /* uc_link returns to the scheduler */
}
#endif

inline void fail(const char *what)
{
    state &s = S();
    if (s.failures++ == 0) snprintf(s.first_failure, sizeof s.first_failure, "%s", what);
    snprintf(s.last_failure, sizeof s.last_failure, "%s", what);
#ifdef GP_CUDA_EMU_RUNTIME
    /* inside an emulated plugin nobody would look at the count: stop loudly */
    fprintf(stderr, "gpu-emu: %s\n", what);
    abort();
#endif
}

/* Runs fn as n threads with threadIdx.x = base .. base + n - 1. */
inline void run_group(int n, unsigned base, std::function<void()> fn)
{
    state &s = S();
    if (!s.stacks) {
        /* mapped, not malloc'ed: the stacks are the emulated GPU's, which
         * a launch never takes from the host's heap, so a test that fails
         * the plugin's allocations (tests/fixtures/oom-inject.c) does not fail them */
        void *m = mmap(nullptr, (size_t)MAXT * STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                       -1, 0);
        if (m == MAP_FAILED) {
            fail("cannot map the emulated threads' stacks");
            return;
        }
        s.stacks = (char *)m;
#ifdef GP_EMU_VALGRIND
        for (int t = 0; t < MAXT; ++t)
            (void)VALGRIND_STACK_REGISTER(s.stacks + (size_t)t * STACK, s.stacks + (size_t)(t + 1) * STACK);
#endif
    }
    s.n = n;
    s.fn = fn;
    tid_base() = base;
    for (int t = 0; t < n; ++t) {
        s.done[t] = false;
#ifdef GP_EMU_OWN_SWITCH
        s.sp[t] = start_stack(s.stacks + (size_t)t * STACK, STACK);
#else
        getcontext(&s.ctx[t]);
        s.ctx[t].uc_stack.ss_sp = s.stacks + (size_t)t * STACK;
        s.ctx[t].uc_stack.ss_size = STACK;
        s.ctx[t].uc_link = &s.sched;
        makecontext(&s.ctx[t], trampoline, 0);
#endif
    }
    for (;;) {
        for (int t = 0; t < n; ++t) {
            if (s.done[t]) continue;
            s.cur = t;
            thread_idx().x = base + (unsigned)t;
#ifdef GP_EMU_OWN_SWITCH
            switch_stack(&s.sched_sp, s.sp[t]);
#else
            swapcontext(&s.sched, &s.ctx[t]);
#endif
        }
        int ndone = 0, live = 0;
        bool block_bar = false, same = true;
        const void *at = nullptr;
        for (int t = 0; t < n; ++t) {
            if (s.done[t]) { ++ndone; continue; }
            if (s.site[t]) block_bar = true;
            if (live++ == 0) at = s.site[t];
            else if (s.site[t] != at) same = false;
        }
        if (ndone == n) return;
        if (ndone > 0) { fail("some threads finished while others wait at a barrier"); break; }
        if (block_bar && !same) {
            fail("threads of one block wait at different __syncthreads, or some at a warp primitive");
            break;
        }
    }
    /* a failure: the waiting coroutines are abandoned (their stacks reused) */
}

/* site: the __syncthreads' call site, or null for a warp primitive */
inline void barrier(const void *site = nullptr)
{
    state &s = S();
    s.site[s.cur] = site;
#ifdef GP_EMU_OWN_SWITCH
    switch_stack(&s.sp[s.cur], s.sched_sp);
#else
    swapcontext(&s.ctx[s.cur], &s.sched);
#endif
}

template <class T> inline T exchange(T v, int src)
{
    state &s = S();
    uint64_t w = 0;
    memcpy(&w, &v, sizeof v);
    s.xchg[s.cur] = w;
    barrier();
    T r;
    uint64_t got = s.xchg[src];
    memcpy(&r, &got, sizeof r);
    barrier();
    return r;
}

/* Launches a kernel (a callable) on grid x block, `group` threads at a
 * time (32 for warp-level kernels, the block size for block-level ones). */
inline void launch(dim3 grid, dim3 block, int group, std::function<void()> k)
{
#ifdef GP_CUDA_EMU_RUNTIME
    gp_emu_thread_counts()->launches++;
#endif
    grid_dim() = {grid.x, grid.y, grid.z};
    block_dim() = {block.x, block.y, block.z};
    for (unsigned by = 0; by < grid.y; ++by)
        for (unsigned bx = 0; bx < grid.x; ++bx) {
            block_idx() = {bx, by, 0};
            for (unsigned g = 0; g < block.x; g += (unsigned)group) run_group(group, g, k);
        }
}
} /* namespace emu */

#define threadIdx (emu::thread_idx())
#define blockIdx (emu::block_idx())
#define blockDim (emu::block_dim())
#define gridDim (emu::grid_dim())

/* lane within the group being run (a warp: 0..31) */
static inline int emu_lane() { return emu::S().cur; }

static inline void __syncwarp(unsigned = 0xffffffffu) { emu::barrier(); }
/* not inlined, so that the return address names the call site */
__attribute__((noinline, unused)) static void __syncthreads() { emu::barrier(__builtin_return_address(0)); }
__attribute__((noinline, unused)) static int __syncthreads_or(int p)
{
    emu::state &s = emu::S();
    const void *site = __builtin_return_address(0);
    s.xchg[s.cur] = p ? 1 : 0;
    emu::barrier(site);
    int any = 0;
    for (int t = 0; t < s.n; ++t) any |= (int)s.xchg[t];
    emu::barrier(site);
    return any;
}
static inline unsigned __ballot_sync(unsigned, int p)
{
    emu::state &s = emu::S();
    s.xchg[s.cur] = p ? 1 : 0;
    emu::barrier();
    unsigned b = 0;
    int w0 = s.cur & ~31;
    for (int t = 0; t < 32 && w0 + t < s.n; ++t) b |= (unsigned)s.xchg[w0 + t] << t;
    emu::barrier();
    return b;
}
template <class T> static inline T __shfl_sync(unsigned, T v, int src)
{
    return emu::exchange(v, (emu_lane() & ~31) + (src & 31));
}
template <class T> static inline T __shfl_xor_sync(unsigned, T v, int o)
{
    return emu::exchange(v, emu_lane() ^ o);
}
template <class T> static inline T __shfl_up_sync(unsigned, T v, unsigned o)
{
    int l = emu_lane();
    return emu::exchange(v, (l & 31) >= (int)o ? l - (int)o : l);
}
static inline int __popc(unsigned v) { return __builtin_popcount(v); }
static inline int __ffs(unsigned v) { return __builtin_ffs((int)v); }
static inline unsigned atomicAdd(unsigned *p, unsigned v) { unsigned o = *p; *p += v; return o; }
static inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v)
{
    unsigned long long o = *p;
    *p += v;
    return o;
}
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
/* IEEE double operations rounded to nearest, never fused (the emulated
 * build is compiled without contraction: -ffp-contract=off). */
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dsub_rn(double a, double b) { return a - b; }
static inline double __ddiv_rn(double a, double b) { return a / b; }
using std::isfinite;
using std::max;
using std::min;

#endif /* GP_CUDA_EMU_H */
