#pragma once
// Compiles a CPU candidate (the ABI preamble plus its source) into a shared object with the system
// C++ compiler, run inside a bubblewrap jail: no network, an empty environment, a read-only file
// system but its private build folder (so `#include "/etc/passwd"` finds nothing), its log capped.
// Only this side writes the compile cache (keyed by a hash of source, flags and compiler); each entry
// records the SHA-256 of its object, checked before every use: a mismatch is discarded and rebuilt.
#include <string>

#include "protocol/verdict.h"

namespace kforge::worker {

struct CpuBuild {
    CompileReport report;
    std::string sharedObject; // path, when report.ok
};

class CpuCompiler {
public:
    CpuCompiler(); // compiler from $CXX (default c++), cache under $KFORGE_CACHE_DIR or ~/.cache/kforge
    CpuBuild compile(const std::string &source);
    const std::string &cacheDir() const { return m_cacheDir; }
    std::string flags() const;
    static constexpr size_t kLogCap = 64 * 1024;   // compiler output kept in the report
    static constexpr int kTimeoutMs = 120000;      // one compile
    static constexpr int64_t kMemoryBytes = int64_t(4) << 30; // RLIMIT_DATA of the compiler
    static constexpr int64_t kFileBytes = int64_t(256) << 20; // largest file the compiler may write

private:
    std::string m_compiler; // as configured
    std::string m_cacheDir;
};

// Runs a command line, capturing stdout and stderr together; returns the exit status (-1 if it could
// not run). For trusted tools only (ncu): it runs unconfined.
int runCapture(const std::string &command, std::string &output);

} // namespace kforge::worker
