#pragma once
// What an operator computes, written as PyTorch code, for a reader who knows ATen but not kforge: the
// composite and fused operators of the kforge namespace (their definitions are the chains the worker's
// reference and runtime/fused_ops run) and a card with a per-element expression. An LLM proposer is
// told this beside the schema; a name such as kforge::scaled_masked_softmax_native_div says too little.
#include <string>

#include "ops/operator_card.h"

namespace kforge {

// "" for an ATen operator without an expression (its name says what it computes) and for a scan, whose
// schema carries its definition (core/ops/scan_ops.cpp).
std::string operatorMeaning(const OperatorCard &card);

// What a search's baseline runs, as comment lines for a code view: ATen's operator through the
// dispatcher, kforge's reference chain of ATen calls with its meaning, or a problem's whole forward with
// its program.
std::string baselineComment(const OperatorCard &card);

} // namespace kforge
