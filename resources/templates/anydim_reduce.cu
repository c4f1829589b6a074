// A reduction over the middle dimension of [outer, dim, inner]: OP 0 sum, 1 mean, 2 max, 3 min,
// 4 argmax, 5 argmin, 6 prod. A block covers COLS = BX * VEC consecutive inner columns of one outer
// index; thread (tx, ty) keeps VEC accumulators for its columns and walks dim from ty in steps of BY, so
// a warp's loads are 32 * VEC consecutive elements of one row of dim. The BY partials meet in shared
// memory. With SPLIT > 1, grid.y cuts dim into SPLIT ranges that post partials to the workspace, and a
// second kernel combines them in range order. max and min propagate NaN; argmax and argmin keep the
// first index of the extreme, a NaN counting as the extreme, as ATen does.
#define COLS (BX * VEC)
#define ARG (OP == 4 || OP == 5)
#if ARG
typedef long long OUT_T;
#else
typedef T OUT_T;
#endif

__device__ __forceinline__ float identity()
{
#if OP == 0 || OP == 1
    return 0.f;
#elif OP == 6
    return 1.f;
#elif OP == 2 || OP == 4
    return -KF_INF;
#else
    return KF_INF;
#endif
}

// Folds (v2, i2) into (v, i). Sums and products in the order given; extremes keep NaN; arg ops break
// ties (and NaN against NaN) by the smaller index, so the order of partials does not matter.
__device__ __forceinline__ void fold(float &v, long long &i, float v2, long long i2)
{
#if OP == 0 || OP == 1
    v += v2;
#elif OP == 6
    v *= v2;
#elif OP == 2
    v = (v2 > v || v2 != v2) ? v2 : v;
#elif OP == 3
    v = (v2 < v || v2 != v2) ? v2 : v;
#else
#if OP == 4
    const bool better = v2 > v;
#else
    const bool better = v2 < v;
#endif
    const bool take = better || (v2 != v2 && v == v) || (v2 == v && i2 < i) || (v != v && v2 != v2 && i2 < i);
    if (take) { v = v2; i = i2; }
#endif
}

__device__ __forceinline__ void put(OUT_T *y, long long at, float v, long long i, long long dim)
{
#if ARG
    y[at] = i;
#elif OP == 1
    y[at] = from_f(v / (float)dim);
#else
    y[at] = from_f(v);
#endif
}

// VEC columns of one row of dim; columns past inner read as the identity (never written out).
__device__ __forceinline__ void load_cols(const T *p, bool vec_ok, long long c0, long long inner, float *f)
{
    if (vec_ok) {
        load_floats<VEC>(p, f);
    } else {
#pragma unroll
        for (int j = 0; j < VEC; ++j) f[j] = c0 + j < inner ? to_f(p[j]) : identity();
    }
}

extern "C" __global__ void __launch_bounds__(BX * BY)
kf_reduce_dim(const T *__restrict__ x, OUT_T *__restrict__ y, float *__restrict__ wsv, long long *__restrict__ wsi,
              long long outer, long long dim, long long inner)
{
#if BY > 1
    __shared__ float sv[BY * COLS];
#if ARG
    __shared__ long long si[BY * COLS];
#endif
#endif
    const long long tiles = (inner + COLS - 1) / COLS;
    const long long o = blockIdx.x / tiles, tile = blockIdx.x % tiles;
    const int tx = threadIdx.x % BX, ty = threadIdx.x / BX;
    const long long c0 = tile * COLS + (long long)tx * VEC;
    const long long per = (dim + SPLIT - 1) / SPLIT;
    const long long d0 = (long long)blockIdx.y * per, d1 = d0 + per < dim ? d0 + per : dim;
    const T *xo = x + o * dim * inner;
    const bool vec_ok = VEC > 1 && inner % VEC == 0 && aligned_to(x, VEC * sizeof(T)) && c0 + VEC <= inner;
    float v[VEC];
    long long idx[VEC];
#pragma unroll
    for (int j = 0; j < VEC; ++j) { v[j] = identity(); idx[j] = 0x7fffffffffffffffLL; }
    // UNROLL rows of dim loaded before any is folded, so each thread keeps that many loads in flight.
    long long d = d0 + ty;
    for (; d + (long long)(UNROLL - 1) * BY < d1; d += (long long)UNROLL * BY) {
        float f[UNROLL][VEC];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) load_cols(xo + (d + (long long)u * BY) * inner + c0, vec_ok, c0, inner, f[u]);
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
#pragma unroll
            for (int j = 0; j < VEC; ++j) fold(v[j], idx[j], f[u][j], d + (long long)u * BY);
    }
    for (; d < d1; d += BY) {
        float f[VEC];
        load_cols(xo + d * inner + c0, vec_ok, c0, inner, f);
#pragma unroll
        for (int j = 0; j < VEC; ++j) fold(v[j], idx[j], f[j], d);
    }
#if BY > 1
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
        sv[ty * COLS + tx * VEC + j] = v[j];
#if ARG
        si[ty * COLS + tx * VEC + j] = idx[j];
#endif
    }
    __syncthreads();
    if (ty != 0) return;
    for (int k = 1; k < BY; ++k)
#pragma unroll
        for (int j = 0; j < VEC; ++j) {
#if ARG
            fold(v[j], idx[j], sv[k * COLS + tx * VEC + j], si[k * COLS + tx * VEC + j]);
#else
            fold(v[j], idx[j], sv[k * COLS + tx * VEC + j], 0);
#endif
        }
#endif
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
        const long long c = c0 + j;
        if (c >= inner) continue;
#if SPLIT > 1
        const long long at = ((long long)blockIdx.y * outer + o) * inner + c;
        wsv[at] = v[j];
#if ARG
        wsi[at] = idx[j];
#endif
#else
        put(y, o * inner + c, v[j], idx[j], dim);
#endif
    }
}

// The SPLIT partials of each output, folded in range order (one thread per output).
extern "C" __global__ void __launch_bounds__(256)
kf_reduce_dim_combine(const float *__restrict__ wsv, const long long *__restrict__ wsi, OUT_T *__restrict__ y,
                      long long outer, long long dim, long long inner)
{
    const long long n = outer * inner;
    const long long at = (long long)blockIdx.x * 256 + threadIdx.x;
    if (at >= n) return;
    float v = wsv[at];
    long long i = ARG ? wsi[at] : 0;
    for (int s = 1; s < SPLIT; ++s) fold(v, i, wsv[s * n + at], ARG ? wsi[s * n + at] : 0);
    put(y, at, v, i, dim);
}
