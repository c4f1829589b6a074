#pragma once
// A problem whose traced forward reduces to one scalar loss gets a fused card for the loss templates
// (core/ops/loss_ops.h), found from the graph as the pointwise fusion finds its chains:
//   mean(E) or sum(E) of a pointwise chain E of the inputs (MSE as sub, pow, mean; hinge as mul, rsub,
//   clamp, mean), a loss call (aten::mse_loss, l1_loss, smooth_l1_loss, huber_loss, soft_margin_loss, kl_div with
//   either target form) over pointwise chains with reduction mean or sum, and either sum divided by
//   size(v, 0) (F.kl_div's batchmean) -> family loss_mean, loss_sum or loss_batchmean, whose expression
//   is the per-element term over x0, x1, ...;
//   aten::triplet_margin_loss(x0, x1, x2, margin, 2, 1e-6, False, mean) -> family triplet_margin_loss
//   with its margin in the expression.
// Inputs are [rows, cols] (rows x cols the largest input's leading dimensions and last; for batchmean its
// first and the rest) or one [cols] row broadcast over the rows. The caller sets the card's reference
// (the whole forward).
#include <optional>
#include <string>

#include "ops/operator_card.h"
#include "workload/problem_cards.h"

namespace kforge {

// The fused reduce-to-a-scalar card, or nullopt with why not.
std::optional<OperatorCard> lossProblemCard(const ProblemSignature &sig, std::string *why = nullptr);
// The fused triplet margin loss card, or nullopt with why not.
std::optional<OperatorCard> tripletProblemCard(const ProblemSignature &sig, std::string *why = nullptr);

// Whether two cards run the same kernel: one family, inputs of the same dims, and one expression once the
// inputs are named by position (a family card's "positive" is a problem's x1).
bool sameLossKernel(const OperatorCard &a, const OperatorCard &b);

} // namespace kforge
