#pragma once
// Static checks on CUDA candidates, run before compiling (on the source, with line numbers) and after
// (on the PTX, which macros cannot disguise). Each finding rejects the candidate:
//  - device_launch: a kernel launched from device code (`<<<`, cudaLaunch*, cudaGraphLaunch). Work
//    launched there escapes the timed region and the verification of the plan.
//  - clock_read: clock(), clock64(), %clock, %globaltimer. A kernel that reads time can behave
//    differently when measured. __nanosleep is allowed.
//  - device_global: a mutable variable in device memory that outlives a launch (a `__device__` or
//    `__managed__` variable at namespace scope that is not const, or a `static` local in a device
//    function). A kernel could cache its last result there and replay it; workspaces in the launch
//    plan are the way to keep state within one evaluation.
#include <set>
#include <string>
#include <vector>

namespace kforge::worker {

struct StaticFinding {
    std::string check; // device_launch, clock_read, device_global
    int line = 0;      // 1-based in the source; 0 when found in the PTX
    std::string message;
};

struct SourceScan {
    std::vector<StaticFinding> findings;
    std::set<std::string> constGlobals; // namespace-scope `__device__ const` names, allowed in the PTX
};

SourceScan scanSource(const std::string &source);
std::vector<StaticFinding> scanPtx(const std::string &ptx, const std::set<std::string> &constGlobals);
// "line 12: device_global: ..." lines, for a verdict's message.
std::string describeFindings(const std::vector<StaticFinding> &findings);

} // namespace kforge::worker
