#pragma once
// A workload's TorchScript model and its inputs, as the worker runs them: for profiling
// (workload_profiler.h) and for running with and without a kernel pack (pack_run.h).
#include <string>
#include <vector>

#include <torch/script.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include "workload/workload_file.h"

namespace kforge::worker {

// Throws Error naming `what` ("the model") and the file when it is not TorchScript libtorch can load.
torch::jit::Module loadModule(const std::string &path, const std::string &what);
// The model's inputs on `device`: the captured tensors i0, i1, ... of the workload, or made from its
// shapes, dtypes and seed; random ones come from the seeded CPU generator, so every device sees the
// same values.
std::vector<c10::IValue> makeModelInputs(const WorkloadFile &w, at::Device device = at::kCPU);
// While alive, TorchScript runs a model the way eager PyTorch does: no graph optimization and no fusion
// groups, so every ATen call of the model reaches the dispatcher as written. Profiling runs this way,
// and `run --compare` by default, so the time a pack saves is measured on the same calls the profile saw.
class AsWrittenExecution {
public:
    AsWrittenExecution();
    ~AsWrittenExecution();
    AsWrittenExecution(const AsWrittenExecution &) = delete;
    AsWrittenExecution &operator=(const AsWrittenExecution &) = delete;

private:
    torch::jit::GraphOptimizerEnabledGuard m_plain{false};
    bool m_fuserWas;
};

// "cpu", "cuda" or "auto" (cuda where there is one); throws Error for anything else or a missing device.
at::Device profilingDevice(const std::string &name);

} // namespace kforge::worker
