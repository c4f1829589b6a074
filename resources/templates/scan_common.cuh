// What every scan kernel shares (core/ops/scan_ops.h): SCAN_PROD combines by multiplication (else
// addition), SCAN_REVERSE runs from the row's end, SCAN_EXCLUSIVE gives element i the combine of the
// elements before it, SCAN_MASK multiplies a second input in first (1: one byte per element, a bool
// mask; 2: the storage type T). Rows whose length is a multiple of VEC on aligned buffers move as
// VEC-element packs; reversed rows read each pack back to front. Needs T, VEC, BLOCK and Packed.
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

// This thread's VEC elements scanned in order into o (inclusive or exclusive), their combine returned.
__device__ __forceinline__ float thread_scan(const float (&v)[VEC], float (&o)[VEC])
{
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
    return run;
}

// The combine of the totals of the threads before this one in the block, and the block's total: warp
// shuffles, then one warp over the warp totals. Two barriers; `tot` is one of two alternating sets of
// warp totals, so a caller's next step never writes the set this one still reads.
__device__ __forceinline__ float block_exclusive(float run, float *tot, float &total)
{
    const int lane = threadIdx.x % 32, w = threadIdx.x / 32, nw = BLOCK / 32;
    float incl = run;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) { const float t = __shfl_up_sync(0xffffffffu, incl, d); if (lane >= d) incl = COMBINE(t, incl); }
    float excl = __shfl_up_sync(0xffffffffu, incl, 1);
    if (lane == 0) excl = IDENTITY;
    if (lane == 31) tot[w] = incl;
    __syncthreads();
    if (w == 0) {
        float t = lane < nw ? tot[lane] : IDENTITY;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) { const float u = __shfl_up_sync(0xffffffffu, t, d); if (lane >= d) t = COMBINE(u, t); }
        if (lane < nw) tot[lane] = t;
    }
    __syncthreads();
    total = tot[nw - 1];
    return COMBINE(w > 0 ? tot[w - 1] : IDENTITY, excl);
}

// Packs when the row allows them: its length a multiple of VEC and x and y aligned to a pack.
__device__ __forceinline__ bool packs_fit(const void *x, const void *y, long long cols)
{
    const unsigned bytes = VEC * sizeof(T);
    return VEC > 1 && cols % VEC == 0 && (unsigned long long)x % bytes == 0 && (unsigned long long)y % bytes == 0;
}
