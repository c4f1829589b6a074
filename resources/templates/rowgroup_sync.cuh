// The row-group exchange shared by rowgroup.cu (softmax) and rowgroup_norm.cu (sum and variance norms):
// a row cut into SPLIT chunks, one per plain block; each block posts its chunk's statistics as one
// 64-bit word to a workspace slot and counts itself in the row's counter, then waits until every chunk
// of its row has posted. Needs SPLIT and VEC.

// How many times a block polls its row's partials before it reads the row itself (check-templates
// sets 0 to verify that path).
#ifndef KF_SPIN_LIMIT
#define KF_SPIN_LIMIT (1 << 20)
#endif
// Nanoseconds a waiting block sleeps between looks at its row's counter.
#ifndef KF_SPIN_NS
#define KF_SPIN_NS 100
#endif

// A slot holds all ones until posted. No word a kernel posts is all ones: its halves are floats that
// arithmetic made, and a NaN the GPU computes is the canonical 0x7fffffff, never 0xffffffff. So the
// word is its own ready flag: a block posts with one relaxed 64-bit store and counts itself with a
// relaxed reduction, no fence and no round trip. The counter only says when to look; the slots say what
// is there, so a slot read before its store landed is simply read again.
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

// Two floats as one slot word, lo in the low half.
__device__ __forceinline__ unsigned long long slot_word(float lo, float hi)
{
    return ((unsigned long long)__float_as_uint(hi) << 32) | __float_as_uint(lo);
}
__device__ __forceinline__ float slot_lo(unsigned long long v) { return __uint_as_float((unsigned)v); }
__device__ __forceinline__ float slot_hi(unsigned long long v) { return __uint_as_float((unsigned)(v >> 32)); }

// Chunk `rank` of a row of n = off + cols pack-counted elements is [lo, hi): SPLIT chunks of whole packs,
// the last ones short or empty.
__device__ __forceinline__ void chunk_bounds(long long n, int rank, long long &lo, long long &hi)
{
    const long long per = ((n + SPLIT - 1) / SPLIT + VEC - 1) / VEC * VEC;
    lo = rank * per < n ? rank * per : n;
    hi = lo + per < n ? lo + per : n;
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
__device__ __forceinline__ void post_partial(unsigned long long *part, unsigned *count, long long row, int rank, unsigned long long v)
{
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" :: "l"(part + row * SPLIT + rank), "l"(v) : "memory");
    asm volatile("red.relaxed.gpu.global.add.u32 [%0], 1;" :: "l"(count + row) : "memory");
}

// Called by the first warp: waits until the row's counter is full and every slot is posted, and says
// whether they were (false after about 0.1 s of waiting: the caller then reads the row itself). One
// lane watches the counter; the warp reads the slots only once it is full.
__device__ __forceinline__ bool warp_wait_row(const unsigned long long *part, const unsigned *count, long long row)
{
    const int l = threadIdx.x % 32;
    for (int spin = 0;; ++spin) {
        const bool full = __shfl_sync(0xffffffffu, l == 0 ? ld_relaxed32(count + row) >= SPLIT : false, 0);
        if (full) {
            bool mine = true;
            for (int r = l; r < SPLIT; r += 32) mine = mine && ld_relaxed64(part + row * SPLIT + r) != KF_UNPOSTED;
            if (__all_sync(0xffffffffu, mine)) return true;
        }
        if (spin >= KF_SPIN_LIMIT) return false;
        __nanosleep(KF_SPIN_NS);
    }
}

// This block's chunk [lo, hi) of row xs into shared memory `smem` where it fits (`cached`), calling
// acc(pack) on every pack: TMA 2 puts every pack in flight at once by asynchronous copies that hold no
// registers, TMA 1 has the bulk-copy engine copy the chunk (where it is 16-byte aligned), TMA 0 (or a
// chunk the others cannot take) loads UNROLL packs at a time through registers, padding with `pad`.
// Elements before `first` are not the row's (its offset into the first pack): they read as `pad`.
template<typename Acc>
__device__ __forceinline__ void stage_chunk(const T *xs, long long lo, long long hi, long long first, bool vec_ok, bool cached, Raw *smem, float pad,
                                            Acc acc)
{
    bool staged = false;
#if TMA == 2
    if (sizeof(Raw) >= 4 && cached && vec_ok) {
        for (long long i = lo + (long long)threadIdx.x * VEC; i < hi; i += (long long)BLOCK * VEC)
            if (i >= first && i + VEC <= hi) cp_async_pack(&smem[(i - lo) / VEC], xs + i);
        // A row's partial first and last packs, by the threads that read them back (outside the loop,
        // which then needs no more registers than before).
        if (lo < first && threadIdx.x == 0) smem[0] = load_pack_in(xs, lo, first, hi, true, pad).r;
        const long long last = hi > lo ? (hi - 1) / VEC * VEC : lo;
        if (last >= lo && last + VEC > hi && (last > lo || lo >= first) && ((last - lo) / VEC) % BLOCK == threadIdx.x)
            smem[(last - lo) / VEC] = load_pack_in(xs, last, first, hi, true, pad).r;
        // Each thread reads back only the packs it copied, so its own wait is enough.
        asm volatile("cp.async.wait_all;" ::: "memory");
        staged = true;
    }
#elif TMA == 1
    __shared__ unsigned long long bar;
    if (cached && hi > lo && lo >= first && aligned_to(xs + lo, 16) && ((hi - lo) * sizeof(T)) % 16 == 0) {
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
            acc(Packed{smem[(i - lo) / VEC]}, i);
        return;
    }
    const long long stride = (long long)BLOCK * VEC;
    for (long long i0 = lo + (long long)threadIdx.x * VEC; i0 < hi; i0 += stride * UNROLL) {
        Packed pk[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            if (i0 + u * stride < hi) pk[u] = load_pack_in(xs, i0 + u * stride, first, hi, vec_ok, pad);
            else for (int j = 0; j < VEC; ++j) pk[u].v[j] = from_f(pad);
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const long long i = i0 + u * stride;
            if (cached && i < hi) smem[(i - lo) / VEC] = pk[u].r;
            if (i < hi) acc(pk[u], i);
        }
    }
}

// Packs a thread writes per unrolled step of pass 2: four, two of eight 16-bit values (four of those
// spilled at the 40 registers six blocks an SM leave).
enum { kf_write_unroll = VEC >= 8 ? 2 : 4 }; // an enum: a constexpr variable would be a device global

// Pass 2 over this block's chunk [lo, hi) of a row whose elements are [first, ...): write(pack, i) for
// every pack, from shared memory, or read again from global memory where the chunk did not fit.
template<typename Write>
__device__ __forceinline__ void for_chunk_packs(const T *xv, long long lo, long long hi, long long first, bool vec_ok, bool cached, const Raw *smem,
                                                Write write)
{
    if (cached) {
#pragma unroll kf_write_unroll
        for (long long i = lo + (long long)threadIdx.x * VEC; i < hi; i += (long long)BLOCK * VEC)
            write(Packed{smem[(i - lo) / VEC]}, i);
    } else {
        for (long long i = lo + (long long)threadIdx.x * VEC; i < hi; i += (long long)BLOCK * VEC)
            write(load_pack_in(xv, i, first, hi, vec_ok, 0.f), i);
    }
}

// VEC output values at i of a row whose elements are [first, hi): one vector store where allowed, else
// element by element.
__device__ __forceinline__ void store_pack(T *ys, long long i, long long first, long long hi, bool vec_ok, const float *o)
{
    if (vec_ok && i >= first && i + VEC <= hi) {
        store_floats<VEC>(ys + i, o);
    } else {
#pragma unroll
        for (int j = 0; j < VEC; ++j) if (i + j >= first && i + j < hi) ys[i + j] = from_f(o[j]);
    }
}

// MINB asks the compiler to fit that many blocks per SM in the register file (shared memory already
// bounds how many fit; registers should not bound it lower).
#if MINB
#define KF_BOUNDS __launch_bounds__(BLOCK, MINB)
#else
#define KF_BOUNDS __launch_bounds__(BLOCK)
#endif
