#pragma once
// The forward graph of a problem's TorchScript module as core's fusion reads it
// (core/workload/pointwise_fusion.h): submodule calls inlined, constants read as numbers.
#include <torch/script.h>

#include "workload/pointwise_fusion.h"

namespace kforge::worker {

// Never throws: what it cannot read is the graph's `unreadable` reason.
TracedGraph tracedGraphOf(torch::jit::Module &module);

} // namespace kforge::worker
