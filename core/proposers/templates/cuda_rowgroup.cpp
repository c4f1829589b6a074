// `cuda.<softmax|log_softmax>.rowgroup`: vocabulary-length rows (hundreds of thousands of elements)
// read from memory once, without thread-block clusters.
//
// A row is cut into SPLIT chunks, one per block, each kept in shared memory. A block posts its chunk's
// (max, sum of exp) to a workspace and counts itself in the row's counter; once all SPLIT have posted
// it merges them and writes its chunk. The cluster template does the same through distributed shared
// memory, but a cluster must fit in one GPC, so on the H200 only 21 clusters of 16 (336 of 396 block
// slots) run at once and the SMs idle 13-14% of the time; plain blocks fill every slot.
//
// Waiting on other blocks assumes they run at the same time. The blocks of a row are consecutive in
// the grid, so they are dispatched together, but nothing guarantees it: a block that has waited long
// (about 0.1 s) stops waiting and computes the row's statistics from global memory itself. That is
// slow but correct, and the kernel cannot hang.
#include <algorithm>
#include <string>

#include "proposers/template_library.h"
#include "proposers/templates/cuda_prelude.h"

namespace kforge {

namespace {

using J = nlohmann::json;

const char *kRowGroupKernel = R"(
#if FAST_EXP
#define EXPF __expf
#else
#define EXPF expf
#endif

// The row counters start at zero on every launch (the workspace is not zeroed for us).
extern "C" __global__ void kf_rowgroup_reset(unsigned *__restrict__ count, long long rows)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows) count[i] = 0u;
}

__device__ __forceinline__ unsigned ld_acquire(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
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

extern "C" __global__ void __launch_bounds__(BLOCK)
kf_rowgroup(const T *__restrict__ x, T *__restrict__ y, float2 *__restrict__ part, unsigned *__restrict__ count, long long rows, long long cols)
{
    extern __shared__ __align__(16) unsigned char kf_smem[];
    Raw *smem = reinterpret_cast<Raw *>(kf_smem);
    __shared__ float sh[BLOCK / 32], sh2[BLOCK / 32], res[2];
    __shared__ int posted;
    const long long row = blockIdx.x / SPLIT;
    const int rank = blockIdx.x % SPLIT;
    if (row >= rows) return;
    const long long per = ((cols + SPLIT - 1) / SPLIT + VEC - 1) / VEC * VEC;
    const long long lo = rank * per < cols ? rank * per : cols, hi = lo + per < cols ? lo + per : cols;
    const bool cached = (unsigned long long)(hi - lo) * sizeof(T) <= dyn_smem_bytes();
    const bool vec_ok = VEC > 1 && cols % VEC == 0 && aligned_to(x, VEC * sizeof(T)) && aligned_to(y, VEC * sizeof(T));
    const T *xs = x + row * cols;
    T *ys = y + row * cols;

    // Pass 1: the chunk into shared memory (by the bulk-copy engine where it is 16-byte aligned) and
    // this block's statistics.
    float m = -KF_INF, s = 0.f;
#if TMA
    __shared__ unsigned long long bar;
    if (cached && hi > lo && aligned_to(xs + lo, 16) && ((hi - lo) * sizeof(T)) % 16 == 0) {
        if (threadIdx.x == 0) {
            mbar_init(&bar);
            bulk_copy_in(smem, xs + lo, (unsigned)((hi - lo) * sizeof(T)), &bar);
        }
        __syncthreads(); // the barrier is initialised before anyone waits on it
        mbar_wait(&bar, 0);
        for (long long i = lo + (long long)threadIdx.x * VEC; i < hi; i += (long long)BLOCK * VEC) {
            Packed pk;
            pk.r = smem[(i - lo) / VEC];
            accumulate(pk, m, s);
        }
    } else
#endif
        stream_stats(xs, lo, hi, vec_ok, cached ? smem : nullptr, m, s);
    block_ms(m, s, sh, sh2);

    // Post this chunk's statistics, then wait until every chunk of the row has posted.
    if (threadIdx.x == 0) {
        part[row * SPLIT + rank] = make_float2(m, s);
        __threadfence();
        atomicAdd(&count[row], 1u);
        unsigned seen = ld_acquire(&count[row]);
        for (int spin = 0; seen < SPLIT && spin < (1 << 20); ++spin) {
            __nanosleep(100);
            seen = ld_acquire(&count[row]);
        }
        posted = seen >= SPLIT;
    }
    __syncthreads();
    if (posted) {
        // The first warp merges the row's partials in rank order (two per lane past 32 chunks), so
        // every block of the row gets exactly the same statistics.
        if (threadIdx.x < 32) {
            const int l = threadIdx.x;
            float pm = -KF_INF, ps = 0.f;
            for (int r = l; r < SPLIT; r += 32) {
                const float2 p = __ldcg(&part[row * SPLIT + r]);
                ms_merge(pm, ps, p.x, p.y);
            }
            float M = -KF_INF, S = 0.f;
            for (int r = 0; r < 32 && r < SPLIT; ++r) ms_merge(M, S, __shfl_sync(0xffffffffu, pm, r), __shfl_sync(0xffffffffu, ps, r));
            if (l == 0) { res[0] = M; res[1] = S; }
        }
    } else {
        // The other blocks of the row never all ran beside this one: read the whole row instead.
        float M = -KF_INF, S = 0.f;
        stream_stats(xs, 0, cols, vec_ok, nullptr, M, S);
        block_ms(M, S, sh, sh2);
        if (threadIdx.x == 0) { res[0] = M; res[1] = S; }
    }
    __syncthreads();
    const float a = res[0], b = FAMILY == 0 ? 1.f / res[1] : logf(res[1]);

    // Pass 2: write the chunk from shared memory (re-read from global memory when it did not fit).
#pragma unroll 4
    for (long long i = lo + (long long)threadIdx.x * VEC; i < hi; i += (long long)BLOCK * VEC) {
        Packed pk = cached ? Packed{smem[(i - lo) / VEC]} : load_pack(xs, i, hi, vec_ok, 0.f);
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
}
)";

KernelTemplate rowGroupTemplate(const std::string &family)
{
    KernelTemplate t = cudaNormTemplate(family, "rowgroup",
                                        "a long row cut across SPLIT plain blocks, each chunk kept in shared memory, partial "
                                        "statistics exchanged through a workspace and a per-row counter",
                                        {{"split", {4, 8, 12, 16, 24, 32, 48, 64}}, {"block", {128, 256, 512, 1024}},
                                         {"vec", {1, 2, 4, 8}}, {"unroll", {1, 2, 4, 8}}, {"tma", {0, 1}}});
    t.valid = [](const J &p, const OperatorCard &card) {
        const int split = p.at("split"), vec = p.at("vec"), block = p.at("block");
        const int elem = dtypeSize(card.inputs.front().dtype);
        const int64_t cols = card.shape.count("cols") ? card.shape.at("cols") : 0;
        if (vec * elem > 16 || cudaChunkBytes(cols, split, vec, elem) > kCudaChunkSmemCap)
            return false;
        // Only for rows too long for one block's shared memory to hold comfortably (the rows and
        // cluster templates serve the rest), in chunks of at least 8 KiB with a pack for every thread.
        if (cols * elem <= 96 * 1024 || cudaChunkBytes(cols, split, vec, elem) < 8 * 1024)
            return false;
        return (cols / split + vec - 1) / vec >= block;
    };
    t.render = [family](const J &p, const OperatorCard &card) {
        std::string s = "// template cuda." + family + ".rowgroup\n";
        s += defineLine("FAMILY", std::to_string(cudaNormFamilyCode(family))) + defineLine("SPLIT", p.at("split"));
        s += defineLine("BLOCK", p.at("block")) + defineLine("VEC", p.at("vec")) + defineLine("UNROLL", p.at("unroll"));
        s += defineLine("TMA", p.at("tma")) + defineLine("FAST_EXP", p.at("fast_exp"));
        return s + cudaPrelude(card.inputs.front().dtype) + cudaBlockHelpers() + cudaPackHelpers() + kRowGroupKernel;
    };
    t.seed = [](const OperatorCard &card) {
        const int vec = cudaVecFor(card), elem = dtypeSize(card.inputs.front().dtype);
        const int64_t cols = card.shape.at("cols");
        // Chunks of at most 32 KiB, four packs in flight per thread: on the H200 a 1 MiB float32 row ran
        // best in 32 chunks (622 us; 16 chunks 661 us, 48 chunks 923 us; eight or two packs in flight slower).
        int split = 64;
        for (int s : {4, 8, 12, 16, 24, 32, 48, 64})
            if (cudaChunkBytes(cols, s, vec, elem) <= 32 * 1024) {
                split = s;
                break;
            }
        return J{{"split", split}, {"block", 256}, {"vec", vec}, {"unroll", 4}, {"tma", 0}, {"fast_exp", 1}};
    };
    t.launch = [](const J &p, const OperatorCard &card) {
        const int split = p.at("split"), vec = p.at("vec"), elem = dtypeSize(card.inputs.front().dtype);
        const std::string sp = std::to_string(split);
        const std::string smem = cudaChunkSmemExpr("cols", split, vec, elem);
        J reset = {{"name", "kf_rowgroup_reset"}, {"grid", {"ceil_div(rows, 256)", 1, 1}}, {"block", {256, 1, 1}},
                   {"shared_bytes", "0"}, {"args", {"ws:count", "sym:rows"}}};
        J main = {{"name", "kf_rowgroup"}, {"grid", {"rows * " + sp, 1, 1}}, {"block", {p.at("block"), 1, 1}},
                  {"shared_bytes", smem}, {"args", {"in:x", "out:y", "ws:part", "ws:count", "sym:rows", "sym:cols"}}};
        return J{{"kernels", J::array({reset, main})},
                 {"workspace", J::array({{{"name", "part"}, {"bytes", "rows * " + sp + " * 8"}}, {{"name", "count"}, {"bytes", "rows * 4"}}})}};
    };
    return t;
}

} // namespace

void addCudaRowGroupTemplates(TemplateLibrary &lib)
{
    for (const char *f : {"softmax", "log_softmax"})
        lib.add(rowGroupTemplate(f));
}

} // namespace kforge
