#pragma once
// The cuda backend: NVRTC to a cubin for the device's SM, launched with the driver API on libtorch
// tensors following the candidate's launch plan, verified against the ATen reference and timed
// against it with device events.
//
// Device: one worker per GPU. With CUDA_VISIBLE_DEVICES set the worker uses the first visible device;
// otherwise KFORGE_WORKER_SLOT (set by the pool) picks device slot % device count, so a pool of N
// workers on an N-GPU host spreads over the GPUs.
//
// Faults: a kernel that faults (illegal address, trap, misaligned access) leaves the CUDA context
// unusable for the rest of the process. The backend then prints "cuda_fault: <error name> ..." to
// stderr and exits at once (status 70). The pool sees the worker die, answers the request with a
// Crashed verdict quoting that line, and starts a fresh worker. Exiting right away is simpler and
// safer than answering first: nothing else runs on a broken context. A kernel that never finishes is
// stopped the same way by the pool's deadline (Timeout).
#include <memory>
#include <string>

#include "worker/backend.h"

namespace kforge::worker {

// nullptr, with the reason in *whyNot, when there is no usable CUDA device.
std::unique_ptr<Backend> makeCudaBackend(std::string *whyNot);

} // namespace kforge::worker
