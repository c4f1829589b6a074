#pragma once
// Static checks on CUDA candidates, run before compiling (on the source, with line numbers) and after
// (on the PTX, which macros cannot disguise). Each finding rejects the candidate:
//  - device_launch: a kernel launched from device code (`<<<`, cudaLaunch*, cudaGraphLaunch). Work
//    launched there escapes the timed region and the verification of the plan.
//  - clock_read: clock(), clock64(), %clock, %globaltimer. A kernel that reads time can behave
//    differently when measured. __nanosleep is allowed.
//  - device_global: a variable in global memory that outlives a launch (a `__device__` or `__managed__`
//    variable at namespace scope, const or not, since a cast writes a const one; a `static` local in
//    a device function; in the PTX, any module-scope .global variable, whatever macro declared it). A
//    kernel could cache its last result there and replay it; workspaces in the launch plan are the way
//    to keep state within one evaluation, __constant__ memory the way to keep read-only tables.
//  - include: an #include of anything but the toolkit's device headers (a candidate is one file, and
//    an include of a host file would put that file into the compile log).
// The source checks run twice: on the source as written (with line numbers) and on it with its own
// macros expanded by the host preprocessor, so `#define DEV __device__` hides nothing.
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
};

SourceScan scanSource(const std::string &source);
// The source with its own macros expanded (its #include lines left out) by the host's C preprocessor;
// empty, with the reason in *why, when there is none.
std::string expandMacros(const std::string &source, std::string *why = nullptr);
std::vector<StaticFinding> scanPtx(const std::string &ptx);
// "line 12: device_global: ..." lines, for a verdict's message.
std::string describeFindings(const std::vector<StaticFinding> &findings);

} // namespace kforge::worker
