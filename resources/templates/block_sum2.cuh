// Block-wide sums of two values; every thread gets the totals.
__device__ __forceinline__ void block_sum2(float &a, float &b)
{
    __shared__ float sa[32], sb[32];
    a = warp_sum(a);
    b = warp_sum(b);
    const int w = threadIdx.x / 32;
    if (threadIdx.x % 32 == 0) { sa[w] = a; sb[w] = b; }
    __syncthreads();
    a = 0.f; b = 0.f;
    for (int i = 0; i < (int)(blockDim.x / 32); ++i) { a += sa[i]; b += sb[i]; }
    __syncthreads();
}
