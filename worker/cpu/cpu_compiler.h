#pragma once
// Compiles a CPU candidate (the ABI preamble plus its source) into a shared object with the system
// C++ compiler, cached by a hash of source, flags and compiler.
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

private:
    std::string m_compiler;
    std::string m_cacheDir;
};

// Runs a command line, capturing stdout and stderr together; returns the exit status (-1 if it could
// not run).
int runCapture(const std::string &command, std::string &output);

} // namespace kforge::worker
