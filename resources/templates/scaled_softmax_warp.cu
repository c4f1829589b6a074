// cuda.scaled_softmax.warp and cuda.scaled_masked_softmax.warp: attention's softmax chain for many short
// rows (a few hundred tokens: ViT's 197, CLIP's 77), y = softmax(x * SCALE [+ mask], -1) in float32,
// written in T. TPR lanes of a warp per row, RPB rows a block; lane l holds elements l, l + TPR, ...
// (REG of them), so a row of any length is read once in coalesced element loads, and the max and the sum
// are warp shuffles among its lanes, no shared memory and no barrier. A block a row
// (scaled_softmax_rows.cu) leaves most of its threads idle on such rows. A row longer than TPR * REG (a
// held-out shape) takes three passes over x. MASK as in scaled_softmax_rows.cu.
__device__ __forceinline__ float lanes_max(float v)
{
#pragma unroll
    for (int o = TPR / 2; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o, TPR));
    return v;
}

__device__ __forceinline__ float lanes_sum(float v)
{
#pragma unroll
    for (int o = TPR / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o, TPR);
    return v;
}

extern "C" __global__ void __launch_bounds__(TPR * RPB)
kf_scaled_softmax_warp(const T *__restrict__ x, const T *__restrict__ mask, T *__restrict__ y, long long rows, long long cols, long long mrows,
                       long long minner, long long mstep, long long mblock)
{
    const int lane = threadIdx.x % TPR;
    const long long r = (long long)blockIdx.x * RPB + threadIdx.x / TPR;
    // Every lane of the warp takes part in the shuffles: a row past the end computes on nothing and
    // writes nothing.
    const bool live = r < rows;
    const long long rr = live ? r : 0;
    const T *xr = x + rr * cols;
    const T *mr = MASK ? mask + kf_mask_row(rr, mrows, minner, mstep, mblock) * cols : nullptr;
    T *yr = y + rr * cols;
    const float scale = SCALE;
    const long long n = live ? cols : 0;
    if (cols <= (long long)TPR * REG) {
        float v[REG];
        float m = -KF_INF;
#pragma unroll
        for (int k = 0; k < REG; ++k) {
            const long long c = (long long)k * TPR + lane;
            v[k] = c < n ? to_f(xr[c]) * scale + (MASK ? to_f(mr[c]) : 0.f) : -KF_INF;
            m = fmaxf(m, v[k]);
        }
        m = lanes_max(m);
        float s = 0.f;
#pragma unroll
        for (int k = 0; k < REG; ++k) {
            const long long c = (long long)k * TPR + lane;
            v[k] = c < n ? __expf(v[k] - m) : 0.f;
            s += v[k];
        }
        const float inv = 1.f / lanes_sum(s);
#pragma unroll
        for (int k = 0; k < REG; ++k) {
            const long long c = (long long)k * TPR + lane;
            if (c < n)
                yr[c] = from_f(v[k] * inv);
        }
        return;
    }
    float m = -KF_INF;
    for (long long c = lane; c < n; c += TPR)
        m = fmaxf(m, to_f(xr[c]) * scale + (MASK ? to_f(mr[c]) : 0.f));
    m = lanes_max(m);
    float s = 0.f;
    for (long long c = lane; c < n; c += TPR)
        s += __expf(to_f(xr[c]) * scale + (MASK ? to_f(mr[c]) : 0.f) - m);
    const float inv = 1.f / lanes_sum(s);
    for (long long c = lane; c < n; c += TPR)
        yr[c] = from_f(__expf(to_f(xr[c]) * scale + (MASK ? to_f(mr[c]) : 0.f) - m) * inv);
}
