// kforge-worker: evaluates candidates for a pool, speaking protocol v1 on stdin/stdout.
#include <ATen/Parallel.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <unistd.h>

#include <csignal>
#include <dlfcn.h>
#include <ucontext.h>
#include <execinfo.h>
#include <malloc.h>

#include "worker/cpu/cpu_device.h"
#ifdef KFORGE_HAVE_CUDA_BACKEND
#include "worker/cuda/cuda_device.h"
#endif
#include "worker/server.h"

namespace {
// A fatal signal in the worker itself (not in a sandboxed candidate) leaves the faulting instruction and a
// backtrace in its log, which the pool quotes as its last words. It runs on its own stack, so a stack
// overflow is reported too.
void onFatalSignal(int sig, siginfo_t *info, void *context)
{
    const auto *uc = static_cast<const ucontext_t *>(context);
    void *pc = reinterpret_cast<void *>(uc->uc_mcontext.gregs[REG_RIP]);
    Dl_info where{};
    ::dladdr(pc, &where);
    char line[512];
    const int n = std::snprintf(line, sizeof line, "kforge-worker: fatal signal %d (%s) at address %p, instruction %p (%s+%#lx in %s); backtrace:\n", sig,
                                strsignal(sig), info->si_addr, pc, where.dli_sname ? where.dli_sname : "?",
                                static_cast<unsigned long>(static_cast<const char *>(pc) - static_cast<const char *>(where.dli_fbase)),
                                where.dli_fname ? where.dli_fname : "?");
    if (n > 0 && ::write(2, line, size_t(n)) < 0)
        std::_Exit(128 + sig);
    if (!pc) { // a call through a null pointer: the caller is the return address on top of the stack
        void *ret = *reinterpret_cast<void *const *>(uc->uc_mcontext.gregs[REG_RSP]);
        Dl_info caller{};
        ::dladdr(ret, &caller);
        const int m = std::snprintf(line, sizeof line, "kforge-worker: called from %p (%s+%#lx in %s)\n", ret, caller.dli_sname ? caller.dli_sname : "?",
                                    static_cast<unsigned long>(static_cast<const char *>(ret) - static_cast<const char *>(caller.dli_fbase)),
                                    caller.dli_fname ? caller.dli_fname : "?");
        if (m > 0 && ::write(2, line, size_t(m)) < 0)
            std::_Exit(128 + sig);
    }
    void *frames[64];
    backtrace_symbols_fd(frames, backtrace(frames, 64), 2);
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

} // namespace

int main(int argc, char **argv)
{
    static char altStack[1 << 16];
    stack_t ss{};
    ss.ss_sp = altStack;
    ss.ss_size = sizeof altStack;
    ::sigaltstack(&ss, nullptr);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
        struct sigaction sa{};
        sa.sa_sigaction = onFatalSignal;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        ::sigaction(sig, &sa, nullptr);
    }
    for (int i = 1; i < argc; ++i)
        if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
            std::puts("usage: kforge-worker\n\n"
                      "Evaluates kernel candidates for a kforge worker pool. Speaks kforge worker protocol v1:\n"
                      "one JSON request per line on stdin, one JSON reply per line on stdout.\n"
                      "Requests: hello, evaluate, profile (under Nsight Compute), shutdown. Started by kforge and kforge-cli; start it by hand\n"
                      "only to debug the protocol.\n\n"
                      "environment:\n"
                      "  KFORGE_WORKER_THREADS  intra-op threads for the reference (default 1, matching candidates)\n"
                      "  KFORGE_CACHE_DIR       compiled-candidate cache (default ~/.cache/kforge)\n"
                      "  KFORGE_WORKER_VERBOSE  log each cuda evaluation's compile, verify and benchmark times to stderr\n"
                      "  KFORGE_WORKER_SLOT     set by the pool; picks GPU (slot mod device count) unless CUDA_VISIBLE_DEVICES is set\n"
                      "  KFORGE_NCU             Nsight Compute for profile requests (default: ncu on the PATH)\n"
                      "  CXX                    compiler for cpu candidates (default c++)\n\n"
                      "  --evaluate-once FILE   evaluate the request in FILE once and print the reply (used under ncu)");
            return 0;
        }
    // Candidates run single-threaded; the reference must too, or the comparison measures thread counts.
    const char *threads = std::getenv("KFORGE_WORKER_THREADS");
    at::set_num_threads(threads ? std::max(1, std::atoi(threads)) : 1);
    // Freed memory stays in the heap, so the baseline's per-call output allocation costs what a
    // program's warm allocator costs, not fresh page faults the candidate's arena never pays.
    ::mallopt(M_MMAP_THRESHOLD, 32 << 20); // the largest glibc allows
    ::mallopt(M_TRIM_THRESHOLD, -1);
    kforge::worker::Server server;
    std::string cpuWhyNot;
    if (auto cpu = kforge::worker::makeCpuDevice(&cpuWhyNot))
        server.addDevice(std::move(cpu));
    else {
        std::fprintf(stderr, "kforge-worker: no cpu backend: %s\n", cpuWhyNot.c_str());
        server.noteUnavailable("cpu", cpuWhyNot);
    }
#ifdef KFORGE_HAVE_CUDA_BACKEND
    // Without a usable GPU the worker still serves cpu candidates; the log says why cuda is missing.
    // Anything printed while the device comes up goes to stderr, never into the protocol on stdout.
    std::fflush(stdout);
    const int protocolOut = ::dup(1);
    ::dup2(2, 1);
    std::string whyNot;
    auto cuda = kforge::worker::makeCudaDevice(&whyNot);
    std::fflush(stdout);
    ::dup2(protocolOut, 1);
    ::close(protocolOut);
    if (cuda)
        server.addDevice(std::move(cuda));
    else {
        std::fprintf(stderr, "kforge-worker: no cuda backend: %s\n", whyNot.c_str());
        server.noteUnavailable("cuda", whyNot);
    }
#else
    server.noteUnavailable("cuda", "this kforge-worker was built without the CUDA backend");
#endif
    // One-shot mode for profilers that must wrap a process (ncu): evaluate the request in FILE once
    // and print the reply.
    for (int i = 1; i + 1 < argc; ++i)
        if (!std::strcmp(argv[i], "--evaluate-once")) {
            std::ifstream in(argv[i + 1]);
            const std::string line((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            bool quit = false;
            std::printf("%s\n", server.handle(line, quit).dump().c_str());
            return 0;
        }
    return server.serve();
}
