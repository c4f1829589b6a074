#include "ops/loss_ops.h"

#include "ops/expression.h"
#include "util/error.h"

namespace kforge {

namespace {

using J = nlohmann::json;

std::map<std::string, double> constantsOf(const LossOp &op)
{
    std::map<std::string, double> c;
    for (const auto &[name, value] : op.scalars)
        c[name] = value;
    return c;
}

} // namespace

const std::vector<LossOp> &lossOps()
{
    // Expressions follow ATen's own formulas (aten/src/ATen/native/Loss.cpp, cpu/BinaryOpsKernel.cpp), so
    // the guard's comparison with ATen's error on the same inputs holds them to what ATen does.
    static const std::vector<LossOp> ops = {
        {"mse_loss", "aten::mse_loss", "aten::mse_loss(Tensor self, Tensor target, int reduction=Mean) -> Tensor", {}, {},
         "pow(x - target, 2)"},
        // reduction='sum': the templates' other divisor.
        {"mse_loss_sum", "aten::mse_loss", "aten::mse_loss(Tensor self, Tensor target, int reduction=Sum) -> Tensor", {}, {},
         "pow(x - target, 2)", false, false, LossReduction::Sum},
        {"l1_loss", "aten::l1_loss", "aten::l1_loss(Tensor self, Tensor target, int reduction=Mean) -> Tensor", {}, {}, "abs(x - target)"},
        {"smooth_l1_loss", "aten::smooth_l1_loss",
         "aten::smooth_l1_loss(Tensor self, Tensor target, int reduction=Mean, float beta=1.0) -> Tensor", {{"beta", 1.0}}, {},
         "where(abs(x - target) < beta, 0.5 * abs(x - target) * abs(x - target) / beta, abs(x - target) - 0.5 * beta)"},
        {"huber_loss", "aten::huber_loss", "aten::huber_loss(Tensor self, Tensor target, int reduction=Mean, float delta=1.0) -> Tensor",
         {{"delta", 1.0}}, {}, "where(abs(x - target) < delta, 0.5 * abs(x - target) * abs(x - target), delta * (abs(x - target) - 0.5 * delta))"},
        // The target as log-probabilities: defined for any real target, so random inputs test it.
        {"kl_div", "aten::kl_div", "aten::kl_div(Tensor self, Tensor target, int reduction=Mean, *, bool log_target=False) -> Tensor", {}, {true},
         "exp(target) * (target - x)", false, true},
        // +-1 labels per column, broadcast over the rows: the broadcast path of the templates.
        {"soft_margin_loss", "aten::soft_margin_loss", "aten::soft_margin_loss(Tensor self, Tensor target, int reduction=Mean) -> Tensor", {}, {},
         "log1p(exp(-x * target))", true, true},
    };
    return ops;
}

const LossOp *findLossOp(const std::string &family)
{
    for (const auto &op : lossOps())
        if (op.family == family)
            return &op;
    return nullptr;
}

OperatorCard lossFamilyCard(const LossOp &op, const ShapeBindings &s, DType dt)
{
    OperatorCard c;
    c.family = op.family;
    c.key = op.family + (op.reduction == LossReduction::Sum ? ".sum." : ".mean.") + dtypeName(dt);
    const int64_t rows = needSymbol(s, "rows", op.family), cols = needSymbol(s, "cols", op.family);
    c.shape = {{"rows", rows}, {"cols", cols}};
    // Held out: a row length no vector width divides, and a count of elements no block size does.
    c.heldOutShapes = {{{"rows", 7}, {"cols", cols + 3}}, {{"rows", rows / 2 + 1}, {"cols", 33}}};
    c.inputs = {{"x", {"rows", "cols"}, dt},
                {"target", op.targetPerColumn ? std::vector<std::string>{"cols"} : std::vector<std::string>{"rows", "cols"}, dt,
                 op.targetUnscaled ? "randn_unscaled" : "randn"}};
    c.outputs = {{"loss", {}, dt}};
    c.atenSchema = op.schema;
    c.atenOp = op.atenOp;
    c.referenceArgs = J::array({{{"input", 0}}, {{"input", 1}}, {{"int", op.reduction == LossReduction::Sum ? 2 : 1}}});
    for (const auto &[name, value] : op.scalars)
        c.referenceArgs.push_back({{"double", value}});
    for (bool f : op.flags)
        c.referenceArgs.push_back({{"bool", f}});
    // A reduction over every element: its rounding grows with the sum of what it adds, which the same
    // loss over |x| and |target| stands for (core/guard/numerics.h).
    c.errorModel = ErrorModel::Sum;
    if (op.targetUnscaled && op.targetPerColumn)
        c.inputScales = {1.0, 4.0}; // exp(-x * target) stays within float range
    const auto e = Expression::parse(op.expression, {"x", "target"}, constantsOf(op));
    c.expression = e.text();
    c.flopsPerElement = double(e.flops()) * double(rows * cols);
    return c;
}

std::string lossFusedFamily(LossReduction r)
{
    return r == LossReduction::Mean ? "loss_mean" : r == LossReduction::Sum ? "loss_sum" : "loss_batchmean";
}

std::optional<LossReduction> lossReductionOf(const std::string &family)
{
    if (const auto *op = findLossOp(family))
        return op->reduction;
    for (auto r : {LossReduction::Mean, LossReduction::Sum, LossReduction::BatchMean})
        if (family == lossFusedFamily(r))
            return r;
    return std::nullopt;
}

std::vector<std::string> lossFamilies()
{
    std::vector<std::string> out;
    for (auto r : {LossReduction::Mean, LossReduction::Sum, LossReduction::BatchMean})
        out.push_back(lossFusedFamily(r));
    for (const auto &op : lossOps())
        out.push_back(op.family);
    return out;
}

std::string tripletExpression(double margin, const std::string &positive, const std::string &negative)
{
    return Expression::parse("max(margin + d_ap - d_an, 0)", {"d_ap", "d_an"}, {{"margin", margin}})
        .substitute({{"d_ap", Expression::variable(positive)}, {"d_an", Expression::variable(negative)}})
        .text();
}

OperatorCard tripletCard(const ShapeBindings &s, DType dt, double margin)
{
    OperatorCard c;
    c.family = kTripletFamily;
    c.key = std::string(kTripletFamily) + ".mean." + dtypeName(dt);
    const int64_t rows = needSymbol(s, "rows", kTripletFamily), cols = needSymbol(s, "cols", kTripletFamily);
    c.shape = {{"rows", rows}, {"cols", cols}};
    c.heldOutShapes = {{{"rows", 7}, {"cols", cols + 3}}, {{"rows", rows / 2 + 1}, {"cols", 33}}};
    c.inputs = {{"anchor", {"rows", "cols"}, dt}, {"positive", {"rows", "cols"}, dt}, {"negative", {"rows", "cols"}, dt}};
    c.outputs = {{"loss", {}, dt}};
    c.atenSchema = "aten::triplet_margin_loss(Tensor anchor, Tensor positive, Tensor negative, float margin=1.0, float p=2, float eps=1e-06, "
                   "bool swap=False, int reduction=Mean) -> Tensor";
    c.atenOp = "aten::triplet_margin_loss";
    c.referenceArgs = J::array({{{"input", 0}}, {{"input", 1}}, {{"input", 2}}, {{"double", margin}}, {{"double", 2.0}}, {{"double", kTripletEps}},
                                {{"bool", false}}, {{"int", 1}}});
    // Each row's distances are statistics over its columns, relative to their size; the mean then adds
    // the rows (core/guard/numerics.h `norm`).
    c.errorModel = ErrorModel::Normalization;
    c.expression = tripletExpression(margin);
    c.flopsPerElement = 8.0 * double(rows * cols);
    return c;
}

} // namespace kforge
