#pragma once
// A problem's traced forward as the fusion reads it, and the one expression a chain of pointwise ATen
// calls computes: `x * sigmoid(x)`, MinGPT's tanh-GELU written as eight ATen calls. The worker reads the
// graph from the problem's TorchScript module (worker/profile/traced_graph.cpp); the rules that turn
// each call into an expression are core/ops/pointwise_ops.h's.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ops/expression.h"

namespace kforge {

// A value a node reads: the forward's input `index`, node `index`'s output, or a constant (a number,
// bool, string or null; a one-element tensor constant is its number).
struct TracedValue {
    enum class From { Input, Node, Constant } from = From::Constant;
    int index = 0;
    nlohmann::json constant;
};

struct TracedNode {
    std::string op; // qualified: "aten::mul.Tensor"
    std::vector<TracedValue> inputs;
};

struct TracedGraph {
    std::vector<TracedNode> nodes; // in order; a node reads only earlier nodes
    std::vector<TracedValue> outputs;
    // Why the worker could not describe the graph ("" when it could): a node with no schema, a call of a
    // submodule it could not inline, a constant it could not read.
    std::string unreadable;
};

// The expression over `inputNames` (one per forward input) that the graph's single output is, or
// nullopt with why not: a node that is not pointwise, more than one output, an output that is an input.
std::optional<Expression> fusePointwiseGraph(const TracedGraph &g, const std::vector<std::string> &inputNames, std::string *why = nullptr);

} // namespace kforge
