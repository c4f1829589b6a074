#pragma once
// A card's real inputs, as the workload's first call of its pattern had them (OperatorCard::capturedFile,
// written by profiling as WORKLOAD.samples.pt), shaped to the card's inputs at its captured shape.
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "ops/operator_card.h"

namespace kforge::worker {

// Throws Error saying what is wrong: the file is missing or not TorchScript, a buffer is absent, or a
// tensor's element count or dtype does not fit the card's input.
std::vector<at::Tensor> capturedInputs(const OperatorCard &card, at::Device device);

} // namespace kforge::worker
