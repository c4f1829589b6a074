// cuda.<scan family>.lookback: rows cut into chunks of BLOCK*VEC*STEPS elements, a block per chunk, with a
// decoupled look-back (the scan itself: scan_common.cuh). Blocks take chunks in the order of a ticket
// counter, so a chunk's predecessors in its row were taken earlier and are running or done: no block
// waits on one that is not resident. A block loads its whole chunk (all its loads in flight at once),
// scans it in registers, posts the chunk's aggregate, then walks back over its predecessors' posts: an
// inclusive prefix ends the walk, an aggregate is combined and the walk goes on. It posts its own
// inclusive prefix and writes its chunk: one read and one write of every row, however few the rows.
#define CHUNK ((long long)BLOCK * VEC * STEPS)

// A post is one 64-bit word, the value's bits low and its state high (0: nothing yet, 1: the chunk's
// aggregate, 2: the inclusive prefix up to its end), so a reader sees a value with its state.
#define POST_AGGREGATE 1ull
#define POST_PREFIX 2ull

// Every post empty and the ticket at zero before each launch (the workspace is not cleared for us).
extern "C" __global__ void kf_scan_reset(unsigned long long *__restrict__ post, unsigned *__restrict__ ticket, long long n)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) post[i] = 0ull;
    if (i == 0) *ticket = 0u;
}

__device__ __forceinline__ unsigned long long ld_relaxed64(const unsigned long long *p)
{
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void st_relaxed64(unsigned long long *p, unsigned long long v)
{
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ unsigned long long post_word(unsigned long long state, float v)
{
    return (state << 32) | (unsigned long long)__float_as_uint(v);
}

extern "C" __global__ void __launch_bounds__(BLOCK) kf_scan_lookback(const T *__restrict__ x, const M *__restrict__ mask, T *__restrict__ y,
                                                                    unsigned long long *__restrict__ post, unsigned *__restrict__ ticket,
                                                                    long long rows, long long cols)
{
    __shared__ float warp_tot[2][32];
    __shared__ unsigned s_ticket;
    __shared__ float s_prefix;
    if (threadIdx.x == 0) s_ticket = atomicAdd(ticket, 1u);
    __syncthreads();
    const long long per_row = (cols + CHUNK - 1) / CHUNK;
    const long long row = (long long)s_ticket / per_row, c = (long long)s_ticket % per_row;
    (void)rows;
    const T *xr = x + row * cols;
    const M *mr = SCAN_MASK ? mask + row * cols : nullptr;
    T *yr = y + row * cols;
    const bool vec_ok = packs_fit(x, y, cols);
    const long long first = c * CHUNK + (long long)threadIdx.x * VEC;

    float v[STEPS][VEC];
#pragma unroll
    for (int s = 0; s < STEPS; ++s) load_step(xr, mr, first + (long long)s * BLOCK * VEC, cols, vec_ok, v[s]);
    float o[STEPS][VEC];
    float aggregate = IDENTITY;
#pragma unroll
    for (int s = 0; s < STEPS; ++s) {
        const float run = thread_scan(v[s], o[s]);
        float total;
        const float before = COMBINE(aggregate, block_exclusive(run, warp_tot[s & 1], total));
#pragma unroll
        for (int j = 0; j < VEC; ++j) o[s][j] = COMBINE(before, o[s][j]);
        aggregate = COMBINE(aggregate, total);
    }

    if (threadIdx.x == 0) {
        unsigned long long *pr = post + row * per_row;
        float prefix = IDENTITY;
        if (c == 0) {
            st_relaxed64(pr, post_word(POST_PREFIX, aggregate));
        } else {
            st_relaxed64(pr + c, post_word(POST_AGGREGATE, aggregate));
            for (long long p = c - 1; p >= 0; --p) {
                unsigned long long w;
                while (((w = ld_relaxed64(pr + p)) >> 32) == 0ull) __nanosleep(32);
                prefix = COMBINE(__uint_as_float((unsigned)w), prefix);
                if ((w >> 32) == POST_PREFIX) break;
            }
            st_relaxed64(pr + c, post_word(POST_PREFIX, COMBINE(prefix, aggregate)));
        }
        s_prefix = prefix;
    }
    __syncthreads();
    const float prefix = s_prefix;
#pragma unroll
    for (int s = 0; s < STEPS; ++s) {
#pragma unroll
        for (int j = 0; j < VEC; ++j) o[s][j] = COMBINE(prefix, o[s][j]);
        store_step(yr, first + (long long)s * BLOCK * VEC, cols, vec_ok, o[s]);
    }
}
