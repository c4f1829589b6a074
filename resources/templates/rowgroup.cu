// cuda.<softmax|log_softmax>.rowgroup: a long row cut across SPLIT plain blocks that exchange partial
// statistics through a workspace and a per-row counter, with a fallback for a block that waits too long.

// How many times a block polls its row's partials before it reads the row itself (check-templates
// sets 0 to verify that path).
#ifndef KF_SPIN_LIMIT
#define KF_SPIN_LIMIT (1 << 20)
#endif
#if FAST_EXP
#define EXPF __expf
#else
#define EXPF expf
#endif

// A partial is (max, sum of exp) in one 64-bit word, max in the low half. Its slot holds all ones
// until posted: a max is never NaN (fmaxf drops NaN), so the word is its own ready flag. A block
// posts with one relaxed 64-bit store and counts itself in the row's counter with a relaxed
// reduction: no fence and no round trip. The counter only says when to look; the slots say what is
// there, so a slot read before its store landed is simply read again.
#define KF_UNPOSTED 0xffffffffffffffffull

// Every slot unposted and every counter zero at the start of each launch (the workspace is not
// cleared for us).
extern "C" __global__ void kf_rowgroup_reset(unsigned long long *__restrict__ part, unsigned *__restrict__ count, long long n, long long rows)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) part[i] = KF_UNPOSTED;
    if (i < rows) count[i] = 0u;
}

__device__ __forceinline__ unsigned long long ld_relaxed64(const unsigned long long *p)
{
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ unsigned ld_relaxed32(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

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

// (max, sum of exp) over [lo, hi) of row xs read from global memory, UNROLL packs in flight per
// thread; with `cache`, the packs are kept in shared memory too.
__device__ __forceinline__ void stream_stats(const T *xs, long long lo, long long hi, bool vec_ok, Raw *cache, float &m, float &s)
{
    const long long stride = (long long)BLOCK * VEC;
    for (long long i0 = lo + (long long)threadIdx.x * VEC; i0 < hi; i0 += stride * UNROLL) {
        Packed pk[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            if (i0 + u * stride < hi) pk[u] = load_pack(xs, i0 + u * stride, hi, vec_ok, -KF_INF);
            else for (int j = 0; j < VEC; ++j) pk[u].v[j] = from_f(-KF_INF);
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const long long i = i0 + u * stride;
            if (cache && i < hi) cache[(i - lo) / VEC] = pk[u].r;
            accumulate(pk[u], m, s);
        }
    }
}

// Chunk `rank` of a row is [lo, hi): SPLIT chunks of whole packs, the last ones short or empty.
__device__ __forceinline__ void chunk_bounds(long long cols, int rank, long long &lo, long long &hi)
{
    const long long per = ((cols + SPLIT - 1) / SPLIT + VEC - 1) / VEC * VEC;
    lo = rank * per < cols ? rank * per : cols;
    hi = lo + per < cols ? lo + per : cols;
}

// One pack copied from global to shared memory without passing through registers (4, 8 or 16 bytes;
// callers skip 2-byte packs).
__device__ __forceinline__ void cp_async_pack(Raw *dst, const T *src)
{
    if constexpr (sizeof(Raw) == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(smem_addr(dst)), "l"(src) : "memory");
    else if constexpr (sizeof(Raw) == 8)
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" :: "r"(smem_addr(dst)), "l"(src) : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(smem_addr(dst)), "l"(src) : "memory");
}

// Thread 0 posts this block's chunk statistics.
__device__ __forceinline__ void post_partial(unsigned long long *part, unsigned *count, long long row, int rank, float m, float s)
{
    const unsigned long long v = ((unsigned long long)__float_as_uint(s) << 32) | __float_as_uint(m);
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" :: "l"(part + row * SPLIT + rank), "l"(v) : "memory");
    asm volatile("red.relaxed.gpu.global.add.u32 [%0], 1;" :: "l"(count + row) : "memory");
}

// The row's statistics into res[0] (max) and res[1] (sum of exp), the same in every block of the row.
// The first warp waits until the row's counter is full and every slot is posted, then merges the
// slots in rank order (two per lane past 32 chunks). A block that waited about 0.1 s in vain reads
// the whole row itself.
__device__ __forceinline__ void row_stats(const unsigned long long *part, const unsigned *count, long long row, const T *xs, long long cols,
                                          bool vec_ok, float *sh, float *sh2, float *res, int *posted)
{
    if (threadIdx.x < 32) {
        const int l = threadIdx.x;
        float pm = -KF_INF, ps = 0.f;
        bool all = false;
        for (int spin = 0;; ++spin) {
            // One lane watches the counter; the warp reads the slots only once it is full.
            const bool full = __shfl_sync(0xffffffffu, l == 0 ? ld_relaxed32(count + row) >= SPLIT : false, 0);
            if (full) {
                bool mine = true;
                pm = -KF_INF;
                ps = 0.f;
                for (int r = l; r < SPLIT; r += 32) {
                    const unsigned long long v = ld_relaxed64(part + row * SPLIT + r);
                    mine = mine && v != KF_UNPOSTED;
                    ms_merge(pm, ps, __uint_as_float((unsigned)v), __uint_as_float((unsigned)(v >> 32)));
                }
                all = __all_sync(0xffffffffu, mine);
            }
            if (all || spin >= KF_SPIN_LIMIT) break;
            __nanosleep(100);
        }
        float M = -KF_INF, S = 0.f;
        for (int r = 0; r < 32 && r < SPLIT; ++r) ms_merge(M, S, __shfl_sync(0xffffffffu, pm, r), __shfl_sync(0xffffffffu, ps, r));
        if (l == 0) { res[0] = M; res[1] = S; *posted = all; }
    }
    __syncthreads();
    if (!*posted) {
        float M = -KF_INF, S = 0.f;
        stream_stats(xs, 0, cols, vec_ok, nullptr, M, S);
        block_ms(M, S, sh, sh2);
        if (threadIdx.x == 0) { res[0] = M; res[1] = S; }
    }
    __syncthreads();
}

// One output pack from input pack pk and the row's statistics (a = max, b = 1 / sum or log(sum)).
__device__ __forceinline__ void write_pack(T *ys, long long i, long long hi, bool vec_ok, const Packed &pk, float a, float b)
{
    float o[VEC];
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
        const float v = to_f(pk.v[j]);
        o[j] = FAMILY == 0 ? EXPF(v - a) * b : (v - a) - b;
    }
    if (vec_ok && i + VEC <= hi) {
        store_floats<VEC>(ys + i, o);
    } else {
#pragma unroll
        for (int j = 0; j < VEC; ++j) if (i + j < hi) ys[i + j] = from_f(o[j]);
    }
}

// MINB asks the compiler to fit that many blocks per SM in the register file (shared memory already
// bounds how many fit; registers should not bound it lower).
#if MINB
#define KF_BOUNDS __launch_bounds__(BLOCK, MINB)
#else
#define KF_BOUNDS __launch_bounds__(BLOCK)
#endif

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
    long long lo, hi;
    chunk_bounds(cols, rank, lo, hi);
    const bool cached = (unsigned long long)(hi - lo) * sizeof(T) <= dyn_smem_bytes();
    const bool vec_ok = VEC > 1 && cols % VEC == 0 && aligned_to(x, VEC * sizeof(T)) && aligned_to(y, VEC * sizeof(T));
    const T *xs = x + row * cols;
    T *ys = y + row * cols;

    // Pass 1: the chunk into shared memory and this block's statistics. TMA 1 has the bulk-copy engine
    // copy it (where it is 16-byte aligned), TMA 2 puts every pack in flight at once by asynchronous
    // copies that hold no registers, TMA 0 loads UNROLL packs at a time through registers.
    float m = -KF_INF, s = 0.f;
    bool staged = false;
#if TMA == 2
    if (sizeof(Raw) >= 4 && cached && vec_ok) {
        for (long long i = lo + (long long)threadIdx.x * VEC; i < hi; i += (long long)BLOCK * VEC)
            cp_async_pack(&smem[(i - lo) / VEC], xs + i);
        // Each thread reads back only the packs it copied, so its own wait is enough.
        asm volatile("cp.async.wait_all;" ::: "memory");
        staged = true;
    }
#elif TMA == 1
    __shared__ unsigned long long bar;
    if (cached && hi > lo && aligned_to(xs + lo, 16) && ((hi - lo) * sizeof(T)) % 16 == 0) {
        if (threadIdx.x == 0) {
            mbar_init(&bar);
            bulk_copy_in(smem, xs + lo, (unsigned)((hi - lo) * sizeof(T)), &bar);
        }
        __syncthreads(); // the barrier is initialised before anyone waits on it
        mbar_wait(&bar, 0);
        staged = true;
    }
#endif
    if (staged) {
        for (long long i = lo + (long long)threadIdx.x * VEC; i < hi; i += (long long)BLOCK * VEC)
            accumulate(Packed{smem[(i - lo) / VEC]}, m, s);
    } else {
        stream_stats(xs, lo, hi, vec_ok, cached ? smem : nullptr, m, s);
    }
    block_ms(m, s, sh, sh2);

    // Post this chunk's statistics, then wait until every chunk of the row has posted.
    if (threadIdx.x == 0) post_partial(part, count, row, rank, m, s);
    row_stats(part, count, row, xs, cols, vec_ok, sh, sh2, res, &posted);
    const float a = res[0], b = FAMILY == 0 ? 1.f / res[1] : logf(res[1]);

    // Pass 2: write the chunk from shared memory (re-read from global memory when it did not fit).
#pragma unroll 4
    for (long long i = lo + (long long)threadIdx.x * VEC; i < hi; i += (long long)BLOCK * VEC)
        write_pack(ys, i, hi, vec_ok, cached ? Packed{smem[(i - lo) / VEC]} : load_pack(xs, i, hi, vec_ok, 0.f), a, b);
}
