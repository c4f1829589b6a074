#pragma once
// Thin helpers over the CUDA driver API for the cuda backend: device facts, modules from cubins,
// launching a resolved launch plan with checked arguments, and CUDA graphs of those launches. No torch
// here; the backend hands in device pointers and the stream.
#include <cuda.h>
#include <string>
#include <vector>

#include "util/error.h"
#include "worker/cuda/launch_plan.h"

namespace kforge::worker::cudadrv {

// "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)"
std::string errorName(CUresult r);
// Errors after which the context is unusable: the process must exit to recover the device.
bool isSticky(CUresult r);

class DriverError : public Error {
public:
    DriverError(CUresult code, const std::string &what) : Error(what + ": " + errorName(code)), code(code) {}
    CUresult code;
};
void check(CUresult r, const std::string &what);

struct DeviceInfo {
    int index = 0;
    CUdevice device = 0;
    std::string name;
    int major = 0, minor = 0;
    int sms = 0;
    size_t memoryBytes = 0;
    int l2Bytes = 0;
    DeviceLimits limits;
    std::string arch() const { return "sm_" + std::to_string(major) + std::to_string(minor); }
};
DeviceInfo queryDevice(int index);

struct KernelAttributes {
    int maxThreadsPerBlock = 0; // given its registers
    int staticShared = 0;
    int registers = 0;
    int localBytes = 0;
    std::vector<size_t> paramSizes; // empty when the driver cannot say
};

class Module {
public:
    Module() = default;
    ~Module();
    Module(const Module &) = delete;
    Module &operator=(const Module &) = delete;
    CUresult load(const std::string &cubin);
    CUfunction function(const std::string &name) const; // nullptr when the module has none by that name
    KernelAttributes attributes(CUfunction f) const;

private:
    CUmodule m_module = nullptr;
};

// Checks each kernel of the plan against its function: parameter count and sizes, threads per block
// given its registers, shared memory (raising the dynamic limit where the plan asks for more than the
// default). Throws Error naming the kernel and the problem.
void checkAgainstFunctions(const ResolvedPlan &plan, const std::vector<CUfunction> &functions, const Module &module,
                           const DeviceLimits &limits);

struct PlanPointers {
    std::vector<CUdeviceptr> inputs, outputs, workspace;
};

// Launches every kernel of the plan in order on `stream`; on a launch error returns it and names the
// kernel in *failed.
CUresult launchPlan(const ResolvedPlan &plan, const std::vector<CUfunction> &functions, const PlanPointers &ptrs,
                    CUstream stream, std::string *failed = nullptr);

// An instantiated graph of one launch of the plan, captured on `stream` (which must not be the legacy
// default stream).
class Graph {
public:
    Graph() = default;
    ~Graph();
    Graph(const Graph &) = delete;
    Graph &operator=(const Graph &) = delete;
    CUresult capture(const ResolvedPlan &plan, const std::vector<CUfunction> &functions, const PlanPointers &ptrs, CUstream stream);
    CUresult launch(CUstream stream) const { return cuGraphLaunch(m_exec, stream); }
    bool valid() const { return m_exec != nullptr; }

private:
    CUgraph m_graph = nullptr;
    CUgraphExec m_exec = nullptr;
};

} // namespace kforge::worker::cudadrv
