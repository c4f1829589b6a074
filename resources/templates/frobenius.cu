// x / ||x||_F over the whole tensor (numel elements, any shape). kf_fro_partial: a grid of GRID blocks
// strides over the tensor, UNROLL packs in flight per thread, each thread's squares summed in double
// (a float sum over billions of terms would carry its order's error) and each block's total posted.
// kf_fro_combine: one warp sums the GRID partials in a fixed order and stores the norm as a float.
// kf_fro_scale: y = x / norm, as the program's division does.

extern "C" __global__ void __launch_bounds__(BLOCK)
kf_fro_partial(const T *__restrict__ x, double *__restrict__ part, long long numel)
{
    __shared__ double sd[32];
    double acc = 0.0;
    const long long stride = (long long)GRID * BLOCK;
    if (VEC > 1 && numel % VEC == 0 && aligned_to(x, VEC * sizeof(T))) {
        const long long packs = numel / VEC;
        long long p = (long long)blockIdx.x * BLOCK + threadIdx.x;
        for (; p + (UNROLL - 1) * stride < packs; p += UNROLL * stride) {
            float f[UNROLL][VEC];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) load_floats<VEC>(x + (p + u * stride) * VEC, f[u]);
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                float s = 0.f;
#pragma unroll
                for (int j = 0; j < VEC; ++j) s += f[u][j] * f[u][j];
                acc += (double)s;
            }
        }
        for (; p < packs; p += stride) {
            float f[VEC];
            load_floats<VEC>(x + p * VEC, f);
            float s = 0.f;
#pragma unroll
            for (int j = 0; j < VEC; ++j) s += f[j] * f[j];
            acc += (double)s;
        }
    } else {
        for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < numel; i += stride) {
            const float v = to_f(x[i]);
            acc += (double)(v * v);
        }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (threadIdx.x % 32 == 0) sd[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        double t = 0.0;
        for (int w = 0; w < BLOCK / 32; ++w) t += sd[w];
        part[blockIdx.x] = t;
    }
}

extern "C" __global__ void __launch_bounds__(32)
kf_fro_combine(const double *__restrict__ part, float *__restrict__ norm)
{
    double t = 0.0;
    for (int k = threadIdx.x; k < GRID; k += 32) t += part[k];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) t += __shfl_xor_sync(0xffffffffu, t, o);
    if (threadIdx.x == 0) norm[0] = (float)sqrt(t);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
kf_fro_scale(const T *__restrict__ x, const float *__restrict__ norm, T *__restrict__ y, long long numel)
{
    const float nrm = norm[0];
    const long long stride = (long long)gridDim.x * BLOCK;
    if (VEC > 1 && numel % VEC == 0 && aligned_to(x, VEC * sizeof(T)) && aligned_to(y, VEC * sizeof(T))) {
        const long long packs = numel / VEC;
#pragma unroll 4
        for (long long p = (long long)blockIdx.x * BLOCK + threadIdx.x; p < packs; p += stride) {
            float f[VEC];
            load_floats<VEC>(x + p * VEC, f);
#pragma unroll
            for (int j = 0; j < VEC; ++j) f[j] = f[j] / nrm;
            store_floats<VEC>(y + p * VEC, f);
        }
    } else {
        for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < numel; i += stride) y[i] = from_f(to_f(x[i]) / nrm);
    }
}
