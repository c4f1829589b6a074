// cuda.<scan family>.block_scan: one row per block (the scan itself: scan_common.cuh). BLOCK*VEC
// elements per step: each thread scans its VEC elements, the block scans the thread totals, and a
// running carry links the steps. One read of the row (and the mask) and one write. With PREFETCH a
// thread loads its next step's elements before this step's barriers, so a block's loads stay in flight
// while it waits.
#ifndef PREFETCH
#define PREFETCH 0
#endif

extern "C" __global__ void __launch_bounds__(BLOCK) kf_cumsum(const T *__restrict__ x, const M *__restrict__ mask, T *__restrict__ y,
                                                             long long rows, long long cols)
{
    __shared__ float warp_tot[2][32];
    const long long row = blockIdx.x;
    const T *xr = x + row * cols;
    const M *mr = SCAN_MASK ? mask + row * cols : nullptr;
    T *yr = y + row * cols;
    const bool vec_ok = packs_fit(x, y, cols);
    (void)rows;
    float carry = IDENTITY;
    float v[VEC];
#if PREFETCH
    load_step(xr, mr, (long long)threadIdx.x * VEC, cols, vec_ok, v);
#endif
    int parity = 0;
    for (long long base = 0; base < cols; base += (long long)BLOCK * VEC, parity ^= 1) {
        const long long i0 = base + (long long)threadIdx.x * VEC;
#if !PREFETCH
        load_step(xr, mr, i0, cols, vec_ok, v);
#endif
        float o[VEC];
        const float run = thread_scan(v, o);
#if PREFETCH
        if (base + (long long)BLOCK * VEC < cols) load_step(xr, mr, i0 + (long long)BLOCK * VEC, cols, vec_ok, v);
#endif
        float total;
        const float before = COMBINE(carry, block_exclusive(run, warp_tot[parity], total));
#pragma unroll
        for (int j = 0; j < VEC; ++j) o[j] = COMBINE(before, o[j]);
        store_step(yr, i0, cols, vec_ok, o);
        carry = COMBINE(carry, total);
    }
}
