#pragma once
// A CPU pack kernel: the pack's shared object, loaded with dlopen, its `kforge_entry` called on the
// tensors' data through the CPU ABI (core/protocol/cpu_abi.h). An exported pack is code the user
// accepted and asked to run, so unlike a candidate it runs in the caller's process, on its thread.
// No torch here.
#include <cstdint>
#include <string>
#include <vector>

namespace kforge::runtime {

// The CPU ABI's kf_tensor, as kCpuAbiPreamble declares it to the kernel.
struct KfTensor {
    void *data;
    int32_t dtype;
    int32_t ndim;
    int64_t sizes[8];
    int64_t strides[8];
};

class CpuKernel {
public:
    // Throws Error naming the file and what dlopen or dlsym said.
    explicit CpuKernel(const std::string &sharedObject);
    ~CpuKernel();
    CpuKernel(const CpuKernel &) = delete;
    CpuKernel &operator=(const CpuKernel &) = delete;

    // kforge_symbol(name) answers from `names`/`values` while the kernel runs on this thread.
    int call(const KfTensor *inputs, int nInputs, KfTensor *outputs, int nOutputs, const std::vector<std::string> *names,
             const int64_t *values) const;

private:
    using Entry = int (*)(const KfTensor *, int, KfTensor *, int);
    void *m_handle = nullptr;
    Entry m_entry = nullptr;
};

} // namespace kforge::runtime
