#pragma once
// Compiles CUDA C++ candidates to a cubin for one GPU architecture with NVRTC, after the static checks
// (source_checks.h), with ptxas's resource report parsed per kernel. Builds are cached on disk by a
// hash of source, options, architecture and NVRTC version. No torch and no GPU needed: this builds and
// runs wherever the toolkit's NVRTC is.
#include <string>
#include <vector>

#include "protocol/ptxas_log.h"
#include "protocol/verdict.h"
#include "worker/cuda/source_checks.h"

namespace kforge::worker {

struct CudaBuild {
    CompileReport report;           // ok, cached, millis, log, target ("sm_90")
    std::string cubin;              // when report.ok
    std::string ptx;
    std::vector<KernelResources> kernels;
    int64_t globalBytes = 0;        // "N bytes gmem": module-scope device variables
    std::vector<StaticFinding> findings; // non-empty: rejected by a static check (report.ok is false)
};

// parsePtxasLog (protocol/ptxas_log.h) reads a build's log into its kernels.
const KernelResources *findKernel(const CudaBuild &build, const std::string &name);

class NvrtcCompiler {
public:
    // cacheDir empty: $KFORGE_CACHE_DIR/cuda, else ~/.cache/kforge/cuda.
    explicit NvrtcCompiler(std::string cacheDir = {});
    // arch: "sm_90". staticChecks false only for tests of the compiler itself.
    CudaBuild compile(const std::string &source, const std::string &arch, bool staticChecks = true);
    std::vector<std::string> options(const std::string &arch) const;
    const std::string &cacheDir() const { return m_cacheDir; }
    static std::string version(); // "13.0"

private:
    std::string m_cacheDir;
    std::string m_include; // the toolkit's include folder, for cuda_fp16.h and friends
};

} // namespace kforge::worker
