#pragma once
// libkforge_runtime: loads kforge kernel packs into a libtorch or PyTorch process. Each kernel takes the
// place of its ATen operator in the dispatcher for the calls its guards cover; every other call runs the
// original kernel. Counters per operator say which calls took a pack kernel and why the others fell back.
//
// C++: link libkforge_runtime and call kforge::runtime::loadPack(dir). Python:
//   torch.ops.load_library("libkforge_runtime.so")
//   torch.ops.kforge.load_pack("/path/to/pack")     -> a one-line summary
//   torch.ops.kforge.counters()                     -> JSON, as countersJson()
//   torch.ops.kforge.reset_counters(); torch.ops.kforge.unload_packs()
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kforge::runtime {

// Reads the pack (checksums, format, the device's architecture: core/pack/pack_reader.h), loads every
// kernel and registers it. Throws kforge::Error (a std::runtime_error) with the reason a pack is refused;
// nothing of a refused pack is registered. Returns a summary line.
std::string loadPack(const std::string &dir);
// Removes every pack kernel from the dispatcher: every call runs the original kernels again.
void unloadPacks();

struct OperatorCounters {
    std::string op;         // "aten::_softmax"
    int64_t taken = 0;      // calls a pack kernel ran
    int64_t fellBack = 0;   // calls the original kernel ran
    std::map<std::string, int64_t> why;          // fallbacks by kind: "dtype", "shape", "layout", ...
    std::map<std::string, std::string> example;  // the first fallback of each kind, in words
};
std::vector<OperatorCounters> counters();
// {"aten::_softmax": {"taken": 3, "fell_back": 1, "why": {"shape": 1}, "example": {"shape": "..."}}}
std::string countersJson();
void resetCounters();

} // namespace kforge::runtime
