#pragma once
// The CUDA device's one-pass harness kernels (harness_passes.cu), behind pipeline/fast_passes.h: each
// pass is one kernel over the tensor, leaving one partial result per block, which the host adds in
// block order after one copy back. No torch here: the device hands in its stream.
#include <cuda.h>
#include <functional>
#include <mutex>
#include <string>

#include "worker/cuda/cuda_driver.h"
#include "worker/pipeline/fast_passes.h"

namespace kforge::worker {

class NvrtcCompiler;

// The kernels' source, compiled into the worker (generated from harness_passes.cu at build time).
extern const char *const kHarnessPassesSource;

class CudaHarnessPasses final : public FastPasses {
public:
    // Compiles and loads the kernels for `arch`; throws Error when they do not compile or load.
    CudaHarnessPasses(NvrtcCompiler &compiler, const std::string &arch, int sms, std::function<CUstream()> stream);
    ~CudaHarnessPasses() override;

    void fill(void *data, int64_t n, PassElem type, uint64_t seed) override;
    int64_t countPattern(const void *data, int64_t n, PassElem type, uint64_t seed) override;
    int64_t countChanged(const void *a, const void *b, int64_t n, int elemBytes) override;
    int64_t fingerprint(const void *data, int64_t n, int elemBytes) override;
    FirstCount exactMismatches(const PassOperands &ops) override;
    NonFiniteScan nonFinite(const PassOperands &ops) override;
    UnitScan units(const PassOperands &ops, const UnitRule &rule) override;
    int64_t countOver(const PassOperands &ops, const UnitRule &rule, double allowedUnits) override;

private:
    unsigned blocksFor(int64_t n) const;
    void launch(CUfunction f, unsigned blocks, void **args, const char *what);
    // Copies `bytes` of the partials back (waiting for the kernel before it on the stream).
    void readBack(void *host, size_t bytes, const char *what);
    uint64_t sumPartials(unsigned blocks, const char *what);

    cudadrv::Module m_module;
    CUfunction m_fill = nullptr, m_countPattern = nullptr, m_countChanged = nullptr, m_fingerprint = nullptr;
    CUfunction m_exact = nullptr, m_nonFinite = nullptr, m_units = nullptr, m_over = nullptr;
    unsigned m_maxBlocks = 0;
    std::function<CUstream()> m_stream;
    CUdeviceptr m_partials = 0; // m_maxBlocks x 3 doubles, then m_maxBlocks x 2 int64
    std::mutex m_mutex; // one pass at a time uses the partials
};

} // namespace kforge::worker
