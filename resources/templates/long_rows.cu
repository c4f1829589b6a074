// Layer norm (FAMILY 2) and RMS norm (FAMILY 3) over few long rows: a row of cols cut into SPLIT chunks,
// a block per chunk. kf_long_stats posts each chunk's (count, mean, M2); kf_long_apply merges its row's
// SPLIT partials in one warp, in double and in chunk order (every block of a row gets the same bits),
// then writes its chunk. RMS norm's mean square is M2 / count + mean^2, a sum of non-negative terms.
// With REVERSE the apply takes the chunks last read first, which L2 may still hold.

extern "C" __global__ void __launch_bounds__(BLOCK)
kf_long_stats(const T *__restrict__ x, float *__restrict__ part, long long rows, long long cols)
{
    const long long row = blockIdx.x / SPLIT, p = blockIdx.x % SPLIT;
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

extern "C" __global__ void __launch_bounds__(BLOCK)
kf_long_apply(const T *__restrict__ x, const float *__restrict__ part, const T *__restrict__ w, const T *__restrict__ b,
              T *__restrict__ y, long long rows, long long cols)
{
    __shared__ float s_mean, s_rstd;
    const long long blk = REVERSE ? (long long)gridDim.x - 1 - blockIdx.x : blockIdx.x;
    const long long row = blk / SPLIT, p = blk % SPLIT;
    if (threadIdx.x < 32) {
        double N, M, Q;
        warp_merge(part + row * SPLIT * 3, SPLIT, 1, N, M, Q);
        if (threadIdx.x == 0) {
#if FAMILY == 2
            s_mean = (float)M;
            s_rstd = (float)rsqrt(Q / N + (double)EPS);
#else
            s_mean = 0.f;
            s_rstd = (float)rsqrt(Q / N + M * M + (double)EPS);
#endif
        }
    }
    __syncthreads();
    const float mean = s_mean, rstd = s_rstd;
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
        for (long long i = lo + threadIdx.x; i < hi; i += BLOCK) {
#if FAMILY == 2
            yr[i] = from_f((to_f(xr[i]) - mean) * rstd * to_f(w[i]) + to_f(b[i]));
#else
            yr[i] = from_f(to_f(xr[i]) * rstd * to_f(w[i]));
#endif
        }
    }
}
