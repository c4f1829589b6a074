// Shared by the loss templates (loss_reduce.cu, loss_triplet.cu): the accumulator type ACC_T (the point's
// ACC, double or float), its warp and block sums, the NaN-propagating max and min the rendered
// expressions call and kf_round_t for their 16-bit rounding, and the final kernel: one block adds the
// partials in a fixed order and divides by den (the element count for a mean, 1 for a sum, the rows for
// batchmean), so the result does not depend on which block finished first.
typedef ACC ACC_T;

// A value rounded to the storage type and back, as an ATen operation writing its T result leaves it.
__device__ __forceinline__ float kf_round_t(float v) { return to_f(from_f(v)); }

__device__ __forceinline__ float kf_max(float a, float b) { return (a > b || a != a) ? a : b; } // NaN wins, as torch.maximum
__device__ __forceinline__ float kf_min(float a, float b) { return (a < b || a != a) ? a : b; }

__device__ __forceinline__ ACC_T warp_sum_acc(ACC_T v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// The block's sum, in thread 0 (every thread must call it).
template<int THREADS> __device__ __forceinline__ ACC_T block_sum_acc(ACC_T v)
{
    __shared__ ACC_T part[32];
    v = warp_sum_acc(v);
    if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = v;
    __syncthreads();
    ACC_T t = 0;
    if (threadIdx.x == 0)
        for (int w = 0; w < THREADS / 32; ++w) t += part[w];
    return t;
}

extern "C" __global__ void __launch_bounds__(1024) kf_loss_final(const ACC_T *__restrict__ partial, T *__restrict__ out, long long count, long long den)
{
    ACC_T s = 0;
    for (long long i = threadIdx.x; i < count; i += 1024) s += partial[i];
    s = block_sum_acc<1024>(s);
    if (threadIdx.x == 0) out[0] = from_f((float)(s / (ACC_T)den));
}
