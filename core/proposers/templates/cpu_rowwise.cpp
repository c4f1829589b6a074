// CPU templates for the row-wise families other than softmax: normalizations, activations,
// reductions, scans and cross-entropy, fp32, over contiguous rows. Loops are written with independent
// accumulators and no calls in the inner loop so the compiler vectorizes them; the tuning space sets
// the accumulator count and unrolling.
#include <string>

#include "proposers/template_library.h"

namespace kforge {

namespace {

using J = nlohmann::json;

// Common prologue: contiguous fp32 input 0 viewed as rows x cols, output 0 likewise.
const char *kRows = R"(#include <cmath>
#include <cstring>

static bool contiguous(const kf_tensor &t)
{
    int64_t expect = 1;
    for (int d = t.ndim - 1; d >= 0; --d) {
        if (t.sizes[d] != 1 && t.strides[d] != expect)
            return false;
        expect *= t.sizes[d];
    }
    return true;
}

static int64_t leading(const kf_tensor &t)
{
    int64_t n = 1;
    for (int d = 0; d + 1 < t.ndim; ++d)
        n *= t.sizes[d];
    return n;
}

#define ROWS_PROLOGUE(NIN)                                                                          \
    if (n_inputs != NIN || n_outputs != 1 || inputs[0].dtype != KF_F32 || inputs[0].ndim < 1)      \
        return 1;                                                                                  \
    for (int i = 0; i < n_inputs; ++i)                                                             \
        if (!contiguous(inputs[i]))                                                                \
            return 2;                                                                              \
    if (!contiguous(outputs[0]))                                                                   \
        return 2;                                                                                  \
    const int64_t cols = inputs[0].sizes[inputs[0].ndim - 1];                                      \
    const int64_t rows = leading(inputs[0]);                                                       \
    const float *x = (const float *)inputs[0].data;                                                \
    (void)rows;                                                                                    \
    (void)cols;                                                                                    \
    (void)x;

)";

std::string header(const std::string &id, const J &p)
{
    return paramDefines(id, p) + kRows + "extern \"C\" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs)\n{\n";
}

// Sum of a row with ACCUMULATORS independent partial sums (in ACC precision).
const char *kRowSum = R"(static inline ACC row_sum(const float *v, int64_t n)
{
    ACC part[ACCUMULATORS] = {};
    int64_t c = 0;
    for (; c + ACCUMULATORS <= n; c += ACCUMULATORS)
        for (int a = 0; a < ACCUMULATORS; ++a)
            part[a] += v[c + a];
    for (; c < n; ++c)
        part[0] += v[c];
    ACC s = 0;
    for (int a = 0; a < ACCUMULATORS; ++a)
        s += part[a];
    return s;
}

)";

// A row's max m and log(sum(exp(x - m))), the sum with ACCUMULATORS independent partials.
const char *kRowLogSumExp = R"(static inline void row_max_logsum(const float *xr, int64_t cols, float &m, float &logs)
{
    m = -INFINITY;
    for (int64_t c = 0; c < cols; ++c)
        m = m > xr[c] ? m : xr[c];
    ACC part[ACCUMULATORS] = {};
    int64_t c = 0;
    for (; c + ACCUMULATORS <= cols; c += ACCUMULATORS)
        for (int a = 0; a < ACCUMULATORS; ++a)
            part[a] += expf(xr[c + a] - m);
    for (; c < cols; ++c)
        part[0] += expf(xr[c] - m);
    ACC s = 0;
    for (int a = 0; a < ACCUMULATORS; ++a)
        s += part[a];
    logs = (float)std::log((double)s);
}

)";

std::string withHelper(const std::string &id, const J &p, const char *helper, const std::string &body)
{
    std::string h = header(id, p);
    const auto pos = h.find("extern \"C\"");
    return h.substr(0, pos) + helper + h.substr(pos) + body + "    return 0;\n}\n";
}

KernelTemplate rowTemplate(const std::string &family, const std::string &description,
                           std::map<std::string, std::vector<J>> space, const char *helper, std::string body)
{
    const std::string id = "cpu." + family + ".rows";
    auto render = [id, helper, body](const J &p, const OperatorCard &) { return withHelper(id, p, helper, body); };
    auto valid = [](const J &, const OperatorCard &card) { return card.inputs.front().dtype == DType::F32; };
    return {id, family, "cpu", description, std::move(space), valid, render, {}, {}};
}

const std::vector<J> kAcc = {"float", "double"};
const std::vector<J> kAccumulators = {1, 2, 4, 8, 16};

} // namespace

void addCpuRowwiseTemplates(TemplateLibrary &lib)
{
    lib.add(rowTemplate("log_softmax", "max, log-sum-exp with partial sums, then x - max - log(sum)",
                        {{"acc", kAcc}, {"accumulators", kAccumulators}}, kRowLogSumExp, R"(    ROWS_PROLOGUE(1)
    float *y = (float *)outputs[0].data;
    for (int64_t r = 0; r < rows; ++r) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        float m, logs;
        row_max_logsum(xr, cols, m, logs);
        // Subtract the max first, then log(sum), as ATen does: adding them first loses the low bits.
        for (int64_t c = 0; c < cols; ++c)
            yr[c] = (xr[c] - m) - logs;
    }
)"));
    lib.add(rowTemplate("layer_norm", "two-pass mean and variance per row with partial sums, then scale and shift",
                        {{"acc", kAcc}, {"accumulators", kAccumulators}}, kRowSum, R"(    ROWS_PROLOGUE(3)
    const float *w = (const float *)inputs[1].data, *b = (const float *)inputs[2].data;
    float *y = (float *)outputs[0].data;
    for (int64_t r = 0; r < rows; ++r) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        const float mean = (float)(row_sum(xr, cols) / (ACC)cols);
        ACC part[ACCUMULATORS] = {};
        int64_t c = 0;
        for (; c + ACCUMULATORS <= cols; c += ACCUMULATORS)
            for (int a = 0; a < ACCUMULATORS; ++a) {
                const ACC d = xr[c + a] - mean;
                part[a] += d * d;
            }
        for (; c < cols; ++c) {
            const ACC d = xr[c] - mean;
            part[0] += d * d;
        }
        ACC var = 0;
        for (int a = 0; a < ACCUMULATORS; ++a)
            var += part[a];
        const float rstd = (float)(1.0 / std::sqrt((double)(var / (ACC)cols) + 1e-5));
        for (c = 0; c < cols; ++c)
            yr[c] = (xr[c] - mean) * rstd * w[c] + b[c];
    }
)"));
    lib.add(rowTemplate("rms_norm", "sum of squares with partial sums, then x * rsqrt(mean + eps) * weight",
                        {{"acc", kAcc}, {"accumulators", kAccumulators}}, "", R"(    ROWS_PROLOGUE(2)
    const float *w = (const float *)inputs[1].data;
    float *y = (float *)outputs[0].data;
    for (int64_t r = 0; r < rows; ++r) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        ACC part[ACCUMULATORS] = {};
        int64_t c = 0;
        for (; c + ACCUMULATORS <= cols; c += ACCUMULATORS)
            for (int a = 0; a < ACCUMULATORS; ++a)
                part[a] += (ACC)xr[c + a] * xr[c + a];
        for (; c < cols; ++c)
            part[0] += (ACC)xr[c] * xr[c];
        ACC ss = 0;
        for (int a = 0; a < ACCUMULATORS; ++a)
            ss += part[a];
        const float scale = (float)(1.0 / std::sqrt((double)(ss / (ACC)cols) + 1e-6));
        for (c = 0; c < cols; ++c)
            yr[c] = xr[c] * scale * w[c];
    }
)"));
    lib.add(rowTemplate("group_norm", "per (sample, group): mean and variance over channels x spatial, then per-channel affine",
                        {{"acc", kAcc}, {"accumulators", kAccumulators}}, kRowSum, R"(    if (n_inputs != 3 || inputs[0].ndim != 3 || inputs[0].dtype != KF_F32)
        return 1;
    const int64_t n = inputs[0].sizes[0], ch = inputs[0].sizes[1], hw = inputs[0].sizes[2];
    const float *x = (const float *)inputs[0].data, *w = (const float *)inputs[1].data, *b = (const float *)inputs[2].data;
    float *y = (float *)outputs[0].data;
    // The group count is a shape symbol, not a tensor: ask the worker for this call's value.
    const int64_t groups = kforge_symbol("groups");
    if (groups <= 0 || ch % groups != 0)
        return 3;
    const int64_t per = ch / groups * hw;
    for (int64_t s = 0; s < n; ++s)
        for (int64_t g = 0; g < groups; ++g) {
            const float *xg = x + (s * ch + g * (ch / groups)) * hw;
            float *yg = y + (s * ch + g * (ch / groups)) * hw;
            const float mean = (float)(row_sum(xg, per) / (ACC)per);
            ACC var = 0;
            for (int64_t i = 0; i < per; ++i) {
                const ACC d = xg[i] - mean;
                var += d * d;
            }
            const float rstd = (float)(1.0 / std::sqrt((double)(var / (ACC)per) + 1e-5));
            for (int64_t c = 0; c < ch / groups; ++c) {
                const int64_t chan = g * (ch / groups) + c;
                for (int64_t i = 0; i < hw; ++i)
                    yg[c * hw + i] = (xg[c * hw + i] - mean) * rstd * w[chan] + b[chan];
            }
        }
)"));
    const char *elementwise = R"(    float *y = (float *)outputs[0].data;
    const int64_t n = rows * cols;
    int64_t i = 0;
    for (; i + UNROLL <= n; i += UNROLL)
        for (int u = 0; u < UNROLL; ++u)
            y[i + u] = F(x[i + u]);
    for (; i < n; ++i)
        y[i] = F(x[i]);
)";
    auto activation = [&](const std::string &family, const std::string &desc, const std::string &f) {
        lib.add(rowTemplate(family, desc, {{"unroll", {1, 4, 8, 16}}}, "",
                            "    ROWS_PROLOGUE(1)\n#define F(v) (" + f + ")\n" + elementwise));
    };
    activation("gelu", "elementwise 0.5 x (1 + erf(x / sqrt 2))", "0.5f * (v) * (1.0f + erff((v) * 0.70710678118654752f))");
    activation("gelu_tanh", "elementwise tanh-form GELU", "0.5f * (v) * (1.0f + tanhf(0.79788456080286536f * ((v) + 0.044715f * (v) * (v) * (v))))");
    activation("silu", "elementwise x * sigmoid(x)", "(v) / (1.0f + expf(-(v)))");
    activation("relu", "elementwise max(x, 0), NaN passed through", "((v) > 0.0f || (v) != (v)) ? (v) : 0.0f");
    lib.add(rowTemplate("add_gelu", "fused gelu(x + residual) in one pass", {{"unroll", {1, 4, 8, 16}}}, "", R"(    ROWS_PROLOGUE(2)
    const float *res = (const float *)inputs[1].data;
    float *y = (float *)outputs[0].data;
    const int64_t n = rows * cols;
#define G(v) (0.5f * (v) * (1.0f + erff((v) * 0.70710678118654752f)))
    int64_t i = 0;
    for (; i + UNROLL <= n; i += UNROLL)
        for (int u = 0; u < UNROLL; ++u)
            y[i + u] = G(x[i + u] + res[i + u]);
    for (; i < n; ++i)
        y[i] = G(x[i] + res[i]);
)"));
    lib.add(rowTemplate("sum", "row sums with independent partial sums", {{"acc", kAcc}, {"accumulators", kAccumulators}}, kRowSum,
                        R"(    ROWS_PROLOGUE(1)
    float *y = (float *)outputs[0].data;
    for (int64_t r = 0; r < rows; ++r)
        y[r] = (float)row_sum(x + r * cols, cols);
)"));
    lib.add(rowTemplate("mean", "row means with independent partial sums", {{"acc", kAcc}, {"accumulators", kAccumulators}}, kRowSum,
                        R"(    ROWS_PROLOGUE(1)
    float *y = (float *)outputs[0].data;
    for (int64_t r = 0; r < rows; ++r)
        y[r] = (float)(row_sum(x + r * cols, cols) / (ACC)cols);
)"));
    lib.add(rowTemplate("max", "row maxima with independent partial maxima, NaN-propagating", {{"accumulators", kAccumulators}}, "",
                        R"(    ROWS_PROLOGUE(1)
    float *y = (float *)outputs[0].data;
    for (int64_t r = 0; r < rows; ++r) {
        const float *xr = x + r * cols;
        float part[ACCUMULATORS];
        for (int a = 0; a < ACCUMULATORS; ++a)
            part[a] = -INFINITY;
        bool nan = false;
        int64_t c = 0;
        for (; c + ACCUMULATORS <= cols; c += ACCUMULATORS)
            for (int a = 0; a < ACCUMULATORS; ++a) {
                nan |= xr[c + a] != xr[c + a];
                part[a] = part[a] > xr[c + a] ? part[a] : xr[c + a];
            }
        for (; c < cols; ++c) {
            nan |= xr[c] != xr[c];
            part[0] = part[0] > xr[c] ? part[0] : xr[c];
        }
        float m = part[0];
        for (int a = 1; a < ACCUMULATORS; ++a)
            m = m > part[a] ? m : part[a];
        y[r] = nan ? NAN : m;
    }
)"));
    lib.add(rowTemplate("argmax", "index of the first row maximum", {{"chunk", {64, 256, 1024}}}, "",
                        R"(    if (n_inputs != 1 || inputs[0].dtype != KF_F32 || outputs[0].dtype != KF_I64)
        return 1;
    const int64_t cols = inputs[0].sizes[inputs[0].ndim - 1], rows = leading(inputs[0]);
    const float *x = (const float *)inputs[0].data;
    int64_t *y = (int64_t *)outputs[0].data;
    for (int64_t r = 0; r < rows; ++r) {
        const float *xr = x + r * cols;
        int64_t best = 0;
        float bv = xr[0];
        // Scan in chunks: find each chunk's max without branches, then locate it only if it wins.
        for (int64_t c0 = 0; c0 < cols; c0 += CHUNK) {
            const int64_t end = c0 + CHUNK < cols ? c0 + CHUNK : cols;
            float cm = xr[c0];
            for (int64_t c = c0; c < end; ++c)
                cm = cm > xr[c] ? cm : xr[c];
            if (cm > bv)
                for (int64_t c = c0; c < end; ++c)
                    if (xr[c] == cm) {
                        bv = cm;
                        best = c;
                        break;
                    }
        }
        y[r] = best;
    }
)"));
    lib.add(rowTemplate("cumsum", "inclusive scan per row in ACC precision", {{"acc", kAcc}}, "", R"(    ROWS_PROLOGUE(1)
    float *y = (float *)outputs[0].data;
    for (int64_t r = 0; r < rows; ++r) {
        ACC run = 0;
        for (int64_t c = 0; c < cols; ++c)
            y[r * cols + c] = (float)(run += x[r * cols + c]);
    }
)"));
    lib.add(rowTemplate("cross_entropy", "per row: log-sum-exp minus the target logit; mean over rows",
                        {{"acc", kAcc}, {"accumulators", kAccumulators}}, kRowLogSumExp, R"(    if (n_inputs != 2 || inputs[0].ndim != 2 || inputs[0].dtype != KF_F32 || inputs[1].dtype != KF_I64)
        return 1;
    const int64_t rows = inputs[0].sizes[0], cols = inputs[0].sizes[1];
    const float *x = (const float *)inputs[0].data;
    const int64_t *target = (const int64_t *)inputs[1].data;
    double total = 0;
    for (int64_t r = 0; r < rows; ++r) {
        const float *xr = x + r * cols;
        float m, logs;
        row_max_logsum(xr, cols, m, logs);
        total += (double)m + (double)logs - (double)xr[target[r]];
    }
    *(float *)outputs[0].data = (float)(total / (double)rows);
)"));
}

} // namespace kforge
