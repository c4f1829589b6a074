#include "proposers/templates/cuda_prelude.h"

namespace kforge {

int cudaDtypeCode(DType dtype)
{
    return dtype == DType::F16 ? 1 : dtype == DType::BF16 ? 2 : 0;
}

int cudaVecFor(const OperatorCard &card)
{
    return 16 / dtypeSize(card.inputs.front().dtype);
}

void cudaRowSeed(int64_t cols, int vec, int &tpr, int &reg)
{
    tpr = 1024;
    reg = 0;
    for (int t : {32, 64, 128, 256, 512, 1024})
        if (int64_t(t) * 32 >= cols) {
            tpr = t;
            break;
        }
    for (int r : {4, 8, 16, 32})
        if (r % vec == 0 && int64_t(tpr) * r >= cols) {
            reg = r;
            break;
        }
}

std::string cudaPrelude(DType dtype)
{
    std::string s = "#define KF_DTYPE " + std::to_string(cudaDtypeCode(dtype)) + " // 0 float32, 1 float16, 2 bfloat16\n";
    s += R"(
#if KF_DTYPE == 0
typedef float T;
__device__ __forceinline__ float to_f(T v) { return v; }
__device__ __forceinline__ T from_f(float v) { return v; }
#else
typedef unsigned short T;
#if KF_DTYPE == 1
__device__ __forceinline__ float to_f(T h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ T from_f(float f) { T h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
#else
__device__ __forceinline__ float to_f(T h) { return __uint_as_float(((unsigned)h) << 16); }
__device__ __forceinline__ T from_f(float f) { T h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
#endif
#endif

#define KF_INF __int_as_float(0x7f800000)

// N elements of T moved as one aligned load or store (16 bytes at most).
template<int N> struct __align__(sizeof(T) * N) Pack { T v[N]; };

__device__ __forceinline__ bool aligned_to(const void *p, int bytes) { return (((unsigned long long)p) % bytes) == 0; }

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float warp_max(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Merges online-softmax states (max m, sum s of exp(x - m)).
__device__ __forceinline__ void ms_merge(float &m, float &s, float m2, float s2)
{
    const float mm = fmaxf(m, m2);
    s = (m == -KF_INF ? 0.f : s * __expf(m - mm)) + (m2 == -KF_INF ? 0.f : s2 * __expf(m2 - mm));
    m = mm;
}

__device__ __forceinline__ void warp_ms(float &m, float &s)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, o), s2 = __shfl_xor_sync(0xffffffffu, s, o);
        ms_merge(m, s, m2, s2);
    }
}
)";
    return s;
}

} // namespace kforge
