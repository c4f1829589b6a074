// Block-wide helpers for kernels that define BLOCK: block reductions, shared-memory addresses, the sm_90
// bulk copy with its mbarrier, cluster registers and barriers, and the cluster partials' merge (FAMILY).

__device__ __forceinline__ unsigned dyn_smem_bytes() { unsigned r; asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r)); return r; }

__device__ __forceinline__ unsigned smem_addr(const void *p)
{
    unsigned long long s;
    asm volatile("cvta.to.shared.u64 %0, %1;" : "=l"(s) : "l"((unsigned long long)p));
    return (unsigned)s;
}

// Reductions over the whole block (BLOCK threads); sh holds one float per warp. Every thread gets the
// result; the trailing barrier lets sh be reused at once.
__device__ __forceinline__ float block_sum(float v, float *sh)
{
    v = warp_sum(v);
    if (threadIdx.x % 32 == 0) sh[threadIdx.x / 32] = v;
    __syncthreads();
    v = 0.f;
#pragma unroll
    for (int i = 0; i < BLOCK / 32; ++i) v += sh[i];
    __syncthreads();
    return v;
}

__device__ __forceinline__ float block_max(float v, float *sh)
{
    v = warp_max(v);
    if (threadIdx.x % 32 == 0) sh[threadIdx.x / 32] = v;
    __syncthreads();
    v = -KF_INF;
#pragma unroll
    for (int i = 0; i < BLOCK / 32; ++i) v = fmaxf(v, sh[i]);
    __syncthreads();
    return v;
}

// The block's (max, sum of exp) in every thread. Each warp merges its lanes; the first warp merges the
// warps' partials, one a lane, and posts the result. Every thread merging every partial had cost two
// exponentials a partial: 64 a thread at 1024 threads, more than a 4096-wide row's own elements.
__device__ __forceinline__ void block_ms(float &m, float &s, float *sh, float *sh2)
{
    warp_ms(m, s);
    const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) { sh[w] = m; sh2[w] = s; }
    __syncthreads();
    if (w == 0) {
        m = lane < BLOCK / 32 ? sh[lane] : -KF_INF;
        s = lane < BLOCK / 32 ? sh2[lane] : 0.f;
        warp_ms(m, s);
        if (lane == 0) { sh[0] = m; sh2[0] = s; }
    }
    __syncthreads();
    m = sh[0]; s = sh2[0];
    __syncthreads(); // the caller may reuse sh
}

// The bulk-copy engine (cp.async.bulk, sm_90) with an mbarrier that counts the bytes in. One thread
// initialises a barrier for one arrival, then per use arms it with the byte count and issues the copy
// (16-byte aligned, a multiple of 16 bytes); everyone waits for the use's phase parity.
__device__ __forceinline__ void mbar_init(unsigned long long *bar)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem_addr(bar)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

__device__ __forceinline__ void bulk_copy_in(void *dst, const void *src, unsigned bytes, unsigned long long *bar)
{
    const unsigned b = smem_addr(bar);
    // Orders this block's earlier generic accesses to dst before the copy engine's writes.
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(bytes) : "memory");
    for (unsigned off = 0; off < bytes; off += 32768) {
        const unsigned n = bytes - off < 32768 ? bytes - off : 32768;
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     :: "r"(smem_addr(dst) + off), "l"((const char *)src + off), "r"(n), "r"(b) : "memory");
    }
}

// Cluster special registers and barriers (PTX ISA 7.8, sm_90). Launched without a cluster, a block is
// a cluster of one.
__device__ __forceinline__ unsigned cl_rank() { unsigned r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned cl_size() { unsigned r; asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned cl_id() { unsigned r; asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned cl_count() { unsigned r; asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(r)); return r; }
__device__ __forceinline__ void cl_arrive() { asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory"); }
__device__ __forceinline__ void cl_wait() { asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory"); }

// Reads a float from the same shared-memory variable in block `rank` of the cluster (this block's own
// copy directly when the cluster is one block).
__device__ __forceinline__ float cl_load(const float *p, unsigned rank, unsigned nct)
{
    if (nct == 1) return *p;
    unsigned remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem_addr(p)), "r"(rank));
    float v;
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(remote) : "memory");
    return v;
}

// In a cluster of nct blocks, each has posted its partial statistics in part[3] (softmax: max and sum
// of exp; RMS norm: sum of squares; layer and group norm: count, mean and M2) and passed a cluster
// barrier. The first warp reads them through distributed shared memory, a lane per block (every thread
// reading every block's partial serialized hundreds of remote loads per thread), and merges them in
// rank order, so every block gets exactly the same result. It lands in res[3]; the caller syncs the
// block before reading it.
__device__ __forceinline__ void cl_merge(const float *part, float *res, unsigned nct)
{
    if (threadIdx.x >= 32) return;
    const unsigned lane = threadIdx.x;
    float q0 = 0.f, q1 = 0.f, q2 = 0.f;
    if (lane < nct) { q0 = cl_load(&part[0], lane, nct); q1 = cl_load(&part[1], lane, nct); q2 = cl_load(&part[2], lane, nct); }
#if FAMILY <= 1
    float M = -KF_INF, S = 0.f;
    for (unsigned r = 0; r < nct; ++r) ms_merge(M, S, __shfl_sync(0xffffffffu, q0, r), __shfl_sync(0xffffffffu, q1, r));
    if (lane == 0) { res[0] = M; res[1] = S; }
#elif FAMILY == 3
    float Q = 0.f;
    for (unsigned r = 0; r < nct; ++r) Q += __shfl_sync(0xffffffffu, q0, r);
    if (lane == 0) res[0] = Q;
#else
    // Chan et al.'s pairwise merge of (count, mean, M2).
    float N = 0.f, MEAN = 0.f, M2 = 0.f;
    for (unsigned r = 0; r < nct; ++r) {
        const float nb = __shfl_sync(0xffffffffu, q0, r), mb = __shfl_sync(0xffffffffu, q1, r), qb = __shfl_sync(0xffffffffu, q2, r);
        if (nb == 0.f) continue;
        const float nn = N + nb, d = mb - MEAN;
        MEAN += d * (nb / nn);
        M2 += qb + d * d * (N * nb / nn);
        N = nn;
    }
    if (lane == 0) { res[0] = N; res[1] = MEAN; res[2] = M2; }
#endif
}

__device__ __forceinline__ void mbar_wait(unsigned long long *bar, unsigned parity)
{
    const unsigned b = smem_addr(bar);
    unsigned done = 0;
    while (!done)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(b), "r"(parity) : "memory");
}
