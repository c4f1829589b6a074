// Pass 1: one block per row: log-sum-exp over the vocabulary (online max and sum) minus the target's
// logit, into a per-row workspace. Pass 2: one block averages the rows in a fixed order.
// A row whose target is the ignore index (-100) adds nothing and is not counted, as in ATen; its block
// returns at once. A target outside [0, vocab) otherwise (ATen raises) makes the loss NaN, never a read
// outside the row.
enum { CE_UNROLL = 4, CE_IGNORE = -100 };

extern "C" __global__ void __launch_bounds__(BLOCK)
kf_ce_rows(const T *__restrict__ logits, const long long *__restrict__ target, float *__restrict__ loss, long long vocab)
{
    const long long row = blockIdx.x;
    const T *xr = logits + row * vocab;
    const long long tgt = target[row];
    if (tgt == CE_IGNORE) {
        if (threadIdx.x == 0) loss[row] = 0.f;
        return;
    }
    // The row from its pack-aligned start (row_packs.cuh; only the logits are read, so any row aligns):
    // its elements are [f, n) of xv, whole packs but for the first and last of a vocabulary such as 50257.
    const bool vec_ok = packs_align(logits, logits);
    const int f = row_offset(xr, vec_ok);
    const long long n = vocab + f;
    const T *xv = xr - f;
    // CE_UNROLL packs a thread are loaded before any is used (four 16-byte loads in flight), then folded
    // into one running (max, sum): the sum is rescaled only when the max rises, so a pack costs VEC
    // exponentials, not VEC + 2 as a (max, sum) merge per pack did. While every element seen is -inf
    // the sum is taken against 0, so -inf adds nothing and a NaN still reaches the sum.
    float m = -KF_INF, s = 0.f;
    const long long step = (long long)BLOCK * VEC;
    for (long long i0 = (long long)threadIdx.x * VEC; i0 < n; i0 += step * CE_UNROLL) {
        float t[CE_UNROLL][VEC];
#pragma unroll
        for (int u = 0; u < CE_UNROLL; ++u) {
            const long long i = i0 + u * step;
            if (vec_ok && i >= f && i + VEC <= n) {
                load_floats<VEC>(xv + i, t[u]);
            } else {
#pragma unroll
                for (int j = 0; j < VEC; ++j) t[u][j] = i + j >= f && i + j < n ? to_f(xv[i + j]) : -KF_INF;
            }
        }
        float cm = m;
#pragma unroll
        for (int u = 0; u < CE_UNROLL; ++u)
#pragma unroll
            for (int j = 0; j < VEC; ++j) cm = fmaxf(cm, t[u][j]);
        if (cm > m) { s *= __expf(m - cm); m = cm; }
        const float ref = m == -KF_INF ? 0.f : m;
#pragma unroll
        for (int u = 0; u < CE_UNROLL; ++u)
#pragma unroll
            for (int j = 0; j < VEC; ++j) s += __expf(t[u][j] - ref);
    }
    __shared__ float sm[32], ss[32];
    block_ms(m, s, sm, ss);
    // The target's logit is read after the row, not before: held across the loop it cost 16-bit rows
    // of VEC 8 a block a multiprocessor (53 registers a thread against 45).
    if (threadIdx.x == 0) loss[row] = m + logf(s) - ((unsigned long long)tgt < (unsigned long long)vocab ? to_f(xr[tgt]) : KF_NAN);
}

extern "C" __global__ void __launch_bounds__(1024)
kf_ce_mean(const float *__restrict__ loss, const long long *__restrict__ target, T *__restrict__ out, long long rows)
{
    __shared__ float part[32];
    __shared__ long long counted[32];
    float s = 0.f;
    long long c = 0; // rows counted, exactly at any count
    for (long long i = threadIdx.x; i < rows; i += blockDim.x) {
        s += loss[i];
        c += target[i] != CE_IGNORE;
    }
    s = warp_sum(s);
    for (int o = 16; o > 0; o /= 2) c += __shfl_xor_sync(0xffffffffu, c, o);
    if (threadIdx.x % 32 == 0) { part[threadIdx.x / 32] = s; counted[threadIdx.x / 32] = c; }
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.f;
        long long n = 0;
        for (int i = 0; i < (int)(blockDim.x / 32); ++i) { t += part[i]; n += counted[i]; }
        out[0] = from_f(t / (float)n); // every row ignored: 0 / 0, NaN, as ATen's mean
    }
}
