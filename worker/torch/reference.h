#pragma once
// The libtorch side of evaluation shared by every backend: inputs from a card, and the reference
// result computed by the ATen operator itself, called through the dispatcher by its schema name.
#include <ATen/ATen.h>
#include <vector>

#include "ops/operator_card.h"
#include "worker/torch/checks.h"

namespace kforge::worker {

at::ScalarType scalarType(DType t);
std::string shapeString(const OperatorCard &card, const ShapeBindings &shape);
// Fresh random inputs (normal, times scale) for every input of the card.
// `special` names one of the card's specialInputs to apply to the first input.
std::vector<at::Tensor> makeInputs(const OperatorCard &card, const ShapeBindings &shape, double scale, at::Device device,
                                   const std::string &special = {});
// Empty output tensors of the card's shapes and dtypes.
std::vector<at::Tensor> makeOutputs(const OperatorCard &card, const ShapeBindings &shape, at::Device device);
// Calls the card's ATen operator on `inputs`; throws Error when this libtorch does not know it. Shape
// symbols in the arguments come from `shape` when given, else from the inputs' sizes and the card.
std::vector<at::Tensor> callReference(const OperatorCard &card, const std::vector<at::Tensor> &inputs,
                                      const ShapeBindings *shape = nullptr);

// The card's reference computed in float64 from `inputs` (floating inputs promoted) on `where`, with
// what the card's error model needs beside it (for `sum`: the same operation over |inputs|).
std::vector<Reference64> callReference64(const OperatorCard &card, const std::vector<at::Tensor> &inputs, const ShapeBindings &shape,
                                         at::Device where);
// Bytes callReference64 needs on its device for these inputs.
int64_t reference64Bytes(const OperatorCard &card, const ShapeBindings &shape);

} // namespace kforge::worker
