#include "workload/fused_patterns.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "ops/mask_rows.h"
#include "util/error.h"

namespace kforge {

namespace {

// ScalarType codes as the recorded calls carry them (c10::ScalarType).
int scalarTypeCode(const std::string &dtype)
{
    if (dtype == "float32")
        return 6;
    if (dtype == "bfloat16")
        return 15;
    if (dtype == "float16")
        return 5;
    return -1;
}

const CallArg *arg(const CapturedCall &c, const char *name)
{
    for (const auto &a : c.args)
        if (a.name == name)
            return &a;
    return nullptr;
}

const TensorMeta *tensorArg(const CapturedCall &c, const char *name)
{
    const auto *a = arg(c, name);
    return a && a->kind == "tensor" && a->tensors.size() == 1 ? &a->tensors[0] : nullptr;
}

bool intArg(const CapturedCall &c, const char *name, int64_t want)
{
    const auto *a = arg(c, name);
    return a && a->kind == "int" && a->value.is_number_integer() && a->value.get<int64_t>() == want;
}

bool plainCast(const CapturedCall &c, const std::vector<int64_t> &shape, const std::string &from, const std::string &to)
{
    const auto *self = tensorArg(c, "self");
    const auto *nb = arg(c, "non_blocking"), *cp = arg(c, "copy"), *mf = arg(c, "memory_format");
    return c.qualifiedName() == "aten::to.dtype" && self && self->shape == shape && self->dtype == from && intArg(c, "dtype", scalarTypeCode(to))
           && nb && nb->kind == "bool" && nb->value == false && cp && cp->kind == "bool" && cp->value == false && mf && mf->kind == "none";
}

bool sameTensor(const TensorMeta *t, const TensorMeta &like)
{
    return t && t->contiguous() && t->shape == like.shape && t->dtype == like.dtype;
}

// A chain found among the top-level calls: its card (family, shape, dtype and the reference arguments the
// model's calls fix, by position), the calls it is made of (indices into the top-level calls, not always
// adjacent) and their time.
struct Chain {
    std::string family;
    ShapeBindings shape;
    std::string dtype;
    std::map<size_t, nlohmann::json> args;
    std::vector<size_t> calls;
    double us = 0;
    SoftmaxForm form;         // the attention softmax's operator (core/ops/operator_card.h)
};

ShapeBindings rowsCols(const std::vector<int64_t> &shape)
{
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < shape.size(); ++d)
        rows *= shape[d];
    return {{"rows", rows}, {"cols", shape.back()}};
}

void take(Chain &c, const std::vector<const CapturedCall *> &top, size_t i)
{
    c.calls.push_back(i);
    c.us += top[i]->durUs;
}

// The number the scores are scaled by: `x * c` or `x / c` (`divide`) with c a number (aten::mul.Scalar,
// aten::div.Scalar; `traced` false), or a 0-dim float64 tensor whose value the profile recorded (`traced`
// true: a traced model keeps `* 0.125` so). A floating x times or over either is the same: the 0-dim
// operand does not promote x's dtype and is read in x's compute type, as the number is. A divisor is
// finite and not zero (the kernels multiply by its reciprocal).
struct ScaleOf {
    double value = 0;
    bool traced = false;
    bool integer = false; // an int number (`x * 2`)
    bool divide = false;
};

// The value of a 0-dim float64 tensor the profile recorded: a number a trace keeps as a tensor constant.
std::optional<double> tracedNumber(const TensorMeta &t)
{
    if (t.shape.empty() && t.dtype == "float64" && t.min && t.max && *t.min == *t.max)
        return *t.min;
    return std::nullopt;
}

std::optional<ScaleOf> scaleOf(const CapturedCall &call)
{
    const std::string name = call.qualifiedName();
    const bool divide = name == "aten::div.Scalar" || name == "aten::div.Tensor";
    const bool number = name == "aten::mul.Scalar" || name == "aten::div.Scalar";
    const auto *scale = arg(call, "other");
    if (!scale || (!divide && !number && name != "aten::mul.Tensor"))
        return std::nullopt;
    std::optional<ScaleOf> got;
    if (number && (scale->kind == "double" || scale->kind == "int") && scale->value.is_number())
        got = ScaleOf{scale->value.get<double>(), false, scale->kind == "int", divide};
    if (!number && scale->kind == "tensor" && scale->tensors.size() == 1)
        if (const auto v = tracedNumber(scale->tensors[0]))
            got = ScaleOf{*v, true, false, divide};
    if (got && divide && !std::isnormal(got->value))
        return std::nullopt;
    return got;
}

// Arithmetic on sizes that a trace records among a chain's calls (`b * h` on 0-dim int64 tensors, read
// back with aten::item for a view's size): it touches no tensor of the chain and is not claimed.
bool sizeArithmetic(const CapturedCall &c)
{
    bool any = false;
    for (const auto &a : c.args)
        for (const auto &t : a.tensors) {
            if (!t.shape.empty() || (t.dtype != "int64" && t.dtype != "int32"))
                return false;
            any = true;
        }
    return any;
}

// The shape aten::view(x, size) gives, one -1 inferred; nothing where the size does not fit x.
std::optional<std::vector<int64_t>> viewShape(const CapturedCall &view, const TensorMeta &x)
{
    const auto *size = arg(view, "size");
    if (!size || size->kind != "int_list" || !size->value.is_array() || size->value.empty())
        return std::nullopt;
    std::vector<int64_t> shape;
    int64_t known = 1, inferred = -1;
    for (const auto &d : size->value) {
        if (!d.is_number_integer())
            return std::nullopt;
        const int64_t v = d.get<int64_t>();
        if (v == -1 && inferred < 0)
            inferred = int64_t(shape.size());
        else if (v < 1)
            return std::nullopt;
        else
            known *= v;
        shape.push_back(v);
    }
    const int64_t n = x.numel();
    if (inferred >= 0) {
        if (n % known != 0)
            return std::nullopt;
        shape[size_t(inferred)] = n / known;
    } else if (known != n) {
        return std::nullopt;
    }
    return shape;
}

// aten::softmax.int over the last dimension of a [shape] tensor of `dtype`, given dtype float32.
bool softmaxToFloat32(const CapturedCall &sm, const std::vector<int64_t> &shape, const std::string &dtype)
{
    const auto *sx = tensorArg(sm, "self");
    return sm.qualifiedName() == "aten::softmax.int" && sx && sx->shape == shape && sx->dtype == dtype
           && (intArg(sm, "dim", -1) || intArg(sm, "dim", int64_t(shape.size()) - 1)) && intArg(sm, "dtype", scalarTypeCode("float32"));
}

// Attention's softmax chain starting at top-level call `i`: x * scale [+ mask], then either the upcast,
// softmax.int over the last dimension (or the softmax given dtype float32) and the cast back (mixed precision,
// the scale a number or a traced tensor, multiplying), or softmax.int
// on the scores directly, in x's own dtype (a model that computes in one dtype): the `native` operators,
// the scale a double or a traced tensor, multiplying or dividing (x / scale). These are the chains the
// pack's rewrite can replace (runtime/fused_ops.h): a card for any other could never be served. A chain
// may also start at the mask's add with no scale (CLIP, Swin and Whisper scale q before the product, T5
// not at all): the operators with scale 1, by which they multiply exactly (x * 1.0 is x).
std::optional<Chain> softmaxChainAt(const std::vector<const CapturedCall *> &top, size_t i)
{
    const auto &first = *top[i];
    const bool unscaled = first.qualifiedName() == "aten::add.Tensor";
    const auto *x = tensorArg(first, "self");
    const auto scale = unscaled ? std::optional<ScaleOf>(ScaleOf{1.0, false, false, false}) : scaleOf(first);
    if (!scale || !x || !x->contiguous() || x->shape.size() < 2 || scalarTypeCode(x->dtype) < 0)
        return std::nullopt;
    // Scores scaled by a number right before the add are the scaled chain's: where its matcher refused
    // them (a traced scale or a division before casts), neither rewrite would serve them as unscaled.
    if (unscaled && i > 0 && scaleOf(*top[i - 1])) {
        const auto *scaled = tensorArg(*top[i - 1], "self");
        if (scaled && scaled->shape == x->shape && scaled->dtype == x->dtype)
            return std::nullopt;
    }
    Chain c;
    c.family = "scaled_softmax";
    c.shape = rowsCols(x->shape);
    c.dtype = x->dtype;
    c.args[1] = {{"double", scale->value}};
    size_t j = i;
    if (!unscaled)
        take(c, top, j++);
    if (j < top.size() && top[j]->qualifiedName() == "aten::add.Tensor") {
        // The mask as it broadcasts over the scores' leading dimensions (ops/mask_rows.h): a causal [q, k], a
        // padding [b, 1, 1, k], a per-sample [b, 1, q, k] mask, and any other with at most two kept runs.
        const auto *self = tensorArg(*top[j], "self"), *mask = tensorArg(*top[j], "other");
        if (!self || self->shape != x->shape || self->dtype != x->dtype || !mask || !mask->contiguous() || mask->shape.empty()
            || mask->dtype != x->dtype || !intArg(*top[j], "alpha", 1))
            return std::nullopt;
        const auto runs = maskRows(x->shape.data(), x->shape.size(), mask->shape.data(), mask->shape.size());
        if (!runs)
            return std::nullopt;
        c.family = "scaled_masked_softmax";
        c.shape["mrows"] = runs->mrows;
        c.shape["minner"] = runs->minner;
        c.shape["mstep"] = runs->mstep;
        c.shape["mblock"] = runs->mblock;
        take(c, top, j++);
    }
    if (unscaled && c.family != "scaled_masked_softmax")
        return std::nullopt;
    // With no scale and no casts, the sum may be viewed before the softmax, keeping its last dimension
    // (BART, OPT, Whisper, CLIP: `(w.view(b, h, q, k) + mask).view(b * h, q, k)`; the rewrite's
    // kforge::masked_softmax_native_view).
    auto softmaxShape = x->shape;
    size_t v = j;
    while (unscaled && v < top.size() && sizeArithmetic(*top[v]))
        ++v;
    const bool viewed = unscaled && v < top.size() && top[v]->qualifiedName() == "aten::view";
    if (viewed)
        j = v;
    if (viewed) {
        const auto *self = tensorArg(*top[j], "self");
        const auto size = viewShape(*top[j], *x);
        if (!self || self->shape != x->shape || self->dtype != x->dtype || !size || size->back() != x->shape.back())
            return std::nullopt;
        softmaxShape = *size;
        take(c, top, j++);
    }
    const auto softmaxOfLastDim = [&](size_t k, const std::string &dtype) {
        const auto &sm = *top[k];
        const auto *sx = tensorArg(sm, "self");
        const auto *sdt = arg(sm, "dtype");
        return sm.qualifiedName() == "aten::softmax.int" && sx && sx->shape == softmaxShape && sx->dtype == dtype
               && (intArg(sm, "dim", -1) || intArg(sm, "dim", int64_t(softmaxShape.size()) - 1)) && sdt && sdt->kind == "none";
    };
    if (j < top.size() && softmaxOfLastDim(j, x->dtype)) {
        if (scale->integer && !scale->divide) // an integer x times an int stays integer: not the operator's float
            return std::nullopt;
        c.form = SoftmaxForm{true, scale->divide, scale->traced};
        take(c, top, j);
        return c;
    }
    // With casts: the upcast and the softmax over float32, or the softmax given dtype float32, which converts
    // its input first (Llama's `softmax(w, dim=-1, dtype=torch.float32).to(query.dtype)`, and the many models
    // written after it); then the cast back. A traced scale is the number it holds here: x is floating, and a
    // 0-dim tensor does not promote it.
    if (viewed || scale->divide)
        return std::nullopt;
    const bool upcast = j < top.size() && plainCast(*top[j], x->shape, x->dtype, "float32");
    const size_t end = j + (upcast ? 3 : 2);
    if (end > top.size() || !(upcast ? softmaxOfLastDim(j + 1, "float32") : softmaxToFloat32(*top[j], softmaxShape, x->dtype))
        || !plainCast(*top[end - 1], x->shape, "float32", x->dtype))
        return std::nullopt;
    for (size_t k = j; k < end; ++k)
        take(c, top, k);
    return c;
}

// How many top-level calls after a gate's activation its product may come: the gated MLP computes the up
// projection between them (`act(linear(m, gate)) * linear(m, up)`), one call, or two for a linear written
// as a matmul and an add.
constexpr size_t kGateMulWindow = 4;

// The fused family of a gated MLP's activation call: aten::silu (Llama's SwiGLU), aten::gelu with
// approximate "tanh" (Gemma's gelu_pytorch_tanh) or "none" (GeGLU); "" for any other call.
std::string gateFamily(const CapturedCall &c)
{
    if (c.qualifiedName() == "aten::silu")
        return "silu_mul";
    const auto *approximate = arg(c, "approximate");
    if (c.qualifiedName() != "aten::gelu" || !approximate || approximate->kind != "str" || !approximate->value.is_string())
        return "";
    const auto how = approximate->value.get<std::string>();
    return how == "tanh" ? "gelu_tanh_mul" : how == "none" ? "gelu_mul" : "";
}

// The gate starting at top-level call `i`: the activation, then the first aten::mul.Tensor after it that
// takes a tensor of the activation's shape and dtype, which must be the product with another of the same
// shape and dtype (the profile records no tensor identity: the pairing is by order, shape and dtype; the
// rewrite in the model follows data flow).
std::optional<Chain> gateMulAt(const std::vector<const CapturedCall *> &top, size_t i)
{
    const auto &act = *top[i];
    const auto *a = tensorArg(act, "self");
    const auto family = gateFamily(act);
    if (family.empty() || !a || !a->contiguous() || a->shape.empty() || scalarTypeCode(a->dtype) < 0)
        return std::nullopt;
    for (size_t j = i + 1; j < top.size() && j <= i + kGateMulWindow; ++j) {
        const auto &c = *top[j];
        if (!gateFamily(c).empty())
            return std::nullopt; // the next gate begins
        if (c.qualifiedName() != "aten::mul.Tensor")
            continue;
        const auto *self = tensorArg(c, "self"), *other = tensorArg(c, "other");
        const bool selfIs = sameTensor(self, *a), otherIs = sameTensor(other, *a);
        if (!selfIs && !otherIs)
            continue;
        if (!(selfIs && otherIs))
            return std::nullopt; // the product with a scalar or a broadcast tensor
        Chain chain;
        chain.family = family;
        chain.shape = rowsCols(a->shape);
        chain.dtype = a->dtype;
        take(chain, top, i);
        take(chain, top, j);
        return chain;
    }
    return std::nullopt;
}

bool numberArg(const CapturedCall &c, const char *name, double want)
{
    const auto *a = arg(c, name);
    return a && (a->kind == "int" || a->kind == "double") && a->value.is_number() && a->value.get<double>() == want;
}

bool named(const CapturedCall &c, const char *op, const TensorMeta *self, const std::vector<int64_t> &shape, const char *dtype)
{
    return c.qualifiedName() == op && self && self->shape == shape && self->dtype == dtype;
}

// The number `call` takes as its `other` operand: a number (aten::mul.Scalar, aten::add.Scalar), or a 0-dim
// float64 tensor whose value the profile recorded (a trace's constant, a Python number in eager mode).
std::optional<double> otherNumber(const CapturedCall &call)
{
    const auto *o = arg(call, "other");
    if (!o)
        return std::nullopt;
    const auto name = call.qualifiedName();
    if ((name == "aten::mul.Scalar" || name == "aten::add.Scalar") && (o->kind == "double" || o->kind == "int") && o->value.is_number())
        return o->value.get<double>();
    const auto *t = tensorArg(call, "other");
    return (name == "aten::mul.Tensor" || name == "aten::add.Tensor") && t ? tracedNumber(*t) : std::nullopt;
}

// `call` is `op` of a tensor like `x` times (or plus) exactly `want`, alpha 1 for an add.
bool byNumber(const CapturedCall &call, const char *op, const TensorMeta &x, double want)
{
    const auto name = call.qualifiedName();
    return name.rfind(op, 0) == 0 && sameTensor(tensorArg(call, "self"), x) && otherNumber(call) == want
           && (std::string(op) != "aten::add" || numberArg(call, "alpha", 1));
}

// The `self` of top-level call `i` where `n` calls remain from it, a contiguous tensor of a floating dtype
// kforge's kernels take: a pointwise chain's x. Null otherwise.
const TensorMeta *chainInput(const std::vector<const CapturedCall *> &top, size_t i, size_t n)
{
    const auto *x = tensorArg(*top[i], "self");
    return i + n <= top.size() && x && x->contiguous() && !x->shape.empty() && scalarTypeCode(x->dtype) >= 0 ? x : nullptr;
}

// `call` is the product of two tensors like x (aten::mul.Tensor).
bool productLike(const CapturedCall &call, const TensorMeta &x)
{
    return call.qualifiedName() == "aten::mul.Tensor" && sameTensor(tensorArg(call, "self"), x) && sameTensor(tensorArg(call, "other"), x);
}

// The chain `family` over x's rows made of top-level calls [from, to).
Chain rowsChain(const char *family, const TensorMeta &x, const std::vector<const CapturedCall *> &top, size_t from, size_t to)
{
    Chain c;
    c.family = family;
    c.shape = rowsCols(x.shape);
    c.dtype = x.dtype;
    for (size_t k = from; k < to; ++k)
        take(c, top, k);
    return c;
}

// GELU's tanh form written out (Hugging Face's NewGELUActivation, "gelu_new"), starting at top-level call `i`:
//   0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))
// eight adjacent calls in Python's order: x * 0.5, pow(x, 3.0), * 0.044715, x + it, * sqrt(2 / pi), tanh,
// + 1.0, the product; the constants exactly these (the fused operator's chain has them). Then, as a gate,
// the first aten::mul.Tensor of its result and another tensor of its shape and dtype within the gate window
// (T5 v1.1's gated GELU): gelu_new_mul; else gelu_new.
std::optional<Chain> newGeluAt(const std::vector<const CapturedCall *> &top, size_t i)
{
    const auto *x = chainInput(top, i, 8);
    if (!x)
        return std::nullopt;
    const auto &pow = *top[i + 1], &tanh = *top[i + 5];
    const auto &inner = *top[i + 3];
    if (!byNumber(*top[i], "aten::mul", *x, 0.5) || !named(pow, "aten::pow.Tensor_Scalar", tensorArg(pow, "self"), x->shape, x->dtype.c_str())
        || !numberArg(pow, "exponent", 3) || arg(pow, "exponent")->kind != "double" || !byNumber(*top[i + 2], "aten::mul", *x, 0.044715)
        || inner.qualifiedName() != "aten::add.Tensor" || !sameTensor(tensorArg(inner, "self"), *x) || !sameTensor(tensorArg(inner, "other"), *x)
        || !intArg(inner, "alpha", 1) || !byNumber(*top[i + 4], "aten::mul", *x, std::sqrt(2.0 / M_PI))
        || !named(tanh, "aten::tanh", tensorArg(tanh, "self"), x->shape, x->dtype.c_str()) || !byNumber(*top[i + 6], "aten::add", *x, 1.0)
        || !productLike(*top[i + 7], *x))
        return std::nullopt;
    auto chain = rowsChain("gelu_new", *x, top, i, i + 8);
    for (size_t j = i + 8; j < top.size() && j <= i + 7 + kGateMulWindow; ++j) {
        const auto &c = *top[j];
        if (c.qualifiedName() != "aten::mul.Tensor")
            continue;
        if (productLike(c, *x)) {
            chain.family = "gelu_new_mul";
            take(chain, top, j);
        }
        if (sameTensor(tensorArg(c, "self"), *x) || sameTensor(tensorArg(c, "other"), *x))
            break; // the first product with a tensor like the GELU's is the gate's, or there is none
    }
    return chain;
}

// A [b, h, s, d] tensor that is the transpose of dims 1 and 2 of a contiguous [b, s, h, d] one (a
// projection's view): what `linear(..).view(b, s, h, d).transpose(1, 2)` hands the rotary embedding.
bool transposedHeads(const TensorMeta *t)
{
    if (!t || t->shape.size() != 4 || t->strides.size() != 4)
        return false;
    const int64_t h = t->shape[1], s = t->shape[2], d = t->shape[3];
    return t->strides[3] == 1 && t->strides[1] == d && t->strides[2] == h * d && (t->shape[0] == 1 || t->strides[0] == s * h * d);
}

// A tensor of `like`'s shape and dtype, contiguous, or any layout where `anyLayout` (the intermediate values of
// a chain over a transposed view keep its strides, as ATen's pointwise and reduction results do).
bool sameValue(const TensorMeta *t, const TensorMeta &like, bool anyLayout)
{
    return anyLayout ? t && t->shape == like.shape && t->dtype == like.dtype : sameTensor(t, like);
}

// QuickGELU (Hugging Face's QuickGELUActivation: CLIP), starting at top-level call `i`:
//   x * torch.sigmoid(1.702 * x)
// three adjacent calls: x * 1.702 (a number, or a trace's 0-dim float64 tensor), sigmoid, the product of x
// and it either way round.
std::optional<Chain> quickGeluAt(const std::vector<const CapturedCall *> &top, size_t i)
{
    const auto *x = chainInput(top, i, 3);
    if (!x)
        return std::nullopt;
    const auto &sigmoid = *top[i + 1];
    if (!byNumber(*top[i], "aten::mul", *x, 1.702) || !named(sigmoid, "aten::sigmoid", tensorArg(sigmoid, "self"), x->shape, x->dtype.c_str())
        || !productLike(*top[i + 2], *x))
        return std::nullopt;
    return rowsChain("quick_gelu", *x, top, i, i + 3);
}

// The eps added to a float32 mean square of [shape]: a double (aten::add.Scalar), or a 0-dim float64 tensor
// whose value the profile recorded (a trace keeps `variance + self.eps` so; float32 plus it is float32 plus
// the number).
std::optional<double> epsOf(const CapturedCall &add, const std::vector<int64_t> &shape)
{
    const auto *self = tensorArg(add, "self");
    const auto *other = arg(add, "other");
    if (!self || self->shape != shape || self->dtype != "float32" || !other)
        return std::nullopt;
    if (add.qualifiedName() == "aten::add.Scalar" && other->kind == "double" && other->value.is_number())
        return other->value.get<double>();
    const auto *t = tensorArg(add, "other");
    return add.qualifiedName() == "aten::add.Tensor" && t ? tracedNumber(*t) : std::nullopt;
}

// The statistics of an RMSNorm written out, starting at top-level call `i`, x of a floating dtype:
//   xf = x.float(); xf * torch.rsqrt(xf.pow(2).mean(-1, True) + eps)
// six adjacent calls: to.dtype, pow.Tensor_Scalar, mean.dim, add.Scalar (or add.Tensor of a traced eps),
// rsqrt and mul.Tensor. T5's LayerNorm multiplies x itself (`x * rsqrt(...)`): x of a 16-bit dtype times
// a float32 tensor is computed in float32 from x's exact value, the same product. Its eps, or nothing.
std::optional<double> rmsStatisticsAt(const std::vector<const CapturedCall *> &top, size_t i, bool heads = false)
{
    const auto *x = tensorArg(*top[i], "self");
    if (i + 6 > top.size() || !x || !(x->contiguous() || (heads && transposedHeads(x))) || x->shape.empty() || scalarTypeCode(x->dtype) < 0
        || !plainCast(*top[i], x->shape, x->dtype, "float32"))
        return std::nullopt;
    auto statsShape = x->shape;
    statsShape.back() = 1;
    const TensorMeta stats{statsShape, {}, "float32", std::nullopt, std::nullopt}; // the row's mean square, kept
    const auto &pow = *top[i + 1], &mean = *top[i + 2], &add = *top[i + 3], &rsqrt = *top[i + 4], &mul = *top[i + 5];
    const auto *dims = arg(mean, "dim"), *keep = arg(mean, "keepdim");
    const auto eps = epsOf(add, statsShape);
    if (!named(pow, "aten::pow.Tensor_Scalar", tensorArg(pow, "self"), x->shape, "float32") || !numberArg(pow, "exponent", 2)
        || !named(mean, "aten::mean.dim", tensorArg(mean, "self"), x->shape, "float32") || !dims || dims->kind != "int_list"
        || !(dims->value == nlohmann::json::array({-1}) || dims->value == nlohmann::json::array({int64_t(x->shape.size()) - 1})) || !keep
        || keep->kind != "bool" || keep->value != true || !arg(mean, "dtype") || arg(mean, "dtype")->kind != "none"
        || !eps || !numberArg(add, "alpha", 1) || !named(rsqrt, "aten::rsqrt", tensorArg(rsqrt, "self"), statsShape, "float32")
        || !(named(mul, "aten::mul.Tensor", tensorArg(mul, "self"), x->shape, "float32")
             || named(mul, "aten::mul.Tensor", tensorArg(mul, "self"), x->shape, x->dtype.c_str()))
        || !sameValue(tensorArg(mul, "other"), stats, heads))
        return std::nullopt;
    return eps;
}

Chain normChain(const char *family, const TensorMeta &x, double eps, const std::vector<const CapturedCall *> &top, size_t from, size_t to)
{
    auto c = rowsChain(family, x, top, from, to);
    c.args[2] = {{"double", eps}};
    return c;
}

// RMSNorm written out, starting at top-level call `i` (the decoder's, and Llama's in eager PyTorch):
//   xf = x.float(); var = xf.pow(2).mean(-1, True); xf = xf * torch.rsqrt(var + eps); w * xf.to(x.dtype)
// eight adjacent calls: the statistics' six (rmsStatisticsAt), to.dtype and the weight's mul.Tensor, the
// weight [cols] in x's dtype on either side. A float32 x may have no cast back (T5's LayerNorm in float32
// casts only a 16-bit model): seven calls.
std::optional<Chain> rmsNormCastAt(const std::vector<const CapturedCall *> &top, size_t i)
{
    const auto eps = rmsStatisticsAt(top, i);
    if (!eps || i + 7 > top.size())
        return std::nullopt;
    const auto &x = *tensorArg(*top[i], "self");
    const bool cast = i + 8 <= top.size() && plainCast(*top[i + 6], x.shape, "float32", x.dtype);
    if (!cast && x.dtype != "float32")
        return std::nullopt;
    const size_t end = i + (cast ? 8 : 7);
    const auto &weigh = *top[end - 1];
    const TensorMeta weight{{x.shape.back()}, {1}, x.dtype, std::nullopt, std::nullopt};
    const auto *self = tensorArg(weigh, "self"), *other = tensorArg(weigh, "other");
    if (weigh.qualifiedName() != "aten::mul.Tensor"
        || !((sameTensor(self, weight) && sameTensor(other, x)) || (sameTensor(self, x) && sameTensor(other, weight))))
        return std::nullopt;
    return normChain("rms_norm_cast", x, *eps, top, i, end);
}

// Gemma's RMSNorm (and the models written after it), starting at top-level call `i`:
//   output = <the statistics' six calls>; output = output * (1.0 + self.weight.float()); output.type_as(x)
// ten adjacent calls: the six, the weight's to.dtype (a floating [cols] to float32), its add of one
// (add.Scalar, or add.Tensor of a traced 0-dim float64 one), the product mul.Tensor either way round, and
// type_as back to x's dtype. x is contiguous, or (Gemma 3's q and k, normalized per head) the transposed
// view of a projection, [b, h, s, d] over [b, s, h, d] memory: the same rows, so the same card; the rewrite's
// kforge::rms_norm_offset_heads hands the kernel the untransposed view.
std::optional<Chain> rmsNormOffsetAt(const std::vector<const CapturedCall *> &top, size_t i)
{
    const auto eps = rmsStatisticsAt(top, i, true);
    if (!eps || i + 10 > top.size())
        return std::nullopt;
    const auto &x = *tensorArg(*top[i], "self");
    const bool heads = !x.contiguous(); // Gemma 3's q and k on the transposed projection view
    const auto &up = *top[i + 6], &plusOne = *top[i + 7], &weigh = *top[i + 8], &back = *top[i + 9];
    const auto *w = tensorArg(up, "self");
    const std::vector<int64_t> cols = {x.shape.back()};
    if (!w || w->shape != cols || scalarTypeCode(w->dtype) < 0 || !plainCast(up, cols, w->dtype, "float32"))
        return std::nullopt;
    const TensorMeta wf{cols, {1}, "float32", std::nullopt, std::nullopt};
    if (!byNumber(plusOne, "aten::add", wf, 1.0))
        return std::nullopt;
    const TensorMeta xf{x.shape, {}, "float32", std::nullopt, std::nullopt};
    const auto *l = tensorArg(weigh, "self"), *r = tensorArg(weigh, "other");
    if (weigh.qualifiedName() != "aten::mul.Tensor"
        || !((sameValue(l, xf, heads) && sameTensor(r, wf)) || (sameTensor(l, wf) && sameValue(r, xf, heads))))
        return std::nullopt;
    const auto *out = tensorArg(back, "self"), *like = tensorArg(back, "other");
    if (back.qualifiedName() != "aten::type_as" || !sameValue(out, xf, heads) || !like || like->shape != x.shape || like->dtype != x.dtype)
        return std::nullopt;
    return normChain("rms_norm_offset", x, *eps, top, i, i + 10);
}

// A sublayer's residual add and the RMSNorm after it, starting at top-level call `i`: aten::add.Tensor of
// two tensors of one shape and dtype (alpha 1), then an RMSNorm written out (rmsNormCastAt, or Gemma's,
// rmsNormOffsetAt) of a tensor of that shape and dtype. Its card's fourth argument is the norm's eps.
std::optional<Chain> addRmsNormAt(const std::vector<const CapturedCall *> &top, size_t i)
{
    const auto &add = *top[i];
    const auto *a = tensorArg(add, "self"), *b = tensorArg(add, "other");
    if (i + 8 > top.size() || add.qualifiedName() != "aten::add.Tensor" || !a || !a->contiguous() || !sameTensor(b, *a) || !intArg(add, "alpha", 1))
        return std::nullopt;
    auto norm = rmsNormCastAt(top, i + 1);
    if (!norm)
        norm = rmsNormOffsetAt(top, i + 1);
    const auto *x = tensorArg(*top[i + 1], "self");
    if (!norm || !x || x->shape != a->shape || x->dtype != a->dtype)
        return std::nullopt;
    Chain c;
    c.family = "add_" + norm->family;
    c.shape = norm->shape;
    c.dtype = norm->dtype;
    c.args[3] = norm->args.at(2);
    take(c, top, i);
    for (size_t k : norm->calls)
        c.calls.push_back(k);
    c.us += norm->us;
    return c;
}


// A slice of q's last dimension: the front `[..., :half]` (start None or 0) or the back `[..., half:]` (end
// None, or the largest int64 as a trace records an open end).
bool sliceOf(const CapturedCall &c, const TensorMeta &q, bool front, int64_t half)
{
    const auto *self = tensorArg(c, "self");
    const auto *start = arg(c, "start"), *end = arg(c, "end");
    const auto isNone = [](const CallArg *a) { return a && a->kind == "none"; };
    const bool open = isNone(end) || intArg(c, "end", std::numeric_limits<int64_t>::max());
    return c.qualifiedName() == "aten::slice.Tensor" && self && self->shape == q.shape && self->strides == q.strides
           && (intArg(c, "dim", -1) || intArg(c, "dim", 3)) && intArg(c, "step", 1)
           && (front ? (isNone(start) || intArg(c, "start", 0)) && intArg(c, "end", half) : intArg(c, "start", half) && open);
}

// The top-level calls from `i` on with the size arithmetic among them left out (a trace of Hugging Face's
// rotate_half computes `x.shape[-1] // 2` before each slice), at most n of them.
std::vector<size_t> callsSkippingSizes(const std::vector<const CapturedCall *> &top, size_t i, size_t n)
{
    std::vector<size_t> out;
    for (size_t k = i; k < top.size() && out.size() < n; ++k)
        if (k == i || !sizeArithmetic(*top[k]))
            out.push_back(k);
    return out;
}

// The rotary embedding as Llama writes it, starting at top-level call `i`, q the projection's view
// transposed to [b, h, s, d] and cos, sin in q's dtype, [s, d] or [b, 1, s, d] (Hugging Face's, one per
// sequence: rotary_embedding_batched):
//   q * cos + cat([-q[..., half:], q[..., :half]], -1) * sin      (half = d / 2)
// seven calls: mul.Tensor, slice.Tensor twice, neg, cat, mul.Tensor, add.Tensor, with only size arithmetic
// between them.
std::optional<Chain> rotaryAt(const std::vector<const CapturedCall *> &top, size_t i)
{
    const auto &mul = *top[i];
    const auto *q = tensorArg(mul, "self");
    const auto *cos = tensorArg(mul, "other");
    const auto at = callsSkippingSizes(top, i, 7);
    if (at.size() < 7 || mul.qualifiedName() != "aten::mul.Tensor" || !transposedHeads(q) || scalarTypeCode(q->dtype) < 0
        || q->shape[3] % 2 != 0)
        return std::nullopt;
    const int64_t s = q->shape[2], d = q->shape[3], half = d / 2;
    const TensorMeta shared{{s, d}, {d, 1}, q->dtype, std::nullopt, std::nullopt};
    const TensorMeta perSequence{{q->shape[0], 1, s, d}, {}, q->dtype, std::nullopt, std::nullopt};
    const bool batched = sameTensor(cos, perSequence);
    const TensorMeta &table = batched ? perSequence : shared;
    if ((!batched && !sameTensor(cos, shared)) || !sliceOf(*top[at[1]], *q, true, half) || !sliceOf(*top[at[2]], *q, false, half))
        return std::nullopt;
    auto halfShape = q->shape;
    halfShape[3] = half;
    const auto &neg = *top[at[3]], &cat = *top[at[4]], &rot = *top[at[5]], &add = *top[at[6]];
    const auto *negated = tensorArg(neg, "self");
    const auto *parts = arg(cat, "tensors");
    if (neg.qualifiedName() != "aten::neg" || !negated || negated->shape != halfShape || negated->dtype != q->dtype || cat.qualifiedName() != "aten::cat"
        || !parts || parts->kind != "tensor_list" || parts->tensors.size() != 2 || parts->tensors[0].shape != halfShape
        || parts->tensors[1].shape != halfShape || !(intArg(cat, "dim", -1) || intArg(cat, "dim", 3)))
        return std::nullopt;
    const auto *rself = tensorArg(rot, "self"), *sin = tensorArg(rot, "other");
    if (rot.qualifiedName() != "aten::mul.Tensor" || !rself || !rself->contiguous() || rself->shape != q->shape || rself->dtype != q->dtype
        || !sameTensor(sin, table))
        return std::nullopt;
    const auto *l = tensorArg(add, "self"), *r = tensorArg(add, "other");
    if (add.qualifiedName() != "aten::add.Tensor" || !l || !r || l->shape != q->shape || r->shape != q->shape || l->dtype != q->dtype
        || r->dtype != q->dtype || !intArg(add, "alpha", 1))
        return std::nullopt;
    Chain c;
    c.family = batched ? "rotary_embedding_batched" : "rotary_embedding";
    c.shape = {{"b", q->shape[0]}, {"s", s}, {"h", q->shape[1]}, {"d", d}};
    c.dtype = q->dtype;
    for (size_t k : at)
        take(c, top, k);
    return c;
}

} // namespace

std::vector<OperatorCard> fusedPatternCards(const std::vector<CapturedCall> &calls, int keyIndex)
{
    std::vector<const CapturedCall *> top;
    for (const auto &c : calls)
        if (c.depth == 0)
            top.push_back(&c);
    std::map<std::string, size_t> byPattern;
    std::vector<OperatorCard> out;
    std::vector<bool> used(top.size(), false);
    for (size_t i = 0; i < top.size(); ++i) {
        if (used[i])
            continue;
        std::optional<Chain> chain;
        for (const auto matcher : {softmaxChainAt, newGeluAt, quickGeluAt, gateMulAt, addRmsNormAt, rmsNormCastAt, rmsNormOffsetAt, rotaryAt})
            if ((chain = matcher(top, i)))
                break;
        if (!chain || std::any_of(chain->calls.begin(), chain->calls.end(), [&](size_t k) { return used[k]; })
            || std::any_of(chain->shape.begin(), chain->shape.end(), [](const auto &kv) { return kv.second < 1; }))
            continue; // taken by an earlier chain, or empty: nothing to compute
        for (size_t k : chain->calls)
            used[k] = true;
        nlohmann::json args = nlohmann::json::object();
        for (const auto &[k, v] : chain->args)
            args[std::to_string(k)] = v;
        const auto &form = chain->form;
        const std::string pattern = chain->family + char('0' + form.native) + char('0' + form.divide) + char('0' + form.traced)
                                    + nlohmann::json(chain->shape).dump() + chain->dtype + args.dump();
        auto [it, fresh] = byPattern.try_emplace(pattern, out.size());
        if (fresh) {
            auto card = makeCard(chain->family, chain->shape, dtypeFromName(chain->dtype));
            for (const auto &[k, v] : chain->args)
                card.referenceArgs[k] = v;
            if (form.native)
                useNativeOperator(card, form);
            card.key = chain->family + "." + chain->dtype + "." + std::to_string(keyIndex++);
            card.calls = 0;
            card.workloadMs = 0;
            out.push_back(std::move(card));
        }
        auto &card = out[it->second];
        card.calls += 1;
        card.workloadMs += chain->us / 1000.0;
    }
    return out;
}

} // namespace kforge
