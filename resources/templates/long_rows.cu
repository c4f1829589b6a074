// Layer norm (FAMILY 2), RMS norm (FAMILY 3) and group norm (FAMILY 4, a row being a (sample, group)'s
// c / groups * hw contiguous elements, weights per channel) over few long rows: a row of cols cut into
// SPLIT chunks, a block per chunk. kf_long_stats posts each chunk's (count, mean, M2); the apply kernel
// merges its row's SPLIT partials in one warp, in double and in chunk order (every block of a row gets
// the same bits), then writes its chunk. RMS norm's mean square is M2 / count + mean^2, a sum of non-negative terms.
// Blocks go chunk-major (block b is chunk b / rows of row b % rows), so the blocks in flight share one
// chunk of the weights, read from memory once for every row; with REVERSE the apply takes the chunks last
// read first, which L2 may still hold.

extern "C" __global__ void __launch_bounds__(BLOCK)
kf_long_stats(const T *__restrict__ x, float *__restrict__ part, long long rows, long long cols)
{
    // 32-bit: the grid's rows * SPLIT blocks fit, and a 64-bit division is a called routine.
    const long long row = blockIdx.x % (unsigned)rows, p = blockIdx.x / (unsigned)rows;
    long long lo, hi;
    chunk_range(cols, p, SPLIT, lo, hi);
    const bool vec_ok = VEC > 1 && cols % VEC == 0 && aligned_to(x, VEC * sizeof(T));
    float N, M, Q;
    block_stats(x + row * cols, lo, hi, vec_ok, N, M, Q);
    if (threadIdx.x == 0) {
        float *o = part + (row * SPLIT + p) * 3;
        o[0] = N; o[1] = M; o[2] = Q;
    }
}

// The row's mean and rstd, merged by warp 0 from its SPLIT partials and shared with the block.
__device__ __forceinline__ void row_stats(const float *__restrict__ part, long long row, float &mean, float &rstd)
{
    __shared__ float s_mean, s_rstd;
    if (threadIdx.x < 32) {
        double N, M, Q;
        warp_merge(part + row * SPLIT * 3, SPLIT, 1, N, M, Q);
        if (threadIdx.x == 0) {
#if FAMILY == 3
            s_mean = 0.f;
            s_rstd = (float)rsqrt(Q * rcp(N) + M * M + (double)EPS);
#else
            s_mean = (float)M;
            s_rstd = (float)rsqrt(Q * rcp(N) + (double)EPS);
#endif
        }
    }
    __syncthreads();
    mean = s_mean;
    rstd = s_rstd;
}

#if FAMILY == 4
// A chunk of a (sample, group) row walks the channels it overlaps, each with its own scale and shift.
extern "C" __global__ void __launch_bounds__(BLOCK)
kf_long_group_apply(const T *__restrict__ x, const float *__restrict__ part, const T *__restrict__ w, const T *__restrict__ b,
                    T *__restrict__ y, long long rows, long long cols, long long hw, long long cpg, long long groups)
{
    const unsigned blk = REVERSE ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
    const long long row = blk % (unsigned)rows, p = blk / (unsigned)rows;
    float mean, rstd;
    row_stats(part, row, mean, rstd);
    long long lo, hi;
    chunk_range(cols, p, SPLIT, lo, hi);
    const T *xr = x + row * cols;
    T *yr = y + row * cols;
    const long long first = (long long)((unsigned)row % (unsigned)groups) * cpg; // cpg: channels per group
    const bool vec_ok = VEC > 1 && hw % VEC == 0 && aligned_to(x, VEC * sizeof(T)) && aligned_to(y, VEC * sizeof(T));
    // The chunk's first channel by stepping over the group's channels (a few dozen at most): a 64-bit
    // division is a called routine with a stack frame.
    long long ch = first, c0 = 0;
    while (c0 + hw <= lo) { c0 += hw; ++ch; }
    for (; c0 < hi; c0 += hw, ++ch) {
        const long long s0 = c0 > lo ? c0 : lo, s1 = c0 + hw < hi ? c0 + hw : hi;
        const float a = rstd * to_f(w[ch]), sh = to_f(b[ch]);
        if (vec_ok) {
            for (long long i = s0 + (long long)threadIdx.x * VEC; i < s1; i += (long long)BLOCK * VEC) {
                float f[VEC];
                load_floats<VEC>(xr + i, f);
#pragma unroll
                for (int j = 0; j < VEC; ++j) f[j] = (f[j] - mean) * a + sh;
                store_floats<VEC>(yr + i, f);
            }
        } else {
            for (long long i = s0 + threadIdx.x; i < s1; i += BLOCK) yr[i] = from_f((to_f(xr[i]) - mean) * a + sh);
        }
    }
}
#else
extern "C" __global__ void __launch_bounds__(BLOCK)
kf_long_apply(const T *__restrict__ x, const float *__restrict__ part, const T *__restrict__ w, const T *__restrict__ b,
              T *__restrict__ y, long long rows, long long cols)
{
    const unsigned blk = REVERSE ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
    const long long row = blk % (unsigned)rows, p = blk / (unsigned)rows;
    float mean, rstd;
    row_stats(part, row, mean, rstd);
    (void)mean; // RMS norm's is 0
    long long lo, hi;
    chunk_range(cols, p, SPLIT, lo, hi);
    const T *xr = x + row * cols;
    T *yr = y + row * cols;
    const bool vec_ok = VEC > 1 && cols % VEC == 0 && aligned_to(x, VEC * sizeof(T)) && aligned_to(y, VEC * sizeof(T))
                        && aligned_to(w, VEC * sizeof(T)) && aligned_to(b, VEC * sizeof(T));
    if (vec_ok) {
#pragma unroll 1 // unrolled twice, ptxas spilled RMS norm's loop at 40 registers
        for (long long i = lo + (long long)threadIdx.x * VEC; i < hi; i += (long long)BLOCK * VEC) {
            float f[VEC], g[VEC];
            load_floats<VEC>(xr + i, f);
            load_floats<VEC>(w + i, g);
#if FAMILY == 2
            float h[VEC];
            load_floats<VEC>(b + i, h);
#pragma unroll
            for (int j = 0; j < VEC; ++j) f[j] = (f[j] - mean) * rstd * g[j] + h[j];
#else
#pragma unroll
            for (int j = 0; j < VEC; ++j) f[j] = f[j] * rstd * g[j];
#endif
            store_floats<VEC>(yr + i, f);
        }
    } else {
#pragma unroll 4 // rolled, ptxas gave the float16 RMS norm a stack frame
        for (long long i = lo + threadIdx.x; i < hi; i += BLOCK) {
#if FAMILY == 2
            yr[i] = from_f((to_f(xr[i]) - mean) * rstd * to_f(w[i]) + to_f(b[i]));
#else
            yr[i] = from_f(to_f(xr[i]) * rstd * to_f(w[i]));
#endif
        }
    }
}
#endif
