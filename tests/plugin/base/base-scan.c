/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base-scan.c — unit tests of plugin/base/scan.c's passes over double
 * arrays: gp_first_nonfinite finds the first NaN or infinity, and
 * gp_copy_finite copies bit for bit and says whether all were finite, at
 * sizes around the 1024-value blocks and above the sizes where the threads
 * share the work, with 1 and 2 threads. Finite extremes (DBL_MAX,
 * subnormals, -0) must pass: the check sums x * 0 over each block.
 */
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "base/plugin_base.h"
#include "tap.h"

static void fill(double *v, size_t n)
{
    static const double extremes[] = {DBL_MAX, -DBL_MAX, DBL_MIN, 4.9e-324, -0.0, 0.0, 1e300, -1e-300};
    for (size_t i = 0; i < n; ++i)
        v[i] = i % 97 == 0 ? extremes[(i / 97) % 8] : (double)i * 1e-3 - 7.0;
}

int main(void)
{
    static const size_t sizes[] = {1, 1023, 1024, 1025, 65535, 65536, 70001, 1048577};
    static const double bads[] = {NAN, INFINITY, -INFINITY};
    plan_lazy();
    size_t nmax = sizes[sizeof sizes / sizeof *sizes - 1];
    double *v = malloc(nmax * sizeof *v), *dst = malloc(nmax * sizeof *dst);
    if (!v || !dst) bail("no memory");
    for (int threads = 1; threads <= 2; ++threads) {
        omp_set_num_threads(threads);
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s) {
            size_t n = sizes[s];
            fill(v, n);
            memset(dst, 0xab, n * sizeof *dst);
            int all = gp_copy_finite(dst, v, n);
            ok(all == 1 && memcmp(dst, v, n * sizeof *v) == 0 && gp_first_nonfinite(v, n) == (size_t)-1,
               "%d thread(s), n = %zu, finite extremes included: copied bit for bit, all finite", threads, n);
            /* a bad value first, in the middle on a block edge, last; and
             * a second one later, which must not be the one reported */
            size_t at[3] = {0, n / 2 - (n / 2) % 1024, n - 1};
            int caught = 1, copied = 1, first = 1;
            for (int k = 0; k < 3; ++k) {
                for (int b = 0; b < 3; ++b) {
                    fill(v, n);
                    v[at[k]] = bads[b];
                    if (at[k] + 5 < n) v[at[k] + 5] = bads[(b + 1) % 3];
                    memset(dst, 0, n * sizeof *dst);
                    caught &= gp_copy_finite(dst, v, n) == 0;
                    copied &= memcmp(dst, v, n * sizeof *v) == 0;
                    first &= gp_first_nonfinite(v, n) == at[k];
                }
            }
            ok(caught && copied && first,
               "%d thread(s), n = %zu: a NaN or infinity first, on a block edge, last is caught, copied, "
               "and the first one reported", threads, n);
        }
    }
    ok(gp_copy_finite(dst, v, 0) == 1 && gp_first_nonfinite(v, 0) == (size_t)-1, "n = 0: nothing to find");
    free(v);
    free(dst);
    done_testing();
}
