// cuda.rotary_embedding.rows: Llama's rotary embedding of a projection viewed as [b, s, h, D], contiguous,
// written as [b, h, s, D] (the transpose the model makes before it):
//   y[j]        = x[j] cos[j] - x[j + HALF] sin[j]
//   y[j + HALF] = x[j + HALF] cos[j + HALF] + x[j] sin[j + HALF]          (rotate_half = cat(-x2, x1))
// HALF = D / 2 is the card's, compiled in (the pack's guard checks each call's). A thread takes VEC elements
// of a row's first half and the VEC they pair with, so every element of x is read once and every element of
// y written once; cos and sin, [s, D] shared by the batch or with TABLE_BATCH [b, 1, s, D] one per
// sequence, are shared by the heads and stay in cache. Consecutive
// threads walk x in memory order (a row's packs, then the next head's row). Misaligned pointers take
// element loads.
#define D (2 * HALF)

__device__ __forceinline__ void rotary_load(const T *p, float *o, bool vec_ok)
{
    if (vec_ok) {
        load_floats<VEC>(p, o);
    } else {
#pragma unroll
        for (int k = 0; k < VEC; ++k) o[k] = to_f(p[k]);
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK)
kf_rotary(const T *__restrict__ x, const T *__restrict__ cs, const T *__restrict__ sn, T *__restrict__ y, long long b, long long s, long long h)
{
    constexpr int TPR = HALF / VEC; // threads per row of x
    const long long g = (long long)blockIdx.x * BLOCK + threadIdx.x;
    if (g >= b * s * h * TPR)
        return;
    const long long r = g / TPR; // = (bi * s + si) * h + hi
    const int j = (int)(g - r * TPR) * VEC;
    const long long hi = r % h, bs = r / h, si = bs % s, bi = bs / s;
    const bool vec_ok = aligned_to(x, VEC * sizeof(T)) && aligned_to(cs, VEC * sizeof(T)) && aligned_to(sn, VEC * sizeof(T))
                        && aligned_to(y, VEC * sizeof(T));
    const long long trow = TABLE_BATCH ? bi * s + si : si;
    const T *xr = x + r * D + j, *cr = cs + trow * D + j, *sr = sn + trow * D + j;
    T *yr = y + ((bi * h + hi) * s + si) * D + j;
    float x1[VEC], x2[VEC], c1[VEC], c2[VEC], s1[VEC], s2[VEC];
    rotary_load(xr, x1, vec_ok);
    rotary_load(xr + HALF, x2, vec_ok);
    rotary_load(cr, c1, vec_ok);
    rotary_load(cr + HALF, c2, vec_ok);
    rotary_load(sr, s1, vec_ok);
    rotary_load(sr + HALF, s2, vec_ok);
    float y1[VEC], y2[VEC];
#pragma unroll
    for (int k = 0; k < VEC; ++k) {
        y1[k] = x1[k] * c1[k] - x2[k] * s1[k];
        y2[k] = x2[k] * c2[k] + x1[k] * s2[k];
    }
    if (vec_ok) {
        store_floats<VEC>(yr, y1);
        store_floats<VEC>(yr + HALF, y2);
    } else {
#pragma unroll
        for (int k = 0; k < VEC; ++k) {
            yr[k] = from_f(y1[k]);
            yr[HALF + k] = from_f(y2[k]);
        }
    }
}
