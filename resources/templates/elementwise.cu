// cuda.<activation>.grid_stride: grid-stride elementwise kernel, VEC-element packs, OP picks the function.
__device__ __forceinline__ float act(float v, float r)
{
#if OP == 0
    return 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
#elif OP == 1
    return 0.5f * v * (1.f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v)));
#elif OP == 2
    return v / (1.f + __expf(-v));
#elif OP == 3
    return (v > 0.f || v != v) ? v : 0.f;
#else
    v += r;
    return 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
#endif
}

// Grid-stride over all elements, VEC per pack; the scalar tail and misaligned pointers take the
// element path.
extern "C" __global__ void __launch_bounds__(BLOCK)
kf_eltwise(const T *__restrict__ x, const T *__restrict__ res, T *__restrict__ y, long long rows, long long cols)
{
    const long long n = rows * cols;
    const bool vec_ok = VEC > 1 && aligned_to(x, VEC * sizeof(T)) && aligned_to(y, VEC * sizeof(T)) && aligned_to(res, VEC * sizeof(T));
    const long long stride = (long long)gridDim.x * BLOCK;
    const long long body = vec_ok ? n / VEC * VEC : 0;
    for (long long p = (long long)blockIdx.x * BLOCK + threadIdx.x; p * VEC < body; p += stride) {
        const long long i = p * VEC;
        const Pack<VEC> in = *reinterpret_cast<const Pack<VEC> *>(x + i);
#if OP == 4
        const Pack<VEC> rr = *reinterpret_cast<const Pack<VEC> *>(res + i);
#endif
        Pack<VEC> out;
#pragma unroll
        for (int j = 0; j < VEC; ++j)
#if OP == 4
            out.v[j] = from_f(act(to_f(in.v[j]), to_f(rr.v[j])));
#else
            out.v[j] = from_f(act(to_f(in.v[j]), 0.f));
#endif
        *reinterpret_cast<Pack<VEC> *>(y + i) = out;
    }
    for (long long i = body + (long long)blockIdx.x * BLOCK + threadIdx.x; i < n; i += stride)
        y[i] = from_f(act(to_f(x[i]), OP == 4 ? to_f(res[i]) : 0.f));
}
