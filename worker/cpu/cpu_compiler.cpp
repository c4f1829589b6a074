#include "worker/cpu/cpu_compiler.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

#include "protocol/cpu_abi.h"
#include "util/hash.h"
#include "util/paths.h"

namespace kforge::worker {

namespace fs = std::filesystem;

int runCapture(const std::string &command, std::string &output)
{
    FILE *p = ::popen((command + " 2>&1").c_str(), "r");
    if (!p)
        return -1;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
        output.append(buf, n);
    const int status = ::pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

CpuCompiler::CpuCompiler()
{
    const char *cxx = std::getenv("CXX");
    m_compiler = cxx && *cxx ? cxx : "c++";
    m_cacheDir = kforge::cacheDir("cpu");
}

std::string CpuCompiler::flags() const
{
    return "-std=c++17 -O3 -march=native -fno-math-errno -fopenmp-simd -shared -fPIC";
}

CpuBuild CpuCompiler::compile(const std::string &source)
{
    CpuBuild b;
    b.report.target = m_compiler + " " + flags();
    const std::string full = std::string(kCpuAbiPreamble) + source;
    const std::string key = contentHash(full + "\n" + b.report.target);
    const fs::path so = fs::path(m_cacheDir) / (key + ".so");
    const fs::path log = fs::path(m_cacheDir) / (key + ".log");
    const auto start = std::chrono::steady_clock::now();
    if (fs::exists(so)) {
        b.report.ok = true;
        b.report.cached = true;
        std::ifstream in(log);
        b.report.log.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        b.sharedObject = so.string();
        return b;
    }
    // Build under a private name, then rename: workers sharing the cache never see half a file.
    const std::string tag = "." + std::to_string(::getpid());
    const fs::path src = fs::path(m_cacheDir) / (key + tag + ".cpp");
    const fs::path tmp = fs::path(m_cacheDir) / (key + tag + ".so");
    {
        std::ofstream out(src);
        out << full;
    }
    std::string output;
    const int rc = runCapture(m_compiler + " " + flags() + " -o '" + tmp.string() + "' '" + src.string() + "'", output);
    b.report.millis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    b.report.log = output;
    std::error_code ec;
    fs::remove(src, ec);
    if (rc != 0 || !fs::exists(tmp)) {
        if (b.report.log.empty())
            b.report.log = "the compiler '" + m_compiler + "' exited with status " + std::to_string(rc);
        fs::remove(tmp, ec);
        return b;
    }
    {
        std::ofstream out(log);
        out << output;
    }
    fs::rename(tmp, so, ec);
    b.report.ok = !ec;
    if (ec)
        b.report.log += "\ncannot place the compiled object in the cache: " + ec.message();
    b.sharedObject = so.string();
    return b;
}

} // namespace kforge::worker
