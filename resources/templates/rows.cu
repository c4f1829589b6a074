// cuda.<family>.rows: TPR threads per row, RPB rows per block, the row in REG registers per thread when
// it fits, else streamed twice; TPR below 32 puts several short rows in each warp. FAMILY 0 softmax,
// 1 log-softmax, 2 layer norm, 3 RMS norm.

#define WARPS (TPR / 32)
#define WARPS_SH (WARPS > 0 ? WARPS : 1) // shared-memory slots per row
// The lanes that reduce one row within a warp: TPR of them when several rows share a warp. The xor
// shuffles below LANES stay inside a row's aligned group of lanes; every lane of the warp takes part.
#define LANES (TPR < 32 ? TPR : 32)
#if TPR < 32
__device__ __forceinline__ float lane_sum(float v)
{
#pragma unroll
    for (int o = LANES / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float lane_max(float v)
{
#pragma unroll
    for (int o = LANES / 2; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
__device__ __forceinline__ void lane_ms(float &m, float &s)
{
#pragma unroll
    for (int o = LANES / 2; o > 0; o >>= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, o), s2 = __shfl_xor_sync(0xffffffffu, s, o);
        ms_merge(m, s, m2, s2);
    }
}
#else
#define lane_sum warp_sum
#define lane_max warp_max
#define lane_ms warp_ms
#endif
// HINT 1 reads as torch.compile's Triton kernels do: the statistics pass keeps the row in L1 and L2
// (evict-last), the write pass re-reads it for the last time (evict-first), the weights stay.
#define H_STATS (HINT ? HINT_KEEP : HINT_NONE)
#define H_REREAD (HINT ? HINT_LAST_USE : HINT_NONE)
#if FAST_EXP
#define EXPF __expf
#else
#define EXPF expf
#endif

// Reductions over the TPR threads of one row. Every thread of the block calls them the same number of
// times (the row-fits decision depends only on cols), so the barriers are uniform.
__device__ __forceinline__ float group_sum(float v, float *sh)
{
    v = lane_sum(v);
#if WARPS > 1
    const int sub = threadIdx.x / TPR, w = (threadIdx.x % TPR) / 32;
    if (threadIdx.x % 32 == 0) sh[sub * WARPS + w] = v;
    __syncthreads();
    v = 0.f;
#pragma unroll
    for (int i = 0; i < WARPS; ++i) v += sh[sub * WARPS + i];
    __syncthreads();
#endif
    return v;
}

__device__ __forceinline__ float group_max(float v, float *sh)
{
    v = lane_max(v);
#if WARPS > 1
    const int sub = threadIdx.x / TPR, w = (threadIdx.x % TPR) / 32;
    if (threadIdx.x % 32 == 0) sh[sub * WARPS + w] = v;
    __syncthreads();
    v = -KF_INF;
#pragma unroll
    for (int i = 0; i < WARPS; ++i) v = fmaxf(v, sh[sub * WARPS + i]);
    __syncthreads();
#endif
    return v;
}

__device__ __forceinline__ void group_ms(float &m, float &s, float *sh, float *sh2)
{
    lane_ms(m, s);
#if WARPS > 1
    const int sub = threadIdx.x / TPR, w = (threadIdx.x % TPR) / 32;
    if (threadIdx.x % 32 == 0) { sh[sub * WARPS + w] = m; sh2[sub * WARPS + w] = s; }
    __syncthreads();
    m = -KF_INF; s = 0.f;
#pragma unroll
    for (int i = 0; i < WARPS; ++i) ms_merge(m, s, sh[sub * WARPS + i], sh2[sub * WARPS + i]);
    __syncthreads();
#endif
}

// Count, mean and sum of squared deviations: b merged into a (Chan et al.).
__device__ __forceinline__ void mv_merge(float &n, float &mean, float &m2, float nb, float meanb, float m2b)
{
    const float t = n + nb;
    if (t == 0.f) return;
    const float d = meanb - mean, f = __fdividef(nb, t); // a weight: 2 ulp do no harm, and no call
    mean += d * f;
    m2 += m2b + d * d * n * f;
    n = t;
}

// (count, mean, M2) merged across a row's LANES lanes; the butterfly merges in a different order on
// each lane, so every lane takes its group's first lane's result.
__device__ __forceinline__ void warp_mv(float &n, float &mean, float &m2)
{
#pragma unroll
    for (int o = LANES / 2; o > 0; o >>= 1)
        mv_merge(n, mean, m2, __shfl_xor_sync(0xffffffffu, n, o), __shfl_xor_sync(0xffffffffu, mean, o), __shfl_xor_sync(0xffffffffu, m2, o));
    n = __shfl_sync(0xffffffffu, n, 0, LANES); mean = __shfl_sync(0xffffffffu, mean, 0, LANES); m2 = __shfl_sync(0xffffffffu, m2, 0, LANES);
}

// The row's (count, mean, M2) from each thread's; every thread of the row gets the same values.
__device__ __forceinline__ void group_mv(float &n, float &mean, float &m2, float *sh, float *sh2, float *sh3)
{
    warp_mv(n, mean, m2);
#if WARPS > 1
    const int sub = threadIdx.x / TPR, w = (threadIdx.x % TPR) / 32, l = threadIdx.x % 32;
    if (l == 0) { sh[sub * WARPS + w] = n; sh2[sub * WARPS + w] = mean; sh3[sub * WARPS + w] = m2; }
    __syncthreads();
    // Each warp merges the row's warp partials, a lane each, rather than every thread all of them.
    n = l < WARPS ? sh[sub * WARPS + l] : 0.f;
    mean = l < WARPS ? sh2[sub * WARPS + l] : 0.f;
    m2 = l < WARPS ? sh3[sub * WARPS + l] : 0.f;
    warp_mv(n, mean, m2);
    __syncthreads();
#endif
}

// The output for one element once the row statistics a and b are known; wv and bv are the element's
// weight and bias (loaded as packs alongside the row). For softmax, `e` says v already holds exp(v - max).
__device__ __forceinline__ float finish(float v, float a, float b, float wv, float bv, bool e)
{
#if FAMILY == 0
    return (e ? v : EXPF(v - a)) * b; // a = max, b = 1 / sum
#elif FAMILY == 1
    return (v - a) - b;              // a = max, b = log(sum): subtract the max first, as ATen does
#elif FAMILY == 2
    return (v - a) * b * wv + bv;    // a = mean, b = rstd
#elif CAST_NORMED
    return to_f(from_f(v * b)) * wv; // the written-out chain: (x * rstd).to(x.dtype), then times the weight
#elif defined(WEIGHT_OFFSET)
    return v * b * (1.f + wv);       // Gemma's: (x * rstd) * (1 + w) in float32, rounded once
#else
    return v * b * wv;               // b = rsqrt(mean square + eps)
#endif
}

// Writes VEC outputs at i from the values t, loading the weight and bias packs the family needs.
__device__ __forceinline__ void write_vec(T *yr, const T *w, const T *bias, long long i, long long n, bool vec_ok, bool wvec_ok,
                                          const float *t, float a, float b, bool e)
{
    float wv[VEC], bv[VEC], o[VEC];
#if FAMILY >= 2
    load_vec<H_STATS>(w, i, n, wvec_ok, 0.f, wv);
#endif
#if FAMILY == 2
    load_vec<H_STATS>(bias, i, n, wvec_ok, 0.f, bv);
#endif
#pragma unroll
    for (int j = 0; j < VEC; ++j) o[j] = i + j < n ? finish(t[j], a, b, wv[j], bv[j], e) : 0.f;
    store_vec(yr, i, n, vec_ok, o);
}

#if REG > 0
#if FAMILY >= 2 && KF_DTYPE != 0 && VEC >= 2
// A 16-bit norm row is kept as loaded, two values a register, and a value widened where it is used:
// half the registers of floats. As floats, a bf16 layer norm of 32 values a thread took 80 registers,
// one 512-thread block a multiprocessor. Softmax keeps floats (it overwrites them with exp(v - max)),
// and so does log-softmax: kept packed, its 4096-wide bf16 seed ran 2.7% slower (67.2 against 65.5 us).
struct RowRegs {
    unsigned r[REG / 2];
    __device__ __forceinline__ void put(int k, const float *t)
    {
#pragma unroll
        for (int j = 0; j < VEC; j += 2) r[(k + j) / 2] = pack2(t[j], t[j + 1]);
    }
    __device__ __forceinline__ float get(int k) const
    {
        float lo, hi;
        unpack2(r[k / 2], lo, hi);
        return k % 2 ? hi : lo;
    }
};
#else
struct RowRegs {
    float r[REG];
    __device__ __forceinline__ void put(int k, const float *t)
    {
#pragma unroll
        for (int j = 0; j < VEC; ++j) r[k + j] = t[j];
    }
    __device__ __forceinline__ float get(int k) const { return r[k]; }
};
#endif

// The row in REG values per thread: read once, reduced, written, in whole packs. The row is a
// whole number of aligned packs, so each of a thread's packs lies wholly inside the row or wholly
// past it: one test a pack, none an element. EXACT: the row is TPR * REG elements, so every pack is
// inside (a row past the end, n = 0, only takes part in the barriers).
template<bool EXACT>
__device__ __forceinline__ void row_in_registers(const T *xr, const T *w, const T *bias, T *yr, long long n,
                                                 float inv_cols, int lane, float *sh)
{
    const float pad = FAMILY <= 1 ? -KF_INF : 0.f;
    float a = 0.f, b = 0.f;
    RowRegs v;
#pragma unroll
    for (int k = 0; k < REG; k += VEC) {
        const int i = (k / VEC) * TPR * VEC + lane * VEC;
        float t[VEC];
        if (EXACT || i < n) {
            load_floats<VEC, H_STATS>(xr + i, t);
        } else {
#pragma unroll
            for (int j = 0; j < VEC; ++j) t[j] = pad;
        }
        v.put(k, t);
    }
#if FAMILY <= 1
    float m = -KF_INF;
#pragma unroll
    for (int k = 0; k < REG; ++k) m = fmaxf(m, v.get(k));
    m = group_max(m, sh);
    // Softmax keeps exp(v - max) in place: the output is then one multiply per element.
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < REG; ++k) {
#if FAMILY == 0
        v.r[k] = v.r[k] == -KF_INF ? 0.f : EXPF(v.r[k] - m);
        s += v.r[k];
#else
        s += v.get(k) == -KF_INF ? 0.f : EXPF(v.get(k) - m);
#endif
    }
    s = group_sum(s, sh);
    a = m;
    b = FAMILY == 0 ? __frcp_rn(s) : logf(s); // 1 / s, rounded as a division rounds it
#elif FAMILY == 2
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < REG; ++k) s += v.get(k);
    a = group_sum(s, sh) * inv_cols;
    float q = 0.f;
#pragma unroll
    for (int k = 0; k < REG; k += VEC) {
        const bool inside = EXACT || (k / VEC) * TPR * VEC + lane * VEC < n;
#pragma unroll
        for (int j = 0; j < VEC; ++j) {
            const float d = inside ? v.get(k + j) - a : 0.f;
            q += d * d;
        }
    }
    b = rsqrtf(group_sum(q, sh) * inv_cols + EPS);
#else
    float q = 0.f;
#pragma unroll
    for (int k = 0; k < REG; ++k) q += v.get(k) * v.get(k);
    b = rsqrtf(group_sum(q, sh) * inv_cols + EPS);
#endif
    if (EXACT && n == 0) return;
#pragma unroll
    for (int k = 0; k < REG; k += VEC) {
        const int i = (k / VEC) * TPR * VEC + lane * VEC;
        if (!EXACT && i >= n) continue;
        float wv[VEC], bv[VEC], o[VEC];
#if FAMILY >= 2
        load_floats<VEC, H_STATS>(w + i, wv);
#endif
#if FAMILY == 2
        load_floats<VEC, H_STATS>(bias + i, bv);
#endif
#pragma unroll
        for (int j = 0; j < VEC; ++j) o[j] = finish(v.get(k + j), a, b, wv[j], bv[j], true);
        store_floats<VEC>(yr + i, o);
    }
}
#endif

// OCC > 0 asks for that many resident threads per SM, capping registers per thread to get them.
#if OCC > 0
#define KF_BOUNDS __launch_bounds__(TPR * RPB, (OCC / (TPR * RPB) > 0 ? OCC / (TPR * RPB) : 1))
#else
#define KF_BOUNDS __launch_bounds__(TPR * RPB)
#endif
extern "C" __global__ void KF_BOUNDS
kf_rows(const T *__restrict__ x, const T *__restrict__ w, const T *__restrict__ bias, T *__restrict__ y, long long rows, long long cols)
{
    __shared__ float sh[RPB * WARPS_SH], sh2[RPB * WARPS_SH], sh3[RPB * WARPS_SH];
    const int lane = threadIdx.x % TPR;
    const long long row = (long long)blockIdx.x * RPB + threadIdx.x / TPR;
    const long long n = row < rows ? cols : 0; // a row past the end takes part in barriers only
    const T *xr = x + (row < rows ? row : 0) * cols;
    T *yr = y + (row < rows ? row : 0) * cols;
    const bool vec_ok = VEC > 1 && cols % VEC == 0 && aligned_to(x, VEC * sizeof(T)) && aligned_to(y, VEC * sizeof(T));
    const bool wvec_ok = vec_ok && aligned_to(w, VEC * sizeof(T)) && aligned_to(bias, VEC * sizeof(T));
    // Whole aligned packs (a single element is one), for the row and the weights alike.
    const bool packs = VEC == 1 || wvec_ok;
    float a = 0.f, b = 0.f;
#if REG > 0
    // A row that fits the registers in whole packs (every row kforge verifies; a view of odd alignment
    // streams below). A row that fills them exactly needs no test at all.
    if (cols <= (long long)TPR * REG && packs) {
        // 1 / cols here, while few registers are live, and products below: a division's slow path (and
        // a reciprocal's) is a call, and a call with the row live in registers made NVRTC save some of
        // them to the stack.
        const float inv_cols = __frcp_rn((float)cols);
        if (cols == (long long)TPR * REG) row_in_registers<true>(xr, w, bias, yr, n, inv_cols, lane, sh);
        else row_in_registers<false>(xr, w, bias, yr, n, inv_cols, lane, sh);
        return;
    }
#endif
    // Streaming: one statistics pass over the row, then the write pass (which re-reads it, mostly from cache).
    float t[VEC];
#if FAMILY <= 1
    float m = -KF_INF, s = 0.f;
    for (long long i = (long long)lane * VEC; i < n; i += (long long)TPR * VEC) {
        load_vec<H_STATS>(xr, i, n, vec_ok, -KF_INF, t);
        float cm = t[0];
#pragma unroll
        for (int j = 1; j < VEC; ++j) cm = fmaxf(cm, t[j]);
        float cs = 0.f;
#pragma unroll
        for (int j = 0; j < VEC; ++j) cs += t[j] == -KF_INF ? 0.f : EXPF(t[j] - cm);
        ms_merge(m, s, cm, cs);
    }
    group_ms(m, s, sh, sh2);
    a = m;
    b = FAMILY == 0 ? __frcp_rn(s) : logf(s); // 1 / s, rounded as a division rounds it
#elif FAMILY == 2
    // Mean and variance in one pass: each pack's mean and squared deviations, merged (Welford/Chan),
    // which stays accurate when the mean is large against the spread.
    float cnt = 0.f, mean = 0.f, m2 = 0.f;
    for (long long i = (long long)lane * VEC; i < n; i += (long long)TPR * VEC) {
        load_vec<H_STATS>(xr, i, n, vec_ok, 0.f, t);
        const float c = i + VEC <= n ? (float)VEC : (float)(n - i);
        float ps = 0.f;
#pragma unroll
        for (int j = 0; j < VEC; ++j) ps += t[j]; // padding is 0
        const float pm = ps * __frcp_rn(c);
        float pq = 0.f;
#pragma unroll
        for (int j = 0; j < VEC; ++j) if (i + j < n) pq += (t[j] - pm) * (t[j] - pm);
        mv_merge(cnt, mean, m2, c, pm, pq);
    }
    group_mv(cnt, mean, m2, sh, sh2, sh3);
    a = mean;
    b = rsqrtf(m2 / (float)cols + EPS);
#else
    float q = 0.f;
    for (long long i = (long long)lane * VEC; i < n; i += (long long)TPR * VEC) {
        load_vec<H_STATS>(xr, i, n, vec_ok, 0.f, t);
#pragma unroll
        for (int j = 0; j < VEC; ++j) q += t[j] * t[j];
    }
    b = rsqrtf(group_sum(q, sh) / (float)cols + EPS);
#endif
    for (long long i = (long long)lane * VEC; i < n; i += (long long)TPR * VEC) {
        load_vec<H_REREAD>(xr, i, n, vec_ok, 0.f, t);
        write_vec(yr, w, bias, i, n, vec_ok, wvec_ok, t, a, b, false);
    }
}
