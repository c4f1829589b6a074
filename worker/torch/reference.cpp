#include "worker/torch/reference.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include "ops/mask_rows.h"
#include "runtime/fused_ops.h"
#include "util/error.h"
#include "worker/profile/module_reference.h"

#include <algorithm>
#include <limits>

namespace kforge::worker {

at::ScalarType scalarType(DType t)
{
    switch (t) {
    case DType::F32: return at::kFloat;
    case DType::F16: return at::kHalf;
    case DType::BF16: return at::kBFloat16;
    case DType::F64: return at::kDouble;
    case DType::I64: return at::kLong;
    case DType::I32: return at::kInt;
    case DType::Bool: return at::kBool;
    }
    return at::kFloat;
}

std::string shapeString(const OperatorCard &card, const ShapeBindings &shape)
{
    std::string s;
    for (int64_t d : card.sizes(card.inputs.front(), shape))
        s += (s.empty() ? "" : "x") + std::to_string(d);
    return s;
}

std::vector<at::Tensor> makeInputs(const OperatorCard &card, const ShapeBindings &shape, double scale, at::Device device,
                                   const std::string &special)
{
    std::vector<at::Tensor> out;
    for (const auto &t : card.inputs) {
        const auto sizes = card.sizes(t, shape);
        const auto type = scalarType(t.dtype);
        const auto f32 = at::TensorOptions().dtype(at::kFloat).device(device);
        if (t.init.rfind("index:", 0) == 0) {
            const auto sym = t.init.substr(6);
            auto it = shape.find(sym);
            if (it == shape.end())
                throw Error("operator card '" + card.key + "': input '" + t.name + "' draws indices below '" + sym
                            + "', which the shape does not bind");
            out.push_back(at::randint(0, it->second, sizes, at::TensorOptions().dtype(type).device(device)));
            // Class targets as a language model's loss has them: padding marked with the ignore index,
            // about one in eight, and never all of them.
            if (special == kIgnoredTargets && out.back().numel() > 0) {
                auto ignored = at::rand(sizes, f32).lt(0.125);
                ignored.view(-1).select(0, 0).fill_(false);
                out.back().masked_fill_(ignored, kIgnoreIndex);
            }
        } else if (t.init.rfind("lognormal:", 0) == 0 && at::isFloatingType(type)) {
            // Magnitudes exp(N(0, scale^2 / n)) of random sign, n the extent of the symbol: a product of n
            // of them is exp(N(0, scale^2)), in float range at any n and in any order of multiplication.
            const auto sym = t.init.substr(10);
            auto it = shape.find(sym);
            if (it == shape.end() || it->second < 1)
                throw Error("operator card '" + card.key + "': input '" + t.name + "' is drawn for products over '" + sym
                            + "', which the shape does not bind");
            const auto mag = at::exp(at::randn(sizes, f32) * (scale / std::sqrt(double(it->second))));
            out.push_back(at::where(at::rand(sizes, f32).lt(0.5), -mag, mag).to(type));
        } else if (t.init == "causal_mask" && at::isFloatingType(type) && sizes.size() == 2) {
            const double lowest = type == at::kHalf ? -65504.0 : type == at::kBFloat16 ? -3.3895313892515355e38
                                : type == at::kDouble ? std::numeric_limits<double>::lowest() : double(std::numeric_limits<float>::lowest());
            out.push_back(at::full(sizes, lowest, at::TensorOptions().dtype(type == at::kDouble ? at::kDouble : at::kFloat).device(device))
                              .triu(1)
                              .to(type));
        } else if (type == at::kBool) { // a mask: about half of it set
            out.push_back(at::rand(sizes, f32).lt(0.5));
        } else if (t.init == "positive" && at::isFloatingType(type)) { // a variance, away from zero
            out.push_back((at::rand(sizes, f32) + 0.5).to(type));
        } else if (t.init == "uniform" && at::isFloatingType(type)) { // never negative, as the problem's input was
            out.push_back((at::rand(sizes, f32) * scale).to(type));
        } else if (!at::isFloatingType(type)) {
            out.push_back(at::randint(-100, 100, sizes, at::TensorOptions().dtype(type).device(device)));
        } else {
            const double s = t.init == "randn_unscaled" ? 1.0 : scale;
            out.push_back((at::randn(sizes, f32) * s).to(type));
        }
    }
    if (special == kMaskedRows && !out.empty() && out[0].dim() >= 1 && at::isFloatingType(out[0].scalar_type())) {
        auto mask = at::rand(out[0].sizes(), at::TensorOptions().device(device)).lt(0.25);
        mask.select(-1, 0).fill_(false); // every row keeps a finite value
        out[0].masked_fill_(mask, -std::numeric_limits<double>::infinity());
    } else if (!special.empty() && special != kMaskedRows && special != kIgnoredTargets) {
        throw Error("operator card '" + card.key + "': unknown special input '" + special + "'");
    }
    return out;
}

std::vector<at::Tensor> makeOutputs(const OperatorCard &card, const ShapeBindings &shape, at::Device device)
{
    std::vector<at::Tensor> out;
    for (const auto &t : card.outputs)
        out.push_back(at::empty(card.sizes(t, shape), at::TensorOptions().dtype(scalarType(t.dtype)).device(device)));
    return out;
}

namespace {

// The shape symbols' extents as the inputs actually have them (held-out trials differ from the card's).
ShapeBindings bindingsOf(const OperatorCard &card, const std::vector<at::Tensor> &inputs)
{
    ShapeBindings b = card.shape;
    for (size_t i = 0; i < card.inputs.size() && i < inputs.size(); ++i)
        for (size_t d = 0; d < card.inputs[i].dims.size() && int64_t(d) < inputs[i].dim(); ++d)
            b[card.inputs[i].dims[d]] = inputs[i].size(int64_t(d));
    return b;
}

int64_t symbol(const OperatorCard &card, const ShapeBindings &b, const std::string &name)
{
    auto it = b.find(name);
    if (it == b.end())
        throw Error("operator card '" + card.key + "': reference argument uses unknown shape symbol '" + name + "'");
    return it->second;
}

// Operators this libtorch may lack as one op, computed from ATen ops in float32 (float64 for float64
// inputs) then cast back.
std::vector<at::Tensor> callComposite(const OperatorCard &card, const std::vector<at::Tensor> &in, const ShapeBindings &shape)
{
    const std::string name = card.atenOp.substr(8);
    if (name == "module") // a problem's whole forward (core/workload/problem_cards.h)
        return callModuleReference(card, in);
    const auto computeType = at::promote_types(in.at(0).scalar_type(), at::kFloat);
    if (name == "rms_norm") {
        const double eps = card.referenceArgs.size() > 2 ? card.referenceArgs[2].value("double", 1e-6) : 1e-6;
        // PyTorch 2.4 and later have aten::rms_norm (fused on CUDA): what a program calling
        // F.rms_norm runs, so the baseline to beat. Older libtorch: the same formula from ATen ops.
        static const auto fused = c10::Dispatcher::singleton().findSchema({"aten::rms_norm", ""});
        if (fused) {
            torch::jit::Stack stack;
            stack.emplace_back(in.at(0));
            stack.emplace_back(std::vector<int64_t>{in.at(0).size(-1)});
            stack.emplace_back(in.at(1));
            stack.emplace_back(eps);
            fused->callBoxed(&stack);
            return {stack.at(0).toTensor()};
        }
        const auto x = in.at(0).to(computeType);
        const auto y = x * at::rsqrt(x.pow(2).mean({-1}, true) + eps) * in.at(1).to(computeType);
        return {y.to(in[0].scalar_type())};
    }
    if (name == "add_gelu")
        return {at::gelu(in.at(0).to(computeType) + in.at(1).to(computeType)).to(in[0].scalar_type())};
    if (name == "silu_mul") // the chain as the model makes it (runtime/fused_ops.h), at the inputs' own dtype
        return {runtime::siluMulChain(in.at(0), in.at(1))};
    if (name == "gelu_tanh_mul" || name == "gelu_mul") // the chain as the model makes it, at the inputs' own dtype
        return {runtime::geluMulChain(in.at(0), in.at(1), name == "gelu_tanh_mul" ? "tanh" : "none")};
    if (name == "gelu_new") // the chain as the model writes it, at the input's own dtype
        return {runtime::geluNewChain(in.at(0))};
    if (name == "gelu_new_mul")
        return {runtime::geluNewMulChain(in.at(0), in.at(1))};
    if (name == "quick_gelu")
        return {runtime::quickGeluChain(in.at(0))};
    if (name == "rms_norm_offset") { // the chain as the model makes it, its upcast in float64 for a float64 reference
        const double eps = card.referenceArgs.size() > 2 ? card.referenceArgs[2].value("double", 1e-6) : 1e-6;
        return {runtime::rmsNormOffsetChain(in.at(0), in.at(1), eps, computeType)};
    }
    if (name == "add_rms_norm_offset") {
        const double eps = card.referenceArgs.size() > 3 ? card.referenceArgs[3].value("double", 1e-6) : 1e-6;
        auto [h, y] = runtime::addRmsNormOffsetChain(in.at(0), in.at(1), in.at(2), eps, computeType);
        return {h, y};
    }
    if (name == "rms_norm_cast") { // the chain as the model makes it, its upcast in float64 for a float64 reference
        const double eps = card.referenceArgs.size() > 2 ? card.referenceArgs[2].value("double", 1e-6) : 1e-6;
        return {runtime::rmsNormCastChain(in.at(0), in.at(1), eps, computeType)};
    }
    if (name == "add_rms_norm_cast") { // the chain as the model makes it, its upcast in float64 for a float64 reference
        const double eps = card.referenceArgs.size() > 3 ? card.referenceArgs[3].value("double", 1e-6) : 1e-6;
        auto [h, y] = runtime::addRmsNormCastChain(in.at(0), in.at(1), in.at(2), eps, computeType);
        return {h, y};
    }
    if (name == "rotary_embedding") { // the chain as the model makes it, at the inputs' own dtype; half is the card's
        const int64_t half = card.referenceArgs.size() > 3 ? card.referenceArgs[3].value("int", in.at(0).size(-1) / 2) : in.at(0).size(-1) / 2;
        return {runtime::rotaryChain(in.at(0), in.at(1), in.at(2), half)};
    }
    // The attention softmax's operators, their form read from the operator's name (core/ops/operator_card.h).
    if (const auto form = softmaxForm(card)) {
        // The chain as the model makes it (runtime/fused_ops.h), its upcast in float64 for a float64 reference;
        // the native chain has no upcast and computes in the inputs' own dtype (float64 for that reference).
        // A card's x is floating: the traced operator's float64 scale tensor computes what the number does.
        const double scale = card.referenceArgs.size() > 1 ? card.referenceArgs[1].value("double", 1.0) : 1.0;
        const auto by = form->divide ? runtime::ScaleBy::Divide : runtime::ScaleBy::Multiply;
        const auto compute = in.at(0).scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
        if (card.family == "scaled_softmax")
            return {form->native ? runtime::scaledSoftmaxNativeChain(in.at(0), scale, by) : runtime::scaledSoftmaxChain(in.at(0), scale, compute)};
        // Each row of x with the mask row it takes (ops/mask_rows.h), gathered: the chain then adds like shapes.
        const auto &x = in.at(0), &mask = in.at(1);
        const auto m = maskRowsOfShape(shape, mask.dim() == 2 ? mask.size(0) : 0);
        if (mask.dim() != 2 || x.dim() != 2 || mask.size(1) != x.size(1) || m.mrows < 1 || m.minner < 1 || m.mrows % m.minner != 0
            || m.mstep < 1 || m.mblock < 1)
            throw Error("scaled_masked_softmax: x [rows, cols], mask [mrows, cols] with minner dividing mrows and mstep, mblock at least 1");
        const auto r = at::arange(x.size(0), at::TensorOptions().dtype(at::kLong).device(x.device()));
        const auto rowOf = at::remainder(at::floor_divide(r, m.mblock), m.mrows / m.minner) * m.minner
                           + at::remainder(at::floor_divide(r, m.mstep), m.minner);
        const auto rowsMask = mask.index_select(0, rowOf);
        return {form->native ? runtime::scaledMaskedSoftmaxNativeChain(x, scale, rowsMask, by)
                             : runtime::scaledMaskedSoftmaxChain(x, scale, rowsMask, compute)};
    }
    if (name == "rms_norm_dim" || name == "l2_norm_dim") {
        // Over dim 1 of [outer, dim, inner], no weight: KernelBench's channel-first RMSNorm
        // x / sqrt(mean(x^2) + eps), and F.normalize's x / max(||x||_2, eps).
        const double eps = card.referenceArgs.size() > 1 ? card.referenceArgs[1].value("double", 1e-5) : 1e-5;
        const auto x = in.at(0).to(computeType);
        const auto ss = x.pow(2).sum({1}, true);
        const auto y = name == "rms_norm_dim" ? x / at::sqrt(ss / double(x.size(1)) + eps) : x / at::clamp_min(at::sqrt(ss), eps);
        return {y.to(in[0].scalar_type())};
    }
    if (name == "frobenius_norm") // KernelBench's x / torch.norm(x, p='fro'), in x's own dtype as a program runs it
        return {in.at(0) / at::norm(in.at(0))};
    if (name == "l1_norm_dim") { // KernelBench's x / mean(|x|, dim 1), no eps
        const auto x = in.at(0).to(computeType);
        return {(x / x.abs().mean({1}, true)).to(in[0].scalar_type())};
    }
    // The scans without an ATen operator of their own (core/ops/scan_ops.h), as a model writes them, at
    // the input's own dtype: what the program runs.
    if (name == "cumsum_reverse")
        return {in.at(0).flip({-1}).cumsum(-1).flip({-1})};
    if (name == "cumsum_exclusive") {
        const auto &x = in.at(0);
        const auto head = at::zeros_like(x.narrow(-1, 0, std::min<int64_t>(1, x.size(-1))));
        return {at::cat({head, x.narrow(-1, 0, std::max<int64_t>(0, x.size(-1) - 1)).cumsum(-1)}, -1)};
    }
    if (name == "masked_cumsum" || name == "weighted_cumsum")
        return {(in.at(0) * in.at(1)).cumsum(-1)};
    throw Error("the composite reference " + card.atenOp + " is not known to this worker");
}

} // namespace

std::vector<at::Tensor> callReference(const OperatorCard &card, const std::vector<at::Tensor> &inputs, const ShapeBindings *shape)
{
    const auto bindings = shape ? *shape : bindingsOf(card, inputs);
    if (card.atenOp.rfind("kforge::", 0) == 0)
        return callComposite(card, inputs, bindings);
    auto handle = c10::Dispatcher::singleton().findSchema({card.atenOp, card.atenOverload});
    if (!handle)
        throw Error("the reference operator " + card.atenOp + (card.atenOverload.empty() ? "" : "." + card.atenOverload)
                    + " is not known to this libtorch");
    torch::jit::Stack stack;
    for (const auto &a : card.referenceArgs) {
        if (a.contains("input")) {
            const auto i = a["input"].get<size_t>();
            if (i >= inputs.size())
                throw Error("operator card '" + card.key + "': reference argument names input " + std::to_string(i)
                            + " but the card has " + std::to_string(inputs.size()));
            stack.emplace_back(inputs[i]);
        } else if (a.contains("int"))
            stack.emplace_back(a["int"].get<int64_t>());
        else if (a.contains("sym"))
            stack.emplace_back(symbol(card, bindings, a["sym"].get<std::string>()));
        else if (a.contains("bool"))
            stack.emplace_back(a["bool"].get<bool>());
        else if (a.contains("double"))
            stack.emplace_back(a["double"].get<double>());
        else if (a.contains("str"))
            stack.emplace_back(a["str"].get<std::string>());
        else if (a.contains("int_list"))
            stack.emplace_back(a["int_list"].get<std::vector<int64_t>>());
        else if (a.contains("sym_list")) {
            std::vector<int64_t> v;
            for (const auto &sym : a["sym_list"])
                v.push_back(symbol(card, bindings, sym.get<std::string>()));
            stack.emplace_back(v);
        } else if (a.contains("none"))
            stack.emplace_back();
        else
            throw Error("operator card '" + card.key + "': reference argument " + a.dump() + " is not understood");
    }
    handle->callBoxed(&stack);
    std::vector<at::Tensor> out;
    for (const auto &v : stack)
        if (v.isTensor())
            out.push_back(v.toTensor());
    if (out.size() != card.outputs.size())
        throw Error("the reference " + card.atenOp + " returned " + std::to_string(out.size()) + " tensors; the card expects "
                    + std::to_string(card.outputs.size()));
    return out;
}

std::vector<Reference64> callReference64(const OperatorCard &card, const std::vector<at::Tensor> &inputs, const ShapeBindings &shape,
                                         at::Device where)
{
    std::vector<at::Tensor> in64, abs64;
    for (const auto &t : inputs) {
        const bool fp = at::isFloatingType(t.scalar_type());
        in64.push_back(fp ? t.to(where, at::kDouble) : t.to(where));
        if (card.errorModel == ErrorModel::Sum)
            abs64.push_back(fp ? in64.back().abs() : in64.back());
    }
    auto values = callReference(card, in64, &shape);
    std::vector<Reference64> out;
    for (size_t i = 0; i < values.size(); ++i) {
        Reference64 r;
        r.value = values[i];
        const int64_t n = values[i].numel();
        r.terms = n > 0 && inputs[0].numel() > n ? inputs[0].numel() / n : std::max<int64_t>(1, inputs[0].dim() ? inputs[0].size(-1) : 1);
        out.push_back(std::move(r));
    }
    if (card.errorModel == ErrorModel::Sum) {
        in64.clear();
        auto magnitudes = callReference(card, abs64, &shape);
        for (size_t i = 0; i < out.size(); ++i)
            out[i].magnitude = magnitudes[i];
    }
    if (card.errorModel == ErrorModel::Normalization && inputs.size() > 1) {
        // An affine normalization y = x^ * w + b cancels to near zero where x^ * w meets -b, and its
        // rounding there is that of the terms, |x^||w| + |b|: the larger of |f(x, |w|, |b|)| and
        // |f(x, |w|, -|b|)|. A scale, so at the inputs' own precision; the candidate's error is
        // still measured against float64.
        in64.clear();
        std::vector<at::Tensor> plus{inputs[0]}, minus{inputs[0]};
        for (size_t i = 1; i < inputs.size(); ++i) {
            const bool fp = at::isFloatingType(inputs[i].scalar_type());
            plus.push_back(fp ? inputs[i].abs() : inputs[i]);
            minus.push_back(fp && i + 1 == inputs.size() ? -inputs[i].abs() : plus.back());
        }
        auto a = callReference(card, plus, &shape);
        plus.clear();
        const auto b = callReference(card, minus, &shape);
        for (size_t i = 0; i < out.size(); ++i)
            out[i].magnitude = at::maximum(a[i].abs_(), b[i].abs()).to(where);
    }
    return out;
}

int64_t reference64Bytes(const OperatorCard &card, const ShapeBindings &shape)
{
    // Float64 copies of the inputs and the result, the operator's own scratch, and beside them what the
    // error model needs: for `sum` the same again over |x|, for an affine `norm` two results at the
    // inputs' precision.
    int64_t in = 0, out = 0, outNative = 0;
    for (const auto &t : card.inputs)
        in += card.numel(t, shape) * 8;
    for (const auto &t : card.outputs) {
        out += card.numel(t, shape) * 8;
        outNative += card.numel(t, shape) * dtypeSize(t.dtype);
    }
    int64_t n = in + out + (in + out) / 2;
    if (card.errorModel == ErrorModel::Sum)
        n += in + out;
    else if (card.errorModel == ErrorModel::Normalization && card.inputs.size() > 1)
        n += 2 * outNative;
    return n;
}

} // namespace kforge::worker
