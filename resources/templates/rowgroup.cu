// cuda.<softmax|log_softmax>.rowgroup: a long row cut across SPLIT plain blocks that exchange partial
// statistics through a workspace and a per-row counter, with a fallback for a block that waits too long.

#if FAST_EXP
#define EXPF __expf
#else
#define EXPF expf
#endif

// Adds a pack to this thread's online (max, sum of exp); -inf padding adds nothing.
__device__ __forceinline__ void accumulate(const Packed &pk, float &m, float &s)
{
    float pm = to_f(pk.v[0]);
#pragma unroll
    for (int j = 1; j < VEC; ++j) pm = fmaxf(pm, to_f(pk.v[j]));
    if (pm == -KF_INF) return;
    if (pm > m) { s *= EXPF(m - pm); m = pm; }
#pragma unroll
    for (int j = 0; j < VEC; ++j) s += EXPF(to_f(pk.v[j]) - m);
}

// The row's statistics into res[0] (max) and res[1] (sum of exp), the same in every block of the row:
// the first warp waits for every chunk's post, then merges the slots in rank order (two per lane past
// 32 chunks). A block that waited about 0.1 s in vain reads the whole row itself.
__device__ __forceinline__ void row_stats(const unsigned long long *part, const unsigned *count, long long row, const T *xv, long long off,
                                          long long n, bool vec_ok, float *sh, float *sh2, float *res, int *posted)
{
    if (threadIdx.x < 32) {
        const int l = threadIdx.x;
        const bool all = warp_wait_row(part, count, row);
        float pm = -KF_INF, ps = 0.f;
        if (all)
            for (int r = l; r < SPLIT; r += 32) {
                const unsigned long long v = ld_relaxed64(part + row * SPLIT + r);
                ms_merge(pm, ps, slot_lo(v), slot_hi(v));
            }
        float M = -KF_INF, S = 0.f;
        for (int r = 0; r < 32 && r < SPLIT; ++r) ms_merge(M, S, __shfl_sync(0xffffffffu, pm, r), __shfl_sync(0xffffffffu, ps, r));
        if (l == 0) { res[0] = M; res[1] = S; *posted = all; }
    }
    __syncthreads();
    if (!*posted) {
        float M = -KF_INF, S = 0.f;
        // The fallback, element by element: it adds no registers to the kernel's common path.
        for (long long i = off + threadIdx.x; i < n; i += BLOCK) {
            Packed pk;
            pk.v[0] = xv[i];
            for (int j = 1; j < VEC; ++j) pk.v[j] = from_f(-KF_INF);
            accumulate(pk, M, S);
        }
        block_ms(M, S, sh, sh2);
        if (threadIdx.x == 0) { res[0] = M; res[1] = S; }
    }
    __syncthreads();
}

// One output pack from input pack pk and the row's statistics (a = max, b = 1 / sum or log(sum)).
__device__ __forceinline__ void write_pack(T *ys, long long i, long long first, long long hi, bool vec_ok, const Packed &pk, float a, float b)
{
    float o[VEC];
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
        const float v = to_f(pk.v[j]);
        o[j] = FAMILY == 0 ? EXPF(v - a) * b : (v - a) - b;
    }
    store_pack(ys, i, first, hi, vec_ok, o);
}

extern "C" __global__ void KF_BOUNDS
kf_rowgroup(const T *__restrict__ x, T *__restrict__ y, unsigned long long *__restrict__ part, unsigned *__restrict__ count, long long rows, long long cols)
{
    extern __shared__ __align__(16) unsigned char kf_smem[];
    Raw *smem = reinterpret_cast<Raw *>(kf_smem);
    __shared__ float sh[BLOCK / 32], sh2[BLOCK / 32], res[2];
    __shared__ int posted;
    const long long row = blockIdx.x / SPLIT;
    const int rank = blockIdx.x % SPLIT;
    if (row >= rows) return;
    // The row from its pack-aligned start (row_packs.cuh): its elements are [off, off + cols) of xv.
    const bool vec_ok = packs_align(x, y);
    const int off = row_offset(x + row * cols, vec_ok);
    const T *xv = x + row * cols - off;
    long long lo, hi;
    chunk_bounds(cols + off, rank, lo, hi);
    const bool cached = (unsigned long long)(hi - lo) * sizeof(T) <= dyn_smem_bytes();

    // Pass 1: the chunk into shared memory and this block's statistics.
    float m = -KF_INF, s = 0.f;
    stage_chunk(xv, lo, hi, off, vec_ok, cached, smem, -KF_INF, [&](const Packed &pk, long long) { accumulate(pk, m, s); });
    block_ms(m, s, sh, sh2);

    // Post this chunk's statistics, then wait until every chunk of the row has posted.
    if (threadIdx.x == 0) post_partial(part, count, row, rank, slot_word(m, s));
    row_stats(part, count, row, xv, off, cols + off, vec_ok, sh, sh2, res, &posted);
    const float a = res[0], b = FAMILY == 0 ? 1.f / res[1] : logf(res[1]);

    // Pass 2: write the chunk from shared memory (re-read from global memory when it did not fit).
    T *yv = y + row * cols - off;
    for_chunk_packs(xv, lo, hi, off, vec_ok, cached, smem, [&](const Packed &pk, long long i) { write_pack(yv, i, off, hi, vec_ok, pk, a, b); });
}
