// CPU softmax over the last dimension, fp32. Three genuinely different kernels:
//  - three_pass: max, then exp and sum (writing exp to the output), then scale the output;
//  - online: one pass keeping a running max and a rescaled running sum per lane, then one write pass;
//  - vector: three passes over explicit SIMD vectors with a vectorized polynomial exp.
// Both share an exp that is either libm's or a range-reduced polynomial of a chosen degree: the low
// degrees are faster and are rejected by verification when too inaccurate, which the search learns.
// Each template's seed is an accurate point, so a search starts from kernels that can pass.
#include <string>

#include "proposers/template_library.h"

namespace kforge {

namespace {

std::string expPrelude(const std::string &exp)
{
    const int degree = exp == "poly3" ? 3 : exp == "poly4" ? 4 : exp == "poly6" ? 6 : 0;
    std::string s = "#include <cmath>\n#include <cstring>\n\n";
    s += "#define EXP_POLY_DEGREE " + std::to_string(degree) + " // 0: libm expf\n\n";
    s += R"(static inline float kf_exp(float x)
{
#if EXP_POLY_DEGREE == 0
    return expf(x);
#else
    // exp(x) = 2^n * exp(r), |r| <= ln2/2, exp(r) by a Taylor polynomial in Horner form.
    x = x < -87.0f ? -87.0f : x;
    const float n = __builtin_floorf(x * 1.44269504088896341f + 0.5f);
    const float r = x - n * 0.693359375f + n * 2.12194440e-4f;
#if EXP_POLY_DEGREE >= 6
    float p = 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
#elif EXP_POLY_DEGREE == 4
    float p = 1.0f / 24;
#else
    float p = 0.0f;
#endif
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    const int32_t bits = ((int32_t)n + 127) << 23;
    float scale;
    std::memcpy(&scale, &bits, sizeof scale);
    return p * scale;
#endif
}

)";
    return s;
}

const char *kArgCheck = R"(    if (n_inputs != 1 || n_outputs != 1 || inputs[0].dtype != KF_F32 || inputs[0].ndim != 2)
        return 1;
    if (inputs[0].strides[1] != 1 || outputs[0].strides[1] != 1)
        return 2;
    const int64_t rows = inputs[0].sizes[0], cols = inputs[0].sizes[1];
    const float *x = (const float *)inputs[0].data;
    float *y = (float *)outputs[0].data;
)";

std::string renderThreePass(const nlohmann::json &p, const OperatorCard &)
{
    std::string s = "// template cpu.softmax.three_pass\n#define UNROLL " + std::to_string(p.at("unroll").get<int>()) + "\n";
    s += "#define ACC " + p.at("acc").get<std::string>() + "\n";
    s += expPrelude(p.at("exp").get<std::string>());
    s += "extern \"C\" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs)\n{\n";
    s += kArgCheck;
    s += R"(    for (int64_t r = 0; r < rows; ++r) {
        const float *xr = x + r * inputs[0].strides[0];
        float *yr = y + r * outputs[0].strides[0];
        float pm[UNROLL];
        for (int u = 0; u < UNROLL; ++u)
            pm[u] = -INFINITY;
        int64_t c = 0;
        for (; c + UNROLL <= cols; c += UNROLL)
            for (int u = 0; u < UNROLL; ++u)
                pm[u] = pm[u] > xr[c + u] ? pm[u] : xr[c + u];
        for (; c < cols; ++c)
            pm[0] = pm[0] > xr[c] ? pm[0] : xr[c];
        float m = pm[0];
        for (int u = 1; u < UNROLL; ++u)
            m = m > pm[u] ? m : pm[u];

        ACC ps[UNROLL] = {};
        for (c = 0; c + UNROLL <= cols; c += UNROLL)
            for (int u = 0; u < UNROLL; ++u) {
                const float e = kf_exp(xr[c + u] - m);
                yr[c + u] = e;
                ps[u] += e;
            }
        for (; c < cols; ++c) {
            const float e = kf_exp(xr[c] - m);
            yr[c] = e;
            ps[0] += e;
        }
        ACC sum = 0;
        for (int u = 0; u < UNROLL; ++u)
            sum += ps[u];
        const float inv = (float)(1.0 / (double)sum);
        for (c = 0; c < cols; ++c)
            yr[c] *= inv;
    }
    return 0;
}
)";
    return s;
}

std::string renderOnline(const nlohmann::json &p, const OperatorCard &)
{
    std::string s = "// template cpu.softmax.online\n#define LANES " + std::to_string(p.at("lanes").get<int>()) + "\n";
    s += expPrelude(p.at("exp").get<std::string>());
    s += "extern \"C\" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs)\n{\n";
    s += kArgCheck;
    s += R"(    for (int64_t r = 0; r < rows; ++r) {
        const float *xr = x + r * inputs[0].strides[0];
        float *yr = y + r * outputs[0].strides[0];
        // Per lane: running max and the sum of exp(x - running max), rescaled when the max grows.
        float lm[LANES], ls[LANES];
        for (int l = 0; l < LANES; ++l) {
            lm[l] = -INFINITY;
            ls[l] = 0.0f;
        }
        int64_t c = 0;
        for (; c + LANES <= cols; c += LANES)
            for (int l = 0; l < LANES; ++l) {
                const float v = xr[c + l];
                const float nm = lm[l] > v ? lm[l] : v;
                // -inf (a masked entry) contributes nothing; -inf - -inf would be NaN.
                const float keep = lm[l] == -INFINITY ? 0.0f : kf_exp(lm[l] - nm);
                ls[l] = ls[l] * keep + (v == -INFINITY ? 0.0f : kf_exp(v - nm));
                lm[l] = nm;
            }
        for (; c < cols; ++c) {
            const float v = xr[c];
            const float nm = lm[0] > v ? lm[0] : v;
            const float keep = lm[0] == -INFINITY ? 0.0f : kf_exp(lm[0] - nm);
            ls[0] = ls[0] * keep + (v == -INFINITY ? 0.0f : kf_exp(v - nm));
            lm[0] = nm;
        }
        float m = lm[0];
        for (int l = 1; l < LANES; ++l)
            m = m > lm[l] ? m : lm[l];
        float sum = 0.0f;
        for (int l = 0; l < LANES; ++l)
            if (ls[l] > 0.0f)
                sum += ls[l] * kf_exp(lm[l] - m);
        const float inv = 1.0f / sum;
        for (c = 0; c < cols; ++c)
            yr[c] = kf_exp(xr[c] - m) * inv;
    }
    return 0;
}
)";
    return s;
}

std::string renderVector(const nlohmann::json &p, const OperatorCard &)
{
    const int width = p.at("width").get<int>();
    const std::string exp = p.at("exp").get<std::string>();
    std::string s = "// template cpu.softmax.vector\n#define VW " + std::to_string(width) + "\n";
    s += "#define EXP_POLY_DEGREE " + std::string(exp == "poly4" ? "4" : "6") + "\n";
    s += "#define SUM_ACCUMULATORS " + std::to_string(p.at("accumulators").get<int>()) + "\n";
    s += R"(#include <cmath>
#include <cstring>

// GCC/Clang vector extensions: VW floats per vector, lowered to whatever SIMD the host has.
typedef float vf __attribute__((vector_size(VW * 4)));
typedef int32_t vi __attribute__((vector_size(VW * 4)));

static inline vf load(const float *p) { vf v; std::memcpy(&v, p, sizeof v); return v; }
static inline void store(float *p, vf v) { std::memcpy(p, &v, sizeof v); }
static inline vf splat(float x) { vf v; for (int i = 0; i < VW; ++i) v[i] = x; return v; }

// exp(x) = 2^n * p(r), |r| <= ln2/2; n rounded with the 1.5*2^23 trick so it stays in vector registers.
static inline vf poly_exp(vf x)
{
    typedef vf F;
    // Constants by splat, not x * 0: x may be -inf (masked attention), and -inf * 0 is NaN.
    const F lo = splat(-87.0f);
    x = x < lo ? lo : x;
    const F magic = splat(12582912.0f);
    const F n = (x * 1.44269504088896341f + magic) - magic;
    const F r = x - n * 0.693359375f + n * 2.12194440e-4f;
#if EXP_POLY_DEGREE >= 6
    F q = r * (1.0f / 720) + 1.0f / 120;
    q = q * r + 1.0f / 24;
#else
    F q = splat(1.0f / 24);
#endif
    q = q * r + 1.0f / 6;
    q = q * r + 0.5f;
    q = q * r + 1.0f;
    q = q * r + 1.0f;
    // Convert n to integers, then reinterpret the shifted bits as floats (a vector cast is a bit cast).
    return q * (vf)(__builtin_convertvector(n + 127.0f, vi) << 23);
}

static inline float poly_exp(float x)
{
    return poly_exp(splat(x))[0];
}

extern "C" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs)
{
)";
    s += kArgCheck;
    s += R"(    for (int64_t r = 0; r < rows; ++r) {
        const float *xr = x + r * inputs[0].strides[0];
        float *yr = y + r * outputs[0].strides[0];
        const int64_t body = cols - cols % VW;
        vf vm = splat(-INFINITY);
        for (int64_t c = 0; c < body; c += VW) {
            const vf v = load(xr + c);
            vm = vm > v ? vm : v;
        }
        float m = -INFINITY;
        for (int i = 0; i < VW; ++i)
            m = m > vm[i] ? m : vm[i];
        for (int64_t c = body; c < cols; ++c)
            m = m > xr[c] ? m : xr[c];

        const vf vmax = splat(m);
        vf acc[SUM_ACCUMULATORS];
        for (int a = 0; a < SUM_ACCUMULATORS; ++a)
            acc[a] = splat(0.0f);
        int64_t c = 0;
        for (; c + SUM_ACCUMULATORS * VW <= body; c += SUM_ACCUMULATORS * VW)
            for (int a = 0; a < SUM_ACCUMULATORS; ++a) {
                const vf e = poly_exp(load(xr + c + a * VW) - vmax);
                store(yr + c + a * VW, e);
                acc[a] += e;
            }
        for (; c < body; c += VW) {
            const vf e = poly_exp(load(xr + c) - vmax);
            store(yr + c, e);
            acc[0] += e;
        }
        float sum = 0.0f;
        for (int a = 0; a < SUM_ACCUMULATORS; ++a)
            for (int i = 0; i < VW; ++i)
                sum += acc[a][i];
        for (; c < cols; ++c) {
            const float e = poly_exp(xr[c] - m);
            yr[c] = e;
            sum += e;
        }
        const vf inv = splat(1.0f / sum);
        for (c = 0; c < body; c += VW)
            store(yr + c, load(yr + c) * inv);
        for (; c < cols; ++c)
            yr[c] *= inv[0];
    }
    return 0;
}
)";
    return s;
}

bool fp32Only(const nlohmann::json &, const OperatorCard &card)
{
    return card.inputs.size() == 1 && card.inputs[0].dtype == DType::F32 && card.inputs[0].dims.size() == 2;
}

} // namespace

void addCpuSoftmaxTemplates(TemplateLibrary &lib)
{
    using J = nlohmann::json;
    const std::vector<J> exps = {"libm", "poly3", "poly4", "poly6"};
    lib.add({"cpu.softmax.three_pass", "softmax", "cpu",
             "max pass, exp-and-sum pass writing the output, scale pass; UNROLL independent partial results",
             {{"unroll", {1, 2, 4, 8, 16}}, {"exp", exps}, {"acc", {"float", "double"}}},
             fp32Only, renderThreePass, {}, [](const OperatorCard &) { return J{{"unroll", 4}, {"exp", "libm"}, {"acc", "float"}}; }});
    lib.add({"cpu.softmax.online", "softmax", "cpu",
             "single pass with a running max and rescaled sum per lane (online softmax), then a write pass",
             {{"lanes", {1, 2, 4, 8, 16}}, {"exp", exps}},
             fp32Only, renderOnline, {}, [](const OperatorCard &) { return J{{"lanes", 8}, {"exp", "libm"}}; }});
    lib.add({"cpu.softmax.vector", "softmax", "cpu",
             "explicit SIMD vectors of VW floats with a vectorized polynomial exp; SUM_ACCUMULATORS independent sums",
             {{"width", {4, 8, 16}}, {"exp", {"poly6", "poly4"}}, {"accumulators", {1, 2, 4}}},
             fp32Only, renderVector, {}, [](const OperatorCard &) { return J{{"width", 8}, {"exp", "poly6"}, {"accumulators", 2}}; }});
}

} // namespace kforge
