// CUDA templates for group norm, elementwise activations, last-dimension reductions, the inclusive
// scan and cross-entropy, in float32, float16 and bfloat16 where the card asks.
#include <string>

#include "proposers/template_library.h"
#include "proposers/templates/cuda_prelude.h"

namespace kforge {

namespace {

using J = nlohmann::json;

bool vecFits(const J &p, const OperatorCard &card)
{
    return p.value("vec", 1) * dtypeSize(card.inputs.front().dtype) <= 16;
}

// Block-wide sums of two values; every thread gets the totals.
const char *kBlockSum2 = R"(
__device__ __forceinline__ void block_sum2(float &a, float &b)
{
    __shared__ float sa[32], sb[32];
    a = warp_sum(a);
    b = warp_sum(b);
    const int w = threadIdx.x / 32;
    if (threadIdx.x % 32 == 0) { sa[w] = a; sb[w] = b; }
    __syncthreads();
    a = 0.f; b = 0.f;
    for (int i = 0; i < (int)(blockDim.x / 32); ++i) { a += sa[i]; b += sb[i]; }
    __syncthreads();
}
)";

const char *kGroupNorm = R"(
// One block per (sample, group) at a time; with GRID_BLOCKS > 0 a persistent grid walks the groups, so
// the groups in flight fit in L2 and the second read of each group hits it.
extern "C" __global__ void __launch_bounds__(BLOCK)
kf_group_norm(const T *__restrict__ x, const T *__restrict__ w, const T *__restrict__ bias, T *__restrict__ y,
              long long n, long long c, long long hw, long long groups)
{
    const long long total = n * groups, cpg = c / groups, per = cpg * hw;
    const bool vec_ok = VEC > 1 && hw % VEC == 0 && aligned_to(x, VEC * sizeof(T)) && aligned_to(y, VEC * sizeof(T));
    for (long long gi = blockIdx.x; gi < total; gi += gridDim.x) {
        const long long s = gi / groups, g = gi % groups;
        const T *xg = x + (s * c + g * cpg) * hw;
        T *yg = y + (s * c + g * cpg) * hw;
        // Moments about the group's first element: no cancellation when the mean is far from zero.
        const float k = to_f(xg[0]);
        float s1 = 0.f, s2 = 0.f;
        if (vec_ok) {
            for (long long i = (long long)threadIdx.x * VEC; i < per; i += (long long)BLOCK * VEC) {
                const Pack<VEC> pk = *reinterpret_cast<const Pack<VEC> *>(xg + i);
#pragma unroll
                for (int j = 0; j < VEC; ++j) { const float d = to_f(pk.v[j]) - k; s1 += d; s2 += d * d; }
            }
        } else {
            for (long long i = threadIdx.x; i < per; i += BLOCK) { const float d = to_f(xg[i]) - k; s1 += d; s2 += d * d; }
        }
        block_sum2(s1, s2);
        const float m1 = s1 / (float)per;
        const float mean = k + m1, rstd = rsqrtf(fmaxf(s2 / (float)per - m1 * m1, 0.f) + EPS);
        for (long long cc = 0; cc < cpg; ++cc) {
            const long long ch = g * cpg + cc;
            const float a = rstd * to_f(w[ch]), sh = to_f(bias[ch]) - mean * a;
            const T *xc = xg + cc * hw;
            T *yc = yg + cc * hw;
            if (vec_ok) {
                for (long long i = (long long)threadIdx.x * VEC; i < hw; i += (long long)BLOCK * VEC) {
                    const Pack<VEC> in = *reinterpret_cast<const Pack<VEC> *>(xc + i);
                    Pack<VEC> out;
#pragma unroll
                    for (int j = 0; j < VEC; ++j) out.v[j] = from_f(to_f(in.v[j]) * a + sh);
                    *reinterpret_cast<Pack<VEC> *>(yc + i) = out;
                }
            } else {
                for (long long i = threadIdx.x; i < hw; i += BLOCK) yc[i] = from_f(to_f(xc[i]) * a + sh);
            }
        }
    }
}
)";

const char *kElementwise = R"(
__device__ __forceinline__ float act(float v, float r)
{
#if OP == 0
    return 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
#elif OP == 1
    return 0.5f * v * (1.f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v)));
#elif OP == 2
    return v / (1.f + __expf(-v));
#elif OP == 3
    return (v > 0.f || v != v) ? v : 0.f;
#else
    v += r;
    return 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
#endif
}

// Grid-stride over all elements, VEC per pack; the scalar tail and misaligned pointers take the
// element path.
extern "C" __global__ void __launch_bounds__(BLOCK)
kf_eltwise(const T *__restrict__ x, const T *__restrict__ res, T *__restrict__ y, long long rows, long long cols)
{
    const long long n = rows * cols;
    const bool vec_ok = VEC > 1 && aligned_to(x, VEC * sizeof(T)) && aligned_to(y, VEC * sizeof(T)) && aligned_to(res, VEC * sizeof(T));
    const long long stride = (long long)gridDim.x * BLOCK;
    const long long body = vec_ok ? n / VEC * VEC : 0;
    for (long long p = (long long)blockIdx.x * BLOCK + threadIdx.x; p * VEC < body; p += stride) {
        const long long i = p * VEC;
        const Pack<VEC> in = *reinterpret_cast<const Pack<VEC> *>(x + i);
#if OP == 4
        const Pack<VEC> rr = *reinterpret_cast<const Pack<VEC> *>(res + i);
#endif
        Pack<VEC> out;
#pragma unroll
        for (int j = 0; j < VEC; ++j)
#if OP == 4
            out.v[j] = from_f(act(to_f(in.v[j]), to_f(rr.v[j])));
#else
            out.v[j] = from_f(act(to_f(in.v[j]), 0.f));
#endif
        *reinterpret_cast<Pack<VEC> *>(y + i) = out;
    }
    for (long long i = body + (long long)blockIdx.x * BLOCK + threadIdx.x; i < n; i += stride)
        y[i] = from_f(act(to_f(x[i]), OP == 4 ? to_f(res[i]) : 0.f));
}
)";

const char *kReduce = R"(
#define WARPS (TPR / 32)
// Reduction of one row by TPR threads: OP 0 sum, 1 mean, 2 max (NaN wins), 3 argmax (first maximum).
__device__ __forceinline__ void combine(float &v, long long &i, float v2, long long i2)
{
#if OP <= 1
    v += v2;
#else
    const bool take = (v2 > v) || (v2 != v2 && v == v) || (v2 == v && i2 < i) || (v != v && v2 != v2 && i2 < i);
    if (take) { v = v2; i = i2; }
#endif
}

extern "C" __global__ void __launch_bounds__(TPR * RPB)
kf_reduce(const T *__restrict__ x, OUT_T *__restrict__ y, long long rows, long long cols)
{
    __shared__ float sv[RPB * WARPS];
    __shared__ long long si[RPB * WARPS];
    const int lane = threadIdx.x % TPR, sub = threadIdx.x / TPR;
    const long long row = (long long)blockIdx.x * RPB + sub;
    const long long n = row < rows ? cols : 0;
    const T *xr = x + (row < rows ? row : 0) * cols;
    const bool vec_ok = VEC > 1 && cols % VEC == 0 && aligned_to(x, VEC * sizeof(T));
    float v = OP <= 1 ? 0.f : -KF_INF;
    long long idx = 0x7fffffffffffffffLL;
    for (long long i = (long long)lane * VEC; i < n; i += (long long)TPR * VEC) {
        if (vec_ok) {
            const Pack<VEC> pk = *reinterpret_cast<const Pack<VEC> *>(xr + i);
#pragma unroll
            for (int j = 0; j < VEC; ++j) combine(v, idx, to_f(pk.v[j]), i + j);
        } else {
#pragma unroll
            for (int j = 0; j < VEC; ++j) if (i + j < n) combine(v, idx, to_f(xr[i + j]), i + j);
        }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float v2 = __shfl_xor_sync(0xffffffffu, v, o);
        const long long i2 = __shfl_xor_sync(0xffffffffu, idx, o);
        combine(v, idx, v2, i2);
    }
#if WARPS > 1
    if (threadIdx.x % 32 == 0) { sv[sub * WARPS + lane / 32] = v; si[sub * WARPS + lane / 32] = idx; }
    __syncthreads();
    if (lane == 0)
        for (int k = 1; k < WARPS; ++k) combine(v, idx, sv[sub * WARPS + k], si[sub * WARPS + k]);
#endif
    if (lane == 0 && row < rows) {
#if OP == 0
        y[row] = from_f(v);
#elif OP == 1
        y[row] = from_f(v / (float)cols);
#elif OP == 2
        y[row] = from_f(v);
#else
        y[row] = idx;
#endif
    }
}
)";

const char *kScan = R"(
// Inclusive scan of one row per block, BLOCK*VEC elements per step: each thread scans its VEC
// elements, the block scans the thread totals (warp shuffles, then the warp totals), and a running
// carry links the steps.
extern "C" __global__ void __launch_bounds__(BLOCK) kf_cumsum(const T *__restrict__ x, T *__restrict__ y, long long rows, long long cols)
{
    __shared__ float warp_tot[32];
    __shared__ float carry_sh;
    const long long row = blockIdx.x;
    const T *xr = x + row * cols;
    T *yr = y + row * cols;
    const int lane = threadIdx.x % 32, w = threadIdx.x / 32, nw = BLOCK / 32;
    float carry = 0.f;
    for (long long base = 0; base < cols; base += (long long)BLOCK * VEC) {
        const long long i0 = base + (long long)threadIdx.x * VEC;
        float v[VEC];
        float run = 0.f;
#pragma unroll
        for (int j = 0; j < VEC; ++j) { v[j] = i0 + j < cols ? to_f(xr[i0 + j]) : 0.f; run += v[j]; v[j] = run; }
        float incl = run;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) { const float t = __shfl_up_sync(0xffffffffu, incl, o); if (lane >= o) incl += t; }
        if (lane == 31) warp_tot[w] = incl;
        __syncthreads();
        if (w == 0) {
            float t = lane < nw ? warp_tot[lane] : 0.f;
#pragma unroll
            for (int o = 1; o < 32; o <<= 1) { const float u = __shfl_up_sync(0xffffffffu, t, o); if (lane >= o) t += u; }
            if (lane < nw) warp_tot[lane] = t;
        }
        __syncthreads();
        const float before = carry + (w > 0 ? warp_tot[w - 1] : 0.f) + (incl - run);
#pragma unroll
        for (int j = 0; j < VEC; ++j) if (i0 + j < cols) yr[i0 + j] = from_f(before + v[j]);
        if (threadIdx.x == BLOCK - 1) carry_sh = before + run;
        __syncthreads();
        carry = carry_sh;
        __syncthreads();
    }
}
)";

const char *kCrossEntropy = R"(
// Pass 1: one block per row: log-sum-exp over the vocabulary (online max and sum) minus the target's
// logit, into a per-row workspace. Pass 2: one block averages the rows in a fixed order.
__device__ __forceinline__ void block_ms(float &m, float &s)
{
    __shared__ float sm[32], ss[32];
    warp_ms(m, s);
    const int w = threadIdx.x / 32;
    if (threadIdx.x % 32 == 0) { sm[w] = m; ss[w] = s; }
    __syncthreads();
    m = -KF_INF; s = 0.f;
    for (int i = 0; i < (int)(blockDim.x / 32); ++i) ms_merge(m, s, sm[i], ss[i]);
    __syncthreads();
}

extern "C" __global__ void __launch_bounds__(BLOCK)
kf_ce_rows(const T *__restrict__ logits, const long long *__restrict__ target, float *__restrict__ loss, long long vocab)
{
    const long long row = blockIdx.x;
    const T *xr = logits + row * vocab;
    const bool vec_ok = VEC > 1 && vocab % VEC == 0 && aligned_to(logits, VEC * sizeof(T));
    float m = -KF_INF, s = 0.f;
    for (long long i = (long long)threadIdx.x * VEC; i < vocab; i += (long long)BLOCK * VEC) {
        float t[VEC];
        if (vec_ok) {
            const Pack<VEC> pk = *reinterpret_cast<const Pack<VEC> *>(xr + i);
#pragma unroll
            for (int j = 0; j < VEC; ++j) t[j] = to_f(pk.v[j]);
        } else {
#pragma unroll
            for (int j = 0; j < VEC; ++j) t[j] = i + j < vocab ? to_f(xr[i + j]) : -KF_INF;
        }
        float cm = t[0];
#pragma unroll
        for (int j = 1; j < VEC; ++j) cm = fmaxf(cm, t[j]);
        float cs = 0.f;
#pragma unroll
        for (int j = 0; j < VEC; ++j) cs += t[j] == -KF_INF ? 0.f : __expf(t[j] - cm);
        ms_merge(m, s, cm, cs);
    }
    block_ms(m, s);
    if (threadIdx.x == 0) loss[row] = m + logf(s) - to_f(xr[target[row]]);
}

extern "C" __global__ void __launch_bounds__(1024) kf_ce_mean(const float *__restrict__ loss, T *__restrict__ out, long long rows)
{
    __shared__ float part[32];
    float s = 0.f;
    for (long long i = threadIdx.x; i < rows; i += blockDim.x) s += loss[i];
    s = warp_sum(s);
    if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.f;
        for (int i = 0; i < (int)(blockDim.x / 32); ++i) t += part[i];
        out[0] = from_f(t / (float)rows);
    }
}
)";

KernelTemplate make(const std::string &family, const std::string &name, const std::string &description,
                    std::function<J(const OperatorCard &)> seed, std::map<std::string, std::vector<J>> space,
                    std::function<bool(const J &, const OperatorCard &)> valid,
                    std::function<std::string(const J &, const OperatorCard &)> extra, const char *body,
                    std::function<J(const J &, const OperatorCard &)> launch)
{
    const std::string id = "cuda." + family + "." + name;
    KernelTemplate t;
    t.id = id;
    t.family = family;
    t.backend = "cuda";
    t.description = description;
    t.space = std::move(space);
    t.valid = [valid](const J &p, const OperatorCard &card) { return vecFits(p, card) && (!valid || valid(p, card)); };
    t.render = [id, extra, body](const J &p, const OperatorCard &card) {
        return paramDefines(id, p) + cudaPrelude(card.inputs.front().dtype) + (extra ? extra(p, card) : std::string()) + body;
    };
    t.launch = std::move(launch);
    t.seed = std::move(seed);
    return t;
}

} // namespace

void addCudaOtherTemplates(TemplateLibrary &lib)
{
    lib.add(make("group_norm", "groups", "a block per (sample, group), two passes with the group re-read from L2, optional persistent grid",
                 [](const OperatorCard &card) { return J{{"block", 1024}, {"vec", cudaVecFor(card)}, {"grid_blocks", 264}}; },
                 {{"block", {256, 512, 1024}}, {"vec", {1, 2, 4, 8}}, {"grid_blocks", {0, 132, 264, 528}}}, nullptr,
                 [](const J &, const OperatorCard &card) {
                     return kBlockSum2 + std::string("#define EPS ") + std::to_string(referenceEps(card)) + "f\n";
                 },
                 kGroupNorm, [](const J &p, const OperatorCard &) {
                     const int gb = p.at("grid_blocks");
                     J grid = {gb == 0 ? std::string("n * groups") : "min(n * groups, " + std::to_string(gb) + ")", 1, 1};
                     return cudaOneKernelPlan("kf_group_norm", grid, p.at("block"), cudaNormArgs("group_norm"));
                 }));

    const std::vector<std::pair<std::string, int>> acts = {{"gelu", 0}, {"gelu_tanh", 1}, {"silu", 2}, {"relu", 3}, {"add_gelu", 4}};
    for (const auto &[family, op] : acts) {
        const int code = op;
        lib.add(make(family, "grid_stride", "grid-stride elementwise with VEC-element packs and a capped grid",
                     [](const OperatorCard &card) { return J{{"block", 256}, {"vec", cudaVecFor(card)}, {"grid_cap", 0}}; },
                     {{"block", {128, 256, 512, 1024}}, {"vec", {1, 2, 4, 8}}, {"grid_cap", {0, 1056, 4224, 16896, 65536}}}, nullptr,
                     [code](const J &, const OperatorCard &) { return "#define OP " + std::to_string(code) + "\n"; }, kElementwise,
                     [code](const J &p, const OperatorCard &) {
                         const int block = p.at("block"), vec = p.at("vec");
                         // grid_cap 0: one pack per thread, no grid-stride loop iterations.
                         const std::string blocks = "ceil_div(rows * cols, " + std::to_string(block * vec) + ")";
                         const int cap = p.at("grid_cap");
                         J grid = {cap == 0 ? blocks : "min(" + blocks + ", " + std::to_string(cap) + ")", 1, 1};
                         return cudaOneKernelPlan("kf_eltwise", grid, block, {"in:x", code == 4 ? "in:residual" : "in:x", "out:y", "sym:rows", "sym:cols"});
                     }));
    }

    const std::vector<std::pair<std::string, int>> reductions = {{"sum", 0}, {"mean", 1}, {"max", 2}, {"argmax", 3}};
    for (const auto &[family, op] : reductions) {
        const int code = op;
        lib.add(make(family, "rows", "TPR threads per row, RPB rows per block, VEC-element loads, shuffle then shared-memory combine",
                     [](const OperatorCard &card) {
                         const int tpr = card.shape.at("cols") <= 1024 ? 32 : 256;
                         return J{{"tpr", tpr}, {"rpb", std::max(1, 256 / tpr)}, {"vec", cudaVecFor(card)}};
                     },
                     {{"tpr", {32, 64, 128, 256, 512, 1024}}, {"rpb", {1, 2, 4, 8}}, {"vec", {1, 2, 4, 8}}},
                     [](const J &p, const OperatorCard &) { return p.at("tpr").get<int>() * p.at("rpb").get<int>() <= 1024; },
                     [code](const J &, const OperatorCard &) {
                         return "#define OP " + std::to_string(code) + "\n#define OUT_T " + (code == 3 ? "long long" : "T") + "\n";
                     },
                     kReduce, [](const J &p, const OperatorCard &) {
                         const int tpr = p.at("tpr"), rpb = p.at("rpb");
                         return cudaOneKernelPlan("kf_reduce", {"ceil_div(rows, " + std::to_string(rpb) + ")", 1, 1}, tpr * rpb,
                                     {"in:x", "out:y", "sym:rows", "sym:cols"});
                     }));
    }

    lib.add(make("cumsum", "block_scan", "a block per row scanning BLOCK*VEC elements per step with a running carry",
                 [](const OperatorCard &) { return J{{"block", 512}, {"vec", 4}}; },
                 {{"block", {128, 256, 512, 1024}}, {"vec", {1, 2, 4, 8}}}, nullptr, nullptr, kScan,
                 [](const J &p, const OperatorCard &) { return cudaOneKernelPlan("kf_cumsum", {"rows", 1, 1}, p.at("block"), {"in:x", "out:y", "sym:rows", "sym:cols"}); }));

    lib.add(make("cross_entropy", "two_pass", "a block per row for log-sum-exp minus the target logit, then one block for the mean",
                 [](const OperatorCard &card) { return J{{"block", 1024}, {"vec", cudaVecFor(card)}}; },
                 {{"block", {256, 512, 1024}}, {"vec", {1, 2, 4, 8}}}, nullptr, nullptr, kCrossEntropy,
                 [](const J &p, const OperatorCard &) {
                     return J{{"kernels", J::array({{{"name", "kf_ce_rows"}, {"grid", {"rows", 1, 1}}, {"block", {p.at("block"), 1, 1}},
                                                     {"shared_bytes", "0"}, {"args", {"in:logits", "in:target", "ws:loss", "sym:vocab"}}},
                                                    {{"name", "kf_ce_mean"}, {"grid", {1, 1, 1}}, {"block", {1024, 1, 1}},
                                                     {"shared_bytes", "0"}, {"args", {"ws:loss", "out:loss", "sym:rows"}}}})},
                              {"workspace", J::array({{{"name", "loss"}, {"bytes", "rows * 4"}}})}};
                 }));
}

} // namespace kforge
