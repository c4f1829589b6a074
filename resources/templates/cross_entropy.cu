// Pass 1: one block per row: log-sum-exp over the vocabulary (online max and sum) minus the target's
// logit, into a per-row workspace. Pass 2: one block averages the rows in a fixed order.
__device__ __forceinline__ void block_ms(float &m, float &s)
{
    __shared__ float sm[32], ss[32];
    warp_ms(m, s);
    const int w = threadIdx.x / 32;
    if (threadIdx.x % 32 == 0) { sm[w] = m; ss[w] = s; }
    __syncthreads();
    m = -KF_INF; s = 0.f;
    for (int i = 0; i < (int)(blockDim.x / 32); ++i) ms_merge(m, s, sm[i], ss[i]);
    __syncthreads();
}

extern "C" __global__ void __launch_bounds__(BLOCK)
kf_ce_rows(const T *__restrict__ logits, const long long *__restrict__ target, float *__restrict__ loss, long long vocab)
{
    const long long row = blockIdx.x;
    const T *xr = logits + row * vocab;
    // The row from its pack-aligned start (row_packs.cuh; only the logits are read, so any row aligns):
    // its elements are [f, n) of xv, whole packs but for the first and last of a vocabulary such as 50257.
    const bool vec_ok = packs_align(logits, logits);
    const int f = row_offset(xr, vec_ok);
    const long long n = vocab + f;
    const T *xv = xr - f;
    float m = -KF_INF, s = 0.f;
    for (long long i = (long long)threadIdx.x * VEC; i < n; i += (long long)BLOCK * VEC) {
        float t[VEC];
        if (vec_ok && i >= f && i + VEC <= n) {
            const Pack<VEC> pk = *reinterpret_cast<const Pack<VEC> *>(xv + i);
#pragma unroll
            for (int j = 0; j < VEC; ++j) t[j] = to_f(pk.v[j]);
        } else {
#pragma unroll
            for (int j = 0; j < VEC; ++j) t[j] = i + j >= f && i + j < n ? to_f(xv[i + j]) : -KF_INF;
        }
        float cm = t[0];
#pragma unroll
        for (int j = 1; j < VEC; ++j) cm = fmaxf(cm, t[j]);
        float cs = 0.f;
#pragma unroll
        for (int j = 0; j < VEC; ++j) cs += t[j] == -KF_INF ? 0.f : __expf(t[j] - cm);
        ms_merge(m, s, cm, cs);
    }
    block_ms(m, s);
    if (threadIdx.x == 0) loss[row] = m + logf(s) - to_f(xr[target[row]]);
}

extern "C" __global__ void __launch_bounds__(1024) kf_ce_mean(const float *__restrict__ loss, T *__restrict__ out, long long rows)
{
    __shared__ float part[32];
    float s = 0.f;
    for (long long i = threadIdx.x; i < rows; i += blockDim.x) s += loss[i];
    s = warp_sum(s);
    if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.f;
        for (int i = 0; i < (int)(blockDim.x / 32); ++i) t += part[i];
        out[0] = from_f(t / (float)rows);
    }
}
