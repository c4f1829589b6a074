// cuda.<pointwise family>.grid_stride: y = KF_EXPR(v) per element, v the KF_NIN inputs' values as float
// (the card's expression, defined before this file). Each thread loads ILP packs of VEC elements (a
// block's packs BLOCK apart, so every load is coalesced) before computing any: an expression of several
// transcendental calls otherwise leaves too few bytes in flight to keep memory busy. Grid-stride over
// groups of ILP packs with a capped grid; a scalar tail and misaligned pointers take the element path.
#ifndef ILP // a point stored before ILP was a parameter
#define ILP 1
#endif

__device__ __forceinline__ float kf_max(float a, float b) { return (a > b || a != a) ? a : b; } // NaN wins, as torch.maximum
__device__ __forceinline__ float kf_min(float a, float b) { return (a < b || a != a) ? a : b; }

extern "C" __global__ void __launch_bounds__(BLOCK)
kf_pointwise(const T *__restrict__ x0, const T *__restrict__ x1, const T *__restrict__ x2, const T *__restrict__ x3, T *__restrict__ y, long long n)
{
    const T *in[4] = {x0, x1, x2, x3};
    bool vec_ok = VEC > 1 && aligned_to(y, VEC * sizeof(T));
#pragma unroll
    for (int k = 0; k < KF_NIN; ++k)
        vec_ok = vec_ok && aligned_to(in[k], VEC * sizeof(T));
    const long long stride = (long long)gridDim.x * BLOCK;
    const long long body = vec_ok ? n / VEC * VEC : 0, packs = body / VEC;
    for (long long g = (long long)blockIdx.x * BLOCK * ILP + threadIdx.x; g < packs; g += stride * ILP) {
        Pack<VEC> packed[ILP][KF_NIN];
#pragma unroll
        for (int u = 0; u < ILP; ++u)
            if (g + u * BLOCK < packs) {
#pragma unroll
                for (int k = 0; k < KF_NIN; ++k)
                    packed[u][k] = *reinterpret_cast<const Pack<VEC> *>(in[k] + (g + u * BLOCK) * VEC);
            }
#pragma unroll
        for (int u = 0; u < ILP; ++u)
            if (g + u * BLOCK < packs) { // no break: the loop stays unrolled and the packs in registers
                Pack<VEC> out;
#pragma unroll
                for (int j = 0; j < VEC; ++j) {
                    float v[KF_NIN];
#pragma unroll
                    for (int k = 0; k < KF_NIN; ++k)
                        v[k] = to_f(packed[u][k].v[j]);
                    out.v[j] = from_f(KF_EXPR(v));
                }
                *reinterpret_cast<Pack<VEC> *>(y + (g + u * BLOCK) * VEC) = out;
            }
    }
    for (long long i = body + (long long)blockIdx.x * BLOCK + threadIdx.x; i < n; i += stride) {
        float v[KF_NIN];
#pragma unroll
        for (int k = 0; k < KF_NIN; ++k)
            v[k] = to_f(in[k][i]);
        y[i] = from_f(KF_EXPR(v));
    }
}
