#include "worker/cpu/cpu_compiler.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "protocol/cpu_abi.h"
#include "util/hash.h"
#include "util/files.h"
#include "util/paths.h"
#include "worker/sandbox/jail.h"
#include "util/sha256.h"

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

namespace {

// The compiler as a real path (the jail has no /etc/alternatives), searched on PATH like a shell would.
std::string resolveCompiler(const std::string &name)
{
    std::error_code ec;
    if (name.find('/') != std::string::npos)
        return fs::exists(name, ec) ? fs::canonical(name, ec).string() : std::string();
    const char *path = std::getenv("PATH");
    std::stringstream dirs(path && *path ? path : "/usr/bin:/bin");
    for (std::string dir; std::getline(dirs, dir, ':');) {
        if (dir.empty())
            continue;
        const fs::path p = fs::path(dir) / name;
        if (::access(p.c_str(), X_OK) == 0)
            return fs::canonical(p, ec).string();
    }
    return {};
}

struct Scratch {
    fs::path dir;
    Scratch()
    {
        std::string tmpl = (fs::temp_directory_path() / "kforge-cc-XXXXXX").string();
        if (::mkdtemp(tmpl.data()))
            dir = tmpl;
    }
    ~Scratch()
    {
        if (!dir.empty())
            removeTree(dir); // not fs::remove_all: see util/paths.h
    }
};

} // namespace

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
    const auto start = std::chrono::steady_clock::now();
    const auto elapsed = [&] { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(); };
    const std::string compiler = resolveCompiler(m_compiler);
    b.report.target = (compiler.empty() ? m_compiler : compiler) + " " + flags();
    if (compiler.empty()) {
        b.report.log = "the C++ compiler '" + m_compiler + "' was not found";
        return b;
    }
    std::string why;
    const std::string bwrap = sandbox::findBwrap(&why);
    if (bwrap.empty()) {
        b.report.log = "cannot compile CPU candidates: " + why;
        return b;
    }

    const std::string full = std::string(kCpuAbiPreamble) + source;
    const std::string key = contentHash(full + "\n" + b.report.target);
    const fs::path so = fs::path(m_cacheDir) / (key + ".so");
    const fs::path log = fs::path(m_cacheDir) / (key + ".log");
    const fs::path sum = fs::path(m_cacheDir) / (key + ".sha256");
    std::error_code ec;
    std::string note;
    if (fs::exists(so, ec)) {
        const std::string recorded = readWholeFile(sum.string());
        if (!recorded.empty() && recorded == sha256File(so.string())) {
            b.report.ok = true;
            b.report.cached = true;
            b.report.log = readWholeFile(log.string());
            b.report.millis = elapsed();
            b.sharedObject = so.string();
            return b;
        }
        // Changed since it was built (or never finished): never loaded, rebuilt from the source.
        fs::remove(so, ec);
        fs::remove(sum, ec);
        fs::remove(log, ec);
        note = "note: the cached object " + so.filename().string() + " did not match its recorded SHA-256; it was discarded and rebuilt\n";
    }

    Scratch scratch;
    if (scratch.dir.empty()) {
        b.report.log = std::string("cannot create a build folder: ") + std::strerror(errno);
        return b;
    }
    {
        std::ofstream out(scratch.dir / "candidate.cpp", std::ios::binary);
        out << full;
        if (!out) {
            b.report.log = "cannot write the candidate's source to " + scratch.dir.string();
            return b;
        }
    }
    std::vector<std::string> argv = sandbox::bwrapJailArgs(bwrap, kFileBytes);
    // A compiler outside /usr (a toolchain under /opt) brings its own tree, read-only.
    const fs::path prefix = fs::path(compiler).parent_path().parent_path();
    if (compiler.rfind("/usr/", 0) != 0 && prefix != "/" && !prefix.empty())
        argv.insert(argv.end(), {"--ro-bind", prefix.string(), prefix.string()});
    argv.insert(argv.end(), {"--bind", scratch.dir.string(), "/build", "--remount-ro", "/", "--setenv", "PATH", "/usr/bin:/bin",
                             "--setenv", "TMPDIR", "/tmp", "--chdir", "/build", compiler});
    std::istringstream words(flags());
    for (std::string w; words >> w;)
        argv.push_back(w);
    argv.insert(argv.end(), {"-o", "/build/candidate.so", "/build/candidate.cpp"});

    const auto run = sandbox::runCaptured(argv, kTimeoutMs, kLogCap, kMemoryBytes, kFileBytes);
    b.report.millis = elapsed();
    b.report.log = note + run.output;
    if (run.droppedBytes > 0)
        b.report.log += "\n[compiler output cut at " + std::to_string(kLogCap / 1024) + " KiB; " + std::to_string(run.droppedBytes) +
                        " more bytes were not kept]\n";
    const fs::path built = scratch.dir / "candidate.so";
    const bool exited0 = run.started && WIFEXITED(run.waitStatus) && WEXITSTATUS(run.waitStatus) == 0;
    if (!exited0 || !fs::exists(built, ec)) {
        if (run.timedOut)
            b.report.log += "\nthe compiler did not finish within " + std::to_string(kTimeoutMs / 1000) + " s and was killed";
        else if (!run.started || run.output.empty())
            b.report.log += "the compiler '" + compiler + "' ended with " + sandbox::describeWaitStatus(run.waitStatus, true);
        return b;
    }
    const std::string object = readWholeFile(built.string());
    const std::string digest = sha256Hex(object);
    // The checksum and the log land first, the object last: a reader that sees the object sees its sum.
    if (!tryWriteFileAtomically(log.string(), b.report.log) || !tryWriteFileAtomically(sum.string(), digest) || !tryWriteFileAtomically(so.string(), object)) {
        b.report.log += "\ncannot place the compiled object in the cache " + m_cacheDir;
        return b;
    }
    b.report.ok = true;
    b.sharedObject = so.string();
    return b;
}

} // namespace kforge::worker
