// cuda.instance_norm.stream: planes of megabytes (a group norm's 8 MiB groups, a layer norm's 16 MiB
// rows, through instance norm's views) read from memory once by a persistent grid. The row group
// (rowgroup_norm.cu) gives each chunk its own block, and a block that has posted its chunk waits,
// holding its SM slot, until the row's last chunk is dispatched: with 256 chunks a row that is most of
// a wave, and the device idles. Here every block walks chunks t = blockIdx.x + i * gridDim.x through
// NBUF shared-memory buffers: at step i it sums chunk i (its bulk copy started NBUF - 1 steps ago) and
// posts it, then waits for the row of chunk i - 1, writes that chunk and starts the copy of chunk
// i + NBUF - 1 into the buffer it freed. FAMILY and the exchange as rowgroup_norm.cuh.
//
// A post never waits, and a row's chunks span at most two rounds of the grid when SPLIT <= gridDim.x, so
// every chunk a wait needs is posted by a block that is not waiting on that row: nothing waits in a
// cycle. A grid too small for that (a device with few SMs) skips the exchange: each block reads its
// row's statistics from global memory itself (slow, correct). So does a block that waited about 0.1 s
// in vain.
// One chunk of the stream: row, bounds from the row's pack-aligned start, and how it is loaded.
struct StreamChunk {
    long long row, lo, hi;
    int off;
    bool cached, bulk;
};

__device__ __forceinline__ StreamChunk stream_chunk(long long t, const T *x, long long cols, bool vec_ok, unsigned buf_bytes)
{
    StreamChunk c;
    c.row = t / SPLIT;
    c.off = row_offset(x + c.row * cols, vec_ok);
    chunk_bounds(cols + c.off, (int)(t % SPLIT), c.lo, c.hi);
    c.cached = (unsigned long long)(c.hi - c.lo) * sizeof(T) <= buf_bytes;
    // The copy engine takes the whole 16-byte packs inside the row; a chunk's first and last packs may
    // hold elements of the rows around it, and those two load through registers.
    const long long blo = c.lo < c.off ? c.lo + VEC : c.lo, bhi = c.hi / VEC * VEC;
    c.bulk = c.cached && vec_ok && VEC * sizeof(T) == 16 && bhi > blo;
    return c;
}

// Thread 0 starts the bulk copy of chunk t into buffer b (a no-op for a chunk loaded through registers).
__device__ __forceinline__ void stream_issue(long long t, long long total, const T *x, long long cols, bool vec_ok, unsigned buf_bytes,
                                             unsigned char *smem_base, int b, unsigned long long *bar)
{
    if (t >= total || threadIdx.x != 0) return;
    const StreamChunk c = stream_chunk(t, x, cols, vec_ok, buf_bytes);
    if (!c.bulk) return;
    const long long blo = c.lo < c.off ? c.lo + VEC : c.lo, bhi = c.hi / VEC * VEC;
    const T *xv = x + c.row * cols - c.off;
    Raw *smem = reinterpret_cast<Raw *>(smem_base + b * buf_bytes);
    bulk_copy_in(smem + (blo - c.lo) / VEC, xv + blo, (unsigned)((bhi - blo) * sizeof(T)), &bar[b]);
}

extern "C" __global__ void KF_BOUNDS
kf_rowstream_norm(const T *__restrict__ x, T *__restrict__ y, unsigned long long *__restrict__ part, unsigned *__restrict__ count, long long rows,
                  long long cols)
{
    extern __shared__ __align__(16) unsigned char kf_smem[];
    __shared__ float sh[BLOCK / 32], res[3];
    __shared__ int posted;
    __shared__ __align__(8) unsigned long long bar[NBUF];
    const unsigned buf_bytes = dyn_smem_bytes() / NBUF / 16 * 16;
    const long long total = rows * SPLIT, grid = gridDim.x;
    const bool exchange = SPLIT <= grid;
    const bool vec_ok = packs_align(x, y);
    if (threadIdx.x == 0)
        for (int b = 0; b < NBUF; ++b) mbar_init(&bar[b]);
    __syncthreads();
    for (int k = 0; k < NBUF - 1; ++k)
        stream_issue(blockIdx.x + k * grid, total, x, cols, vec_ok, buf_bytes, kf_smem, k, bar);
    unsigned phases = 0; // bit b: the parity of buffer b's next completed copy

    for (long long i = 0;; ++i) {
        const long long t = blockIdx.x + i * grid, tw = t - grid;
        if (tw >= total) break;

        // Chunk t, copied in since NBUF - 1 steps ago: its sums, posted before this block waits on anything.
        if (t < total) {
            const int b = (int)(i % NBUF);
            const StreamChunk c = stream_chunk(t, x, cols, vec_ok, buf_bytes);
            const T *xv = x + c.row * cols - c.off;
            Raw *smem = reinterpret_cast<Raw *>(kf_smem + b * buf_bytes);
            const long long f = c.lo > c.off ? c.lo : c.off;
            const float shift = f < c.hi ? to_f(xv[f]) : 0.f, pad = neutral_pad(shift);
            Sums s = {0.f, 0.f};
            if (c.bulk) {
                const long long last = (c.hi - 1) / VEC * VEC;
                if (threadIdx.x == 0 && c.lo < c.off) smem[0] = load_pack_in(xv, c.lo, c.off, c.hi, true, pad).r;
                if (threadIdx.x == BLOCK - 1 && last + VEC > c.hi && last >= c.lo)
                    smem[(last - c.lo) / VEC] = load_pack_in(xv, last, c.off, c.hi, true, pad).r;
                mbar_wait(&bar[b], (phases >> b) & 1u);
                phases ^= 1u << b;
                __syncthreads(); // the edge packs are in
                for (long long j = c.lo + (long long)threadIdx.x * VEC; j < c.hi; j += (long long)BLOCK * VEC)
                    add_pack(Packed{smem[(j - c.lo) / VEC]}, shift, s);
            } else {
                stage_chunk(xv, c.lo, c.hi, c.off, vec_ok, c.cached, smem, pad, [&](const Packed &pk, long long) { add_pack(pk, shift, s); });
            }
            const unsigned long long word = block_word(s, (float)(c.hi > f ? c.hi - f : 0), shift, sh);
            if (threadIdx.x == 0) post_partial(part, count, c.row, (int)(t % SPLIT), word);
        }

        // Chunk tw, summed at the last step: wait for its row's statistics, write it from its buffer, and
        // refill that buffer with the chunk NBUF - 1 steps ahead.
        if (tw >= 0) {
            const int b = (int)((i - 1) % NBUF);
            const StreamChunk c = stream_chunk(tw, x, cols, vec_ok, buf_bytes);
            const T *xv = x + c.row * cols - c.off;
            T *yv = y + c.row * cols - c.off;
            row_stats(part, count, c.row, xv + c.off, cols, c.off, 1, exchange, sh, res, &posted);
            float a, k;
            row_scale(res, cols, a, k);
            const Raw *smem = reinterpret_cast<const Raw *>(kf_smem + b * buf_bytes);
            for_chunk_packs(xv, c.lo, c.hi, c.off, vec_ok, c.cached, smem,
                            [&](const Packed &pk, long long j) { write_pack(yv, j, c.off, c.hi, vec_ok, pk, a, k); });
        }
        __syncthreads(); // every thread is done with the buffer before the copy engine refills it
        stream_issue(blockIdx.x + (i + NBUF - 1) * grid, total, x, cols, vec_ok, buf_bytes, kf_smem, (int)((i + NBUF - 1) % NBUF), bar);
    }
}
