#pragma once
// The CPU backend's device primitives (pipeline/device.h). A candidate is compiled in a jail and run in
// another: kforge-cpu-runner under bubblewrap and seccomp (worker/sandbox/jail.h), never in the worker.
// Its tensors live in an arena shared with that jail; nothing else of the worker is mapped there.
#include <memory>
#include <string>

#include "worker/pipeline/device.h"

namespace kforge::worker {

// VerdictStatus::Error's reason when the sandbox itself cannot run here (bwrap or the runner missing,
// no user namespaces): the worker's fault, not the candidate's.
inline constexpr const char *kSandboxUnavailable = "sandbox_unavailable";

struct CpuDeviceOptions {
    int64_t memoryBytes = int64_t(2) << 30;  // a candidate's own memory (RLIMIT_DATA), beside the arena
    int cpuSeconds = 600;                    // CPU time over a jail's life (a backstop: the deadline comes first)
    int64_t scratchBytes = int64_t(64) << 20; // its private /tmp, and its largest file
};

// The CPU device, or null with *whyNot saying what is missing (bubblewrap, kforge-cpu-runner, user
// namespaces or seccomp on this kernel): there is no unconfined fallback.
std::unique_ptr<Device> makeCpuDevice(std::string *whyNot, const CpuDeviceOptions &options = {});

} // namespace kforge::worker
