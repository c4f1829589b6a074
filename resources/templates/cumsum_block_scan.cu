// Inclusive scan of one row per block, BLOCK*VEC elements per step: each thread scans its VEC
// elements, the block scans the thread totals (warp shuffles, then the warp totals), and a running
// carry links the steps.
extern "C" __global__ void __launch_bounds__(BLOCK) kf_cumsum(const T *__restrict__ x, T *__restrict__ y, long long rows, long long cols)
{
    __shared__ float warp_tot[32];
    __shared__ float carry_sh;
    const long long row = blockIdx.x;
    const T *xr = x + row * cols;
    T *yr = y + row * cols;
    const int lane = threadIdx.x % 32, w = threadIdx.x / 32, nw = BLOCK / 32;
    float carry = 0.f;
    for (long long base = 0; base < cols; base += (long long)BLOCK * VEC) {
        const long long i0 = base + (long long)threadIdx.x * VEC;
        float v[VEC];
        float run = 0.f;
#pragma unroll
        for (int j = 0; j < VEC; ++j) { v[j] = i0 + j < cols ? to_f(xr[i0 + j]) : 0.f; run += v[j]; v[j] = run; }
        float incl = run;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) { const float t = __shfl_up_sync(0xffffffffu, incl, o); if (lane >= o) incl += t; }
        if (lane == 31) warp_tot[w] = incl;
        __syncthreads();
        if (w == 0) {
            float t = lane < nw ? warp_tot[lane] : 0.f;
#pragma unroll
            for (int o = 1; o < 32; o <<= 1) { const float u = __shfl_up_sync(0xffffffffu, t, o); if (lane >= o) t += u; }
            if (lane < nw) warp_tot[lane] = t;
        }
        __syncthreads();
        const float before = carry + (w > 0 ? warp_tot[w - 1] : 0.f) + (incl - run);
#pragma unroll
        for (int j = 0; j < VEC; ++j) if (i0 + j < cols) yr[i0 + j] = from_f(before + v[j]);
        if (threadIdx.x == BLOCK - 1) carry_sh = before + run;
        __syncthreads();
        carry = carry_sh;
        __syncthreads();
    }
}
