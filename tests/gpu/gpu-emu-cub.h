/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu-emu-cub.h — the two CUB algorithms cuda-tree uses, on the CPU, with
 * CUB's calling convention (a NULL temporary asks for its size), for the
 * emulated build of the plugins (tests/gpu/gpu-emu-runtime.cc). The radix sort
 * is stable and orders by bits [begin_bit, end_bit), like CUB's.
 */
#ifndef GP_CUDA_EMU_CUB_H
#define GP_CUDA_EMU_CUB_H

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "gpu-emu-counts.h" /* each call that does the work is counted */

namespace cub {
struct DeviceRadixSort {
    template <class K, class V>
    static cudaError_t SortPairs(void *tmp, size_t &bytes, const K *kin, K *kout, const V *vin, V *vout,
                                 int n, int begin_bit, int end_bit, cudaStream_t = 0)
    {
        if (!tmp) { bytes = 16; return cudaSuccess; }
        gp_emu_thread_counts()->cub_calls++;
        std::vector<int> o((size_t)n);
        std::iota(o.begin(), o.end(), 0);
        const int width = end_bit - begin_bit;
        const K mask = width >= (int)(8 * sizeof(K)) ? ~K(0) : ((K(1) << width) - 1);
        auto bits = [&](int i) { return (kin[i] >> begin_bit) & mask; };
        std::stable_sort(o.begin(), o.end(), [&](int a, int b) { return bits(a) < bits(b); });
        std::vector<K> k2((size_t)n);
        std::vector<V> v2((size_t)n);
        for (int i = 0; i < n; ++i) { k2[i] = kin[o[i]]; v2[i] = vin[o[i]]; }
        std::copy(k2.begin(), k2.end(), kout);
        std::copy(v2.begin(), v2.end(), vout);
        return cudaSuccess;
    }
};
struct DeviceScan {
    template <class T>
    static cudaError_t ExclusiveSum(void *tmp, size_t &bytes, const T *in, T *out, int n, cudaStream_t = 0)
    {
        if (!tmp) { bytes = 16; return cudaSuccess; }
        gp_emu_thread_counts()->cub_calls++;
        T sum = 0;
        for (int i = 0; i < n; ++i) { T v = in[i]; out[i] = sum; sum += v; }
        return cudaSuccess;
    }
};
} /* namespace cub */

#endif /* GP_CUDA_EMU_CUB_H */
