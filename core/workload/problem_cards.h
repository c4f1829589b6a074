#pragma once
// A KernelBench-style problem is one card whose reference is the problem's whole forward (its TorchScript
// module, run by the worker), so a candidate may fuse whatever the forward chains: `x * sigmoid(x)` is one
// kernel, an RMSNorm written as five ATen calls is one kernel.
//
// The problem is offered to every template family whose signature fits: the family's card at the
// problem's shape (the first input flattened to rows x cols; for a family over a middle dimension, viewed
// as [outer, dim, inner] around each of its dimensions in turn; for instance norm, as [n, c, hw]) must take
// as many inputs and give as many outputs as the problem, each with the problem's element count and dtype.
// A dim family's card around dimension d is keyed ".d<d>"; at inner 1 it is left to its last-dimension
// family where that one fits. Each fitting family gets its own card, whose reference is still the whole
// forward, so `x * sigmoid(x)` meets the SiLU, GELU, ReLU, ... templates and the guard decides
// which compute the same function. Only families of the forward's element flow are offered, read from
// its operators' names: pointwise families to a forward of pointwise calls, scan families to one with a
// cumulative operator, the others (reductions, norms, softmax, losses) to one that reduces, none to one
// that contracts (a linear layer, a matmul, a convolution: a model's block). A generic
// card (one shape symbol per dimension, no family) is there for the LLM proposer.
//
// The reference is "kforge::module" with arguments [{"module": "/abs/problem.pt"}, {"shapes": [[..], ..]}]:
// the module file and the shapes its inputs had when captured. The worker reshapes a card's inputs to those
// shapes when the element counts agree (a held-out shape of a 2-D problem runs as it is).
#include <optional>
#include <string>
#include <vector>

#include "ops/operator_card.h"
#include "workload/pointwise_fusion.h"
#include "workload/workload_file.h"

namespace kforge {

inline constexpr const char *kModuleReference = "kforge::module";

struct ProblemSignature {
    std::string name;       // the problem's name ("silu_mul")
    std::string modulePath; // absolute path of its TorchScript module
    std::string source;     // the problem file's text ("" when unknown): its cards' definition
    std::vector<TensorMeta> inputs, outputs;
    // The traced forward (empty when unknown): a chain of pointwise calls on inputs of the output's shape
    // also gets one "pointwise" card whose expression is the chain (core/workload/pointwise_fusion.h).
    TracedGraph graph;
};

// Why the problem cannot have cards ("" when it can): an input that is not a floating tensor, or an output
// neither floating nor int64 indices.
std::string problemCardsUnfit(const ProblemSignature &sig);

// The generic whole-forward card (family "").
OperatorCard wholeForwardCard(const ProblemSignature &sig);

// "" when the family's card fits the problem's signature, else why not ("2 inputs, the problem has 1").
std::string familyMismatch(const std::string &family, const ProblemSignature &sig);

// One card per fitting family, the whole forward as each one's reference; and the fused pointwise card.
std::vector<OperatorCard> familyCardsForProblem(const ProblemSignature &sig);

// The fused pointwise card (family "pointwise", inputs x0, x1, ... flattened to rows x cols), or nullopt
// with why not: the forward is not a chain of pointwise calls, or its tensors differ in shape or dtype.
std::optional<OperatorCard> pointwiseProblemCard(const ProblemSignature &sig, std::string *why = nullptr);

bool isProblemCard(const OperatorCard &card);

} // namespace kforge
