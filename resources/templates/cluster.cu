// cuda.<family>.cluster: a row or group cut across a cluster of blocks, each chunk held in shared
// memory, partial statistics exchanged through distributed shared memory; read from memory once.

#if FAST_EXP
#define EXPF __expf
#else
#define EXPF expf
#endif

// Adds one pack to this thread's statistics: online (max, sum of exp) for softmax, else a sum of
// values or of squares. Padding (-inf or 0) adds nothing.
__device__ __forceinline__ void accumulate(const Packed &pk, float &m, float &s)
{
#if FAMILY <= 1
    float pm = to_f(pk.v[0]);
#pragma unroll
    for (int j = 1; j < VEC; ++j) pm = fmaxf(pm, to_f(pk.v[j]));
    if (pm != -KF_INF) {
        if (pm > m) { s *= EXPF(m - pm); m = pm; }
#pragma unroll
        for (int j = 0; j < VEC; ++j) s += EXPF(to_f(pk.v[j]) - m);
    }
#elif FAMILY == 3
#pragma unroll
    for (int j = 0; j < VEC; ++j) { const float v = to_f(pk.v[j]); s += v * v; }
#else
#pragma unroll
    for (int j = 0; j < VEC; ++j) s += to_f(pk.v[j]);
#endif
}

// Copies `bytes` from global to this block's shared memory with the bulk-copy engine and waits for it:
// one thread issues the copy, so the whole chunk is in flight at once without staging through registers.
__device__ __forceinline__ void bulk_load(void *dst, const void *src, unsigned bytes, unsigned long long *bar)
{
    if (threadIdx.x == 0) {
        mbar_init(bar);
        bulk_copy_in(dst, src, bytes, bar);
    }
    __syncthreads(); // the barrier is initialised before anyone waits on it
    mbar_wait(bar, 0);
}

// Where a block's chunk lives and what pass 2 needs. Offsets are within the row or group.
struct Chunk {
    const T *xs; T *ys; const T *w; const T *bias; const Raw *cache;
    long long lo, hi, hw, ch0;
};

// VEC elements at i as floats: from the shared-memory cache (C) or global memory, as one vector access
// (V) or element by element. Separate instantiations keep the vector and scalar paths from being merged
// into one path with the scalar path's alignment.
template<bool V, bool C> __device__ __forceinline__ void chunk_floats(const Chunk &k, long long i, float *f)
{
    if (C) {
        load_floats<VEC>(reinterpret_cast<const T *>(k.cache + (i - k.lo) / VEC), f);
    } else if (V) {
        load_floats<VEC>(k.xs + i, f);
    } else {
#pragma unroll
        for (int j = 0; j < VEC; ++j) f[j] = i + j < k.hi ? to_f(k.xs[i + j]) : 0.f;
    }
}

// Sum of squared deviations from `mean` over this thread's packs of the chunk.
template<bool V, bool C> __device__ __forceinline__ float chunk_m2(const Chunk &k, float mean)
{
    float q = 0.f;
    for (long long i = k.lo + (long long)threadIdx.x * VEC; i < k.hi; i += (long long)BLOCK * VEC) {
        float f[VEC];
        chunk_floats<V, C>(k, i, f);
#pragma unroll
        for (int j = 0; j < VEC; ++j) if (i + j < k.hi) { const float d = f[j] - mean; q += d * d; }
    }
    return q;
}

// Pass 2: the outputs of this thread's packs once the statistics a and b are known.
template<bool V, bool C> __device__ __forceinline__ void chunk_write(const Chunk &k, float a, float b)
{
#if FAMILY == 4
    long long ch = -1, chEnd = 0;
    float ca = 0.f, cb = 0.f;
#endif
    for (long long i = k.lo + (long long)threadIdx.x * VEC; i < k.hi; i += (long long)BLOCK * VEC) {
        float f[VEC], o[VEC];
        chunk_floats<V, C>(k, i, f);
#if FAMILY == 2 || FAMILY == 3
        float wv[VEC];
        if (V) load_floats<VEC>(k.w + i, wv);
        else for (int j = 0; j < VEC; ++j) wv[j] = i + j < k.hi ? to_f(k.w[i + j]) : 0.f;
#endif
#if FAMILY == 2
        float bv[VEC];
        if (V) load_floats<VEC>(k.bias + i, bv);
        else for (int j = 0; j < VEC; ++j) bv[j] = i + j < k.hi ? to_f(k.bias[i + j]) : 0.f;
#endif
#pragma unroll
        for (int j = 0; j < VEC; ++j) {
            const float v = f[j];
#if FAMILY == 0
            o[j] = EXPF(v - a) * b;
#elif FAMILY == 1
            o[j] = (v - a) - b;
#elif FAMILY == 2
            o[j] = (v - a) * b * wv[j] + bv[j];
#elif FAMILY == 3
            o[j] = v * b * wv[j];
#else
            // Per-channel affine: the channel changes every hw elements of the group (with vector access,
            // hw is a multiple of VEC, so only at a pack's first element).
            if ((!V || j == 0) && i + j >= chEnd && i + j < k.hi) {
                ch = (i + j) / k.hw;
                chEnd = (ch + 1) * k.hw;
                ca = b * to_f(k.w[k.ch0 + ch]);
                cb = to_f(k.bias[k.ch0 + ch]) - a * ca;
            }
            o[j] = v * ca + cb;
#endif
        }
        if (V) {
            store_floats<VEC>(k.ys + i, o);
        } else {
#pragma unroll
            for (int j = 0; j < VEC; ++j) if (i + j < k.hi) k.ys[i + j] = from_f(o[j]);
        }
    }
}

// OCC > 0 asks for that many resident threads per SM, capping registers per thread to get them.
#if OCC > 0
#define KF_BOUNDS __launch_bounds__(BLOCK, (OCC / BLOCK > 0 ? OCC / BLOCK : 1))
#else
#define KF_BOUNDS __launch_bounds__(BLOCK)
#endif
extern "C" __global__ void KF_BOUNDS
#if FAMILY == 4
kf_cluster(const T *__restrict__ x, const T *__restrict__ w, const T *__restrict__ bias, T *__restrict__ y,
           long long n, long long c, long long hw, long long groups)
{
    const long long cpg = c / groups, len = cpg * hw, seg = cl_id();
    const long long base = (seg / groups * c + seg % groups * cpg) * hw, ch0 = seg % groups * cpg;
    if (seg >= n * groups) return;
    const bool vec_ok = VEC > 1 && hw % VEC == 0 && aligned_to(x, VEC * sizeof(T)) && aligned_to(y, VEC * sizeof(T));
#else
kf_cluster(const T *__restrict__ x, const T *__restrict__ w, const T *__restrict__ bias, T *__restrict__ y,
           long long rows, long long cols)
{
    const long long len = cols, seg = cl_id(), base = seg * cols;
    if (seg >= rows) return;
    bool vec_ok = VEC > 1 && cols % VEC == 0 && aligned_to(x, VEC * sizeof(T)) && aligned_to(y, VEC * sizeof(T));
#if FAMILY == 2 || FAMILY == 3
    vec_ok = vec_ok && aligned_to(w, VEC * sizeof(T));
#endif
#if FAMILY == 2
    vec_ok = vec_ok && aligned_to(bias, VEC * sizeof(T));
#endif
#endif
    extern __shared__ __align__(16) unsigned char kf_smem[];
    Raw *cache = reinterpret_cast<Raw *>(kf_smem);
    __shared__ float sh[BLOCK / 32], sh2[BLOCK / 32], part[3], res[3];

    const unsigned rank = cl_rank(), nct = cl_size();
    const long long per = ((len + nct - 1) / nct + VEC - 1) / VEC * VEC;
    const long long lo = rank * per < len ? rank * per : len, hi = lo + per < len ? lo + per : len;
    const bool cached = (unsigned long long)(hi - lo) * sizeof(T) <= dyn_smem_bytes();
    const T *xs = x + base;
    T *ys = y + base;
    const long long stride = (long long)BLOCK * VEC;
    const float pad = FAMILY <= 1 ? -KF_INF : 0.f;

    // Pass 1: read the chunk once, keep it, and accumulate this thread's statistics. With the bulk
    // copy, the register-staged path is only the fallback for unaligned shapes, so it is not unrolled.
#define LOAD_UNROLL (TMA ? 1 : UNROLL)
    float m = -KF_INF, s = 0.f;
#if TMA
    __shared__ unsigned long long bar;
    const bool bulk = cached && hi > lo && aligned_to(xs + lo, 16) && ((hi - lo) * sizeof(T)) % 16 == 0;
#else
    const bool bulk = false;
#endif
    if (bulk) {
#if TMA
        bulk_load(cache, xs + lo, (unsigned)((hi - lo) * sizeof(T)), &bar);
        for (long long i = lo + (long long)threadIdx.x * VEC; i < hi; i += stride) {
            Packed pk;
            pk.r = cache[(i - lo) / VEC];
            accumulate(pk, m, s);
        }
#endif
    } else {
        for (long long i0 = lo + (long long)threadIdx.x * VEC; i0 < hi; i0 += stride * LOAD_UNROLL) {
            // Packs past the chunk hold the padding, which adds nothing to the statistics.
            Packed pk[LOAD_UNROLL];
#pragma unroll
            for (int u = 0; u < LOAD_UNROLL; ++u) {
                if (i0 + u * stride < hi) pk[u] = load_pack(xs, i0 + u * stride, hi, vec_ok, pad);
                else for (int j = 0; j < VEC; ++j) pk[u].v[j] = from_f(pad);
            }
#pragma unroll
            for (int u = 0; u < LOAD_UNROLL; ++u) {
                const long long i = i0 + u * stride;
                if (cached && i < hi) cache[(i - lo) / VEC] = pk[u].r;
                accumulate(pk[u], m, s);
            }
        }
    }

    // The block's partial statistics: (max, sum of exp) or (count, mean, M2) or (sum of squares).
#if FAMILY <= 1
    block_ms(m, s, sh, sh2);
    if (threadIdx.x == 0) { part[0] = m; part[1] = s; }
#elif FAMILY == 3
    s = block_sum(s, sh);
    if (threadIdx.x == 0) part[0] = s;
#else
    const float cnt = (float)(hi - lo);
    const float bmean = hi > lo ? block_sum(s, sh) / cnt : block_sum(0.f, sh);
    const Chunk k = {xs, ys, w, bias, cache, lo, hi, 0, 0};
    float q = cached ? chunk_m2<true, true>(k, bmean) : vec_ok ? chunk_m2<true, false>(k, bmean) : chunk_m2<false, false>(k, bmean);
    q = block_sum(q, sh);
    if (threadIdx.x == 0) { part[0] = cnt; part[1] = bmean; part[2] = q; }
#endif

    // Combine the partials of every block of the cluster in rank order, so all blocks agree exactly.
    float a = 0.f, b = 0.f;
    if (nct > 1) { cl_arrive(); cl_wait(); } else { __syncthreads(); }
    cl_merge(part, res, nct);
    __syncthreads();
#if FAMILY <= 1
    a = res[0];
    b = FAMILY == 0 ? 1.f / res[1] : logf(res[1]);
#elif FAMILY == 3
    b = rsqrtf(res[0] / (float)len + EPS);
#else
    a = res[1];
    b = rsqrtf(res[2] / (float)len + EPS);
#endif
    // This block is done reading the others' partials; it waits for them to be done with its own
    // before it exits.
    if (nct > 1) cl_arrive();

    // Pass 2: write the chunk from shared memory (or a second read when it did not fit).
#if FAMILY == 4
    const Chunk kw = {xs, ys, w, bias, cache, lo, hi, hw, ch0};
#else
    const Chunk kw = {xs, ys, w, bias, cache, lo, hi, 0, 0};
#endif
    if (vec_ok) {
        if (cached) chunk_write<true, true>(kw, a, b);
        else chunk_write<true, false>(kw, a, b);
    } else {
        if (cached) chunk_write<false, true>(kw, a, b);
        else chunk_write<false, false>(kw, a, b);
    }
    if (nct > 1) cl_wait();
}
