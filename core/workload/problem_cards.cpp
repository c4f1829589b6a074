#include "workload/problem_cards.h"

#include <algorithm>

#include "ops/pointwise_ops.h"
#include "util/error.h"
#include "workload/call_cards.h"
#include "workload/loss_patterns.h"

#include <set>

namespace kforge {

namespace {

using J = nlohmann::json;

bool floating(const std::string &dtype)
{
    return dtype == "float32" || dtype == "float16" || dtype == "bfloat16" || dtype == "float64";
}

J shapesOf(const std::vector<TensorMeta> &ts)
{
    J out = J::array();
    for (const auto &t : ts)
        out.push_back(t.shape);
    return out;
}

ShapeBindings rowsCols(const TensorMeta &x)
{
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < x.shape.size(); ++d)
        rows *= x.shape[d];
    return {{"rows", rows}, {"cols", x.shape.empty() ? 1 : x.shape.back()}};
}

void makeModuleReference(OperatorCard &c, const ProblemSignature &sig)
{
    c.atenOp = kModuleReference;
    c.atenOverload.clear();
    c.atenSchema = "forward of the problem " + sig.name + " (" + sig.modulePath + ")";
    c.referenceArgs = J::array({{{"module", sig.modulePath}}, {{"shapes", shapesOf(sig.inputs)}}});
    c.definition = sig.source;
    // What the family's operator guarantees (rows summing to one) is not known of the problem: the guard's
    // numerics against the forward decide.
    c.invariants.clear();
    // Inputs the problem never gave a negative value are drawn nonnegative: a forward through log or sqrt
    // (KL divergence of log(p)) is NaN on normal draws, for the candidate and the reference alike, and
    // such trials would test nothing.
    for (size_t i = 0; i < c.inputs.size() && i < sig.inputs.size(); ++i)
        if (floating(sig.inputs[i].dtype) && sig.inputs[i].min && *sig.inputs[i].min >= 0 && c.inputs[i].init == "randn")
            c.inputs[i].init = "uniform";
    // Integers the card has no rule for (the whole forward's) are drawn as the problem had them: class
    // targets out of range fail its forward.
    for (size_t i = 0; i < c.inputs.size() && i < sig.inputs.size(); ++i)
        if (c.inputs[i].init == "randn")
            drawIndicesAsRecorded(c.inputs[i], c.shape, sig.inputs[i]);
    // The ignore index's trial only where the problem had a negative target: its forward may not ignore
    // kIgnoreIndex (CrossEntropyLoss(ignore_index=0) raises on it).
    bool negativeIndex = false;
    for (const auto &t : sig.inputs)
        negativeIndex |= !floating(t.dtype) && t.dtype != "bool" && t.min && *t.min < 0;
    if (!negativeIndex)
        c.specialInputs.erase(std::remove(c.specialInputs.begin(), c.specialInputs.end(), kIgnoredTargets), c.specialInputs.end());
}

} // namespace

std::string problemCardsUnfit(const ProblemSignature &sig)
{
    if (sig.inputs.empty())
        return "the problem takes no tensor inputs";
    if (sig.outputs.empty())
        return "the problem returns no tensor";
    // Inputs after the first may be bool masks (KernelBench's masked cumsum) or int64 indices (a cross
    // entropy's targets, drawn in range by the family's card).
    for (size_t i = 0; i < sig.inputs.size(); ++i)
        if (!floating(sig.inputs[i].dtype) && (i == 0 || (sig.inputs[i].dtype != "bool" && sig.inputs[i].dtype != "int64")))
            return "input " + std::to_string(i) + " is " + sig.inputs[i].dtype
                   + (i == 0 ? ", not a floating tensor" : ", not a floating tensor, a bool mask or int64 indices");
    // int64 outputs are indices (argmax, argmin over a dimension), compared exactly.
    for (size_t i = 0; i < sig.outputs.size(); ++i)
        if (!floating(sig.outputs[i].dtype) && sig.outputs[i].dtype != "int64")
            return "output " + std::to_string(i) + " is " + sig.outputs[i].dtype + ", not a floating tensor or int64 indices";
    for (size_t i = 0; i < sig.inputs.size(); ++i)
        if (sig.inputs[i].numel() == 0)
            return "input " + std::to_string(i) + " is empty: there is nothing to compute";
    for (size_t i = 0; i < sig.outputs.size(); ++i)
        if (sig.outputs[i].numel() == 0)
            return "output " + std::to_string(i) + " is empty: there is nothing to compute";
    return {};
}

OperatorCard wholeForwardCard(const ProblemSignature &sig)
{
    OperatorCard c;
    c.key = "problem." + sig.name;
    auto specs = [&](const std::vector<TensorMeta> &ts, const char *prefix) {
        std::vector<TensorSpec> out;
        for (size_t i = 0; i < ts.size(); ++i) {
            TensorSpec s;
            s.name = prefix + std::to_string(i);
            s.dtype = dtypeFromName(ts[i].dtype);
            for (size_t d = 0; d < ts[i].shape.size(); ++d) {
                const auto sym = s.name + "_" + std::to_string(d);
                s.dims.push_back(sym);
                c.shape[sym] = ts[i].shape[d];
            }
            out.push_back(s);
        }
        return out;
    };
    c.inputs = specs(sig.inputs, "x");
    c.outputs = specs(sig.outputs, "out");
    c.heldOutShapes.clear();
    c.errorModel = ErrorModel::Pointwise;
    makeModuleReference(c, sig);
    return c;
}

namespace {

// The views of the first input a family's card may take: rows x cols (the last dimension), [outer, dim,
// inner] around each dimension d (the families over a middle dimension, core/ops/operator_card.h), and
// for rank 3 and more [n, c, hw] (channel first, instance norm). A family takes those with its symbols.
struct InputView {
    ShapeBindings shape;
    std::string keySuffix; // "" or ".d<d>"
};

std::vector<InputView> inputViews(const TensorMeta &x)
{
    std::vector<InputView> v = {{rowsCols(x), ""}};
    // Rows of classes, for a loss over them (cross entropy's logits).
    if (x.shape.size() == 2)
        v.push_back({{{"rows", x.shape[0]}, {"vocab", x.shape[1]}}, ""});
    for (size_t d = 0; d < x.shape.size(); ++d)
        v.push_back({dimView(x.shape, d), ".d" + std::to_string(d)});
    if (x.shape.size() >= 3) {
        int64_t hw = 1;
        for (size_t d = 2; d < x.shape.size(); ++d)
            hw *= x.shape[d];
        v.push_back({{{"n", x.shape[0]}, {"c", x.shape[1]}, {"hw", hw}}, ""});
    }
    return v;
}

// What a traced forward does to its elements, from its operators' names: a family whose elements each
// depend only on themselves cannot compute a forward that reduces or scans, nor a reducing family a
// forward of pointwise calls alone. Without this every one-input problem met every family's card, an
// evaluation each before the guard said no (29 cards for x * sigmoid(x)). A forward that contracts with
// weights or another operand (a linear layer, a matmul, a convolution: a model's block, not one operator)
// meets no family: none computes a contraction, and a ViT block met 22 cards the guard could only refuse.
enum class ElementFlow { Unknown, Pointwise, Reducing, Scan, Contracting };

ElementFlow forwardFlow(const TracedGraph &g)
{
    if (!g.unreadable.empty() || g.nodes.empty())
        return ElementFlow::Unknown;
    static const std::set<std::string> reducing{"sum", "mean", "amax", "amin", "argmax", "argmin", "prod", "norm", "var", "std",
                                                "var_mean", "std_mean", "softmax", "log_softmax", "_softmax", "_log_softmax",
                                                "logsumexp", "kl_div", "cross_entropy", "nll_loss", "nll_loss_nd", "pairwise_distance",
                                                "cosine_similarity", "frobenius_norm", "nuclear_norm", "renorm"};
    static const std::set<std::string> contracting{"linear", "matmul", "mm", "bmm", "addmm", "addbmm", "baddbmm", "einsum", "conv1d",
                                                   "conv2d", "conv3d", "convolution", "_convolution", "conv_transpose1d", "conv_transpose2d",
                                                   "conv_transpose3d", "bilinear", "tensordot", "scaled_dot_product_attention"};
    bool scan = false, reduce = false;
    for (const auto &n : g.nodes) {
        auto name = n.op.substr(n.op.find("::") == std::string::npos ? 0 : n.op.find("::") + 2);
        const auto dot = name.find('.');
        const auto overload = dot == std::string::npos ? std::string() : name.substr(dot + 1);
        name = name.substr(0, dot);
        if (contracting.count(name))
            return ElementFlow::Contracting;
        if (name.rfind("cum", 0) == 0 || name == "logcumsumexp")
            scan = true;
        else if (reducing.count(name) || name.find("norm") != std::string::npos || name.find("loss") != std::string::npos
                 || ((name == "max" || name == "min") && (overload.empty() || overload == "dim")))
            reduce = true;
    }
    return scan ? ElementFlow::Scan : reduce ? ElementFlow::Reducing : ElementFlow::Pointwise;
}

ElementFlow familyFlow(const std::string &family)
{
    if (family == kPointwiseFamily || findPointwiseOp(family))
        return ElementFlow::Pointwise;
    if (family.find("cum") != std::string::npos)
        return ElementFlow::Scan;
    return ElementFlow::Reducing;
}

// Views the traced forward names, of a norm it calls on input 0 with the module's default affine (weight
// 1, bias 0), which is then instance norm over the view: GroupNorm's groups as [n, groups, c / groups *
// hw] (a group's elements are contiguous), key ".g<groups>"; LayerNorm over trailing dimensions as [rows,
// 1, their product], key ".ln". The guard still decides whether the forward computes that.
std::vector<InputView> tracedNormViews(const ProblemSignature &sig)
{
    std::vector<InputView> v;
    const auto &x = sig.inputs.at(0);
    const int64_t numel = x.numel();
    const auto constInt = [](const TracedValue &t) -> std::optional<int64_t> {
        if (t.from == TracedValue::From::Constant && t.constant.is_number_integer())
            return t.constant.get<int64_t>();
        return std::nullopt;
    };
    for (const auto &n : sig.graph.nodes) {
        if (n.inputs.size() < 2 || n.inputs[0].from != TracedValue::From::Input || n.inputs[0].index != 0)
            continue;
        if (n.op == "aten::group_norm" && x.shape.size() >= 2) {
            const auto groups = constInt(n.inputs[1]);
            const int64_t batch = x.shape[0], channels = x.shape[1];
            if (groups && *groups > 0 && channels % *groups == 0 && batch > 0)
                v.push_back({{{"n", batch}, {"c", *groups}, {"hw", numel / (batch * *groups)}}, ".g" + std::to_string(*groups)});
        } else if (n.op == "aten::layer_norm" && n.inputs[1].from == TracedValue::From::Node) {
            const auto &list = sig.graph.nodes.at(size_t(n.inputs[1].index));
            if (list.op != "prim::ListConstruct" || list.inputs.empty() || list.inputs.size() > x.shape.size())
                continue;
            int64_t cols = 1;
            bool trailing = true;
            for (size_t i = 0; i < list.inputs.size(); ++i) {
                const auto d = constInt(list.inputs[i]);
                trailing &= d && *d == x.shape[x.shape.size() - list.inputs.size() + i];
                cols *= d ? *d : 1;
            }
            if (trailing && cols > 0)
                v.push_back({{{"n", numel / cols}, {"c", 1}, {"hw", cols}}, ".ln"});
        }
    }
    return v;
}

std::vector<InputView> viewsOf(const ProblemSignature &sig)
{
    auto v = inputViews(sig.inputs.at(0));
    for (auto &t : tracedNormViews(sig))
        v.push_back(std::move(t));
    return v;
}

std::string mismatchAt(const std::string &family, const ProblemSignature &sig, const ShapeBindings &view)
{
    OperatorCard c;
    try {
        c = makeCard(family, view, dtypeFromName(sig.inputs[0].dtype));
    } catch (const Error &e) {
        return e.what(); // a family with other shape symbols (group norm's groups, cross entropy's vocab)
    }
    auto compare = [&](const std::vector<TensorSpec> &specs, const std::vector<TensorMeta> &metas, const char *what) -> std::string {
        if (specs.size() != metas.size())
            return std::to_string(specs.size()) + " " + what + "s, the problem has " + std::to_string(metas.size());
        for (size_t i = 0; i < specs.size(); ++i) {
            if (c.numel(specs[i], c.shape) != metas[i].numel())
                return std::string(what) + " " + std::to_string(i) + " has " + std::to_string(c.numel(specs[i], c.shape))
                       + " elements, the problem's " + std::to_string(metas[i].numel());
            if (dtypeName(specs[i].dtype) != metas[i].dtype)
                return std::string(what) + " " + std::to_string(i) + " is " + dtypeName(specs[i].dtype) + ", the problem's " + metas[i].dtype;
        }
        return {};
    };
    if (auto why = compare(c.inputs, sig.inputs, "input"); !why.empty())
        return why;
    return compare(c.outputs, sig.outputs, "output");
}

} // namespace

std::string familyMismatch(const std::string &family, const ProblemSignature &sig)
{
    if (const auto why = problemCardsUnfit(sig); !why.empty())
        return why;
    std::string first;
    for (const auto &v : viewsOf(sig)) {
        const auto why = mismatchAt(family, sig, v.shape);
        if (why.empty())
            return why;
        if (first.empty())
            first = why;
    }
    return first; // why the rows x cols view does not fit
}

std::vector<OperatorCard> familyCardsForProblem(const ProblemSignature &sig)
{
    std::vector<OperatorCard> out;
    if (!problemCardsUnfit(sig).empty())
        return out;
    const auto flow = forwardFlow(sig.graph);
    for (const auto &family : cardFamilies()) {
        if (flow != ElementFlow::Unknown && familyFlow(family) != flow)
            continue;
        for (const auto &view : viewsOf(sig)) {
            if (!mismatchAt(family, sig, view.shape).empty())
                continue;
            // Contiguous rows of a family over dim are its last-dimension family's, where that one fits.
            const bool dim = dimFamily(family);
            if (dim && view.shape.at("inner") == 1 && mismatchAt(family.substr(0, family.size() - 4), sig, rowsCols(sig.inputs[0])).empty())
                continue;
            auto c = makeCard(family, view.shape, dtypeFromName(sig.inputs[0].dtype));
            c.key = "problem." + sig.name + "." + family + view.keySuffix;
            // A held-out shape reaches the forward as it is, which only a 2-D problem takes for granted (and
            // an [outer, dim, inner] view is 3-D whatever the problem's rank); the worker also runs the
            // forward at each one and drops those it refuses.
            bool twoD = !dim;
            for (const auto &t : sig.inputs)
                twoD &= t.shape.size() == 2;
            if (!twoD)
                c.heldOutShapes.clear();
            makeModuleReference(c, sig);
            out.push_back(std::move(c));
        }
    }
    if (auto fused = pointwiseProblemCard(sig))
        out.push_back(std::move(*fused));
    // A forward that reduces to one loss: its fused card, unless a family card above is the same kernel.
    for (auto loss : {lossProblemCard(sig), tripletProblemCard(sig)}) {
        if (!loss || std::any_of(out.begin(), out.end(), [&](const OperatorCard &c) { return sameLossKernel(c, *loss); }))
            continue;
        makeModuleReference(*loss, sig);
        out.push_back(std::move(*loss));
    }
    return out;
}

std::optional<OperatorCard> pointwiseProblemCard(const ProblemSignature &sig, std::string *why)
{
    auto fail = [&](const std::string &reason) -> std::optional<OperatorCard> {
        if (why)
            *why = reason;
        return std::nullopt;
    };
    if (const auto unfit = problemCardsUnfit(sig); !unfit.empty())
        return fail(unfit);
    if (sig.outputs.size() != 1)
        return fail("the problem returns " + std::to_string(sig.outputs.size()) + " tensors, not one");
    const auto &y = sig.outputs.front();
    std::vector<std::string> names;
    for (const auto &t : sig.inputs) {
        if (t.shape != y.shape || t.dtype != y.dtype)
            return fail("an input's shape or dtype differs from the output's (the pointwise templates take no broadcast)");
        names.push_back("x" + std::to_string(names.size()));
    }
    std::string reason;
    const auto e = fusePointwiseGraph(sig.graph, names, &reason);
    if (!e)
        return fail(reason);
    const DType dt = dtypeFromName(y.dtype);
    auto c = rowwiseCard(kPointwiseFamily, rowsCols(y), dt);
    c.inputs.clear();
    for (const auto &n : names)
        c.inputs.push_back({n, {"rows", "cols"}, dt});
    c.key = "problem." + sig.name + "." + kPointwiseFamily;
    c.expression = e->text();
    c.flopsPerElement = e->flops();
    c.errorModel = ErrorModel::Pointwise;
    if (y.shape.size() != 2)
        c.heldOutShapes.clear(); // as the family cards: a held-out shape reaches the forward as it is
    makeModuleReference(c, sig);
    return c;
}

bool isProblemCard(const OperatorCard &card)
{
    return card.atenOp == kModuleReference;
}

} // namespace kforge
