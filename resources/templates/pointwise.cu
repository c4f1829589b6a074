// cuda.<pointwise family>.grid_stride: y = KF_EXPR(v) per element, v the KF_NIN inputs' values as float
// (the card's expression, defined before this file). Grid-stride over VEC-element packs with a capped
// grid; a scalar tail and misaligned pointers take the element path.
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
    const long long body = vec_ok ? n / VEC * VEC : 0;
    for (long long p = (long long)blockIdx.x * BLOCK + threadIdx.x; p * VEC < body; p += stride) {
        const long long i = p * VEC;
        Pack<VEC> packs[KF_NIN];
#pragma unroll
        for (int k = 0; k < KF_NIN; ++k)
            packs[k] = *reinterpret_cast<const Pack<VEC> *>(in[k] + i);
        Pack<VEC> out;
#pragma unroll
        for (int j = 0; j < VEC; ++j) {
            float v[KF_NIN];
#pragma unroll
            for (int k = 0; k < KF_NIN; ++k)
                v[k] = to_f(packs[k].v[j]);
            out.v[j] = from_f(KF_EXPR(v));
        }
        *reinterpret_cast<Pack<VEC> *>(y + i) = out;
    }
    for (long long i = body + (long long)blockIdx.x * BLOCK + threadIdx.x; i < n; i += stride) {
        float v[KF_NIN];
#pragma unroll
        for (int k = 0; k < KF_NIN; ++k)
            v[k] = to_f(in[k][i]);
        y[i] = from_f(KF_EXPR(v));
    }
}
