// The norms over dim (FAMILY as anydim_norm.cu: 0 softmax, 1 log-softmax, 2 RMS norm, 3 L2, 4 L1) when dim is
// the last dimension (inner 1): a block of BLOCK threads per row of dim elements (per column of dim, a
// stride of inner apart, for the held-out shapes with inner > 1: correct, not fast). Each thread keeps REG
// packs of VEC elements in registers when the row fits (BLOCK * VEC * REG >= dim) and x is read once;
// otherwise the statistics stream by and the output pass reads the row again, from L2 while the block's
// row is still there (MINB blocks per SM bound how many rows are in flight).
#define PAD (FAMILY <= 1 ? -KF_INF : 0.f)
#if FAMILY == 4
#define TERM(v) fabsf(v)
#else
#define TERM(v) ((v) * (v))
#endif

__device__ __forceinline__ float kexp(float v)
{
#if FAST_EXP
    return __expf(v);
#else
    return expf(v);
#endif
}

// Elements i .. i + VEC - 1 of a row whose elements lie `step` apart (1 when inner is 1).
__device__ __forceinline__ void load_pack(const T *row, long long i, long long n, long long step, bool vec_ok, float *f)
{
    if (vec_ok && i + VEC <= n) {
        load_floats<VEC>(row + i, f);
    } else {
#pragma unroll
        for (int j = 0; j < VEC; ++j) f[j] = i + j < n ? to_f(row[(i + j) * step]) : PAD;
    }
}

__device__ __forceinline__ void store_pack(T *row, long long i, long long n, long long step, bool vec_ok, const float *f)
{
    if (vec_ok && i + VEC <= n) {
        store_floats<VEC>(row + i, f);
    } else {
#pragma unroll
        for (int j = 0; j < VEC; ++j) if (i + j < n) row[(i + j) * step] = from_f(f[j]);
    }
}

__device__ __forceinline__ void accumulate(float &m, float &s, float v)
{
#if FAMILY <= 1
    ms_merge(m, s, v, 1.f);
#else
    s += TERM(v);
#endif
}

__device__ __forceinline__ float finish(float v, float m, float k)
{
#if FAMILY == 0
    return kexp(v - m) * k;
#elif FAMILY == 1
    return (v - m) - k;
#else
    return v * k;
#endif
}

extern "C" __global__ void __launch_bounds__(BLOCK, MINB)
kf_norm_rows(const T *__restrict__ x, T *__restrict__ y, long long outer, long long dim, long long inner)
{
    __shared__ float shm[BLOCK / 32], shs[BLOCK / 32];
    const long long o = blockIdx.x / inner, col = blockIdx.x % inner;
    const T *xr = x + o * dim * inner + col;
    T *yr = y + o * dim * inner + col;
    const bool vec_ok = VEC > 1 && inner == 1 && dim % VEC == 0 && aligned_to(x, VEC * sizeof(T)) && aligned_to(y, VEC * sizeof(T));
    const long long stride = (long long)BLOCK * VEC;
    const long long first = (long long)threadIdx.x * VEC;
    float m = -KF_INF, s = 0.f;
#if REG > 0
    float c[REG][VEC];
    const bool cached = dim <= stride * REG;
    if (cached) {
#pragma unroll
        for (int k = 0; k < REG; ++k) load_pack(xr, first + k * stride, dim, inner, vec_ok, c[k]);
#if FAMILY <= 1
#pragma unroll
        for (int k = 0; k < REG; ++k)
#pragma unroll
            for (int j = 0; j < VEC; ++j) m = fmaxf(m, c[k][j]);
#pragma unroll
        for (int k = 0; k < REG; ++k)
#pragma unroll
            for (int j = 0; j < VEC; ++j) s += m == -KF_INF ? 0.f : kexp(c[k][j] - m);
#else
#pragma unroll
        for (int k = 0; k < REG; ++k)
#pragma unroll
            for (int j = 0; j < VEC; ++j) s += TERM(c[k][j]);
#endif
    } else
#endif
    {
        for (long long i = first; i < dim; i += stride) {
            float f[VEC];
            load_pack(xr, i, dim, inner, vec_ok, f);
#pragma unroll
            for (int j = 0; j < VEC; ++j) accumulate(m, s, f[j]);
        }
    }
    // The block's statistics: warps by shuffles, then the warps' partials through shared memory.
#if FAMILY <= 1
    warp_ms(m, s);
#else
    s = warp_sum(s);
#endif
    if (threadIdx.x % 32 == 0) { shm[threadIdx.x / 32] = m; shs[threadIdx.x / 32] = s; }
    __syncthreads();
    m = -KF_INF;
    s = 0.f;
    for (int w = 0; w < BLOCK / 32; ++w) {
#if FAMILY <= 1
        ms_merge(m, s, shm[w], shs[w]);
#else
        s += shs[w];
#endif
    }
#if FAMILY == 0
    const float k = 1.f / s;
#elif FAMILY == 1
    const float k = logf(s);
#elif FAMILY == 2
    const float k = 1.f / sqrtf(s / (float)dim + EPS);
#elif FAMILY == 3
    const float k = 1.f / fmaxf(sqrtf(s), EPS);
#else
    const float k = (float)dim / s;
#endif
#if REG > 0
    if (cached) {
#pragma unroll
        for (int k2 = 0; k2 < REG; ++k2) {
            float f[VEC];
#pragma unroll
            for (int j = 0; j < VEC; ++j) f[j] = finish(c[k2][j], m, k);
            if (first + k2 * stride < dim) store_pack(yr, first + k2 * stride, dim, inner, vec_ok, f);
        }
        return;
    }
#endif
    for (long long i = first; i < dim; i += stride) {
        float f[VEC];
        load_pack(xr, i, dim, inner, vec_ok, f);
#pragma unroll
        for (int j = 0; j < VEC; ++j) f[j] = finish(f[j], m, k);
        store_pack(yr, i, dim, inner, vec_ok, f);
    }
}
