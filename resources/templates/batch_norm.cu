// Batch norm over [n, c, hw]: MODE 0 training without affine, 1 training with weight and bias (the
// batch's statistics per channel over n and hw, biased variance), 2 running statistics.
// kf_bn_stats: each (sample, channel) row of hw cut into PIECES chunks, a block per chunk posting
// (count, mean, M2), channel-major, so a channel's statistics come from many blocks however few channels
// there are (64 channels would otherwise be 64 blocks on 132 SMs). kf_bn_combine: a warp per channel
// merges its n * PIECES partials into (mean, rstd). kf_bn_apply: a block per chunk writes
// (x - mean) * rstd * w + b; with REVERSE it takes the chunks last read first, which L2 may still hold.

extern "C" __global__ void __launch_bounds__(BLOCK)
kf_bn_stats(const T *__restrict__ x, float *__restrict__ part, long long n, long long c, long long hw)
{
    const long long row = blockIdx.x / PIECES, piece = blockIdx.x % PIECES; // row = sample * c + channel
    const long long s = (unsigned)row / (unsigned)c, ch = (unsigned)row % (unsigned)c; // 32-bit: the grid's rows fit
    long long lo, hi;
    chunk_range(hw, piece, PIECES, lo, hi);
    const bool vec_ok = VEC > 1 && hw % VEC == 0 && aligned_to(x, VEC * sizeof(T));
    float N, M, Q;
    block_stats(x + row * hw, lo, hi, vec_ok, N, M, Q);
    if (threadIdx.x == 0) {
        float *o = part + ((ch * n + s) * PIECES + piece) * 3;
        o[0] = N; o[1] = M; o[2] = Q;
    }
}

extern "C" __global__ void __launch_bounds__(32)
kf_bn_combine(const float *__restrict__ part, float *__restrict__ stats, long long n)
{
    const long long ch = blockIdx.x;
    double N, M, Q;
    warp_merge(part + ch * n * PIECES * 3, n * PIECES, 1, N, M, Q);
    if (threadIdx.x == 0) {
        stats[2 * ch] = (float)M;
        stats[2 * ch + 1] = (float)rsqrt(Q * rcp(N) + (double)EPS);
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK)
kf_bn_apply(const T *__restrict__ x, const float *__restrict__ stats, const T *__restrict__ w, const T *__restrict__ b,
            const T *__restrict__ rmean, const T *__restrict__ rvar, T *__restrict__ y, long long n, long long c, long long hw)
{
    const unsigned blk = REVERSE ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
    const long long row = blk / PIECES, piece = blk % PIECES, ch = (unsigned)row % (unsigned)c;
#if MODE == 2
    const float mean = to_f(rmean[ch]), rstd = rsqrtf(to_f(rvar[ch]) + EPS);
#else
    const float mean = stats[2 * ch], rstd = stats[2 * ch + 1];
#endif
#if MODE == 0
    const float a = rstd, sh = 0.f;
#else
    const float a = rstd * to_f(w[ch]), sh = to_f(b[ch]);
#endif
    long long lo, hi;
    chunk_range(hw, piece, PIECES, lo, hi);
    const T *xr = x + row * hw;
    T *yr = y + row * hw;
    const bool vec_ok = VEC > 1 && hw % VEC == 0 && aligned_to(x, VEC * sizeof(T)) && aligned_to(y, VEC * sizeof(T));
    if (vec_ok) {
#pragma unroll 4
        for (long long i = lo + (long long)threadIdx.x * VEC; i < hi; i += (long long)BLOCK * VEC) {
            float f[VEC];
            load_floats<VEC>(xr + i, f);
#pragma unroll
            for (int j = 0; j < VEC; ++j) f[j] = (f[j] - mean) * a + sh;
            store_floats<VEC>(yr + i, f);
        }
    } else {
        for (long long i = lo + threadIdx.x; i < hi; i += BLOCK) yr[i] = from_f((to_f(xr[i]) - mean) * a + sh);
    }
}
