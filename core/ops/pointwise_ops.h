#pragma once
// Pointwise operators as expressions (core/ops/expression.h), in one table: each activation family with
// its ATen operator, the scalar arguments the operator takes (so a captured aten::leaky_relu(x, 0.2)
// becomes where(x > 0, x, x * 0.2)) and its expression. One CUDA and one CPU template render whatever
// expression a card carries; the same translation turns a chain of pointwise ATen calls (a problem's
// traced forward) into one expression.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ops/expression.h"
#include "ops/operator_card.h"

namespace kforge {

struct PointwiseOp {
    std::string family;   // the card family, e.g. "leaky_relu"
    std::string atenOp;   // "aten::leaky_relu", or a kforge:: composite the worker computes
    std::string overload; // "" for the default overload
    std::string schema;
    // The tensor inputs, by the names the expression uses ("x", "residual").
    std::vector<std::string> inputs;
    // The scalar arguments after the inputs, in schema order, with their defaults.
    std::vector<std::pair<std::string, double>> scalars;
    // A string argument after the scalars that selects this entry (aten::gelu's approximate), or "".
    std::string strArg;
    std::string expression; // over inputs and scalars
    ErrorModel errorModel = ErrorModel::Pointwise;
};

const std::vector<PointwiseOp> &pointwiseOps();
const PointwiseOp *findPointwiseOp(const std::string &family);

// The family's expression with the given scalar arguments (the defaults where `scalars` is shorter).
Expression pointwiseExpression(const PointwiseOp &op, const std::vector<double> &scalars = {});

// A pointwise family's card at rows x cols: the table's operator, its reference arguments and expression
// at the given scalars.
OperatorCard pointwiseFamilyCard(const PointwiseOp &op, const ShapeBindings &shape, DType dtype, const std::vector<double> &scalars = {});

// The family of cards a problem's fused expression gets: any expression over inputs x0, x1, ...
inline constexpr const char *kPointwiseFamily = "pointwise";

// An argument of a pointwise ATen call: a tensor (as an expression of the inputs) or a scalar (a
// number, bool, string or null).
struct PointwiseArg {
    std::optional<Expression> tensor;
    nlohmann::json scalar;
};

// What aten `op` (qualified, "aten::mul.Tensor") computes per element from its arguments (in schema
// order), or nullopt with the reason when it is not a pointwise operator kforge knows: the activation
// table and the arithmetic (add, sub, rsub, mul, div, neg, reciprocal, pow, square, clamp, maximum,
// minimum, exp, log, log1p, expm1, tanh, sigmoid, erf, sqrt, rsqrt, abs).
std::optional<Expression> pointwiseOfCall(const std::string &op, const std::vector<PointwiseArg> &args, std::string *why = nullptr);

// The table entry a captured call of `op` with these arguments is, with its scalar values; nullopt if none.
struct PointwiseMatch {
    const PointwiseOp *op = nullptr;
    std::vector<double> scalars;
};
std::optional<PointwiseMatch> matchPointwiseOp(const std::string &op, const std::vector<PointwiseArg> &args);

} // namespace kforge
