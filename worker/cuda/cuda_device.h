#pragma once
// The cuda backend's device primitives: NVRTC to a cubin for the device's SM, launched with the driver
// API following the candidate's declarative launch plan, on libtorch tensors; events on the work's
// stream for timing, an L2 flush by reading, graph capture for short kernels. Every rule and every
// step of an evaluation is in worker/pipeline/ and core/guard/.
//
// Device: one worker per GPU. With CUDA_VISIBLE_DEVICES set the worker uses the first visible device;
// otherwise KFORGE_WORKER_SLOT (set by the pool) picks device slot % device count, so a pool of N
// workers on an N-GPU host spreads over the GPUs.
//
// Faults: a kernel that faults (illegal address, trap, misaligned access) leaves the CUDA context
// unusable for the rest of the process. The device then prints "cuda_fault: <error name> ..." to
// stderr and exits at once (status 70). The pool sees the worker die, answers the request with a
// Crashed verdict quoting that line, and starts a fresh worker. A kernel that never finishes is
// stopped the same way by the worker's deadline watchdog (worker/server.cpp).
#include <memory>
#include <string>

#include "worker/pipeline/device.h"

namespace kforge::worker {

// nullptr, with the reason in *whyNot, when there is no usable CUDA device.
std::unique_ptr<Device> makeCudaDevice(std::string *whyNot);

} // namespace kforge::worker
