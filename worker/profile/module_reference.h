#pragma once
// The reference of a problem card (core/workload/problem_cards.h): the problem's whole forward, its
// TorchScript module run on the card's inputs. The module is loaded once per file, dtype and device (the
// float64 reference runs a float64 copy) and its outputs are shaped as the card's.
#include <ATen/ATen.h>
#include <vector>

#include "ops/operator_card.h"

namespace kforge::worker {

std::vector<at::Tensor> callModuleReference(const OperatorCard &card, const std::vector<at::Tensor> &inputs);

} // namespace kforge::worker
