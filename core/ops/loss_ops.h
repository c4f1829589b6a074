#pragma once
// Losses that reduce to one scalar, in one table. Most are a pointwise expression of a prediction and a
// target (core/ops/expression.h) reduced over every element: the mean, the sum, or the sum over the
// first dimension's extent (KL's batchmean). One CUDA and one CPU template render whatever expression a
// card carries (core/proposers/templates/loss.cpp); the families below give each its ATen reference,
// and a problem's traced forward gets a fused card (family loss_mean, loss_sum or loss_batchmean, core/
// workload/loss_patterns.h) whose expression is the chain. A target may be one row broadcast over the
// rows (dims {"cols"}: hinge's or soft margin's +-1 labels against [rows, cols] predictions).
//
// Triplet margin loss is a row family of its own: per row the distances d_ap = ||a - p + eps||_2 and
// d_an = ||a - n + eps||_2, then max(margin + d_ap - d_an, 0), the mean over rows. Its expression is that
// row loss over the input names, each name standing for its input's distance from the anchor (the first
// input): "max(1 + positive - negative, 0)".
#include <optional>
#include <string>
#include <vector>

#include "ops/operator_card.h"

namespace kforge {

enum class LossReduction { Mean, Sum, BatchMean };

struct LossOp {
    std::string family; // "mse_loss"
    std::string atenOp; // "aten::mse_loss"
    std::string schema;
    // The scalar arguments after the reduction, in schema order, with their defaults (smooth L1's beta).
    std::vector<std::pair<std::string, double>> scalars;
    // Trailing bool arguments (kl_div's log_target), in schema order.
    std::vector<bool> flags;
    std::string expression; // over x (the prediction), target and the scalars, following ATen's formula
    bool targetPerColumn = false; // target is [cols], one row broadcast over the rows
    bool targetUnscaled = false;  // target drawn randn_unscaled (exp of it must stay finite)
    LossReduction reduction = LossReduction::Mean; // Mean or Sum (ATen's reduction argument 1 or 2)
};

const std::vector<LossOp> &lossOps();
const LossOp *findLossOp(const std::string &family);

// The family's card at rows x cols: x [rows, cols], target [rows, cols] or [cols], a scalar loss out,
// the `sum` error model (a reduction over every element).
OperatorCard lossFamilyCard(const LossOp &op, const ShapeBindings &shape, DType dtype);

// The fused families of a problem's forward, one per reduction.
std::string lossFusedFamily(LossReduction r);
// The reduction of any family the reduce-to-a-scalar templates serve (the table's and the fused ones).
std::optional<LossReduction> lossReductionOf(const std::string &family);
// Every family the reduce-to-a-scalar templates register under.
std::vector<std::string> lossFamilies();

inline constexpr const char *kTripletFamily = "triplet_margin_loss";
// eps inside both distances (ATen's default, the only one the templates take).
inline constexpr double kTripletEps = 1e-6;
// max(margin + positive - negative, 0), positive and negative the names of the second and third inputs.
std::string tripletExpression(double margin, const std::string &positive = "positive", const std::string &negative = "negative");
// anchor, positive, negative [rows, cols] in, the mean over rows out; aten::triplet_margin_loss with p 2,
// eps 1e-6, no swap.
OperatorCard tripletCard(const ShapeBindings &shape, DType dtype, double margin = 1.0);

} // namespace kforge
