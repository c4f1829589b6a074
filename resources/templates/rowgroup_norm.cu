// cuda.<rms_norm_dim|l2_norm_dim|l1_norm_dim|instance_norm>.rowgroup: a long row (or an instance norm's
// (sample, channel) plane) cut across SPLIT plain blocks, each chunk kept in shared memory, so the row is
// read from memory once. Rows whose elements lie `inner` apart (held-out shapes of a card over dim with
// inner > 1) are correct, not fast: every block reads its whole row, element by element, and nothing waits. FAMILY as anydim_norm_rows.cu: 2 RMS norm (no weight), 3 L2 (F.normalize),
// 4 L1 (x over the mean of |x|), and 5 instance norm without affine. A chunk posts one slot word: the
// sum of squares or of |x| (high half zero), or (mean, M2), whose count the chunk bounds give. Every
// block merges its row's slots in rank order, so all of them get the same bits.
#if FAMILY == 4
#define TERM(v) fabsf(v)
#else
#define TERM(v) ((v) * (v))
#endif

// A thread's sums over its packs: for the sum norms s1 is the sum of TERM; for instance norm s1 and s2
// are sums of d and d * d with d = x - shift (the chunk's first value, the same for every thread, so a
// mean far from zero does not cancel the variance away). Packs are padded past the row's ends with a
// value that adds nothing (0, or the shift for instance norm: d = 0), so no element is tested here.
struct Sums { float s1, s2; };

__device__ __forceinline__ void add_pack(const Packed &pk, float shift, Sums &a)
{
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
        const float v = to_f(pk.v[j]);
#if FAMILY == 5
        const float d = v - shift;
        a.s1 += d;
        a.s2 += d * d;
#else
        a.s1 += TERM(v);
#endif
    }
}

// The pad that adds nothing to a chunk's sums.
__device__ __forceinline__ float neutral_pad(float shift) { return FAMILY == 5 ? shift : 0.f; }

// The block's sums of its n elements as a slot word: (sum, 0), or (mean, M2).
__device__ __forceinline__ unsigned long long block_word(Sums a, float n, float shift, float *sh)
{
    const float s1 = block_sum(a.s1, sh);
#if FAMILY == 5
    const float s2 = block_sum(a.s2, sh);
    const float inv = n > 0.f ? rcp(n) : 0.f;
    return slot_word(shift + s1 * inv, fmaxf(s2 - s1 * s1 * inv, 0.f));
#else
    return slot_word(s1, 0.f);
#endif
}

// Merges slot word v of a chunk of nb elements into (N, M, Q): a sum adds into M.
__device__ __forceinline__ void merge_word(float &N, float &M, float &Q, float nb, float mb, float qb)
{
#if FAMILY == 5
    chan(N, M, Q, nb, mb, qb);
#else
    M += mb;
#endif
}

// The row's statistics into res[0..2] (count, mean or sum, M2), the same in every block of the row: the
// first warp waits for every chunk's post, then lane l merges chunks l, l + 32, ... in order and lane 0
// merges the lanes in order. Chunks are cut from the row's pack-aligned start, `off` elements before it.
// A block that waited about 0.1 s in vain reads the whole row itself.
__device__ __forceinline__ void row_stats(const unsigned long long *part, const unsigned *count, long long row, const T *xs, long long cols,
                                          long long off, long long step, float *sh, float *res, int *posted)
{
    if (threadIdx.x < 32) {
        const int l = threadIdx.x;
        const bool all = step == 1 && warp_wait_row(part, count, row);
        float n = 0.f, m = 0.f, q = 0.f;
        if (all)
            for (int r = l; r < SPLIT; r += 32) {
                const unsigned long long v = ld_relaxed64(part + row * SPLIT + r);
                long long lo, hi;
                chunk_bounds(cols + off, r, lo, hi);
                merge_word(n, m, q, (float)(hi - (lo > off ? lo : off)), slot_lo(v), slot_hi(v));
            }
        float N = 0.f, M = 0.f, Q = 0.f;
        for (int r = 0; r < 32 && r < SPLIT; ++r)
            merge_word(N, M, Q, __shfl_sync(0xffffffffu, n, r), __shfl_sync(0xffffffffu, m, r), __shfl_sync(0xffffffffu, q, r));
        if (l == 0) { res[0] = (float)cols; res[1] = M; res[2] = Q; *posted = all; }
    }
    __syncthreads();
    if (!*posted) {
        // The slow path: the whole row, a value at a time (`step` apart).
        const float shift = cols > 0 ? to_f(xs[0]) : 0.f;
        Sums a = {0.f, 0.f};
        for (long long i = threadIdx.x; i < cols; i += BLOCK) {
            Packed pk;
            pk.v[0] = xs[i * step];
            for (int j = 1; j < VEC; ++j) pk.v[j] = from_f(neutral_pad(shift));
            add_pack(pk, shift, a);
        }
        const unsigned long long v = block_word(a, (float)cols, shift, sh);
        if (threadIdx.x == 0) { res[0] = (float)cols; res[1] = slot_lo(v); res[2] = slot_hi(v); }
    }
    __syncthreads();
}

// The output of one value from the row's statistics: y = (x - a) * k.
__device__ __forceinline__ void row_scale(const float *res, long long cols, float &a, float &k)
{
    a = 0.f;
#if FAMILY == 2
    k = 1.f / sqrtf(res[1] / (float)cols + EPS);
#elif FAMILY == 3
    k = 1.f / fmaxf(sqrtf(res[1]), EPS);
#elif FAMILY == 4
    k = (float)cols / res[1];
#else
    a = res[1];
    k = rsqrtf(res[2] / res[0] + EPS);
#endif
}

__device__ __forceinline__ void write_pack(T *ys, long long i, long long first, long long hi, bool vec_ok, const Packed &pk, float a, float k)
{
    float o[VEC];
#pragma unroll
    for (int j = 0; j < VEC; ++j) o[j] = (to_f(pk.v[j]) - a) * k;
    store_pack(ys, i, first, hi, vec_ok, o);
}

extern "C" __global__ void KF_BOUNDS
kf_rowgroup_norm(const T *__restrict__ x, T *__restrict__ y, unsigned long long *__restrict__ part, unsigned *__restrict__ count, long long rows,
                 long long cols, long long inner)
{
    extern __shared__ __align__(16) unsigned char kf_smem[];
    Raw *smem = reinterpret_cast<Raw *>(kf_smem);
    __shared__ float sh[BLOCK / 32], res[3];
    __shared__ int posted;
    const long long row = blockIdx.x / SPLIT;
    const int rank = blockIdx.x % SPLIT;
    if (row >= rows) return;
    const bool contiguous = inner == 1;
    const long long base = row / inner * cols * inner + row % inner;
    // A contiguous row from its pack-aligned start (row_packs.cuh): its elements are [off, n) of xv
    // and yv (off is 0 for a strided row).
    const bool vec_ok = contiguous && packs_align(x, y);
    const int off = row_offset(x + base, vec_ok);
    const long long n = contiguous ? cols + off : cols;
    const T *xv = x + base - off;
    T *yv = y + base - off;
    long long lo, hi;
    chunk_bounds(n, rank, lo, hi);
    const bool cached = contiguous && (unsigned long long)(hi - lo) * sizeof(T) <= dyn_smem_bytes();

    // Pass 1: the chunk into shared memory and this block's sums, posted; then the row's statistics.
    if (contiguous) {
        const long long f = lo > off ? lo : off;
        const float shift = f < hi ? to_f(xv[f]) : 0.f;
        Sums a = {0.f, 0.f};
        stage_chunk(xv, lo, hi, off, vec_ok, cached, smem, neutral_pad(shift), [&](const Packed &pk, long long) { add_pack(pk, shift, a); });
        const unsigned long long word = block_word(a, (float)(hi > f ? hi - f : 0), shift, sh);
        if (threadIdx.x == 0) post_partial(part, count, row, rank, word);
    }
    row_stats(part, count, row, xv + off, cols, off, inner, sh, res, &posted);
    float mean, k;
    row_scale(res, cols, mean, k);

    // Pass 2: write the chunk from shared memory (re-read from global memory when it did not fit).
    if (!contiguous) {
        for (long long i = lo + threadIdx.x; i < hi; i += BLOCK) yv[i * inner] = from_f((to_f(xv[i * inner]) - mean) * k);
        return;
    }
    for_chunk_packs(xv, lo, hi, off, vec_ok, cached, smem, [&](const Packed &pk, long long i) { write_pack(yv, i, off, hi, vec_ok, pk, mean, k); });
}
