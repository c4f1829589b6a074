#include "worker/cuda/nvrtc_compiler.h"

#include <chrono>
#include <future>
#include <cstdlib>
#include <filesystem>
#include <nvrtc.h>
#include <unistd.h>

#include "util/hash.h"
#include "util/files.h"
#include "util/paths.h"

#ifndef KFORGE_CUDA_INCLUDE_DIR
#define KFORGE_CUDA_INCLUDE_DIR "/usr/local/cuda/include"
#endif

namespace kforge::worker {

namespace fs = std::filesystem;

namespace {

double millisSince(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

const KernelResources *findKernel(const CudaBuild &build, const std::string &name)
{
    for (const auto &k : build.kernels)
        if (k.name == name)
            return &k;
    return nullptr;
}

NvrtcCompiler::NvrtcCompiler(std::string cacheDir) : m_cacheDir(std::move(cacheDir))
{
    if (m_cacheDir.empty())
        m_cacheDir = kforge::cacheDir("cuda");
    std::error_code ec;
    fs::create_directories(m_cacheDir, ec);
    // Candidates may include the toolkit's device headers (cuda_fp16.h, cuda_bf16.h); NVRTC needs
    // their folder named. CUDA_HOME wins over the folder found at build time.
    for (const char *env : {"CUDA_HOME", "CUDA_PATH"})
        if (const char *root = std::getenv(env); root && *root && fs::exists(fs::path(root) / "include" / "cuda_fp16.h")) {
            m_include = (fs::path(root) / "include").string();
            break;
        }
    if (m_include.empty() && fs::exists(fs::path(KFORGE_CUDA_INCLUDE_DIR) / "cuda_fp16.h"))
        m_include = KFORGE_CUDA_INCLUDE_DIR;
}

std::string NvrtcCompiler::version()
{
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    return std::to_string(major) + "." + std::to_string(minor);
}

std::vector<std::string> NvrtcCompiler::options(const std::string &arch) const
{
    // -lineinfo costs nothing at run time and lets compute-sanitizer name source lines.
    std::vector<std::string> o = {"--gpu-architecture=" + arch, "--std=c++17", "--ptxas-options=-v", "-lineinfo"};
    if (!m_include.empty())
        o.push_back("-I" + m_include);
    return o;
}

CudaBuild NvrtcCompiler::compile(const std::string &source, const std::string &arch, bool staticChecks)
{
    CudaBuild b;
    b.report.target = arch;
    const auto start = std::chrono::steady_clock::now();
    SourceScan scan;
    if (staticChecks) {
        scan = scanSource(source);
        if (!scan.findings.empty()) {
            b.findings = scan.findings;
            b.report.log = describeFindings(b.findings);
            b.report.millis = millisSince(start);
            return b;
        }
    }
    const auto opts = options(arch);
    std::string key = source + "\n//";
    for (const auto &o : opts)
        key += " " + o;
    key += "\n// nvrtc " + version();
    const std::string hash = contentHash(key);
    const fs::path base = fs::path(m_cacheDir) / hash;
    const fs::path cubinPath = base.string() + ".cubin", logPath = base.string() + ".log", ptxPath = base.string() + ".ptx";

    const fs::path sumPath = base.string() + ".sum";
    if (fs::exists(cubinPath) && fs::exists(ptxPath)) {
        b.cubin = readWholeFile(cubinPath.string());
        b.ptx = readWholeFile(ptxPath.string());
        b.report.log = readWholeFile(logPath.string());
        // An entry is used only when its objects are the ones this compiler wrote.
        b.report.cached = !b.cubin.empty() && readWholeFile(sumPath.string()) == contentHash(b.cubin + "\n" + b.ptx);
        if (!b.report.cached) {
            b.cubin.clear();
            b.ptx.clear();
        }
    }
    // Again with the candidate's macros expanded: `#define DEV __device__` hides nothing. Only before a
    // real compile (a cache entry exists only for a source that passed), and beside NVRTC, whose result
    // is dropped if the scan finds something.
    std::future<std::vector<StaticFinding>> expandedScan;
    if (!b.report.cached && staticChecks)
        expandedScan = std::async(std::launch::async, [&source] {
            auto found = scanSource(expandMacros(source)).findings;
            for (auto &f : found) {
                f.line = 0;
                f.message += " (after macro expansion)";
            }
            return found;
        });
    auto expandedFindings = [&] {
        if (expandedScan.valid())
            b.findings = expandedScan.get();
        if (b.findings.empty())
            return false;
        b.report.ok = false;
        b.cubin.clear();
        b.report.log = describeFindings(b.findings);
        b.report.millis = millisSince(start);
        return true;
    };
    if (!b.report.cached) {
        nvrtcProgram prog = nullptr;
        if (nvrtcCreateProgram(&prog, source.c_str(), "candidate.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) {
            b.report.log = "nvrtcCreateProgram failed";
            b.report.millis = millisSince(start);
            return b;
        }
        std::vector<const char *> argv;
        for (const auto &o : opts)
            argv.push_back(o.c_str());
        const nvrtcResult rc = nvrtcCompileProgram(prog, int(argv.size()), argv.data());
        size_t n = 0;
        nvrtcGetProgramLogSize(prog, &n);
        std::string log(n, '\0');
        if (n)
            nvrtcGetProgramLog(prog, log.data());
        while (!log.empty() && log.back() == '\0')
            log.pop_back();
        constexpr size_t kMaxLog = 64 << 10;
        if (log.size() > kMaxLog)
            log = log.substr(0, kMaxLog) + "\n... (the compile log was cut at 64 KiB of " + std::to_string(log.size()) + " bytes)";
        b.report.log = log;
        if (rc == NVRTC_SUCCESS) {
            size_t cs = 0, ps = 0;
            nvrtcGetCUBINSize(prog, &cs);
            nvrtcGetPTXSize(prog, &ps);
            b.cubin.assign(cs, '\0');
            b.ptx.assign(ps, '\0');
            if (cs)
                nvrtcGetCUBIN(prog, b.cubin.data());
            if (ps)
                nvrtcGetPTX(prog, b.ptx.data());
            while (!b.ptx.empty() && b.ptx.back() == '\0')
                b.ptx.pop_back();
        } else if (b.report.log.empty()) {
            b.report.log = nvrtcGetErrorString(rc);
        }
        nvrtcDestroyProgram(&prog);
        if (expandedFindings())
            return b;
        if (rc != NVRTC_SUCCESS || b.cubin.empty()) {
            b.report.millis = millisSince(start);
            return b;
        }
        tryWriteFileAtomically(logPath.string(), b.report.log);
        tryWriteFileAtomically(ptxPath.string(), b.ptx);
        tryWriteFileAtomically(sumPath.string(), contentHash(b.cubin + "\n" + b.ptx));
        tryWriteFileAtomically(cubinPath.string(), b.cubin); // last: its presence marks a complete entry
    }
    b.kernels = parsePtxasLog(b.report.log, &b.globalBytes);
    if (staticChecks) {
        b.findings = scanPtx(b.ptx);
        if (!b.findings.empty()) {
            b.report.log += (b.report.log.empty() ? "" : "\n") + describeFindings(b.findings);
            b.report.millis = millisSince(start);
            return b;
        }
    }
    b.report.ok = true;
    b.report.millis = millisSince(start);
    return b;
}

} // namespace kforge::worker
