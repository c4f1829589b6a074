#pragma once
#include <memory>

#include "worker/backend.h"

namespace kforge::worker {

// Compiles C++ candidates with the system compiler, loads them, verifies them against the libtorch
// reference on fresh inputs and benchmarks them interleaved with it.
std::unique_ptr<Backend> makeCpuBackend();

} // namespace kforge::worker
