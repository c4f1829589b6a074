// Scan of one row per block, for every scan family (core/ops/scan_ops.h): SCAN_PROD combines by
// multiplication (else addition), SCAN_REVERSE runs from the row's end, SCAN_EXCLUSIVE gives element i
// the combine of the elements before it, SCAN_MASK multiplies a second input in first (1: one byte per
// element, a bool mask; 2: the storage type T). One read of the row (and the mask) and one write.
// BLOCK*VEC elements per step: each thread scans its VEC elements, the block scans the thread totals
// (warp shuffles, then the warp totals), and a running carry links the steps. With PREFETCH a thread
// loads its next step's elements before this step's barriers, so a block's loads stay in flight while it
// waits. Rows whose length is a multiple of VEC on aligned buffers move as VEC-element packs; reversed
// rows read each pack back to front.
#ifndef SCAN_PROD
#define SCAN_PROD 0
#endif
#ifndef SCAN_REVERSE
#define SCAN_REVERSE 0
#endif
#ifndef SCAN_EXCLUSIVE
#define SCAN_EXCLUSIVE 0
#endif
#ifndef SCAN_MASK
#define SCAN_MASK 0
#endif
#ifndef PREFETCH
#define PREFETCH 0
#endif

#if SCAN_PROD
#define COMBINE(a, b) ((a) * (b))
#define IDENTITY 1.f
#else
#define COMBINE(a, b) ((a) + (b))
#define IDENTITY 0.f
#endif

#if SCAN_MASK == 1
typedef unsigned char M;
__device__ __forceinline__ float mask_f(M m) { return m ? 1.f : 0.f; }
#else
typedef T M;
__device__ __forceinline__ float mask_f(M m) { return to_f(m); }
#endif

// The physical index of logical element i (the scan's order).
__device__ __forceinline__ long long phys(long long i, long long cols) { return SCAN_REVERSE ? cols - 1 - i : i; }

// Logical elements [i0, i0 + VEC) of the row (times the mask), IDENTITY past its end. A pack holds the
// physical elements [p, p + VEC): the logical ones in order, or back to front when reversed.
__device__ __forceinline__ void load_step(const T *xr, const M *mr, long long i0, long long cols, bool vec_ok, float (&v)[VEC])
{
    if (vec_ok && i0 + VEC <= cols) {
        Packed pk;
        const long long p = SCAN_REVERSE ? cols - i0 - VEC : i0;
        pk.r = *reinterpret_cast<const Raw *>(xr + p);
#pragma unroll
        for (int j = 0; j < VEC; ++j) v[j] = to_f(pk.v[SCAN_REVERSE ? VEC - 1 - j : j]);
#if SCAN_MASK
#pragma unroll
        for (int j = 0; j < VEC; ++j) v[j] *= mask_f(mr[p + (SCAN_REVERSE ? VEC - 1 - j : j)]);
#endif
        return;
    }
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
        const long long i = i0 + j;
        v[j] = IDENTITY;
        if (i < cols) {
            v[j] = to_f(xr[phys(i, cols)]);
#if SCAN_MASK
            v[j] *= mask_f(mr[phys(i, cols)]);
#endif
        }
    }
}

__device__ __forceinline__ void store_step(T *yr, long long i0, long long cols, bool vec_ok, const float (&o)[VEC])
{
    if (vec_ok && i0 + VEC <= cols) {
        Packed pk;
#pragma unroll
        for (int j = 0; j < VEC; ++j) pk.v[SCAN_REVERSE ? VEC - 1 - j : j] = from_f(o[j]);
        *reinterpret_cast<Raw *>(yr + (SCAN_REVERSE ? cols - i0 - VEC : i0)) = pk.r;
        return;
    }
#pragma unroll
    for (int j = 0; j < VEC; ++j)
        if (i0 + j < cols) yr[phys(i0 + j, cols)] = from_f(o[j]);
}

extern "C" __global__ void __launch_bounds__(BLOCK) kf_cumsum(const T *__restrict__ x, const M *__restrict__ mask, T *__restrict__ y,
                                                             long long rows, long long cols)
{
    // Two sets of warp totals, alternating by step: a step's writes never meet the previous step's reads,
    // so a step needs two barriers.
    __shared__ float warp_tot[2][32];
    const long long row = blockIdx.x;
    const T *xr = x + row * cols;
    const M *mr = SCAN_MASK ? mask + row * cols : nullptr;
    T *yr = y + row * cols;
    const int lane = threadIdx.x % 32, w = threadIdx.x / 32, nw = BLOCK / 32;
    const unsigned bytes = VEC * sizeof(T);
    bool vec_ok = VEC > 1 && cols % VEC == 0 && (unsigned long long)x % bytes == 0 && (unsigned long long)y % bytes == 0;
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
        float run = IDENTITY;
#pragma unroll
        for (int j = 0; j < VEC; ++j) {
#if SCAN_EXCLUSIVE
            o[j] = run;
            run = COMBINE(run, v[j]);
#else
            run = COMBINE(run, v[j]);
            o[j] = run;
#endif
        }
#if PREFETCH
        if (base + (long long)BLOCK * VEC < cols) load_step(xr, mr, i0 + (long long)BLOCK * VEC, cols, vec_ok, v);
#endif
        float incl = run;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) { const float t = __shfl_up_sync(0xffffffffu, incl, d); if (lane >= d) incl = COMBINE(t, incl); }
        float excl = __shfl_up_sync(0xffffffffu, incl, 1);
        if (lane == 0) excl = IDENTITY;
        if (lane == 31) warp_tot[parity][w] = incl;
        __syncthreads();
        if (w == 0) {
            float t = lane < nw ? warp_tot[parity][lane] : IDENTITY;
#pragma unroll
            for (int d = 1; d < 32; d <<= 1) { const float u = __shfl_up_sync(0xffffffffu, t, d); if (lane >= d) t = COMBINE(u, t); }
            if (lane < nw) warp_tot[parity][lane] = t;
        }
        __syncthreads();
        const float before = COMBINE(COMBINE(carry, w > 0 ? warp_tot[parity][w - 1] : IDENTITY), excl);
#pragma unroll
        for (int j = 0; j < VEC; ++j) o[j] = COMBINE(before, o[j]);
        store_step(yr, i0, cols, vec_ok, o);
        carry = COMBINE(carry, warp_tot[parity][nw - 1]);
    }
}
