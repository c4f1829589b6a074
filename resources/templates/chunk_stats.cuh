// Statistics of contiguous segments for the split normalizations (batch norm, long rows). A chunk's
// sums are shifted by its first value, so a mean far from zero does not cancel the variance away;
// partials (count, mean, M2) merge by Chan et al.'s pairwise formula, in float within a block and in
// double across blocks, whose counts may pass 2^24. Needs BLOCK (threads per block) and VEC.

// Reciprocals without IEEE division, whose slow path is a called routine (a stack frame in every kernel
// that merges): float's approximate one, and double's refined from float's by two Newton steps.
__device__ __forceinline__ float rcp(float x) { return __fdividef(1.f, x); }
__device__ __forceinline__ double rcp(double x)
{
    double r = (double)__fdividef(1.f, (float)x);
    r = fma(r, fma(-x, r, 1.0), r);
    return fma(r, fma(-x, r, 1.0), r);
}

template<typename F> __device__ __forceinline__ void chan(F &n, F &mean, F &m2, F nb, F mb, F qb)
{
    if (nb == F(0)) return;
    const F nn = n + nb, d = mb - mean, w = nb * rcp(nn);
    mean += d * w;
    m2 += qb + d * d * n * w;
    n = nn;
}

// Chunk `part` of `parts` of a len-element segment, in whole VEC packs, so a chunk starts aligned when
// the segment does.
__device__ __forceinline__ void chunk_range(long long len, long long part, long long parts, long long &lo, long long &hi)
{
    const long long per = ((len + parts - 1) / parts + VEC - 1) / VEC * VEC;
    lo = part * per;
    hi = lo + per < len ? lo + per : len;
    if (lo > len) lo = len;
}

// (count, mean, M2) of x[lo, hi) over the block, in thread 0. VEC-wide loads when vec_ok (x + lo and
// hi - lo whole packs).
__device__ __forceinline__ void block_stats(const T *__restrict__ x, long long lo, long long hi, bool vec_ok, float &N, float &M, float &Q)
{
    __shared__ float sn[32], sm[32], sq[32];
    // Every thread shifts by the chunk's first value.
    const float shift = lo < hi ? to_f(x[lo]) : 0.f;
    float s1 = 0.f, s2 = 0.f, cnt = 0.f;
    if (vec_ok) {
#pragma unroll 4
        for (long long i = lo + (long long)threadIdx.x * VEC; i < hi; i += (long long)BLOCK * VEC) {
            float f[VEC];
            load_floats<VEC>(x + i, f);
#pragma unroll
            for (int j = 0; j < VEC; ++j) { const float d = f[j] - shift; s1 += d; s2 += d * d; }
            cnt += (float)VEC;
        }
    } else {
#pragma unroll 4
        for (long long i = lo + threadIdx.x; i < hi; i += BLOCK) {
            const float d = to_f(x[i]) - shift;
            s1 += d; s2 += d * d; cnt += 1.f;
        }
    }
    const float inv = cnt > 0.f ? rcp(cnt) : 0.f;
    float n = cnt, mean = shift + s1 * inv, m2 = fmaxf(s2 - s1 * s1 * inv, 0.f);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        chan(n, mean, m2, __shfl_xor_sync(0xffffffffu, n, o), __shfl_xor_sync(0xffffffffu, mean, o), __shfl_xor_sync(0xffffffffu, m2, o));
    if (threadIdx.x % 32 == 0) { sn[threadIdx.x / 32] = n; sm[threadIdx.x / 32] = mean; sq[threadIdx.x / 32] = m2; }
    __syncthreads();
    N = 0.f; M = 0.f; Q = 0.f;
    if (threadIdx.x == 0)
        for (int w = 0; w < BLOCK / 32; ++w) chan(N, M, Q, sn[w], sm[w], sq[w]);
}

// Merges `count` partials (count, mean, M2 as 3 floats each, stride `stride` partials apart) in double,
// by one full warp: lane l takes partials l, l + 32, ... in order, then the lanes merge pairwise. Every
// block that merges the same partials gets the same bits; lane 0 holds the result.
__device__ __forceinline__ void warp_merge(const float *__restrict__ part, long long count, long long stride, double &N, double &M, double &Q)
{
    const int lane = threadIdx.x % 32;
    N = 0.0; M = 0.0; Q = 0.0;
    for (long long k = lane; k < count; k += 32) {
        const float *p = part + k * stride * 3;
        chan(N, M, Q, (double)p[0], (double)p[1], (double)p[2]);
    }
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const double n2 = __shfl_down_sync(0xffffffffu, N, o), m2 = __shfl_down_sync(0xffffffffu, M, o), q2 = __shfl_down_sync(0xffffffffu, Q, o);
        if (lane % (2 * o) == 0) chan(N, M, Q, n2, m2, q2);
    }
}
