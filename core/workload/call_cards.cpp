#include "workload/call_cards.h"

#include <algorithm>
#include <map>
#include <set>

#include "ops/pointwise_ops.h"
#include "util/error.h"

namespace kforge {

namespace {

using J = nlohmann::json;

std::string shortName(const std::string &op)
{
    auto s = op.substr(op.find("::") == std::string::npos ? 0 : op.find("::") + 2);
    while (!s.empty() && s.front() == '_')
        s.erase(s.begin());
    return s;
}

bool isFloating(const std::string &dtype)
{
    return dtype == "float32" || dtype == "float16" || dtype == "bfloat16" || dtype == "float64";
}

bool knownDtype(const std::string &dtype)
{
    try {
        dtypeFromName(dtype);
        return true;
    } catch (const Error &) {
        return false;
    }
}

const std::vector<const CallArg *> tensorArgs(const CapturedCall &c)
{
    std::vector<const CallArg *> out;
    for (const auto &a : c.args)
        if (a.kind == "tensor")
            out.push_back(&a);
    return out;
}

// The dimension an int argument names, made non-negative for a tensor of `rank` dimensions.
std::optional<int64_t> dimOf(const CallArg &a, int64_t rank)
{
    int64_t d = 0;
    if (a.kind == "int")
        d = a.value.get<int64_t>();
    else if (a.kind == "int_list" && a.value.size() == 1)
        d = a.value[0].get<int64_t>();
    else
        return std::nullopt;
    return d < 0 ? d + rank : d;
}

bool isFalse(const CallArg &a)
{
    return a.kind == "bool" && !a.value.get<bool>();
}

// c10::ScalarType's number for a dtype kforge makes cards for (a dtype argument reaches the dispatcher
// as this integer), or -1.
int scalarTypeCode(const std::string &dtype)
{
    static const std::map<std::string, int> codes = {{"int32", 3}, {"int64", 4}, {"float16", 5}, {"float32", 6}, {"float64", 7}, {"bfloat16", 15}};
    auto it = codes.find(dtype);
    return it == codes.end() ? -1 : it->second;
}

// aten::to with a dtype other than its input's: its schema says it may return its input (a view), but
// this call converts, which costs a pass over the data (the casts around a float32 softmax are a large
// part of a bfloat16 decoder block).
bool convertsDtype(const CapturedCall &c)
{
    if (c.op != "aten::to" || c.args.size() < 2 || c.args[0].kind != "tensor")
        return false;
    for (const auto &a : c.args)
        if (a.name == "dtype" && a.kind == "int")
            return a.value.get<int>() != scalarTypeCode(c.args[0].tensors[0].dtype);
    return false;
}

struct FamilyMatch {
    std::string family;
    // Reference arguments in the family card's terms (the input flattened to rows x cols).
    J referenceArgs = J::array();
    // A pointwise family's scalar arguments (its card's reference arguments follow from them).
    std::vector<double> scalars = {};
    // The card's shape where it is not the input flattened to rows x cols (batch norm's [n, c, hw]).
    ShapeBindings shape = {};
};

// aten::batch_norm on [n, c, ...] in training mode (the batch's statistics; without affine or with both
// weight and bias) or with running statistics, weight and bias. A training call also updates running
// statistics the card does not output, so its reference passes none; native_batch_norm returns the saved
// statistics too and gets no family.
std::optional<FamilyMatch> matchBatchNorm(const CapturedCall &c, const TensorMeta &x)
{
    if (c.qualifiedName() != "aten::batch_norm" || c.args.size() != 9 || x.shape.size() < 2 || c.args[5].kind != "bool"
        || c.args[6].kind != "double" || c.args[7].kind != "double" || c.args[8].kind != "bool")
        return std::nullopt;
    const auto perChannel = [&](size_t i) { return c.args[i].kind == "tensor" && c.args[i].tensors[0].shape == std::vector<int64_t>{x.shape[1]}; };
    const bool training = c.args[5].value.get<bool>();
    const bool affine = perChannel(1) && perChannel(2);
    if (!affine && (c.args[1].kind != "none" || c.args[2].kind != "none"))
        return std::nullopt;
    if (!training && !(affine && perChannel(3) && perChannel(4)))
        return std::nullopt;
    if (training && ((c.args[3].kind != "none" && !perChannel(3)) || (c.args[4].kind != "none" && !perChannel(4))))
        return std::nullopt;
    const std::string family = !training ? "batch_norm_eval" : affine ? "batch_norm_affine" : "batch_norm";
    int64_t hw = 1;
    for (size_t d = 2; d < x.shape.size(); ++d)
        hw *= x.shape[d];
    auto args = makeCard(family, {{"n", 1}, {"c", 1}, {"hw", 1}}).referenceArgs;
    args[6] = {{"double", c.args[6].value}};
    args[7] = {{"double", c.args[7].value}};
    args[8] = {{"bool", c.args[8].value}};
    return FamilyMatch{family, args, {}, {{"n", x.shape[0]}, {"c", x.shape[1]}, {"hw", hw}}};
}

// aten::group_norm on [n, c, ...] with per-channel weight and bias (the group count from the call), and
// aten::instance_norm with neither and no running statistics, over [n, c, hw].
std::optional<FamilyMatch> matchGroupOrInstanceNorm(const CapturedCall &c, const TensorMeta &x)
{
    if (x.shape.size() < 2)
        return std::nullopt;
    int64_t hw = 1;
    for (size_t d = 2; d < x.shape.size(); ++d)
        hw *= x.shape[d];
    const ShapeBindings nchw = {{"n", x.shape[0]}, {"c", x.shape[1]}, {"hw", hw}};
    const auto perChannel = [&](size_t i) { return c.args[i].kind == "tensor" && c.args[i].tensors[0].shape == std::vector<int64_t>{x.shape[1]}; };
    const auto name = c.qualifiedName();
    if (name == "aten::group_norm" && c.args.size() == 6 && c.args[1].kind == "int" && perChannel(2) && perChannel(3)
        && c.args[4].kind == "double" && c.args[5].kind == "bool") {
        const int64_t groups = c.args[1].value.get<int64_t>();
        if (groups <= 0 || x.shape[1] % groups != 0)
            return std::nullopt;
        auto shape = nchw;
        shape["groups"] = groups;
        return FamilyMatch{"group_norm", J::array({{{"input", 0}}, {{"sym", "groups"}}, {{"input", 1}}, {{"input", 2}}, {{"double", c.args[4].value}},
                                                   {{"bool", c.args[5].value}}}),
                           {}, shape};
    }
    if (name == "aten::instance_norm" && c.args.size() == 9 && c.args[5].kind == "bool" && c.args[5].value.get<bool>()
        && c.args[6].kind == "double" && c.args[7].kind == "double" && c.args[8].kind == "bool") {
        for (size_t i = 1; i <= 4; ++i)
            if (c.args[i].kind != "none")
                return std::nullopt;
        auto args = makeCard("instance_norm", {{"n", 1}, {"c", 1}, {"hw", 1}}).referenceArgs;
        args[6] = {{"double", c.args[6].value}};
        args[7] = {{"double", c.args[7].value}};
        args[8] = {{"bool", c.args[8].value}};
        return FamilyMatch{"instance_norm", args, {}, nchw};
    }
    return std::nullopt;
}

// Row-wise families: the first argument is the input, reduced or normalized along its last dimension.
std::optional<FamilyMatch> matchFamily(const CapturedCall &c)
{
    const auto tensors = tensorArgs(c);
    if (tensors.empty() || c.args.empty() || c.args[0].kind != "tensor")
        return std::nullopt;
    const auto &x = c.args[0].tensors[0];
    const int64_t rank = int64_t(x.shape.size());
    if (rank < 1 || !isFloating(x.dtype) || !x.contiguous())
        return std::nullopt;
    for (const auto *t : tensors)
        if (t->tensors[0].dtype != x.dtype || !t->tensors[0].contiguous())
            return std::nullopt;
    const int64_t last = rank - 1;
    const auto n = c.args.size();
    const auto name = c.qualifiedName();
    const auto lastDim = [&](size_t i) { return i < n && dimOf(c.args[i], rank) == last; };
    const J in0 = {{"input", 0}};
    if (auto bn = matchBatchNorm(c, x))
        return bn;
    if (auto gn = matchGroupOrInstanceNorm(c, x))
        return gn;
    if ((name == "aten::_softmax" || name == "aten::_log_softmax") && n == 3 && lastDim(1) && isFalse(c.args[2]))
        return FamilyMatch{name == "aten::_softmax" ? "softmax" : "log_softmax", J::array({in0, {{"int", -1}}, {{"bool", false}}})};
    if ((name == "aten::softmax.int" || name == "aten::log_softmax.int") && n == 3 && lastDim(1) && c.args[2].kind == "none")
        return FamilyMatch{name == "aten::softmax.int" ? "softmax" : "log_softmax", J::array({in0, {{"int", -1}}, {{"none", true}}})};
    // A layer norm over the last k dimensions (nn.LayerNorm((64, 256, 256)) included) is rows x cols with cols
    // their product: the same statistics over the same contiguous elements, weight and bias flattened.
    if (name == "aten::layer_norm" && n == 6 && c.args[1].kind == "int_list" && !c.args[1].value.empty()
        && c.args[1].value.size() <= x.shape.size() && c.args[2].kind == "tensor" && c.args[3].kind == "tensor" && c.args[4].kind == "double"
        && c.args[5].kind == "bool") {
        const std::vector<int64_t> normalized = c.args[1].value.get<std::vector<int64_t>>();
        const std::vector<int64_t> tail(x.shape.end() - int64_t(normalized.size()), x.shape.end());
        if (tail == normalized && c.args[2].tensors[0].shape == normalized && c.args[3].tensors[0].shape == normalized) {
            int64_t cols = 1;
            for (int64_t d : normalized)
                cols *= d;
            FamilyMatch m{"layer_norm", J::array({in0, {{"sym_list", {"cols"}}}, {{"input", 1}}, {{"input", 2}}, {{"double", c.args[4].value}},
                                                  {{"bool", c.args[5].value}}})};
            if (normalized.size() > 1)
                m.shape = {{"rows", x.numel() / std::max<int64_t>(1, cols)}, {"cols", cols}};
            return m;
        }
    }
    // Pointwise activations (core/ops/pointwise_ops.h), their scalar arguments into the card's expression.
    std::vector<PointwiseArg> args;
    for (const auto &a : c.args)
        args.push_back(a.kind == "tensor" ? PointwiseArg{Expression::variable("x"), nullptr} : PointwiseArg{std::nullopt, a.kind == "none" ? J() : a.value});
    if (const auto m = matchPointwiseOp(name, args))
        return FamilyMatch{m->op->family, J::array(), m->scalars};
    if ((name == "aten::sum.dim_IntList" || name == "aten::mean.dim") && n == 4 && c.args[1].kind == "int_list" && lastDim(1)
        && isFalse(c.args[2]) && c.args[3].kind == "none" && rank >= 2)
        return FamilyMatch{name == "aten::mean.dim" ? "mean" : "sum", J::array({in0, {{"int_list", {-1}}}, {{"bool", false}}, {{"none", true}}})};
    if (name == "aten::amax" && n == 3 && c.args[1].kind == "int_list" && lastDim(1) && isFalse(c.args[2]) && rank >= 2)
        return FamilyMatch{"max", J::array({in0, {{"int_list", {-1}}}, {{"bool", false}}})};
    if (name == "aten::argmax" && n == 3 && lastDim(1) && isFalse(c.args[2]) && rank >= 2)
        return FamilyMatch{"argmax", J::array({in0, {{"int", -1}}, {{"bool", false}}})};
    if ((name == "aten::cumsum" || name == "aten::cumprod") && n == 3 && lastDim(1) && c.args[2].kind == "none")
        return FamilyMatch{name.substr(6), J::array({in0, {{"int", -1}}, {{"none", true}}})};
    return std::nullopt;
}

} // namespace

ErrorModel errorModelForOp(const std::string &op, const std::string &outputDtype)
{
    if (!outputDtype.empty() && !isFloating(outputDtype))
        return ErrorModel::Exact;
    auto s = shortName(op);
    while (!s.empty() && s.back() == '_')
        s.pop_back();
    static const std::set<std::string> exact = {"relu", "relu6", "hardtanh", "max", "amax", "min", "amin", "argmax", "argmin", "maximum",
                                                "minimum", "max_pool2d", "max_pool1d", "max_pool3d", "max_pool2d_with_indices", "sort",
                                                "topk", "abs", "neg", "sign", "floor", "ceil", "round", "trunc", "clamp", "clamp_min",
                                                "clamp_max", "where", "masked_fill", "index_select", "gather", "embedding", "cat",
                                                "stack", "clone", "contiguous", "copy", "to_copy", "flip", "roll", "pad", "constant_pad_nd"};
    static const std::set<std::string> sum = {"sum", "mean", "cumsum", "nansum", "prod", "cumprod", "addmm", "mm", "bmm", "baddbmm",
                                              "matmul", "linear", "addmv", "mv", "dot", "einsum", "convolution", "conv1d", "conv2d",
                                              "conv3d", "conv_transpose2d", "avg_pool2d", "adaptive_avg_pool2d", "var", "std", "norm",
                                              "linalg_vector_norm", "scaled_dot_product_attention"};
    static const std::set<std::string> norm = {"softmax", "log_softmax", "layer_norm", "native_layer_norm", "group_norm",
                                               "native_group_norm", "rms_norm", "batch_norm", "native_batch_norm", "instance_norm",
                                               "cross_entropy_loss", "nll_loss", "nll_loss_forward", "safe_softmax"};
    if (exact.count(s))
        return ErrorModel::Exact;
    if (sum.count(s))
        return ErrorModel::Sum;
    if (norm.count(s))
        return ErrorModel::Normalization;
    return ErrorModel::Pointwise;
}

std::string familyForCall(const CapturedCall &call)
{
    const auto m = matchFamily(call);
    return m ? m->family : std::string();
}

void drawIndicesAsRecorded(TensorSpec &spec, ShapeBindings &shape, const TensorMeta &recorded)
{
    if (isFloating(recorded.dtype) || recorded.dtype == "bool" || !recorded.min || !recorded.max || *recorded.min < 0)
        return;
    const auto sym = spec.name + "_range";
    shape[sym] = int64_t(*recorded.max) + 1;
    spec.init = "index:" + sym;
}

CardOrReason cardForCall(const CapturedCall &c, int tensorReturns, int keyIndex)
{
    if (c.schema.find("(a!") != std::string::npos || c.schema.find("(b!") != std::string::npos)
        return {std::nullopt, "writes to its arguments (an in-place or out= operator)"};
    const auto arrow = c.schema.find("->");
    if (arrow != std::string::npos && c.schema.find("Tensor(a", arrow) != std::string::npos && !convertsDtype(c))
        return {std::nullopt, "returns a view of its input: it moves no data"};
    if (c.schema.find("Generator?") != std::string::npos)
        return {std::nullopt, "draws random numbers: its result cannot be checked against a reference"};
    if (tensorReturns <= 0)
        return {std::nullopt, "returns no tensor"};
    const auto tensors = tensorArgs(c);
    if (tensors.empty())
        return {std::nullopt, "has no tensor input (it creates a tensor from its arguments)"};
    for (const auto &a : c.args) {
        if (a.kind == "tensor_list" || a.kind == "double_list" || a.kind == "bool_list" || a.kind == "other")
            return {std::nullopt, "takes a " + a.kind + " argument" + (a.name.empty() ? "" : " (" + a.name + ")")
                                      + ", which a card's reference arguments cannot carry yet"};
        for (const auto &t : a.tensors) {
            if (!knownDtype(t.dtype))
                return {std::nullopt, "has a " + t.dtype + " tensor, a dtype kforge has no cards for"};
            if (t.numel() == 0)
                return {std::nullopt, "has an empty tensor: there is nothing to compute"};
        }
    }

    // Arithmetic on 0-dim tensors only (a traced model's sizes and constants, `c // heads`): one element,
    // nothing a kernel could do faster than the call's own launch.
    if (std::all_of(tensors.begin(), tensors.end(), [](const CallArg *a) { return a->tensors[0].shape.empty(); }))
        return {std::nullopt, "computes on 0-dim tensors only (one value, as a model's arithmetic on sizes and constants): nothing to speed up"};

    OperatorCard card;
    const auto &x = tensors.front()->tensors[0];
    const DType dt = dtypeFromName(x.dtype);
    if (auto m = matchFamily(c)) {
        int64_t rows = 1;
        for (size_t d = 0; d + 1 < x.shape.size(); ++d)
            rows *= x.shape[d];
        const ShapeBindings shape = m->shape.empty() ? ShapeBindings{{"rows", rows}, {"cols", x.shape.back()}} : m->shape;
        if (const auto *op = findPointwiseOp(m->family)) {
            card = pointwiseFamilyCard(*op, shape, dt, m->scalars);
            // A scalar stays the kind the model passed (F.softplus's beta=1 is an int): the pack's guard
            // compares each call's arguments with the card's, kind and value.
            for (size_t i = 0; i < op->scalars.size(); ++i) {
                const auto &a = c.args.at(op->inputs.size() + i);
                if (a.kind == "int" || a.kind == "double")
                    card.referenceArgs.at(op->inputs.size() + i) = {{a.kind, a.value}};
            }
        } else {
            card = makeCard(m->family, shape, dt);
            card.referenceArgs = m->referenceArgs;
        }
        card.key += "." + std::to_string(keyIndex);
    } else {
        card.key = shortName(c.op) + (c.overload.empty() ? "" : "." + c.overload) + "." + std::to_string(keyIndex) + "." + x.dtype;
        card.heldOutShapes.clear();
        int input = 0;
        for (size_t i = 0; i < c.args.size(); ++i) {
            const auto &a = c.args[i];
            if (a.kind == "tensor") {
                const auto &t = a.tensors[0];
                TensorSpec spec;
                spec.name = a.name.empty() ? "t" + std::to_string(i) : a.name;
                spec.dtype = dtypeFromName(t.dtype);
                for (size_t d = 0; d < t.shape.size(); ++d) {
                    const auto sym = spec.name + "_" + std::to_string(d);
                    spec.dims.push_back(sym);
                    card.shape[sym] = t.shape[d];
                }
                drawIndicesAsRecorded(spec, card.shape, t);
                card.inputs.push_back(spec);
                card.referenceArgs.push_back({{"input", input++}});
            } else if (a.kind == "none") {
                card.referenceArgs.push_back({{"none", true}});
            } else {
                card.referenceArgs.push_back({{a.kind, a.value}});
            }
        }
        for (int i = 0; i < tensorReturns; ++i)
            card.outputs.push_back({"out" + std::to_string(i), {}, dt});
        card.errorModel = errorModelForOp(c.op);
        card.invariants.clear();
        card.specialInputs.clear();
    }
    card.atenOp = c.op;
    card.atenOverload = c.overload;
    card.atenSchema = c.schema;
    return {card, {}};
}

} // namespace kforge
