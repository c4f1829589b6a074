// kforge-worker: evaluates candidates for a pool, speaking protocol v1 on stdin/stdout.
#include <ATen/Parallel.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <unistd.h>

#include <malloc.h>

#include "worker/cpu/cpu_device.h"
#ifdef KFORGE_HAVE_CUDA_BACKEND
#include "worker/cuda/cuda_device.h"
#endif
#include "worker/server.h"

int main(int argc, char **argv)
{
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
    else
        std::fprintf(stderr, "kforge-worker: no cpu backend: %s\n", cpuWhyNot.c_str());
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
    else
        std::fprintf(stderr, "kforge-worker: no cuda backend: %s\n", whyNot.c_str());
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
