#include "runtime/fused_ops.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include <ATen/ExpandUtils.h>
#include <ATen/InferSize.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/subgraph_matcher.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/lower_tuples.h>
#include <torch/csrc/jit/passes/subgraph_rewrite.h>

namespace kforge::runtime {

at::Tensor scaledSoftmaxChain(const at::Tensor &x, double scale, at::ScalarType compute)
{
    return at::softmax((x * scale).to(compute), -1).to(x.scalar_type());
}

at::Tensor scaledMaskedSoftmaxChain(const at::Tensor &x, double scale, const at::Tensor &mask, at::ScalarType compute)
{
    return at::softmax((x * scale + mask).to(compute), -1).to(x.scalar_type());
}

namespace {

at::Tensor scaled(const at::Tensor &x, const at::Scalar &scale, ScaleBy by)
{
    return by == ScaleBy::Divide ? x / scale : x * scale;
}

at::Tensor scaled(const at::Tensor &x, const at::Tensor &scale, ScaleBy by)
{
    return by == ScaleBy::Divide ? x / scale : x * scale;
}

} // namespace

at::Tensor scaledSoftmaxNativeChain(const at::Tensor &x, double scale, ScaleBy by)
{
    return at::softmax(scaled(x, scale, by), -1);
}

at::Tensor scaledMaskedSoftmaxNativeChain(const at::Tensor &x, double scale, const at::Tensor &mask, ScaleBy by)
{
    return at::softmax(scaled(x, scale, by) + mask, -1);
}

at::Tensor scaledSoftmaxTracedChain(const at::Tensor &x, double scale, ScaleBy by)
{
    return at::softmax(scaled(x, at::scalar_tensor(scale, at::kDouble), by), -1);
}

at::Tensor scaledMaskedSoftmaxTracedChain(const at::Tensor &x, double scale, const at::Tensor &mask, ScaleBy by)
{
    return at::softmax(scaled(x, at::scalar_tensor(scale, at::kDouble), by) + mask, -1);
}

at::Tensor maskedSoftmaxNativeView(const at::Tensor &x, const at::Tensor &mask, at::IntArrayRef size)
{
    // The view's shape as view reads it (one -1 inferred); the sum's shape x's only where the mask
    // broadcasts to x (a wider mask makes a wider sum, which the chain as written handles).
    const auto sum = at::infer_size(x.sizes(), mask.sizes());
    const auto viewed = at::infer_size(size, x.numel());
    if (x.is_floating_point() && x.dim() >= 1 && sum == x.sizes().vec() && !viewed.empty() && viewed.back() == x.size(-1)) {
        static const auto fused = c10::Dispatcher::singleton()
                                      .findSchemaOrThrow("kforge::scaled_masked_softmax_native", "")
                                      .typed<at::Tensor(const at::Tensor &, double, const at::Tensor &)>();
        return fused.call(x, 1.0, mask).view(size);
    }
    return at::softmax((x + mask).view(size), -1);
}

at::Tensor scaledSoftmaxTo(const at::Tensor &x, double scale, const c10::optional<at::Tensor> &mask, at::ScalarType dtype, bool tensorScale)
{
    const bool masked = mask && mask->defined();
    // Times a number or a 0-dim float64 tensor, a floating x keeps its dtype and its product is the same;
    // cast back to x's own dtype, the chain is the fused operator's.
    if (x.is_floating_point() && dtype == x.scalar_type()) {
        if (masked) {
            static const auto fused = c10::Dispatcher::singleton()
                                          .findSchemaOrThrow("kforge::scaled_masked_softmax", "")
                                          .typed<at::Tensor(const at::Tensor &, double, const at::Tensor &)>();
            return fused.call(x, scale, *mask);
        }
        static const auto plain =
            c10::Dispatcher::singleton().findSchemaOrThrow("kforge::scaled_softmax", "").typed<at::Tensor(const at::Tensor &, double)>();
        return plain.call(x, scale);
    }
    const auto s = tensorScale ? x * at::scalar_tensor(scale, at::kDouble) : x * scale;
    return at::softmax((masked ? s + *mask : s).to(at::kFloat), -1).to(dtype);
}

at::Tensor siluMulChain(const at::Tensor &gate, const at::Tensor &up)
{
    return at::silu(gate) * up;
}

at::Tensor geluMulChain(const at::Tensor &gate, const at::Tensor &up, c10::string_view approximate)
{
    return at::gelu(gate, approximate) * up;
}

namespace {

// NewGELU's math.sqrt(2.0 / math.pi), the same double Python computes.
const double kSqrt2OverPi = std::sqrt(2.0 / M_PI);

} // namespace

// The constants and the order of NewGELUActivation's forward; a Python number times (or plus) a floating
// tensor is read in its compute type, as a trace's 0-dim float64 constant is.
at::Tensor geluNewChain(const at::Tensor &x)
{
    const auto half = x * 0.5;
    const auto inner = (x + x.pow(3.0) * 0.044715) * kSqrt2OverPi;
    return half * (at::tanh(inner) + 1.0);
}

at::Tensor geluNewMulChain(const at::Tensor &gate, const at::Tensor &up)
{
    return geluNewChain(gate) * up;
}

at::Tensor quickGeluChain(const at::Tensor &x)
{
    return x * at::sigmoid(x * 1.702);
}

namespace {

// The written-out RMSNorm upcast to `compute` and cast back to `out`.
at::Tensor rmsNormChain(const at::Tensor &x, const at::Tensor &weight, double eps, at::ScalarType compute, at::ScalarType out)
{
    const auto xf = x.to(compute);
    const auto var = xf.pow(2).mean({-1}, true);
    return weight * (xf * at::rsqrt(var + eps)).to(out);
}

} // namespace

at::Tensor rmsNormCastChain(const at::Tensor &x, const at::Tensor &weight, double eps, at::ScalarType compute)
{
    return rmsNormChain(x, weight, eps, compute, x.scalar_type());
}

std::tuple<at::Tensor, at::Tensor> addRmsNormCastChain(const at::Tensor &x, const at::Tensor &residual, const at::Tensor &weight, double eps,
                                                       at::ScalarType compute)
{
    auto h = x + residual;
    auto y = rmsNormCastChain(h, weight, eps, compute);
    return {std::move(h), std::move(y)};
}

namespace {

// Gemma's RMSNorm upcast to `compute`, the product rounded once to `out`.
at::Tensor rmsNormOffsetChain(const at::Tensor &x, const at::Tensor &weight, double eps, at::ScalarType compute, at::ScalarType out)
{
    const auto xf = x.to(compute);
    return (xf * at::rsqrt(xf.pow(2).mean({-1}, true) + eps) * (1.0 + weight.to(compute))).to(out);
}

} // namespace

at::Tensor rmsNormOffsetChain(const at::Tensor &x, const at::Tensor &weight, double eps, at::ScalarType compute)
{
    return rmsNormOffsetChain(x, weight, eps, compute, x.scalar_type());
}

namespace {

// The norms' fused operators as the `_to` dispatchers call them: (x, weight, eps), and with the residual
// (x, residual, weight, eps) -> (h, y).
using NormOperator = c10::TypedOperatorHandle<at::Tensor(const at::Tensor &, const at::Tensor &, double)>;
using AddNormOperator =
    c10::TypedOperatorHandle<std::tuple<at::Tensor, at::Tensor>(const at::Tensor &, const at::Tensor &, const at::Tensor &, double)>;

NormOperator normOperator(const char *name)
{
    return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").typed<at::Tensor(const at::Tensor &, const at::Tensor &, double)>();
}

AddNormOperator addNormOperator(const char *name)
{
    return c10::Dispatcher::singleton()
        .findSchemaOrThrow(name, "")
        .typed<std::tuple<at::Tensor, at::Tensor>(const at::Tensor &, const at::Tensor &, const at::Tensor &, double)>();
}

// A residual add and a norm cast to `dtype`: the fused operator where `dtype` is the sum's, else the sum
// and `normTo` of it (which takes its own fused operator where it can).
std::tuple<at::Tensor, at::Tensor> addThenNormTo(const AddNormOperator &fused, at::Tensor (*normTo)(const at::Tensor &, const at::Tensor &, double, at::ScalarType),
                                                 const at::Tensor &x, const at::Tensor &residual, const at::Tensor &weight, double eps,
                                                 at::ScalarType dtype)
{
    if (dtype == at::result_type(x, residual))
        return fused.call(x, residual, weight, eps);
    auto h = x + residual;
    auto y = normTo(h, weight, eps, dtype);
    return {std::move(h), std::move(y)};
}

} // namespace

at::Tensor rmsNormOffsetHeads(const at::Tensor &x, const at::Tensor &weight, double eps)
{
    static const auto fused = normOperator("kforge::rms_norm_offset");
    // A [b, h, s, d] view of [b, s, h, d] memory (Gemma 3's q per head): its transpose holds the same rows,
    // contiguous, which a pack's kernel takes; viewed back, the result has the strides the chain's has.
    if (x.dim() == 4 && !x.is_contiguous() && x.transpose(1, 2).is_contiguous())
        return fused.call(x.transpose(1, 2), weight, eps).transpose(1, 2);
    return fused.call(x, weight, eps);
}

at::Tensor rmsNormOffsetTo(const at::Tensor &x, const at::Tensor &weight, double eps, at::ScalarType dtype)
{
    if (dtype == x.scalar_type())
        return rmsNormOffsetHeads(x, weight, eps);
    return rmsNormOffsetChain(x, weight, eps, at::kFloat, dtype);
}

std::tuple<at::Tensor, at::Tensor> addRmsNormOffsetTo(const at::Tensor &x, const at::Tensor &residual, const at::Tensor &weight, double eps,
                                                      at::ScalarType dtype)
{
    static const auto fused = addNormOperator("kforge::add_rms_norm_offset");
    return addThenNormTo(fused, rmsNormOffsetTo, x, residual, weight, eps, dtype);
}

std::tuple<at::Tensor, at::Tensor> addRmsNormOffsetChain(const at::Tensor &x, const at::Tensor &residual, const at::Tensor &weight, double eps,
                                                         at::ScalarType compute)
{
    auto h = x + residual;
    auto y = rmsNormOffsetChain(h, weight, eps, compute);
    return {std::move(h), std::move(y)};
}

at::Tensor rmsNormCastTo(const at::Tensor &x, const at::Tensor &weight, double eps, at::ScalarType dtype)
{
    static const auto fused = normOperator("kforge::rms_norm_cast");
    return dtype == x.scalar_type() ? fused.call(x, weight, eps) : rmsNormChain(x, weight, eps, at::kFloat, dtype);
}

std::tuple<at::Tensor, at::Tensor> addRmsNormCastTo(const at::Tensor &x, const at::Tensor &residual, const at::Tensor &weight, double eps,
                                                    at::ScalarType dtype)
{
    static const auto fused = addNormOperator("kforge::add_rms_norm_cast");
    return addThenNormTo(fused, rmsNormCastTo, x, residual, weight, eps, dtype);
}

at::Tensor rotaryChain(const at::Tensor &x, const at::Tensor &cos, const at::Tensor &sin, int64_t half)
{
    const auto q = x.transpose(1, 2);
    const auto rotated = at::cat({-q.slice(-1, half), q.slice(-1, 0, half)}, -1);
    return q * cos + rotated * sin;
}

at::Tensor rotarySliced(const at::Tensor &x, const at::Tensor &cos, const at::Tensor &sin, int64_t dim, int64_t half, int64_t backDim, int64_t back)
{
    const auto lastDim = [&](int64_t d) { return x.dim() >= 1 && (d == -1 || d == x.dim() - 1); };
    if (lastDim(dim) && lastDim(backDim) && half == back) {
        static const auto fused = c10::Dispatcher::singleton()
                                      .findSchemaOrThrow("kforge::rotary_embedding", "")
                                      .typed<at::Tensor(const at::Tensor &, const at::Tensor &, const at::Tensor &, int64_t)>();
        return fused.call(x, cos, sin, half);
    }
    const auto q = x.transpose(1, 2);
    return q * cos + at::cat({-q.slice(backDim, back), q.slice(dim, 0, half)}, -1) * sin;
}

at::Tensor rotaryHeads(const at::Tensor &q, const at::Tensor &cos, const at::Tensor &sin, int64_t dim, int64_t half, int64_t backDim, int64_t back)
{
    if (q.dim() == 4)
        return rotarySliced(q.transpose(1, 2), cos, sin, dim, half, backDim, back);
    return q * cos + at::cat({-q.slice(backDim, back), q.slice(dim, 0, half)}, -1) * sin;
}

namespace {

// Attention's softmax chains as the TorchScript frontend writes them: `torch.softmax((s * c [+ m]).float(),
// -1).to(q.dtype)` (the float32 cast aten::to with dtype 6, the final cast aten::to with a dtype value), and
// without the casts, `torch.softmax(s * c [+ m], -1)` or `torch.softmax(s / c [+ m], -1)`, the native
// operators (aten::div with two inputs: a division with a rounding mode has three). The pattern's free values (the
// scale, the mask, the dtypes, the flags) match anything; the replacement keeps the original calls'
// meaning only when they are what the fused operator assumes, so the rewrite checks them on each match
// (see the filters below). A scale that tracing kept as a 0-dim float64 tensor constant goes to the
// `_native_traced` operator as its number. Every replacement passes its scale through aten::Float (an int
// scale or divisor would not type as the operators' float, a tensor constant is no number), and
// foldScales folds each such conversion once: a constant to a number constant, a float to itself.
// How a chain meets float32: not at all (the native operators), an upcast before the softmax (`.float()`),
// or the softmax's own dtype (`softmax(t, -1, dtype=torch.float32)`, which converts its input first: Llama's
// eager attention and the many models written after it); both cast the result back after it.
enum class Casts { None, Upcast, SoftmaxDtype };

// The pattern's free values after x, the scale and the mask: the casts' and the softmax's.
std::string castValues(Casts casts)
{
    switch (casts) {
    case Casts::None: return ", %dim, %sdt";
    case Casts::Upcast: return ", %f32, %nb1, %cp1, %mf1, %dim, %sdt, %odt, %nb2, %cp2, %mf2";
    case Casts::SoftmaxDtype: return ", %dim, %f32, %odt, %nb2, %cp2, %mf2";
    }
    return "";
}

// From the scores to the result %y.
std::string softmaxTail(const std::string &scores, Casts casts)
{
    const std::string back = "  %y = aten::to(%p, %odt, %nb2, %cp2, %mf2)\n  return (%y)";
    switch (casts) {
    case Casts::None: return "  %y = aten::softmax(" + scores + ", %dim, %sdt)\n  return (%y)";
    case Casts::Upcast: return "  %u = aten::to(" + scores + ", %f32, %nb1, %cp1, %mf1)\n  %p = aten::softmax(%u, %dim, %sdt)\n" + back;
    case Casts::SoftmaxDtype: return "  %p = aten::softmax(" + scores + ", %dim, %f32)\n" + back;
    }
    return "";
}

std::string softmaxHead(bool masked, Casts casts)
{
    return std::string("graph(%x, %scale") + (masked ? ", %mask, %alpha" : "") + castValues(casts) + "):\n";
}

// `divide`: the scores divided by the scale (`x / math.sqrt(d)`), the native `_div` operators.
std::string softmaxPattern(bool masked, Casts casts, bool divide = false)
{
    std::string g = softmaxHead(masked, casts) + (divide ? "  %s = aten::div(%x, %scale)\n" : "  %s = aten::mul(%x, %scale)\n");
    if (masked)
        g += "  %t = aten::add(%s, %mask, %alpha)\n";
    return g + softmaxTail(masked ? "%t" : "%s", casts);
}

// `op` is the operator's name without its namespace.
std::string softmaxReplacement(bool masked, Casts casts, const std::string &op)
{
    return softmaxHead(masked, casts) + "  %f = aten::Float(%scale)\n  %y = kforge::" + op + "(%x, %f" + (masked ? ", %mask" : "")
           + ")\n  return (%y)";
}

// The chains with casts whose cast back the graph does not prove to be x's dtype (a trace holds
// `.to(q.dtype)` as the constant it saw; a model may write the dtype): kforge::scaled_softmax_to, which
// takes the fused operator where the dtype is x's when it runs. `tensorScale`: the scale was a traced 0-dim
// float64 tensor, which the operator's chain multiplies by where x is not floating.
std::string softmaxToReplacement(bool masked, Casts casts, bool tensorScale)
{
    return softmaxHead(masked, casts) + "  %f = aten::Float(%scale)\n" + (masked ? "" : "  %none : NoneType = prim::Constant()\n")
           + "  %ts : bool = prim::Constant[value=" + (tensorScale ? "1" : "0") + "]()\n  %y = kforge::scaled_softmax_to(%x, %f, "
           + (masked ? "%mask" : "%none") + ", %odt, %ts)\n  return (%y)";
}

// The chains with no scale, `softmax(x + mask, -1)` with or without the casts (CLIP, Swin and Whisper scale
// q before the product, T5 not at all): the masked operators with scale 1.0, which they multiply by exactly.
std::string unscaledHead(Casts casts)
{
    return "graph(%x, %mask, %alpha" + castValues(casts) + "):\n";
}

std::string unscaledPattern(Casts casts)
{
    return unscaledHead(casts) + "  %t = aten::add(%x, %mask, %alpha)\n" + softmaxTail("%t", casts);
}

std::string unscaledReplacement(Casts casts, const std::string &op)
{
    return unscaledHead(casts) + "  %one : float = prim::Constant[value=1.]()\n  %y = kforge::" + op + "(%x, %one, %mask)\n  return (%y)";
}

std::string unscaledToReplacement(Casts casts)
{
    return unscaledHead(casts) + "  %one : float = prim::Constant[value=1.]()\n  %ts : bool = prim::Constant[value=0]()\n"
           + "  %y = kforge::scaled_softmax_to(%x, %one, %mask, %odt, %ts)\n  return (%y)";
}

// The same with the scores viewed between the add and the softmax, as BART, OPT, Whisper and CLIP write it
// (`(w.view(b, h, q, k) + mask).view(b * h, q, k)`): kforge::masked_softmax_native_view, which takes the fused
// operator only where the view keeps the last dimension (a graph seldom proves it; the call checks).
const char *kUnscaledViewPattern = R"(
graph(%x, %mask, %alpha, %size, %dim, %sdt):
  %t = aten::add(%x, %mask, %alpha)
  %v = aten::view(%t, %size)
  %y = aten::softmax(%v, %dim, %sdt)
  return (%y))";
const char *kUnscaledViewReplacement = R"(
graph(%x, %mask, %alpha, %size, %dim, %sdt):
  %y = kforge::masked_softmax_native_view(%x, %mask, %size)
  return (%y))";

// silu(gate) * up, either order of the product (IEEE multiplication commutes, and so do type promotion and
// broadcasting).
const char *kSiluMulPattern = R"(
graph(%gate, %up):
  %s = aten::silu(%gate)
  %y = aten::mul(%s, %up)
  return (%y))";
const char *kMulSiluPattern = R"(
graph(%gate, %up):
  %s = aten::silu(%gate)
  %y = aten::mul(%up, %s)
  return (%y))";
const char *kSiluMulReplacement = R"(
graph(%gate, %up):
  %y = kforge::silu_mul(%gate, %up)
  return (%y))";
// GELU's tanh form written out (NewGELUActivation), traced or scripted: the numbers are constants (a trace's
// 0-dim float64 tensors, a script's floats) that the filter checks; as a gate, times up either order.
const std::string kNewGeluHead = "graph(%x, %half, %three, %c1, %alpha1, %c2, %one, %alpha2):\n";
const std::string kNewGeluGateHead = "graph(%x, %half, %three, %c1, %alpha1, %c2, %one, %alpha2, %up):\n";
const std::string kNewGeluBody = R"(  %a = aten::mul(%x, %half)
  %p = aten::pow(%x, %three)
  %b = aten::mul(%p, %c1)
  %s = aten::add(%x, %b, %alpha1)
  %t = aten::mul(%s, %c2)
  %th = aten::tanh(%t)
  %u = aten::add(%th, %one, %alpha2)
  %g = aten::mul(%a, %u)
)";
const std::string kNewGeluPattern = kNewGeluHead + kNewGeluBody + "  return (%g)";
const std::string kNewGeluMulPattern = kNewGeluGateHead + kNewGeluBody + "  %y = aten::mul(%g, %up)\n  return (%y)";
const std::string kMulNewGeluPattern = kNewGeluGateHead + kNewGeluBody + "  %y = aten::mul(%up, %g)\n  return (%y)";
const std::string kNewGeluReplacement = kNewGeluHead + "  %g = kforge::gelu_new(%x)\n  return (%g)";
const std::string kNewGeluMulReplacement = kNewGeluGateHead + "  %y = kforge::gelu_new_mul(%x, %up)\n  return (%y)";
// QuickGELU, x * sigmoid(1.702 * x), the product either order; 1.702 a constant the filter checks.
const std::string kQuickGeluHead = "graph(%x, %c):\n  %a = aten::mul(%x, %c)\n  %s = aten::sigmoid(%a)\n";
const std::string kQuickGeluPattern = kQuickGeluHead + "  %y = aten::mul(%x, %s)\n  return (%y)";
const std::string kQuickGeluSwappedPattern = kQuickGeluHead + "  %y = aten::mul(%s, %x)\n  return (%y)";
const std::string kQuickGeluReplacement = "graph(%x, %c):\n  %y = kforge::quick_gelu(%x)\n  return (%y)";
// The statistics of x.float() and the product of `normed` (%xf, or T5's %x) with their rsqrt.
std::string rmsStatistics(const char *normed)
{
    return std::string(R"(  %xf = aten::to(%x, %f32, %nb1, %cp1, %mf1)
  %sq = aten::pow(%xf, %two)
  %var = aten::mean(%sq, %dims, %keep, %mdt)
  %ve = aten::add(%var, %eps, %alpha)
  %r = aten::rsqrt(%ve)
)") + "  %xn = aten::mul(%" + normed + ", %r)\n";
}
// The GELU gates, gelu(gate, approximate) * up either order; the filter says which operator by the string.
const char *kGeluMulPattern = R"(
graph(%gate, %how, %up):
  %s = aten::gelu(%gate, %how)
  %y = aten::mul(%s, %up)
  return (%y))";
const char *kMulGeluPattern = R"(
graph(%gate, %how, %up):
  %s = aten::gelu(%gate, %how)
  %y = aten::mul(%up, %s)
  return (%y))";
const char *kGeluTanhMulReplacement = R"(
graph(%gate, %how, %up):
  %y = kforge::gelu_tanh_mul(%gate, %up)
  return (%y))";
const char *kGeluMulReplacement = R"(
graph(%gate, %how, %up):
  %y = kforge::gelu_mul(%gate, %up)
  return (%y))";
// Gemma's RMSNorm: `output = _norm(x.float()) * (1.0 + self.weight.float()); return output.type_as(x)`, the
// product either way round; `1.0 + w` is aten::add(w, 1.0, 1) (a 0-dim float64 tensor where traced).
const std::string kOffsetRmsHead =
    "graph(%x, %w, %f32, %nb1, %cp1, %mf1, %two, %dims, %keep, %mdt, %eps, %alpha, %wf32, %nb2, %cp2, %mf2, %one, %alpha2):\n";
const std::string kOffsetRmsBody = rmsStatistics("xf") + "  %wf = aten::to(%w, %wf32, %nb2, %cp2, %mf2)\n  %w1 = aten::add(%wf, %one, %alpha2)\n";
const std::string kOffsetRmsPattern = kOffsetRmsHead + kOffsetRmsBody + "  %o = aten::mul(%xn, %w1)\n  %y = aten::type_as(%o, %x)\n  return (%y)";
const std::string kOffsetFirstRmsPattern = kOffsetRmsHead + kOffsetRmsBody + "  %o = aten::mul(%w1, %xn)\n  %y = aten::type_as(%o, %x)\n  return (%y)";
const std::string kOffsetRmsReplacement = kOffsetRmsHead + "  %e = aten::Float(%eps)\n  %y = kforge::rms_norm_offset(%x, %w, %e)\n  return (%y)";
const std::string kOffsetRmsHeadsReplacement =
    kOffsetRmsHead + "  %e = aten::Float(%eps)\n  %y = kforge::rms_norm_offset_heads(%x, %w, %e)\n  return (%y)";
// A float32 trace records `x.float()` as the value x's later uses read, type_as's too: type_as(output, xf)
// casts to float32, whatever x is; kforge::rms_norm_offset_to takes the fused operator where x is float32.
const std::string kOffsetRmsUpcastPattern = kOffsetRmsHead + kOffsetRmsBody + "  %o = aten::mul(%xn, %w1)\n  %y = aten::type_as(%o, %xf)\n  return (%y)";
const std::string kOffsetFirstRmsUpcastPattern = kOffsetRmsHead + kOffsetRmsBody + "  %o = aten::mul(%w1, %xn)\n  %y = aten::type_as(%o, %xf)\n  return (%y)";
const std::string kOffsetRmsToReplacement = kOffsetRmsHead + "  %e = aten::Float(%eps)\n  %y = kforge::rms_norm_offset_to(%x, %w, %e, %f32)\n  return (%y)";
// RMSNorm as `xf = x.float(); var = xf.pow(2).mean(-1, True); xf = xf * torch.rsqrt(var + eps);
// return w * xf.to(x.dtype)` writes it (the weight on either side of the product); the mean's dims are
// free, a list constant or a list built from a constant, and checked by the filter.
const std::string kRmsHead = "graph(%x, %w, %f32, %nb1, %cp1, %mf1, %two, %dims, %keep, %mdt, %eps, %alpha, %odt, %nb2, %cp2, %mf2):\n";
const std::string kRmsStatistics = rmsStatistics("xf");
const std::string kRmsBody = kRmsStatistics + "  %c = aten::to(%xn, %odt, %nb2, %cp2, %mf2)\n";
// T5's LayerNorm (and the nine models that copy it): the statistics of x.float(), then x itself times
// rsqrt(var + eps), which a 16-bit x promotes to float32 from its exact value: the same product. A traced
// 16-bit model casts back to the weight's dtype, a constant (kforge::rms_norm_cast_to); a float32 one
// does not cast at all, which kforge::rms_norm_cast_to with float32 computes for any x.
const std::string kT5RmsBody = rmsStatistics("x");
const std::string kT5CastRmsPattern = kRmsHead + kT5RmsBody + "  %c = aten::to(%xn, %odt, %nb2, %cp2, %mf2)\n  %y = aten::mul(%w, %c)\n  return (%y)";
const std::string kT5NoCastHead = "graph(%x, %w, %f32, %nb1, %cp1, %mf1, %two, %dims, %keep, %mdt, %eps, %alpha):\n";
const std::string kT5NoCastRmsPattern = kT5NoCastHead + kT5RmsBody + "  %y = aten::mul(%w, %xn)\n  return (%y)";
// A float32 trace drops a no-op cast back (Llama's `.to(input_dtype)`, T5's multiply of x, which the trace
// records as of the upcast it aliases): the weight times the normalized x.float() directly.
const std::string kNoCastRmsPattern = kT5NoCastHead + kRmsStatistics + "  %y = aten::mul(%w, %xn)\n  return (%y)";
const std::string kT5NoCastRmsReplacement =
    kT5NoCastHead + "  %e = aten::Float(%eps)\n  %y = kforge::rms_norm_cast_to(%x, %w, %e, %f32)\n  return (%y)";
const std::string kWeightFirstRmsPattern = kRmsHead + kRmsBody + "  %y = aten::mul(%w, %c)\n  return (%y)";
const std::string kWeightLastRmsPattern = kRmsHead + kRmsBody + "  %y = aten::mul(%c, %w)\n  return (%y)";
const std::string kRmsReplacement = kRmsHead + "  %e = aten::Float(%eps)\n  %y = kforge::rms_norm_cast(%x, %w, %e)\n  return (%y)";
// A trace holds `.to(input_dtype)` as the constant it saw: kforge::rms_norm_cast_to compares it with x's
// dtype when it runs.
const std::string kRmsToReplacement = kRmsHead + "  %e = aten::Float(%eps)\n  %y = kforge::rms_norm_cast_to(%x, %w, %e, %odt)\n  return (%y)";
// The rotary embedding as Llama writes it on a projection's [b, s, h, d] view transposed to [b, h, s, d]:
// `q * cos + rotate_half(q) * sin`, rotate_half(q) = cat([-q[..., half:], q[..., :half]], -1), the sum in
// either order. The transpose is part of the match: the fused operator reads the projection's own
// contiguous layout. `sliced`: each slice with its own dim and half values (the back one %bdim, %back), as
// a trace records Hugging Face's rotate_half (`x.shape[-1] // 2` computed before each slice, the slices
// over dim 3, the back one's open end the largest int64); the graph proves neither that the halves are one
// value nor that dim 3 is the last, so kforge::rotary_embedding_sliced checks both when it runs.
// `heads`: q any [b, h, s, d] tensor, not the transpose itself (Gemma 3 normalizes q per head between the two):
// kforge::rotary_embedding_heads.
std::string rotaryHead(bool sliced, bool heads = false)
{
    return std::string(heads ? "graph(%q, " : "graph(%x, %d0, %d1, ") + "%cos, %sin, %dim, %start, %half, %step1, " + (sliced ? "%bdim, %back, " : "")
           + "%end, %step2, %cdim, %alpha):\n";
}

std::string rotaryPattern(bool sliced, bool swapped, bool heads = false)
{
    return rotaryHead(sliced, heads) + (heads ? "" : "  %q = aten::transpose(%x, %d0, %d1)\n") + "  %a = aten::mul(%q, %cos)\n"
           + "  %x1 = aten::slice(%q, %dim, %start, %half, %step1)\n"
           + (sliced ? "  %x2 = aten::slice(%q, %bdim, %back, %end, %step2)\n" : "  %x2 = aten::slice(%q, %dim, %half, %end, %step2)\n")
           + "  %n = aten::neg(%x2)\n  %l = prim::ListConstruct(%n, %x1)\n  %c = aten::cat(%l, %cdim)\n  %b = aten::mul(%c, %sin)\n"
           + (swapped ? "  %y = aten::add(%b, %a, %alpha)\n" : "  %y = aten::add(%a, %b, %alpha)\n") + "  return (%y)";
}

std::string rotaryHeadsReplacement(bool sliced)
{
    return rotaryHead(sliced, true)
           + (sliced ? "  %y = kforge::rotary_embedding_heads(%q, %cos, %sin, %dim, %half, %bdim, %back)\n"
                     : "  %y = kforge::rotary_embedding_heads(%q, %cos, %sin, %dim, %half, %dim, %half)\n")
           + "  return (%y)";
}

std::string rotaryReplacement(bool sliced)
{
    return rotaryHead(sliced)
           + (sliced ? "  %y = kforge::rotary_embedding_sliced(%x, %cos, %sin, %dim, %half, %bdim, %back)\n"
                     : "  %y = kforge::rotary_embedding(%x, %cos, %sin, %half)\n")
           + "  return (%y)";
}

std::optional<c10::IValue> constantOf(const torch::jit::Value *v)
{
    if (!v)
        return std::nullopt;
    const auto c = torch::jit::toIValue(v);
    return c ? std::optional<c10::IValue>(*c) : std::nullopt;
}

using Vars = std::unordered_map<std::string, torch::jit::Value *>;

// The graph's value a pattern's named value matched, or null.
torch::jit::Value *matched(const torch::jit::Match &m, const Vars &vars, const char *name)
{
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : m.values_map.at(it->second);
}

bool isConstInt(const torch::jit::Value *v, int64_t want)
{
    const auto c = constantOf(v);
    return c && ((c->isInt() && c->toInt() == want) || (c->isDouble() && c->toDouble() == double(want)));
}

bool isConstNone(const torch::jit::Value *v)
{
    const auto c = constantOf(v);
    return c && c->isNone();
}

bool isTensor(const torch::jit::Value *v)
{
    return v && v->type()->isSubtypeOf(*c10::TensorType::get());
}

// Casts as `.float()` and `.to(dtype)` write them: no non-blocking copy, no forced copy, no memory format.
// The flags of the casts a pattern has (a softmax given its dtype has no upcast of its own).
bool plainCasts(const torch::jit::Match &m, const Vars &vars)
{
    for (const char *flag : {"nb1", "cp1", "nb2", "cp2"}) {
        if (!vars.count(flag))
            continue;
        const auto f = constantOf(matched(m, vars, flag));
        if (!f || !f->isBool() || f->toBool())
            return false;
    }
    for (const char *format : {"mf1", "mf2"})
        if (vars.count(format) && !isConstNone(matched(m, vars, format)))
            return false;
    return true;
}



// Whether `dtype` is read from `x` itself (prim::dtype of x).
bool dtypeOf(const torch::jit::Value *dtype, const torch::jit::Value *x)
{
    return dtype && x && dtype->node()->kind() == c10::Symbol::fromQualString("prim::dtype") && dtype->node()->input(0) == x;
}

// Which scale the operator takes as its `float scale` (or divisor), exactly: for the chains with casts and
// the dividing ones a number (true division promotes an integer x to float whatever the divisor's type);
// for the multiplying native ones a double (an int times an integer x stays integer, times the operator's
// float it would not); for the `_traced` ones a constant 0-dim float64 tensor on the CPU, as tracing keeps
// `* 0.125` (the operator multiplies by the same tensor). A number may be a constant or a value the model
// computes (BERT's `/ math.sqrt(self.head_size)`, `q.size(-1) ** -0.5`): the operator gets the value the
// model made, and the pack's guard checks it against the card's on every call.
enum class Scale { Number, Double, Float64Tensor };

bool scaleFits(const torch::jit::Value *scale, Scale kind)
{
    if (!scale)
        return false;
    const auto c = constantOf(scale);
    const auto type = scale->type()->kind();
    switch (kind) {
    case Scale::Number: return c ? c->isDouble() || c->isInt() : type == c10::TypeKind::FloatType || type == c10::TypeKind::IntType;
    case Scale::Double: return c ? c->isDouble() : type == c10::TypeKind::FloatType;
    case Scale::Float64Tensor: {
        if (!c || !c->isTensor())
            return false;
        const auto &t = c->toTensor();
        return t.defined() && t.dim() == 0 && t.is_cpu() && t.scalar_type() == at::kDouble;
    }
    }
    return false;
}

// The softmax is over the last dimension with no dtype of its own, the add's alpha is 1 and its other
// operand a tensor (aten::add also matches a sum with a number, add.Scalar).
bool softmaxOfScores(const torch::jit::Match &m, const Vars &vars)
{
    const auto get = [&](const char *name) { return matched(m, vars, name); };
    const auto dim = constantOf(get("dim"));
    if (!dim || !dim->isInt() || dim->toInt() != -1)
        return false;
    if (vars.count("sdt")) { // else the softmax's dtype is the chain's float32 (castsFit)
        const auto sdt = constantOf(get("sdt"));
        if (!sdt || !sdt->isNone())
            return false;
    }
    if (vars.count("alpha") && !isConstInt(get("alpha"), 1))
        return false;
    return !vars.count("mask") || isTensor(get("mask"));
}

// The casts are the fused operator's: the first to float32, the final one to x's own dtype (prim::dtype of
// x, or of an input of the matmul that made x), and no cast copies or changes the memory format.
bool castsFit(const torch::jit::Match &m, const Vars &vars)
{
    const auto get = [&](const char *name) { return matched(m, vars, name); };
    const auto f32 = constantOf(get("f32"));
    if (!f32 || !f32->isInt() || f32->toInt() != int64_t(at::kFloat))
        return false;
    if (!plainCasts(m, vars))
        return false;
    // The output dtype: x's own, as `.to(q.dtype)` reads it from a tensor of x's dtype. Only
    // prim::dtype of x itself is certain from the graph alone; any other source is left alone.
    const auto *odt = get("odt");
    const auto *x = get("x");
    if (!odt || odt->node()->kind() != c10::Symbol::fromQualString("prim::dtype"))
        return false;
    if (dtypeOf(odt, x))
        return true;
    const auto *src = odt->node()->input(0);
    // `.to(q.dtype)` with s = q @ k^T * scale: q and x are both outputs of bf16 math; accept a dtype taken
    // from an input of the matmul that produced x.
    const auto *producer = x->node();
    if (producer->kind() == c10::Symbol::fromQualString("aten::matmul"))
        for (const auto *in : producer->inputs())
            if (in == src)
                return true;
    return false;
}

// A match is the fused operator's meaning only when the scale, the softmax and (with casts) the casts are
// as above. Anything else stays as the model wrote it.
template <Scale Kind, bool Casts>
bool softmaxFusable(const torch::jit::Match &m, const Vars &vars)
{
    return scaleFits(matched(m, vars, "scale"), Kind) && softmaxOfScores(m, vars) && (!Casts || castsFit(m, vars));
}

// The casts of kforge::scaled_softmax_to: the upcast to float32 and plain casts, the cast back to a dtype
// written as a constant (which the operator compares with x's when it runs).
bool castsToConstantDtype(const torch::jit::Match &m, const Vars &vars)
{
    const auto odt = constantOf(matched(m, vars, "odt"));
    return isConstInt(matched(m, vars, "f32"), int64_t(at::kFloat)) && plainCasts(m, vars) && odt && odt->isInt();
}

template <Scale Kind>
bool softmaxToFusable(const torch::jit::Match &m, const Vars &vars)
{
    return scaleFits(matched(m, vars, "scale"), Kind) && softmaxOfScores(m, vars) && castsToConstantDtype(m, vars);
}

bool unscaledToFusable(const torch::jit::Match &m, const Vars &vars)
{
    return isTensor(matched(m, vars, "x")) && softmaxOfScores(m, vars) && castsToConstantDtype(m, vars);
}

// With no scale: x and the mask both tensors (a sum with a number is not an attention mask).
template <bool Casts>
bool unscaledFusable(const torch::jit::Match &m, const Vars &vars)
{
    return isTensor(matched(m, vars, "x")) && softmaxOfScores(m, vars) && (!Casts || castsFit(m, vars));
}

// aten::mul also matches a product with a number (mul.Scalar): only a tensor `up` is the fused operator.
// The SiLU's output has no use outside the match (the matcher refuses a pattern's inner value used elsewhere).
bool siluMulFusable(const torch::jit::Match &m, const Vars &vars)
{
    return isTensor(matched(m, vars, "up"));
}

template <bool Tanh>
bool geluMulFusable(const torch::jit::Match &m, const Vars &vars)
{
    const auto how = constantOf(matched(m, vars, "how"));
    return isTensor(matched(m, vars, "up")) && how && how->isString() && how->toStringRef() == (Tanh ? "tanh" : "none");
}

// A constant that is exactly the float `want`: a float constant, or a traced 0-dim float64 tensor holding it
// (the FX pass reads the same: a Python float written in the model).
bool isNumber(const torch::jit::Value *v, double want)
{
    const auto c = constantOf(v);
    if (!c)
        return false;
    if (c->isDouble())
        return c->toDouble() == want;
    return scaleFits(v, Scale::Float64Tensor) && c->toTensor().item<double>() == want;
}

// NewGELU's chain is the fused operator's only with its own constants: 0.5, the exponent the float 3.0
// (pow.Tensor_Scalar; a tensor exponent is another operator), 0.044715, sqrt(2 / pi) as Python computes it,
// one, alphas 1; and, as a gate, a tensor up.
bool newGeluFusable(const torch::jit::Match &m, const Vars &vars)
{
    const auto get = [&](const char *name) { return matched(m, vars, name); };
    const auto three = constantOf(get("three"));
    return isTensor(get("x")) && isNumber(get("half"), 0.5) && three && three->isDouble() && three->toDouble() == 3.0
           && isNumber(get("c1"), 0.044715) && isNumber(get("c2"), kSqrt2OverPi) && isNumber(get("one"), 1.0)
           && isConstInt(get("alpha1"), 1) && isConstInt(get("alpha2"), 1) && (!vars.count("up") || isTensor(get("up")));
}

bool quickGeluFusable(const torch::jit::Match &m, const Vars &vars)
{
    return isTensor(matched(m, vars, "x")) && isNumber(matched(m, vars, "c"), 1.702);
}

// The mean's dims as a list of ints: a list constant, or prim::ListConstruct of int constants.
std::optional<std::vector<int64_t>> intList(const torch::jit::Value *v)
{
    if (const auto c = constantOf(v); c && c->isIntList())
        return c->toIntVector();
    if (!v || v->node()->kind() != c10::Symbol::fromQualString("prim::ListConstruct"))
        return std::nullopt;
    std::vector<int64_t> out;
    for (const auto *in : v->node()->inputs()) {
        const auto c = constantOf(in);
        if (!c || !c->isInt())
            return std::nullopt;
        out.push_back(c->toInt());
    }
    return out;
}

// An RMSNorm chain is a fused operator's only with: the upcast to float32, the square as pow 2, the mean over
// [-1] kept with no dtype, eps a float constant (or a traced 0-dim float64 one) added with alpha 1, plain
// casts, and a tensor weight; rms_norm_cast's also with the cast back to x's own dtype (prim::dtype of x).
bool rmsNormStatistics(const torch::jit::Match &m, const Vars &vars)
{
    const auto get = [&](const char *name) { return matched(m, vars, name); };
    const auto keep = constantOf(get("keep"));
    const auto eps = constantOf(get("eps"));
    return isConstInt(get("f32"), int64_t(at::kFloat)) && isConstInt(get("two"), 2) && intList(get("dims")) == std::vector<int64_t>{-1}
           && keep && keep->isBool() && keep->toBool() && isConstNone(get("mdt")) && eps && (eps->isDouble() || scaleFits(get("eps"), Scale::Float64Tensor))
           && isConstInt(get("alpha"), 1) && plainCasts(m, vars) && isTensor(get("w"));
}

bool rmsNormFusable(const torch::jit::Match &m, const Vars &vars)
{
    return rmsNormStatistics(m, vars) && dtypeOf(matched(m, vars, "odt"), matched(m, vars, "x"));
}

// Gemma's: the same statistics (rmsNormChain's constants), the weight's upcast to float32 and `1.0 +` it
// with alpha 1, the one a float constant or a traced 0-dim float64 tensor holding 1. The cast back is
// type_as(x): x's dtype by construction.
bool rmsNormOffsetFusable(const torch::jit::Match &m, const Vars &vars)
{
    const auto get = [&](const char *name) { return matched(m, vars, name); };
    return isConstInt(get("wf32"), int64_t(at::kFloat)) && isNumber(get("one"), 1.0) && isConstInt(get("alpha2"), 1) && rmsNormStatistics(m, vars);
}

// The same over a transpose's output (Gemma 3 normalizes q and k per head on the transposed projection view):
// kforge::rms_norm_offset_heads, which hands the fused operator the untransposed view where that is contiguous.
bool rmsNormOffsetHeadsFusable(const torch::jit::Match &m, const Vars &vars)
{
    const auto *x = matched(m, vars, "x");
    return x && x->node()->kind() == c10::Symbol::fromQualString("aten::transpose") && rmsNormOffsetFusable(m, vars);
}

// The same with the cast back to a constant dtype (Hugging Face's LlamaRMSNorm traced), for kforge::rms_norm_cast_to.
bool rmsNormToFusable(const torch::jit::Match &m, const Vars &vars)
{
    const auto odt = constantOf(matched(m, vars, "odt"));
    return rmsNormStatistics(m, vars) && odt && odt->isInt();
}

// A residual add right before the norm (`h = a + b`, then kforge::rms_norm_cast of h, as the rewrite left
// it) becomes one kforge::add_rms_norm_cast, its second output taking h's other uses. Done on the rewritten
// graph rather than as a two-output pattern: the matcher anchors a pattern at its first output and will
// not match a chain whose inner values (h's dtype read by the cast) sit between the add and the norm.
// Only with alpha 1, two tensors, and every other use of h after the norm (it is the norm's output then).
// Each norm operator has its residual form, taking the sum's two tensors and the norm's other inputs.
const std::pair<const char *, const char *> kResidualNorms[] = {
    {"kforge::rms_norm_cast", "kforge::add_rms_norm_cast"},
    {"kforge::rms_norm_cast_to", "kforge::add_rms_norm_cast_to"},
    {"kforge::rms_norm_offset", "kforge::add_rms_norm_offset"},
    {"kforge::rms_norm_offset_to", "kforge::add_rms_norm_offset_to"},
};

void fuseResidualAdds(torch::jit::Graph &g)
{
    std::map<c10::Symbol, c10::Symbol> residualOf;
    for (const auto &[norm, fused] : kResidualNorms)
        residualOf.emplace(c10::Symbol::fromQualString(norm), c10::Symbol::fromQualString(fused));
    const auto add = c10::Symbol::fromQualString("aten::add");
    std::vector<torch::jit::Node *> norms;
    for (auto *n : g.nodes())
        if (residualOf.count(n->kind()))
            norms.push_back(n);
    for (auto *norm : norms) {
        auto *h = norm->input(0);
        auto *sum = h->node();
        if (sum->kind() != add || sum->inputs().size() != 3 || !isTensor(sum->input(0)) || !isTensor(sum->input(1)) || !isConstInt(sum->input(2), 1)
            || sum->owningBlock() != norm->owningBlock())
            continue;
        bool later = true;
        for (const auto &use : h->uses())
            later &= use.user == norm || use.user->isAfter(norm);
        if (!later)
            continue;
        torch::jit::WithInsertPoint at(norm);
        std::vector<torch::jit::Value *> inputs = {sum->input(0), sum->input(1)};
        for (size_t k = 1; k < norm->inputs().size(); ++k)
            inputs.push_back(norm->input(k));
        auto *node = g.insertNode(g.create(residualOf.at(norm->kind()), inputs, 2));
        node->output(0)->setType(h->type());
        node->output(1)->setType(norm->output()->type());
        node->copyMetadata(norm);
        norm->output()->replaceAllUsesWith(node->output(1));
        h->replaceAllUsesWith(node->output(0));
        norm->destroy();
        sum->destroy();
    }
}

// The rotary chain is the fused operator's only with: the transpose of dims 1 and 2, both slices and the
// cat over the last dim (-1) with step 1, the first slice from the start (None or 0) and the second to the
// end (None), alpha 1, and tensor cos and sin. `half` may be any int value: the operator takes it.
bool rotaryFusable(const torch::jit::Match &m, const Vars &vars)
{
    const auto get = [&](const char *name) { return matched(m, vars, name); };
    const bool transposed = !vars.count("d0") || (isConstInt(get("d0"), 1) && isConstInt(get("d1"), 2)) || (isConstInt(get("d0"), 2) && isConstInt(get("d1"), 1));
    const auto *half = get("half");
    return transposed && isConstInt(get("dim"), -1) && isConstInt(get("cdim"), -1) && isConstInt(get("step1"), 1)
           && isConstInt(get("step2"), 1) && (isConstNone(get("start")) || isConstInt(get("start"), 0)) && isConstNone(get("end"))
           && isConstInt(get("alpha"), 1) && isTensor(get("cos")) && isTensor(get("sin")) && half
           && half->type()->isSubtypeOf(*c10::IntType::get());
}

// The traced spelling's filter: the same constants, the back slice's end None or the largest int64 (an open
// end as a trace records it), the slices' dims and halves int values the operator compares when it runs.
bool rotarySlicedFusable(const torch::jit::Match &m, const Vars &vars)
{
    const auto get = [&](const char *name) { return matched(m, vars, name); };
    const bool transposed = !vars.count("d0") || (isConstInt(get("d0"), 1) && isConstInt(get("d1"), 2)) || (isConstInt(get("d0"), 2) && isConstInt(get("d1"), 1));
    const auto isInt = [](const torch::jit::Value *v) { return v && v->type()->isSubtypeOf(*c10::IntType::get()); };
    return transposed && isConstInt(get("cdim"), -1) && isConstInt(get("step1"), 1) && isConstInt(get("step2"), 1)
           && (isConstNone(get("start")) || isConstInt(get("start"), 0))
           && (isConstNone(get("end")) || isConstInt(get("end"), std::numeric_limits<int64_t>::max())) && isConstInt(get("alpha"), 1)
           && isTensor(get("cos")) && isTensor(get("sin")) && isInt(get("dim")) && isInt(get("bdim")) && isInt(get("half")) && isInt(get("back"));
}

struct FusedPattern {
    const char *op; // the operator the replacement calls
    std::string pattern, replacement;
    bool (*fusable)(const torch::jit::Match &, const Vars &);
};

// In order: the masked softmax before the plain one, whose pattern is its tail; the chains with casts before
// the native ones; the unscaled chains after the scaled ones.
const FusedPattern kPatterns[] = {
    {"kforge::scaled_masked_softmax", softmaxPattern(true, Casts::Upcast), softmaxReplacement(true, Casts::Upcast, "scaled_masked_softmax"),
     softmaxFusable<Scale::Number, true>},
    {"kforge::scaled_softmax", softmaxPattern(false, Casts::Upcast), softmaxReplacement(false, Casts::Upcast, "scaled_softmax"),
     softmaxFusable<Scale::Number, true>},
    {"kforge::scaled_masked_softmax", softmaxPattern(true, Casts::SoftmaxDtype),
     softmaxReplacement(true, Casts::SoftmaxDtype, "scaled_masked_softmax"), softmaxFusable<Scale::Number, true>},
    {"kforge::scaled_softmax", softmaxPattern(false, Casts::SoftmaxDtype), softmaxReplacement(false, Casts::SoftmaxDtype, "scaled_softmax"),
     softmaxFusable<Scale::Number, true>},
    {"kforge::scaled_masked_softmax_native", softmaxPattern(true, Casts::None),
     softmaxReplacement(true, Casts::None, "scaled_masked_softmax_native"), softmaxFusable<Scale::Double, false>},
    {"kforge::scaled_masked_softmax_native_traced", softmaxPattern(true, Casts::None),
     softmaxReplacement(true, Casts::None, "scaled_masked_softmax_native_traced"), softmaxFusable<Scale::Float64Tensor, false>},
    {"kforge::scaled_softmax_native", softmaxPattern(false, Casts::None), softmaxReplacement(false, Casts::None, "scaled_softmax_native"),
     softmaxFusable<Scale::Double, false>},
    {"kforge::scaled_softmax_native_traced", softmaxPattern(false, Casts::None),
     softmaxReplacement(false, Casts::None, "scaled_softmax_native_traced"), softmaxFusable<Scale::Float64Tensor, false>},
    {"kforge::scaled_masked_softmax_native_div", softmaxPattern(true, Casts::None, true),
     softmaxReplacement(true, Casts::None, "scaled_masked_softmax_native_div"), softmaxFusable<Scale::Number, false>},
    {"kforge::scaled_masked_softmax_native_div_traced", softmaxPattern(true, Casts::None, true),
     softmaxReplacement(true, Casts::None, "scaled_masked_softmax_native_div_traced"), softmaxFusable<Scale::Float64Tensor, false>},
    {"kforge::scaled_softmax_native_div", softmaxPattern(false, Casts::None, true),
     softmaxReplacement(false, Casts::None, "scaled_softmax_native_div"), softmaxFusable<Scale::Number, false>},
    {"kforge::scaled_softmax_native_div_traced", softmaxPattern(false, Casts::None, true),
     softmaxReplacement(false, Casts::None, "scaled_softmax_native_div_traced"), softmaxFusable<Scale::Float64Tensor, false>},
    // After every scaled chain, whose tail they are.
    {"kforge::scaled_masked_softmax", unscaledPattern(Casts::Upcast), unscaledReplacement(Casts::Upcast, "scaled_masked_softmax"),
     unscaledFusable<true>},
    {"kforge::scaled_masked_softmax", unscaledPattern(Casts::SoftmaxDtype), unscaledReplacement(Casts::SoftmaxDtype, "scaled_masked_softmax"),
     unscaledFusable<true>},
    {"kforge::scaled_masked_softmax_native", unscaledPattern(Casts::None), unscaledReplacement(Casts::None, "scaled_masked_softmax_native"),
     unscaledFusable<false>},
    // The chains with casts the graph does not prove (a trace's), after those it does.
    {"kforge::scaled_softmax_to", softmaxPattern(true, Casts::Upcast), softmaxToReplacement(true, Casts::Upcast, false), softmaxToFusable<Scale::Number>},
    {"kforge::scaled_softmax_to", softmaxPattern(true, Casts::Upcast), softmaxToReplacement(true, Casts::Upcast, true),
     softmaxToFusable<Scale::Float64Tensor>},
    {"kforge::scaled_softmax_to", softmaxPattern(false, Casts::Upcast), softmaxToReplacement(false, Casts::Upcast, false),
     softmaxToFusable<Scale::Number>},
    {"kforge::scaled_softmax_to", softmaxPattern(false, Casts::Upcast), softmaxToReplacement(false, Casts::Upcast, true),
     softmaxToFusable<Scale::Float64Tensor>},
    {"kforge::scaled_softmax_to", softmaxPattern(true, Casts::SoftmaxDtype), softmaxToReplacement(true, Casts::SoftmaxDtype, false),
     softmaxToFusable<Scale::Number>},
    {"kforge::scaled_softmax_to", softmaxPattern(true, Casts::SoftmaxDtype), softmaxToReplacement(true, Casts::SoftmaxDtype, true),
     softmaxToFusable<Scale::Float64Tensor>},
    {"kforge::scaled_softmax_to", softmaxPattern(false, Casts::SoftmaxDtype), softmaxToReplacement(false, Casts::SoftmaxDtype, false),
     softmaxToFusable<Scale::Number>},
    {"kforge::scaled_softmax_to", softmaxPattern(false, Casts::SoftmaxDtype), softmaxToReplacement(false, Casts::SoftmaxDtype, true),
     softmaxToFusable<Scale::Float64Tensor>},
    {"kforge::scaled_softmax_to", unscaledPattern(Casts::Upcast), unscaledToReplacement(Casts::Upcast), unscaledToFusable},
    {"kforge::scaled_softmax_to", unscaledPattern(Casts::SoftmaxDtype), unscaledToReplacement(Casts::SoftmaxDtype), unscaledToFusable},
    {"kforge::masked_softmax_native_view", kUnscaledViewPattern, kUnscaledViewReplacement, unscaledFusable<false>},
    {"kforge::silu_mul", kSiluMulPattern, kSiluMulReplacement, siluMulFusable},
    {"kforge::silu_mul", kMulSiluPattern, kSiluMulReplacement, siluMulFusable},
    // The gates before the GELU alone, whose pattern is their head.
    {"kforge::gelu_new_mul", kNewGeluMulPattern, kNewGeluMulReplacement, newGeluFusable},
    {"kforge::gelu_new_mul", kMulNewGeluPattern, kNewGeluMulReplacement, newGeluFusable},
    {"kforge::gelu_new", kNewGeluPattern, kNewGeluReplacement, newGeluFusable},
    {"kforge::quick_gelu", kQuickGeluPattern, kQuickGeluReplacement, quickGeluFusable},
    {"kforge::quick_gelu", kQuickGeluSwappedPattern, kQuickGeluReplacement, quickGeluFusable},
    {"kforge::gelu_tanh_mul", kGeluMulPattern, kGeluTanhMulReplacement, geluMulFusable<true>},
    {"kforge::gelu_tanh_mul", kMulGeluPattern, kGeluTanhMulReplacement, geluMulFusable<true>},
    {"kforge::gelu_mul", kGeluMulPattern, kGeluMulReplacement, geluMulFusable<false>},
    {"kforge::gelu_mul", kMulGeluPattern, kGeluMulReplacement, geluMulFusable<false>},
    {"kforge::rms_norm_offset_heads", kOffsetRmsPattern, kOffsetRmsHeadsReplacement, rmsNormOffsetHeadsFusable},
    {"kforge::rms_norm_offset_heads", kOffsetFirstRmsPattern, kOffsetRmsHeadsReplacement, rmsNormOffsetHeadsFusable},
    {"kforge::rms_norm_offset", kOffsetRmsPattern, kOffsetRmsReplacement, rmsNormOffsetFusable},
    {"kforge::rms_norm_offset", kOffsetFirstRmsPattern, kOffsetRmsReplacement, rmsNormOffsetFusable},
    {"kforge::rms_norm_offset_to", kOffsetRmsUpcastPattern, kOffsetRmsToReplacement, rmsNormOffsetFusable},
    {"kforge::rms_norm_offset_to", kOffsetFirstRmsUpcastPattern, kOffsetRmsToReplacement, rmsNormOffsetFusable},
    {"kforge::rms_norm_cast", kWeightFirstRmsPattern, kRmsReplacement, rmsNormFusable},
    {"kforge::rms_norm_cast", kWeightLastRmsPattern, kRmsReplacement, rmsNormFusable},
    {"kforge::rms_norm_cast_to", kWeightFirstRmsPattern, kRmsToReplacement, rmsNormToFusable},
    {"kforge::rms_norm_cast_to", kWeightLastRmsPattern, kRmsToReplacement, rmsNormToFusable},
    {"kforge::rms_norm_cast_to", kT5CastRmsPattern, kRmsToReplacement, rmsNormToFusable},
    {"kforge::rms_norm_cast_to", kT5NoCastRmsPattern, kT5NoCastRmsReplacement, rmsNormStatistics},
    {"kforge::rms_norm_cast_to", kNoCastRmsPattern, kT5NoCastRmsReplacement, rmsNormStatistics},
    {"kforge::rotary_embedding", rotaryPattern(false, false), rotaryReplacement(false), rotaryFusable},
    {"kforge::rotary_embedding", rotaryPattern(false, true), rotaryReplacement(false), rotaryFusable},
    {"kforge::rotary_embedding_sliced", rotaryPattern(true, false), rotaryReplacement(true), rotarySlicedFusable},
    {"kforge::rotary_embedding_sliced", rotaryPattern(true, true), rotaryReplacement(true), rotarySlicedFusable},
    // After them: q not the transpose itself (no %d0 in the pattern, so the filters skip that check).
    {"kforge::rotary_embedding_heads", rotaryPattern(false, false, true), rotaryHeadsReplacement(false), rotaryFusable},
    {"kforge::rotary_embedding_heads", rotaryPattern(false, true, true), rotaryHeadsReplacement(false), rotaryFusable},
    {"kforge::rotary_embedding_heads", rotaryPattern(true, false, true), rotaryHeadsReplacement(true), rotarySlicedFusable},
    {"kforge::rotary_embedding_heads", rotaryPattern(true, true, true), rotaryHeadsReplacement(true), rotarySlicedFusable},
};

// The softmax operators take their scale, and the norms their eps, through aten::Float (softmaxReplacement,
// kRmsReplacement): folded here once, so a forward neither reads a traced tensor constant nor converts a
// number on every call. A constant (a number, or a traced 0-dim tensor) becomes a number constant; a float
// the model computes is passed as it is; an int it computes keeps its conversion.
void foldScales(torch::jit::Graph &g)
{
    const auto toFloat = c10::Symbol::fromQualString("aten::Float");
    std::set<c10::Symbol> softmaxOps; // the operators the patterns call
    for (const auto &p : kPatterns)
        softmaxOps.insert(c10::Symbol::fromQualString(p.op));
    for (auto it = g.nodes().begin(); it != g.nodes().end();) {
        auto *n = *it++;
        if (n->kind() != toFloat || n->inputs().size() != 1 || n->output()->uses().empty())
            continue;
        bool onlySoftmax = true;
        for (const auto &use : n->output()->uses())
            onlySoftmax &= softmaxOps.count(use.user->kind()) > 0;
        if (!onlySoftmax)
            continue;
        auto *in = n->input(0);
        const auto c = constantOf(in);
        if (c && c->isTensor() && c->toTensor().dim() == 0) {
            torch::jit::WithInsertPoint at(n);
            n->output()->replaceAllUsesWith(g.insertConstant(c->toTensor().item<double>()));
        } else if (c && (c->isDouble() || c->isInt())) {
            torch::jit::WithInsertPoint at(n);
            n->output()->replaceAllUsesWith(g.insertConstant(c->isDouble() ? c->toDouble() : double(c->toInt())));
        } else if (in->type()->kind() == c10::TypeKind::FloatType) {
            n->output()->replaceAllUsesWith(in);
        } else {
            continue;
        }
        n->destroy();
    }
}

// A trace of Hugging Face's rotate_half reads `x.shape[-1]` of the transposed q (aten::size(q, 3)), a use of
// q outside the chain that would keep the matcher off it. The size of a transpose's dim d is its input's
// size at the swapped dim: read there instead (dims constant and non-negative, as a trace records them).
void sizesThroughTransposes(torch::jit::Graph &g)
{
    const auto size = c10::Symbol::fromQualString("aten::size");
    const auto transpose = c10::Symbol::fromQualString("aten::transpose");
    for (auto *n : g.nodes()) {
        if (n->kind() != size || n->inputs().size() != 2 || n->input(0)->node()->kind() != transpose)
            continue;
        auto *t = n->input(0)->node();
        const auto d = constantOf(n->input(1)), d0 = constantOf(t->input(1)), d1 = constantOf(t->input(2));
        if (!d || !d0 || !d1 || !d->isInt() || !d0->isInt() || !d1->isInt() || d->toInt() < 0 || d0->toInt() < 0 || d1->toInt() < 0)
            continue;
        const int64_t dim = d->toInt(), a = d0->toInt(), b = d1->toInt();
        torch::jit::WithInsertPoint at(n);
        n->replaceInput(1, g.insertConstant(dim == a ? b : dim == b ? a : dim));
        n->replaceInput(0, t->input(0));
    }
}

// A float32 trace records a no-op upcast (`x.to(torch.float32)` of a float32 x, which returns x itself) as
// the value every later use of x reads, so an RMSNorm's upcast has uses outside its chain (the residual
// add of x) and no pattern may take it. Those uses get a copy of the cast of their own: the same value.
// Products and type_as stay (a norm's own; Gemma's type_as reads the upcast in such a trace).
void splitSharedUpcasts(torch::jit::Graph &g)
{
    const auto to = c10::Symbol::fromQualString("aten::to");
    const auto pow = c10::Symbol::fromQualString("aten::pow");
    const auto mul = c10::Symbol::fromQualString("aten::mul");
    const auto typeAs = c10::Symbol::fromQualString("aten::type_as");
    std::vector<torch::jit::Node *> casts;
    for (auto *n : g.nodes())
        if (n->kind() == to && n->outputs().size() == 1)
            casts.push_back(n);
    for (auto *n : casts) {
        const auto uses = n->output()->uses();
        const bool squared = std::any_of(uses.begin(), uses.end(), [&](const torch::jit::Use &u) { return u.user->kind() == pow; });
        std::vector<torch::jit::Use> other;
        for (const auto &u : uses)
            if (u.user->kind() != pow && u.user->kind() != mul && u.user->kind() != typeAs)
                other.push_back(u);
        if (!squared || other.empty())
            continue;
        // Placed right before its first user in n's block (so a residual add's other use of its sum still
        // comes after the norm that fuseResidualAdds folds it into), or right after n.
        auto *copy = g.createClone(n, [](torch::jit::Value *v) { return v; });
        torch::jit::Node *first = nullptr;
        for (const auto &u : other)
            if (u.user->owningBlock() == n->owningBlock() && (!first || u.user->isBefore(first)))
                first = u.user;
        const bool allHere = std::all_of(other.begin(), other.end(), [&](const torch::jit::Use &u) { return u.user->owningBlock() == n->owningBlock(); });
        if (first && allHere)
            copy->insertBefore(first);
        else
            copy->insertAfter(n);
        for (const auto &u : other)
            u.user->replaceInput(u.offset, copy->output());
    }
}

int fusedCalls(const std::shared_ptr<torch::jit::Graph> &g)
{
    std::set<c10::Symbol> ops;
    for (const auto &p : kPatterns)
        ops.insert(c10::Symbol::fromQualString(p.op));
    for (const auto &residual : kResidualNorms) // made by fuseResidualAdds, not by a pattern
        ops.insert(c10::Symbol::fromQualString(residual.second));
    int n = 0;
    for (const auto *node : g->nodes())
        n += int(ops.count(node->kind()));
    return n;
}

} // namespace

int rewriteFusedPatterns(torch::jit::Module &module)
{
    // Every graph is inlined before any is rewritten, so a forward inlines its helpers' chains as written
    // (a helper method rewritten first would come inlined already fused, and uncounted).
    std::vector<std::shared_ptr<torch::jit::Graph>> graphs;
    for (auto m : module.modules())
        for (auto &method : m.get_methods()) {
            graphs.push_back(method.graph());
            torch::jit::Inline(*graphs.back());
            // A scripted helper inlines with its branches on constant arguments (F.softmax's `if dim is
            // None`, `if dtype is None`, the softmax inside a branch): folded, its chain is a chain again.
            // Only values of immutable types are folded, never a tensor.
            torch::jit::ConstantPropagationImmutableTypes(graphs.back());
            // A trace inlines a submodule's call as a tuple of its results and every tensor it aliased (a
            // no-op `x.to(torch.float32)` in a float32 model), unpacked and mostly unused: lowered and the
            // unused values dropped, a chain's inner values have no use outside it again.
            torch::jit::LowerSimpleTuples(graphs.back());
            torch::jit::EliminateDeadCode(graphs.back());
        }
    // What the module runs is its forward, which holds every call it makes once inlined; a module without
    // one counts its own methods.
    std::vector<std::shared_ptr<torch::jit::Graph>> counted;
    if (const auto forward = module.find_method("forward"))
        counted.push_back(forward->graph());
    else
        for (auto &method : module.get_methods())
            counted.push_back(method.graph());
    int before = 0;
    for (const auto &g : counted)
        before += fusedCalls(g);
    for (auto &g : graphs) {
        sizesThroughTransposes(*g);
        splitSharedUpcasts(*g);
        for (const auto &p : kPatterns) {
            torch::jit::SubgraphRewriter rw;
            rw.RegisterRewritePattern(p.pattern, p.replacement);
            rw.runOnGraph(g, p.fusable);
        }
    }
    for (auto &g : graphs) {
        foldScales(*g);
        torch::jit::EliminateDeadCode(g); // what the rewritten chains left unused (a dtype read, a traced scale)
        fuseResidualAdds(*g);
    }
    int after = 0;
    for (const auto &g : counted)
        after += fusedCalls(g);
    return after - before;
}

} // namespace kforge::runtime
