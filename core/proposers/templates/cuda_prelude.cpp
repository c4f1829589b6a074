#include "proposers/templates/cuda_prelude.h"

namespace kforge {

int cudaDtypeCode(DType dtype)
{
    return dtype == DType::F16 ? 1 : dtype == DType::BF16 ? 2 : 0;
}

int cudaNormFamilyCode(const std::string &f)
{
    return f == "softmax" ? 0 : f == "log_softmax" ? 1 : f == "layer_norm" ? 2 : f == "rms_norm" ? 3 : 4;
}

bool cudaSoftmaxFamily(const std::string &family)
{
    return family == "softmax" || family == "log_softmax";
}

KernelTemplate cudaNormTemplate(const std::string &family, const std::string &kind, std::string description,
                                std::map<std::string, std::vector<nlohmann::json>> space)
{
    KernelTemplate t;
    t.id = "cuda." + family + "." + kind;
    t.family = family;
    t.backend = "cuda";
    t.description = std::move(description);
    t.space = std::move(space);
    if (cudaSoftmaxFamily(family))
        t.space["fast_exp"] = {1, 0};
    return t;
}

nlohmann::json cudaNormArgs(const std::string &family)
{
    if (family == "group_norm")
        return {"in:x", "in:weight", "in:bias", "out:y", "sym:n", "sym:c", "sym:hw", "sym:groups"};
    const bool norm = family == "layer_norm" || family == "rms_norm";
    return {"in:x", norm ? "in:weight" : "in:x", family == "layer_norm" ? "in:bias" : "in:x", "out:y", "sym:rows", "sym:cols"};
}

nlohmann::json cudaOneKernelPlan(const std::string &name, nlohmann::json grid, nlohmann::json block, nlohmann::json args,
                                 const std::string &sharedBytes, int cluster, nlohmann::json workspace)
{
    nlohmann::json k = {{"name", name},
                        {"grid", std::move(grid)},
                        {"block", {std::move(block), 1, 1}},
                        {"shared_bytes", sharedBytes},
                        {"args", std::move(args)}};
    if (cluster > 1)
        k["cluster"] = {cluster, 1, 1};
    return {{"kernels", nlohmann::json::array({std::move(k)})}, {"workspace", std::move(workspace)}};
}

int64_t cudaChunkElems(int64_t len, int parts, int vec)
{
    return ((len + parts - 1) / parts + vec - 1) / vec * vec;
}

int64_t cudaChunkBytes(int64_t len, int parts, int vec, int elem)
{
    return cudaChunkElems(len, parts, vec) * elem;
}

std::string cudaChunkSmemExpr(const std::string &len, int parts, int vec, int elem)
{
    return "min(ceil_div(ceil_div(" + len + ", " + std::to_string(parts) + "), " + std::to_string(vec) + ") * " + std::to_string(vec * elem)
           + ", " + std::to_string(kCudaChunkSmemCap) + ")";
}

int cudaVecFor(const OperatorCard &card)
{
    return 16 / dtypeSize(card.inputs.front().dtype);
}

void cudaRowSeed(int64_t cols, int vec, int maxReg, int &tpr, int &reg)
{
    tpr = 1024;
    reg = 0;
    for (int t : {32, 64, 128, 256, 512, 1024})
        if (int64_t(t) * maxReg >= cols) {
            tpr = t;
            break;
        }
    for (int r : {4, 8, 16, 32})
        if (r % vec == 0 && int64_t(tpr) * r >= cols) {
            reg = r;
            break;
        }
}

std::string cudaPrelude(DType dtype)
{
    std::string s = "#define KF_DTYPE " + std::to_string(cudaDtypeCode(dtype)) + " // 0 float32, 1 float16, 2 bfloat16\n";
    s += R"(
#if KF_DTYPE == 0
typedef float T;
__device__ __forceinline__ float to_f(T v) { return v; }
__device__ __forceinline__ T from_f(float v) { return v; }
#else
typedef unsigned short T;
#if KF_DTYPE == 1
__device__ __forceinline__ float to_f(T h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ T from_f(float f) { T h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
#else
__device__ __forceinline__ float to_f(T h) { return __uint_as_float(((unsigned)h) << 16); }
__device__ __forceinline__ T from_f(float f) { T h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
#endif
#endif

#define KF_INF __int_as_float(0x7f800000)

#if KF_DTYPE != 0
// Two 16-bit values in one 32-bit word, converted with one packed instruction each way.
__device__ __forceinline__ unsigned pack2(float lo, float hi)
{
    unsigned r;
#if KF_DTYPE == 1
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#else
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#endif
    return r;
}
__device__ __forceinline__ void unpack2(unsigned w, float &lo, float &hi)
{
#if KF_DTYPE == 1
    lo = to_f((T)(w & 0xffffu));
    hi = to_f((T)(w >> 16));
#else
    lo = __uint_as_float(w << 16);
    hi = __uint_as_float(w & 0xffff0000u);
#endif
}
#endif

// A load's cache hint: KEEP for data read again soon (evict-last in L1 and, by a createpolicy cache
// hint, in L2), LAST_USE for its final read (evict-first in both), else none.
enum { HINT_NONE = 0, HINT_KEEP = 1, HINT_LAST_USE = 2 };

template<int H> __device__ __forceinline__ void ld_hint_v4(const void *p, unsigned &a, unsigned &b, unsigned &c, unsigned &d)
{
    unsigned long long pol;
    if constexpr (H == HINT_KEEP) {
        asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
        asm("ld.global.L1::evict_last.L2::cache_hint.v4.b32 {%0, %1, %2, %3}, [%4], %5;"
            : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(p), "l"(pol));
    } else {
        asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
        asm("ld.global.L1::evict_first.L2::cache_hint.v4.b32 {%0, %1, %2, %3}, [%4], %5;"
            : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(p), "l"(pol));
    }
}

// N elements at p (aligned to N elements, at most 16 bytes) as floats, in one vector load; H is the
// cache hint (16-byte loads only).
template<int N, int H = HINT_NONE> __device__ __forceinline__ void load_floats(const T *p, float *o)
{
    if constexpr (H != HINT_NONE && N * sizeof(T) == 16) {
        unsigned a, b, c, d;
        ld_hint_v4<H>(p, a, b, c, d);
#if KF_DTYPE == 0
        o[0] = __uint_as_float(a); o[1] = __uint_as_float(b); o[2] = __uint_as_float(c); o[3] = __uint_as_float(d);
#else
        unpack2(a, o[0], o[1]); unpack2(b, o[2], o[3]); unpack2(c, o[4], o[5]); unpack2(d, o[6], o[7]);
#endif
        return;
    }
#if KF_DTYPE == 0
    if constexpr (N == 4) { const float4 v = *reinterpret_cast<const float4 *>(p); o[0] = v.x; o[1] = v.y; o[2] = v.z; o[3] = v.w; }
    else if constexpr (N == 2) { const float2 v = *reinterpret_cast<const float2 *>(p); o[0] = v.x; o[1] = v.y; }
    else { for (int j = 0; j < N; ++j) o[j] = p[j]; }
#else
    if constexpr (N == 8) {
        const uint4 v = *reinterpret_cast<const uint4 *>(p);
        unpack2(v.x, o[0], o[1]); unpack2(v.y, o[2], o[3]); unpack2(v.z, o[4], o[5]); unpack2(v.w, o[6], o[7]);
    } else if constexpr (N == 4) {
        const uint2 v = *reinterpret_cast<const uint2 *>(p);
        unpack2(v.x, o[0], o[1]); unpack2(v.y, o[2], o[3]);
    } else if constexpr (N == 2) {
        unpack2(*reinterpret_cast<const unsigned *>(p), o[0], o[1]);
    } else {
        o[0] = to_f(p[0]);
    }
#endif
}

// N floats stored to global memory at p (aligned as above) in one vector store. Inline PTX, because
// the compiler may split a vector store it cannot prove aligned into narrower ones.
__device__ __forceinline__ void st_v4(void *p, unsigned a, unsigned b, unsigned c, unsigned d)
{
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" :: "l"(p), "r"(a), "r"(b), "r"(c), "r"(d) : "memory");
}
__device__ __forceinline__ void st_v2(void *p, unsigned a, unsigned b)
{
    asm volatile("st.global.v2.b32 [%0], {%1, %2};" :: "l"(p), "r"(a), "r"(b) : "memory");
}
template<int N> __device__ __forceinline__ void store_floats(T *p, const float *o)
{
#if KF_DTYPE == 0
    if constexpr (N == 4) st_v4(p, __float_as_uint(o[0]), __float_as_uint(o[1]), __float_as_uint(o[2]), __float_as_uint(o[3]));
    else if constexpr (N == 2) st_v2(p, __float_as_uint(o[0]), __float_as_uint(o[1]));
    else { for (int j = 0; j < N; ++j) p[j] = o[j]; }
#else
    if constexpr (N == 8) st_v4(p, pack2(o[0], o[1]), pack2(o[2], o[3]), pack2(o[4], o[5]), pack2(o[6], o[7]));
    else if constexpr (N == 4) st_v2(p, pack2(o[0], o[1]), pack2(o[2], o[3]));
    else if constexpr (N == 2) *reinterpret_cast<unsigned *>(p) = pack2(o[0], o[1]);
    else p[0] = from_f(o[0]);
#endif
}

// N elements of T moved as one aligned load or store (16 bytes at most).
template<int N> struct __align__(sizeof(T) * N) Pack { T v[N]; };

__device__ __forceinline__ bool aligned_to(const void *p, int bytes) { return (((unsigned long long)p) % bytes) == 0; }

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float warp_max(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Merges online-softmax states (max m, sum s of exp(x - m)).
__device__ __forceinline__ void ms_merge(float &m, float &s, float m2, float s2)
{
    const float mm = fmaxf(m, m2);
    s = (m == -KF_INF ? 0.f : s * __expf(m - mm)) + (m2 == -KF_INF ? 0.f : s2 * __expf(m2 - mm));
    m = mm;
}

__device__ __forceinline__ void warp_ms(float &m, float &s)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, o), s2 = __shfl_xor_sync(0xffffffffu, s, o);
        ms_merge(m, s, m2, s2);
    }
}
)";
    return s;
}

const char *cudaPackHelpers()
{
    return R"(
// VEC elements as raw bits, for moving between global and shared memory without converting.
template<int BYTES> struct RawOf { typedef unsigned short t; };
template<> struct RawOf<4> { typedef unsigned t; };
template<> struct RawOf<8> { typedef uint2 t; };
template<> struct RawOf<16> { typedef uint4 t; };
typedef typename RawOf<VEC * sizeof(T)>::t Raw;
union Packed { Raw r; T v[VEC]; };

// One pack at segment offset i: a vector load when allowed, else element by element with `pad` past
// the end of the chunk.
__device__ __forceinline__ Packed load_pack(const T *p, long long i, long long hi, bool vec_ok, float pad)
{
    Packed pk;
    if (vec_ok && i + VEC <= hi) {
        pk.r = *reinterpret_cast<const Raw *>(p + i);
    } else {
#pragma unroll
        for (int j = 0; j < VEC; ++j) pk.v[j] = i + j < hi ? p[i + j] : from_f(pad);
    }
    return pk;
}
)";
}

const char *cudaBlockHelpers()
{
    return R"(
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

__device__ __forceinline__ void block_ms(float &m, float &s, float *sh, float *sh2)
{
    warp_ms(m, s);
    if (threadIdx.x % 32 == 0) { sh[threadIdx.x / 32] = m; sh2[threadIdx.x / 32] = s; }
    __syncthreads();
    m = -KF_INF; s = 0.f;
#pragma unroll
    for (int i = 0; i < BLOCK / 32; ++i) ms_merge(m, s, sh[i], sh2[i]);
    __syncthreads();
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
)";
}

} // namespace kforge
