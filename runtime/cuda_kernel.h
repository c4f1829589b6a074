#pragma once
// A CUDA pack kernel: its cubin loaded with the driver API on each device it is called on (in PyTorch's
// primary context), its launch plan (worker/cuda/launch_plan.h) evaluated at the call's shape symbols,
// workspaces taken from PyTorch's caching allocator, and the kernels launched on the current stream.
// Built only where libtorch has CUDA (KFORGE_RUNTIME_CUDA).
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "pack/manifest.h"
#include "runtime/guard.h"
#include "worker/cuda/cuda_driver.h"
#include "worker/cuda/launch_plan.h"

namespace kforge::runtime {

// "sm_90" for the current CUDA device; "" when the process has none (no driver, no device).
std::string cudaArchOfCurrentDevice();

class CudaKernel {
public:
    // Throws Error when the launch plan does not parse against the kernel's tensors or the cubin
    // cannot be read.
    CudaKernel(const pack::PackKernel &spec, const std::string &cubinPath);
    ~CudaKernel();
    // False when the plan cannot run at this shape on this device, or a launch failed to start: the
    // caller then runs the original kernel. Throws c10::Error after a sticky CUDA error.
    bool launch(const std::vector<const at::Tensor *> &inputs, const std::vector<const at::Tensor *> &outputs, const Guard &guard,
                const Binding &b) const;

private:
    struct OnDevice {
        worker::cudadrv::DeviceInfo info;
        std::unique_ptr<worker::cudadrv::Module> module;
        std::vector<CUfunction> functions;
        CUcontext context = nullptr;
    };
    const OnDevice *onDevice(int index) const;

    OperatorCard m_card; // the kernel's tensors in the terms the plan names them
    worker::LaunchPlan m_plan;
    std::string m_cubin;
    std::string m_key;
    mutable std::mutex m_mutex;
    mutable std::map<int, std::unique_ptr<OnDevice>> m_devices;
};

} // namespace kforge::runtime
