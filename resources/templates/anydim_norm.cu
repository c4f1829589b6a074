// Softmax (FAMILY 0), log-softmax (1), RMS norm x / sqrt(mean(x^2) + EPS) (2), L2 normalization
// x / max(||x||, EPS) (3) and L1 normalization x / mean(|x|) (4) over the middle dimension of [outer, dim, inner]. A block covers COLS = BX * VEC
// inner columns of one outer index; thread (tx, ty) takes dims ty, ty + BY, ... of its VEC columns, so a
// warp's loads are 32 * VEC consecutive elements. When dim <= CACHE * BY each thread keeps its values in
// registers and x is read once; otherwise the statistics pass is online and the output pass reads x
// again (from L2 while the block's rows are still there). The BY partial statistics meet in shared memory.
#define COLS (BX * VEC)
#define PAD (FAMILY <= 1 ? -KF_INF : 0.f)
// What the norms sum: squares, or magnitudes for L1.
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

__device__ __forceinline__ void load_cols(const T *p, bool vec_ok, long long c0, long long inner, float *f)
{
    if (vec_ok) {
        load_floats<VEC>(p, f);
    } else {
#pragma unroll
        for (int j = 0; j < VEC; ++j) f[j] = c0 + j < inner ? to_f(p[j]) : PAD;
    }
}

__device__ __forceinline__ void store_cols(T *p, bool vec_ok, long long c0, long long inner, float *f)
{
    if (vec_ok) {
        store_floats<VEC>(p, f);
    } else {
#pragma unroll
        for (int j = 0; j < VEC; ++j) if (c0 + j < inner) p[j] = from_f(f[j]);
    }
}

// The statistics of one column: softmax families (max m, sum s of exp(x - m)); the norms (0, sum of squares).
__device__ __forceinline__ void stat_merge(float &m, float &s, float m2, float s2)
{
#if FAMILY <= 1
    ms_merge(m, s, m2, s2);
#else
    s += s2;
#endif
}

__device__ __forceinline__ float finish(float v, float m, float k)
{
#if FAMILY == 0
    return kexp(v - m) * k;
#elif FAMILY == 1
    return (v - m) - k; // the max first, then log(sum), as ATen does
#else
    return v * k;
#endif
}

extern "C" __global__ void __launch_bounds__(BX * BY)
kf_norm_dim(const T *__restrict__ x, T *__restrict__ y, long long outer, long long dim, long long inner)
{
#if BY > 1
    __shared__ float shm[BY * COLS], shs[BY * COLS];
#endif
    const long long tiles = (inner + COLS - 1) / COLS;
    const long long o = blockIdx.x / tiles, tile = blockIdx.x % tiles;
    const int tx = threadIdx.x % BX, ty = threadIdx.x / BX;
    const long long c0 = tile * COLS + (long long)tx * VEC;
    const long long base = o * dim * inner + c0;
    const bool vec_ok = VEC > 1 && inner % VEC == 0 && aligned_to(x, VEC * sizeof(T)) && aligned_to(y, VEC * sizeof(T)) && c0 + VEC <= inner;
    const bool live = c0 < inner;
    float m[VEC], s[VEC];
#pragma unroll
    for (int j = 0; j < VEC; ++j) { m[j] = -KF_INF; s[j] = 0.f; }
#if CACHE > 0
    float c[CACHE][VEC];
    const bool cached = dim <= (long long)CACHE * BY;
    if (cached) {
#pragma unroll
        for (int k = 0; k < CACHE; ++k) {
            const long long d = ty + (long long)k * BY;
            if (live && d < dim) load_cols(x + base + d * inner, vec_ok, c0, inner, c[k]);
            else
#pragma unroll
                for (int j = 0; j < VEC; ++j) c[k][j] = PAD;
        }
#pragma unroll
        for (int k = 0; k < CACHE; ++k)
#pragma unroll
            for (int j = 0; j < VEC; ++j) {
#if FAMILY <= 1
                m[j] = fmaxf(m[j], c[k][j]);
#else
                s[j] += TERM(c[k][j]);
#endif
            }
#if FAMILY <= 1
#pragma unroll
        for (int k = 0; k < CACHE; ++k)
#pragma unroll
            for (int j = 0; j < VEC; ++j) s[j] += m[j] == -KF_INF ? 0.f : kexp(c[k][j] - m[j]);
#endif
    } else
#endif
    if (live) {
        for (long long d = ty; d < dim; d += BY) {
            float f[VEC];
            load_cols(x + base + d * inner, vec_ok, c0, inner, f);
#pragma unroll
            for (int j = 0; j < VEC; ++j) {
#if FAMILY <= 1
                ms_merge(m[j], s[j], f[j], 1.f);
#else
                s[j] += TERM(f[j]);
#endif
            }
        }
    }
#if BY > 1
#pragma unroll
    for (int j = 0; j < VEC; ++j) { shm[ty * COLS + tx * VEC + j] = m[j]; shs[ty * COLS + tx * VEC + j] = s[j]; }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
        m[j] = -KF_INF;
        s[j] = 0.f;
        for (int k = 0; k < BY; ++k) stat_merge(m[j], s[j], shm[k * COLS + tx * VEC + j], shs[k * COLS + tx * VEC + j]);
    }
#endif
    if (!live) return;
    float kk[VEC];
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
#if FAMILY == 0
        kk[j] = 1.f / s[j];
#elif FAMILY == 1
        kk[j] = logf(s[j]);
#elif FAMILY == 2
        kk[j] = 1.f / sqrtf(s[j] / (float)dim + EPS);
#elif FAMILY == 3
        kk[j] = 1.f / fmaxf(sqrtf(s[j]), EPS);
#else
        kk[j] = (float)dim / s[j];
#endif
    }
#if CACHE > 0
    if (cached) {
#pragma unroll
        for (int k = 0; k < CACHE; ++k) {
            const long long d = ty + (long long)k * BY;
            if (d >= dim) break;
            float f[VEC];
#pragma unroll
            for (int j = 0; j < VEC; ++j) f[j] = finish(c[k][j], m[j], kk[j]);
            store_cols(y + base + d * inner, vec_ok, c0, inner, f);
        }
        return;
    }
#endif
    for (long long d = ty; d < dim; d += BY) {
        float f[VEC];
        load_cols(x + base + d * inner, vec_ok, c0, inner, f);
#pragma unroll
        for (int j = 0; j < VEC; ++j) f[j] = finish(f[j], m[j], kk[j]);
        store_cols(y + base + d * inner, vec_ok, c0, inner, f);
    }
}
