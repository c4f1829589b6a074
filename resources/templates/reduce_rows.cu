#define WARPS (TPR / 32)
// Reduction of one row by TPR threads: OP 0 sum, 1 mean, 2 max (NaN wins), 3 argmax (first maximum).
__device__ __forceinline__ void combine(float &v, long long &i, float v2, long long i2)
{
#if OP <= 1
    v += v2;
#else
    const bool take = (v2 > v) || (v2 != v2 && v == v) || (v2 == v && i2 < i) || (v != v && v2 != v2 && i2 < i);
    if (take) { v = v2; i = i2; }
#endif
}

extern "C" __global__ void __launch_bounds__(TPR * RPB)
kf_reduce(const T *__restrict__ x, OUT_T *__restrict__ y, long long rows, long long cols)
{
    __shared__ float sv[RPB * WARPS];
    __shared__ long long si[RPB * WARPS];
    const int lane = threadIdx.x % TPR, sub = threadIdx.x / TPR;
    const long long row = (long long)blockIdx.x * RPB + sub;
    const long long n = row < rows ? cols : 0;
    const T *xr = x + (row < rows ? row : 0) * cols;
    const bool vec_ok = VEC > 1 && cols % VEC == 0 && aligned_to(x, VEC * sizeof(T));
    float v = OP <= 1 ? 0.f : -KF_INF;
    long long idx = 0x7fffffffffffffffLL;
    for (long long i = (long long)lane * VEC; i < n; i += (long long)TPR * VEC) {
        if (vec_ok) {
            const Pack<VEC> pk = *reinterpret_cast<const Pack<VEC> *>(xr + i);
#pragma unroll
            for (int j = 0; j < VEC; ++j) combine(v, idx, to_f(pk.v[j]), i + j);
        } else {
#pragma unroll
            for (int j = 0; j < VEC; ++j) if (i + j < n) combine(v, idx, to_f(xr[i + j]), i + j);
        }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float v2 = __shfl_xor_sync(0xffffffffu, v, o);
        const long long i2 = __shfl_xor_sync(0xffffffffu, idx, o);
        combine(v, idx, v2, i2);
    }
#if WARPS > 1
    if (threadIdx.x % 32 == 0) { sv[sub * WARPS + lane / 32] = v; si[sub * WARPS + lane / 32] = idx; }
    __syncthreads();
    if (lane == 0)
        for (int k = 1; k < WARPS; ++k) combine(v, idx, sv[sub * WARPS + k], si[sub * WARPS + k]);
#endif
    if (lane == 0 && row < rows) {
#if OP == 0
        y[row] = from_f(v);
#elif OP == 1
        y[row] = from_f(v / (float)cols);
#elif OP == 2
        y[row] = from_f(v);
#else
        y[row] = idx;
#endif
    }
}
