#include "workload/loss_patterns.h"

#include <cmath>

#include "ops/expression.h"
#include "ops/loss_ops.h"
#include "util/error.h"
#include "workload/pointwise_fusion.h"

namespace kforge {

namespace {

using J = nlohmann::json;

struct Fail {
    std::string why;
};

std::optional<double> numberOf(const TracedValue &v)
{
    if (v.from != TracedValue::From::Constant)
        return std::nullopt;
    if (v.constant.is_number())
        return v.constant.get<double>();
    if (v.constant.is_boolean())
        return v.constant.get<bool>() ? 1.0 : 0.0;
    return std::nullopt;
}

bool isNone(const TracedValue &v)
{
    return v.from == TracedValue::From::Constant && v.constant.is_null();
}

class Reader {
public:
    Reader(const TracedGraph &g, std::vector<std::string> names) : m_g(g), m_names(std::move(names)) {}

    // The per-element term and the reduction the value `v` is, or Fail.
    std::pair<Expression, LossReduction> reduction(const TracedValue &v) const
    {
        const TracedNode &n = node(v, "the forward's result");
        const auto &in = n.inputs;
        if ((n.op == "aten::mean" || n.op == "aten::sum") && in.size() == 2) {
            if (!isNone(in[1]))
                throw Fail{n.op + " with a dtype"};
            return {value(in[0]), n.op == "aten::mean" ? LossReduction::Mean : LossReduction::Sum};
        }
        if ((n.op == "aten::div.Tensor" || n.op == "aten::div.Scalar") && in.size() == 2) {
            // F.kl_div's batchmean: the sum divided by the first dimension's extent.
            const auto [e, r] = reduction(in[0]);
            if (r != LossReduction::Sum || !firstExtent(in[1]))
                throw Fail{n.op + " divides by something other than a sum over size(x, 0)"};
            return {e, LossReduction::BatchMean};
        }
        if (const auto *op = lossOpOf(n.op))
            return lossCall(n, *op);
        throw Fail{"the forward ends in " + n.op + ", not a mean, a sum or a loss"};
    }

private:
    const TracedNode &node(const TracedValue &v, const std::string &what) const
    {
        if (v.from != TracedValue::From::Node || v.index < 0 || size_t(v.index) >= m_g.nodes.size())
            throw Fail{what + " is not a computed value"};
        return m_g.nodes[size_t(v.index)];
    }

    // What a value is per element: an input, a number, or a chain of pointwise calls (the pointwise fusion's rules).
    Expression value(const TracedValue &v) const
    {
        if (v.from == TracedValue::From::Input) {
            if (v.index < 0 || size_t(v.index) >= m_names.size())
                throw Fail{"a value reads input " + std::to_string(v.index) + " of " + std::to_string(m_names.size())};
            return Expression::variable(m_names[size_t(v.index)]);
        }
        if (const auto x = numberOf(v))
            return Expression::number(*x);
        TracedGraph sub = m_g;
        sub.outputs = {v};
        std::string why;
        const auto e = fusePointwiseGraph(sub, m_names, &why);
        if (!e)
            throw Fail{why};
        return *e;
    }

    // prim::NumToTensor(aten::size.int(v, 0)), or aten::size.int(v, 0) itself.
    bool firstExtent(const TracedValue &v) const
    {
        if (v.from != TracedValue::From::Node)
            return false;
        const TracedNode *n = &node(v, "the divisor");
        if ((n->op == "prim::NumToTensor" || n->op == "prim::NumToTensor.Scalar") && n->inputs.size() == 1 && n->inputs[0].from == TracedValue::From::Node)
            n = &node(n->inputs[0], "the divisor");
        return n->op == "aten::size.int" && n->inputs.size() == 2 && numberOf(n->inputs[1]) == 0.0;
    }

    static const LossOp *lossOpOf(const std::string &op)
    {
        for (const auto &l : lossOps())
            if (op == l.atenOp)
                return &l;
        return nullptr;
    }

    // The k-th tensor argument of a call. F.smooth_l1_loss and others broadcast first
    // (prim::ListUnpack(aten::broadcast_tensors(prim::ListConstruct(a, b)))); the traced graph names
    // every output of the unpack as the one node, so the k-th tensor read from it is taken as its k-th
    // element, the order in which torch.nn.functional passes them on. The guard judges the result
    // against the forward either way.
    Expression tensorArg(const TracedNode &n, size_t k) const
    {
        const auto &v = n.inputs.at(k);
        if (v.from == TracedValue::From::Node && node(v, "an argument").op == "prim::ListUnpack") {
            size_t position = 0;
            for (size_t i = 0; i < k; ++i)
                position += n.inputs[i].from == TracedValue::From::Node && n.inputs[i].index == v.index;
            const auto &unpack = m_g.nodes[size_t(v.index)];
            const auto &bcast = node(unpack.inputs.at(0), "a broadcast");
            if (bcast.op != "aten::broadcast_tensors" || bcast.inputs.size() != 1)
                throw Fail{"a prim::ListUnpack of " + bcast.op};
            const auto &list = node(bcast.inputs[0], "a broadcast list");
            if (list.op != "prim::ListConstruct" || position >= list.inputs.size())
                throw Fail{"a broadcast of " + list.op};
            return value(list.inputs[position]);
        }
        return value(v);
    }

    std::pair<Expression, LossReduction> lossCall(const TracedNode &n, const LossOp &op) const
    {
        const size_t want = 3 + op.scalars.size() + op.flags.size();
        if (n.inputs.size() != want)
            throw Fail{n.op + " with " + std::to_string(n.inputs.size()) + " arguments, not " + std::to_string(want)};
        const auto reductionCode = numberOf(n.inputs[2]);
        if (reductionCode != 1.0 && reductionCode != 2.0)
            throw Fail{n.op + " with reduction none or unknown: its result is not one scalar"};
        std::map<std::string, double> constants;
        for (size_t i = 0; i < op.scalars.size(); ++i) {
            const auto s = numberOf(n.inputs[3 + i]);
            if (!s)
                throw Fail{n.op + "'s " + op.scalars[i].first + " is not a number"};
            constants[op.scalars[i].first] = *s;
        }
        std::string formula = op.expression;
        if (op.family == "kl_div") {
            const auto logTarget = numberOf(n.inputs[3]);
            if (!logTarget)
                throw Fail{"aten::kl_div's log_target is not a constant"};
            // ATen: xlogy(target, target) - target * input for a target of probabilities.
            if (*logTarget == 0)
                formula = "where(target == 0, 0, target * log(target)) - target * x";
        }
        if ((op.family == "smooth_l1_loss" && constants["beta"] <= 0) || (op.family == "huber_loss" && constants["delta"] <= 0))
            throw Fail{n.op + " with a threshold that is not positive"};
        const auto e = Expression::parse(formula, {"x", "target"}, constants).substitute({{"x", tensorArg(n, 0)}, {"target", tensorArg(n, 1)}});
        return {e, reductionCode == 1.0 ? LossReduction::Mean : LossReduction::Sum};
    }

    const TracedGraph &m_g;
    std::vector<std::string> m_names;
};

bool floating(const std::string &dtype)
{
    return dtype == "float32" || dtype == "float16" || dtype == "bfloat16";
}

int64_t product(const std::vector<int64_t> &s, size_t from, size_t to)
{
    int64_t p = 1;
    for (size_t i = from; i < to; ++i)
        p *= s[i];
    return p;
}

std::vector<std::string> inputNames(const ProblemSignature &sig)
{
    std::vector<std::string> names;
    for (size_t i = 0; i < sig.inputs.size(); ++i)
        names.push_back("x" + std::to_string(i));
    return names;
}

// One scalar floating output, floating inputs of its dtype; "" when so.
std::string scalarLossUnfit(const ProblemSignature &sig)
{
    if (!sig.graph.unreadable.empty())
        return sig.graph.unreadable;
    if (sig.inputs.empty() || sig.outputs.size() != 1 || sig.outputs.front().numel() != 1 || !floating(sig.outputs.front().dtype))
        return "the forward does not return one floating scalar";
    for (const auto &t : sig.inputs)
        if (t.dtype != sig.outputs.front().dtype || t.shape.empty())
            return "an input is not a tensor of the result's dtype";
    if (sig.graph.outputs.size() != 1)
        return "the forward returns " + std::to_string(sig.graph.outputs.size()) + " values";
    return {};
}

// Held-out shapes reach the forward as they are, which only 2-D inputs take for granted (as the pointwise card).
void keepHeldOutOnlyFor2D(OperatorCard &c, const ProblemSignature &sig)
{
    for (const auto &t : sig.inputs)
        if (t.shape.size() != 2)
            c.heldOutShapes.clear();
}

// The card's expression with input i named "in<i>", or "" if it does not parse.
std::string positional(const OperatorCard &c)
{
    std::vector<std::string> names;
    std::map<std::string, Expression> by;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
        names.push_back(c.inputs[i].name);
        by.emplace(c.inputs[i].name, Expression::variable("in" + std::to_string(i)));
    }
    try {
        return Expression::parse(c.expression, names).substitute(by).text();
    } catch (const Error &) {
        return {};
    }
}

} // namespace

bool sameLossKernel(const OperatorCard &a, const OperatorCard &b)
{
    if (a.family != b.family || a.inputs.size() != b.inputs.size() || a.expression.empty())
        return false;
    for (size_t i = 0; i < a.inputs.size(); ++i)
        if (a.inputs[i].dims != b.inputs[i].dims)
            return false;
    const auto pa = positional(a);
    return !pa.empty() && pa == positional(b);
}

std::optional<OperatorCard> lossProblemCard(const ProblemSignature &sig, std::string *why)
{
    auto fail = [&](const std::string &reason) -> std::optional<OperatorCard> {
        if (why)
            *why = reason;
        return std::nullopt;
    };
    if (const auto unfit = scalarLossUnfit(sig); !unfit.empty())
        return fail(unfit);
    const auto names = inputNames(sig);
    std::optional<std::pair<Expression, LossReduction>> term;
    try {
        term = Reader(sig.graph, names).reduction(sig.graph.outputs.front());
    } catch (const Fail &f) {
        return fail(f.why);
    } catch (const std::exception &e) { // a graph of another shape than the worker writes: no card, the others stand
        return fail(std::string("the traced graph could not be read as a loss: ") + e.what());
    }
    // The largest input sets rows x cols; the others are of its shape or one row of its last dimension.
    size_t main = 0;
    for (size_t i = 1; i < sig.inputs.size(); ++i)
        if (sig.inputs[i].numel() > sig.inputs[main].numel())
            main = i;
    const auto &shape = sig.inputs[main].shape;
    bool perColumn = false;
    for (const auto &t : sig.inputs) {
        const bool row = t.shape.size() == 1 && t.shape[0] == shape.back() && t.shape != shape;
        if (t.shape != shape && !row)
            return fail("an input is neither of the largest input's shape nor one row of its last dimension");
        perColumn |= row;
    }
    const auto reduction = term->second;
    if (reduction == LossReduction::BatchMean && perColumn && shape.size() > 2)
        return fail("batchmean over more than two dimensions with a broadcast row");
    const bool byFirst = reduction == LossReduction::BatchMean && !perColumn;
    const int64_t rows = byFirst ? shape[0] : product(shape, 0, shape.size() - 1);
    const int64_t cols = byFirst ? product(shape, 1, shape.size()) : shape.back();
    const DType dt = dtypeFromName(sig.outputs.front().dtype);
    OperatorCard c;
    c.family = lossFusedFamily(reduction);
    c.key = "problem." + sig.name + "." + c.family;
    c.shape = {{"rows", rows}, {"cols", cols}};
    c.heldOutShapes = {{{"rows", 7}, {"cols", cols + 3}}, {{"rows", rows / 2 + 1}, {"cols", 33}}};
    for (size_t i = 0; i < sig.inputs.size(); ++i)
        c.inputs.push_back({names[i], sig.inputs[i].shape == shape ? std::vector<std::string>{"rows", "cols"} : std::vector<std::string>{"cols"}, dt});
    c.outputs = {{"loss", {}, dt}};
    c.expression = term->first.text();
    c.errorModel = ErrorModel::Sum;
    c.flopsPerElement = double(term->first.flops()) * double(rows * cols);
    keepHeldOutOnlyFor2D(c, sig);
    return c;
}

std::optional<OperatorCard> tripletProblemCard(const ProblemSignature &sig, std::string *why)
{
    auto fail = [&](const std::string &reason) -> std::optional<OperatorCard> {
        if (why)
            *why = reason;
        return std::nullopt;
    };
    if (const auto unfit = scalarLossUnfit(sig); !unfit.empty())
        return fail(unfit);
    const auto &out = sig.graph.outputs.front();
    if (out.from != TracedValue::From::Node || out.index < 0 || size_t(out.index) >= sig.graph.nodes.size())
        return fail("the forward's result is not a computed value");
    const auto &n = sig.graph.nodes[size_t(out.index)];
    if (n.op != "aten::triplet_margin_loss" || n.inputs.size() != 8)
        return fail("the forward ends in " + n.op + ", not aten::triplet_margin_loss");
    if (sig.inputs.size() != 3)
        return fail("the problem takes " + std::to_string(sig.inputs.size()) + " inputs, not anchor, positive and negative");
    for (int i = 0; i < 3; ++i)
        if (n.inputs[size_t(i)].from != TracedValue::From::Input || n.inputs[size_t(i)].index != i)
            return fail("the loss does not take the forward's inputs in their order");
    const auto margin = numberOf(n.inputs[3]), p = numberOf(n.inputs[4]), eps = numberOf(n.inputs[5]), swap = numberOf(n.inputs[6]),
               reduction = numberOf(n.inputs[7]);
    if (!margin || p != 2.0 || !eps || std::abs(*eps - kTripletEps) > 1e-3 * kTripletEps || swap != 0.0 || reduction != 1.0)
        return fail("a triplet margin loss other than the 2-norm, eps 1e-6, no swap, mean over rows");
    const auto &shape = sig.inputs[0].shape;
    for (const auto &t : sig.inputs)
        if (t.shape != shape)
            return fail("anchor, positive and negative differ in shape");
    auto c = tripletCard({{"rows", product(shape, 0, shape.size() - 1)}, {"cols", shape.back()}}, dtypeFromName(sig.outputs.front().dtype), *margin);
    // ".traced": beside the family's own card at the default margin, which the problem gets too.
    c.key = "problem." + sig.name + "." + c.family + ".traced";
    const auto names = inputNames(sig);
    for (size_t i = 0; i < 3; ++i)
        c.inputs[i].name = names[i];
    c.expression = tripletExpression(*margin, names[1], names[2]);
    keepHeldOutOnlyFor2D(c, sig);
    return c;
}

} // namespace kforge
