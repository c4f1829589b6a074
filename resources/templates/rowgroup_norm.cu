// cuda.<rms_norm_dim|l2_norm_dim|l1_norm_dim|instance_norm>.rowgroup: a long row (or an instance norm's
// (sample, channel) plane) cut across SPLIT plain blocks, each chunk kept in shared memory, so the row is
// read from memory once. Rows whose elements lie `inner` apart (held-out shapes of a card over dim with
// inner > 1) are correct, not fast: every block reads its whole row, element by element, and nothing
// waits. FAMILY and the exchange as rowgroup_norm.cuh.
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
    row_stats(part, count, row, xv + off, cols, off, inner, true, sh, res, &posted);
    float mean, k;
    row_scale(res, cols, mean, k);

    // Pass 2: write the chunk from shared memory (re-read from global memory when it did not fit).
    if (!contiguous) {
        for (long long i = lo + threadIdx.x; i < hi; i += BLOCK) yv[i * inner] = from_f((to_f(xv[i * inner]) - mean) * k);
        return;
    }
    for_chunk_packs(xv, lo, hi, off, vec_ok, cached, smem, [&](const Packed &pk, long long i) { write_pack(yv, i, off, hi, vec_ok, pk, mean, k); });
}
