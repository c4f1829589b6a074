// Instance norm over [n, c, hw] without affine: rows n * c of hw elements, each cut into SPLIT chunks.
// kf_inorm_stats: a block per chunk posts (count, mean, M2) to the workspace; kf_inorm_apply: a block per
// chunk merges its row's SPLIT partials in chunk order (every block of a row gets the same statistics)
// and writes (x - mean) * rstd. Each thread accumulates sums shifted by its first value, so a large mean
// does not cancel the variance away; partials merge by Chan et al.'s pairwise formula.
__device__ __forceinline__ void chan(float &n, float &mean, float &m2, float nb, float mb, float qb)
{
    if (nb == 0.f) return;
    const float nn = n + nb, d = mb - mean;
    mean += d * (nb / nn);
    m2 += qb + d * d * (n * nb / nn);
    n = nn;
}

__device__ __forceinline__ void chunk_of(long long hw, long long part, long long &lo, long long &hi)
{
    // Chunks of whole VEC packs, so a chunk starts aligned when the row does.
    const long long per = ((hw + SPLIT - 1) / SPLIT + VEC - 1) / VEC * VEC;
    lo = part * per;
    hi = lo + per < hw ? lo + per : hw;
    if (lo > hw) lo = hw;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
kf_inorm_stats(const T *__restrict__ x, float *__restrict__ part, long long rows, long long hw)
{
    __shared__ float sn[32], sm[32], sq[32];
    const long long row = blockIdx.x / SPLIT, p = blockIdx.x % SPLIT;
    long long lo, hi;
    chunk_of(hw, p, lo, hi);
    const T *xr = x + row * hw;
    const bool vec_ok = VEC > 1 && hw % VEC == 0 && aligned_to(x, VEC * sizeof(T));
    float shift = 0.f, s1 = 0.f, s2 = 0.f, cnt = 0.f;
    bool first = true;
    for (long long i = lo + (long long)threadIdx.x * VEC; i < hi; i += (long long)BLOCK * VEC) {
        float f[VEC];
        int k = VEC;
        if (vec_ok) {
            load_floats<VEC>(xr + i, f);
        } else {
            k = 0;
#pragma unroll
            for (int j = 0; j < VEC; ++j) if (i + j < hi) { f[j] = to_f(xr[i + j]); k = j + 1; }
        }
        if (first) { shift = f[0]; first = false; }
#pragma unroll
        for (int j = 0; j < VEC; ++j)
            if (j < k) { const float d = f[j] - shift; s1 += d; s2 += d * d; cnt += 1.f; }
    }
    float n = cnt, mean = cnt > 0.f ? shift + s1 / cnt : 0.f, m2 = cnt > 0.f ? fmaxf(s2 - s1 * s1 / cnt, 0.f) : 0.f;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        chan(n, mean, m2, __shfl_xor_sync(0xffffffffu, n, o), __shfl_xor_sync(0xffffffffu, mean, o), __shfl_xor_sync(0xffffffffu, m2, o));
    if (threadIdx.x % 32 == 0) { sn[threadIdx.x / 32] = n; sm[threadIdx.x / 32] = mean; sq[threadIdx.x / 32] = m2; }
    __syncthreads();
    if (threadIdx.x == 0) {
        float N = 0.f, M = 0.f, Q = 0.f;
        for (int w = 0; w < BLOCK / 32; ++w) chan(N, M, Q, sn[w], sm[w], sq[w]);
        float *out = part + (row * SPLIT + p) * 3;
        out[0] = N; out[1] = M; out[2] = Q;
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK)
kf_inorm_apply(const T *__restrict__ x, const float *__restrict__ part, T *__restrict__ y, long long rows, long long hw)
{
    const long long row = blockIdx.x / SPLIT, p = blockIdx.x % SPLIT;
    float N = 0.f, M = 0.f, Q = 0.f;
    const float *pr = part + row * SPLIT * 3;
    for (int k = 0; k < SPLIT; ++k) chan(N, M, Q, pr[3 * k], pr[3 * k + 1], pr[3 * k + 2]);
    const float rstd = rsqrtf(Q / N + EPS);
    long long lo, hi;
    chunk_of(hw, p, lo, hi);
    const T *xr = x + row * hw;
    T *yr = y + row * hw;
    const bool vec_ok = VEC > 1 && hw % VEC == 0 && aligned_to(x, VEC * sizeof(T)) && aligned_to(y, VEC * sizeof(T));
    for (long long i = lo + (long long)threadIdx.x * VEC; i < hi; i += (long long)BLOCK * VEC) {
        if (vec_ok) {
            float f[VEC];
            load_floats<VEC>(xr + i, f);
#pragma unroll
            for (int j = 0; j < VEC; ++j) f[j] = (f[j] - M) * rstd;
            store_floats<VEC>(yr + i, f);
        } else {
#pragma unroll
            for (int j = 0; j < VEC; ++j) if (i + j < hi) yr[i + j] = from_f((to_f(xr[i + j]) - M) * rstd);
        }
    }
}
