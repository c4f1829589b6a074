#pragma once
// A workload's TorchScript model and its inputs, as the worker runs them: for profiling
// (workload_profiler.h) and for running with and without a kernel pack (pack_run.h).
#include <string>
#include <vector>

#include <torch/script.h>

#include "workload/workload_file.h"

namespace kforge::worker {

// Throws Error naming `what` ("the model") and the file when it is not TorchScript libtorch can load.
torch::jit::Module loadModule(const std::string &path, const std::string &what);
// The model's inputs on `device`: the captured tensors i0, i1, ... of the workload, or made from its
// shapes, dtypes and seed; random ones come from the seeded CPU generator, so every device sees the
// same values.
std::vector<c10::IValue> makeModelInputs(const WorkloadFile &w, at::Device device = at::kCPU);
// "cpu", "cuda" or "auto" (cuda where there is one); throws Error for anything else or a missing device.
at::Device profilingDevice(const std::string &name);

} // namespace kforge::worker
