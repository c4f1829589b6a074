#pragma once
// ptxas's resource report, as NVRTC's verbose compile log carries it: the one parser the worker (to
// check a launch plan against its kernels), the compare panel and the LLM prompt all read.
//   ptxas info    : Compiling entry function 'k' for 'sm_90'
//   ptxas info    : Function properties for k
//   ptxas         .     256 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 18 registers, used 1 barriers, 1024 bytes smem, 380 bytes cmem[0]
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kforge {

// What ptxas reported for one entry function.
struct KernelResources {
    std::string name;
    int registers = 0;
    int barriers = 0;
    int64_t sharedBytes = 0; // static shared memory
    int64_t stackBytes = 0;  // stack frame: local memory per thread
    int64_t spillStores = 0;
    int64_t spillLoads = 0;
    int64_t constBytes = 0;
};

// Every entry function of the log, in order; `globalBytes` gets the "N bytes gmem" lines' sum.
std::vector<KernelResources> parsePtxasLog(const std::string &log, int64_t *globalBytes = nullptr);

// The worst of a candidate's kernels: the most registers and static shared memory, spills (stores
// plus loads) summed; nullopt when the log reports no kernel (a CPU candidate, a failed compile).
struct PtxasSummary {
    int kernels = 0;
    int registers = 0;
    int64_t sharedBytes = 0;
    int64_t spillBytes = 0;
};
std::optional<PtxasSummary> summarizePtxasLog(const std::string &log);

} // namespace kforge
