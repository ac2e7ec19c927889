/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu-emu-self.cc — the CUDA emulator (tests/gpu/gpu-emu.h) itself, which every
 * kernel test on a machine without a GPU stands on: warp shuffles, ballots
 * and block barriers give what a GPU gives; a lane that leaves while the
 * others wait at a barrier, and a __syncthreads in divergent code, are
 * reported; a launch after such a failure runs
 * normally on the reused stacks; host threads run kernels side by side;
 * deep calls and large frames inside an emulated thread stay within its
 * stack. A mistake in the emulator's own stack switching shows here first.
 */
#include "gpu-emu.h"
#include "tap.h"

#include <vector>

/* A butterfly sum over the warp: every lane ends with the sum of all. */
static void warp_sum(std::vector<int> &out)
{
    out.assign(64, -1);
    emu::launch(dim3(1), dim3(64), 32, [&] {
        int v = emu_lane() & 31;
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
        out[threadIdx.x] = v;
    });
}

/* Recursion with a frame of 1 KiB a level: 64 levels, a quarter of a
 * stack, returning a value every level contributes to. */
static long deep(int level, long seed)
{
    volatile char frame[1024];
    frame[level % 1024] = (char)seed;
    if (level == 0) return seed;
    return deep(level - 1, seed + 1) + frame[level % 1024] - (char)seed;
}

/* The stack pointer's alignment in a frame an emulated thread calls: 16
 * bytes on x86-64 (System V), as after any call (0 when aligned). */
__attribute__((noinline)) static unsigned frame_misalignment()
{
    return (unsigned)((uintptr_t)__builtin_frame_address(0) & 15);
}

#ifdef GP_EMU_OWN_SWITCH
/* Values held in the callee-saved registers across a barrier, while the
 * other lanes hold theirs: the stack switch must keep each lane's own.
 * Returns how many of the five came back changed. */
__attribute__((noinline)) static int callee_saved_kept(long v)
{
    register long b asm("rbx") = v + 1;
    register long c asm("r12") = v + 2;
    register long d asm("r13") = v + 3;
    register long e asm("r14") = v + 4;
    register long f asm("r15") = v + 5;
    __asm__ volatile("" : "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f));
    __syncwarp();
    __asm__ volatile("" : "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f));
    return (b != v + 1) + (c != v + 2) + (d != v + 3) + (e != v + 4) + (f != v + 5);
}
#endif

int main()
{
    long f0 = emu::S().failures;

    std::vector<int> sum;
    warp_sum(sum);
    int good = 0;
    for (int t = 0; t < 64; ++t) good += sum[t] == 496;
    is_int(good, 64, "__shfl_xor_sync: each of 2 warps sums its lane ids (496) in every lane");

    std::vector<unsigned> ballot(32, 0);
    emu::launch(dim3(1), dim3(32), 32, [&] {
        ballot[threadIdx.x] = __ballot_sync(0xffffffffu, (threadIdx.x & 1) == 0);
    });
    good = 0;
    for (unsigned b : ballot) good += b == 0x55555555u;
    is_int(good, 32, "__ballot_sync: the even lanes' bits, in every lane");

    std::vector<int> up(32, -1);
    emu::launch(dim3(1), dim3(32), 32, [&] { up[threadIdx.x] = __shfl_up_sync(0xffffffffu, (int)threadIdx.x * 10, 3); });
    good = 0;
    for (int t = 0; t < 32; ++t) good += up[t] == (t >= 3 ? (t - 3) * 10 : t * 10);
    is_int(good, 32, "__shfl_up_sync by 3: lanes below 3 keep their own value");

    /* a block of the emulator's largest size: each thread writes its slot,
     * waits, and reads its neighbour's; blocks see their own shared copy */
    std::vector<int> nb(2 * emu::MAXT, -1);
    emu::launch(dim3(2), dim3(emu::MAXT), emu::MAXT, [&] {
        __shared__ int sh[emu::MAXT];
        unsigned t = threadIdx.x;
        sh[t] = (int)(blockIdx.x * 1000 + t);
        __syncthreads();
        nb[blockIdx.x * emu::MAXT + t] = sh[(t + 1) % emu::MAXT];
    });
    good = 0;
    for (int b = 0; b < 2; ++b)
        for (int t = 0; t < emu::MAXT; ++t) good += nb[b * emu::MAXT + t] == b * 1000 + (t + 1) % emu::MAXT;
    is_int(good, 2 * emu::MAXT, "__syncthreads: %d threads a block read their neighbour's write", (int)emu::MAXT);

    int anyv = -1;
    emu::launch(dim3(1), dim3(128), 128, [&] {
        int a = __syncthreads_or(threadIdx.x == 77);
        if (threadIdx.x == 0) anyv = a;
    });
    is_int(anyv, 1, "__syncthreads_or: one thread's predicate reaches all");
    is_int(emu::S().failures - f0, 0, "no failure reported for well-formed kernels");

    /* lane 5 leaves while the others wait at the shuffle: CUDA leaves
     * the result undefined, the emulator reports it */
    emu::launch(dim3(1), dim3(32), 32, [&] {
        if (threadIdx.x == 5) return;
        (void)__shfl_xor_sync(0xffffffffu, 1, 1);
    });
    ok(emu::S().failures - f0 == 1 && strstr(emu::S().first_failure, "finished while others wait"),
       "a lane that skips a full-mask shuffle is reported (%s)", emu::S().first_failure);

    /* a __syncthreads in divergent code: half the block waits at one, half
     * at another (undefined in CUDA: a hang or a wrong result) */
    std::vector<int> dvg(64, 0);
    emu::launch(dim3(1), dim3(64), 64, [&] {
        unsigned t = threadIdx.x;
        if (t < 32) { dvg[t] = 1; __syncthreads(); dvg[t] += 10; }
        else { dvg[t] = 2; __syncthreads(); dvg[t] *= 3; }
    });
    ok(emu::S().failures - f0 == 2 && strstr(emu::S().first_failure, "finished while others wait") &&
           emu::S().last_failure[0] && strstr(emu::S().last_failure, "different __syncthreads"),
       "threads waiting at two different __syncthreads are reported (%s)", emu::S().last_failure);

    /* the abandoned coroutines' stacks are reused by the next launch */
    warp_sum(sum);
    good = 0;
    for (int t = 0; t < 64; ++t) good += sum[t] == 496;
    ok(good == 64 && emu::S().failures - f0 == 2, "after a failure the next launch runs normally");

    std::vector<long> dv(32, 0);
    emu::launch(dim3(1), dim3(32), 32, [&] {
        long r = deep(64, (long)threadIdx.x);
        __syncwarp();
        dv[threadIdx.x] = r + __shfl_xor_sync(0xffffffffu, (int)r, 1);
    });
    good = 0;
    for (int t = 0; t < 32; ++t) good += dv[t] == (long)(t + 64) + (long)((t ^ 1) + 64);
    is_int(good, 32, "64 KiB of frames on each emulated thread's stack, across barriers");

    std::vector<unsigned> mis(32, 99);
    emu::launch(dim3(1), dim3(32), 32, [&] {
        __syncwarp();
        mis[threadIdx.x] = frame_misalignment();
    });
    good = 0;
    for (unsigned m : mis) good += m == 0;
    is_int(good, 32, "each emulated thread's stack is aligned as the ABI wants");

#ifdef GP_EMU_OWN_SWITCH
    std::vector<int> lost(32, -1);
    emu::launch(dim3(1), dim3(32), 32, [&] { lost[threadIdx.x] = callee_saved_kept(1000L * (long)threadIdx.x); });
    good = 0;
    for (int l : lost) good += l == 0;
    is_int(good, 32, "callee-saved registers held across a barrier come back to their own lane");
#else
    skip(1, "the ucontext switch saves the registers itself (glibc)");
#endif

    /* two host threads, each its own emulator state (thread_local) */
    int ok_threads = 0, nthreads = 0;
#pragma omp parallel num_threads(2) reduction(+ : ok_threads, nthreads)
    {
        nthreads = 1;
        std::vector<int> s;
        for (int rep = 0; rep < 50; ++rep) {
            warp_sum(s);
            int g = 0;
            for (int t = 0; t < 64; ++t) g += s[t] == 496;
            ok_threads += g == 64;
        }
    }
    ok(nthreads == 2 && ok_threads == 100, "two host threads run kernels side by side (%d of 100 launches right)", ok_threads);

#ifdef GP_EMU_OWN_SWITCH
    diag("stack switch: the emulator's own (x86-64)");
#else
    diag("stack switch: ucontext");
#endif
    return done_testing();
}
