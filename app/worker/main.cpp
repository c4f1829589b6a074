// kforge-worker: evaluates candidates for a pool, speaking protocol v1 on stdin/stdout.
#include <ATen/Parallel.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "worker/cpu/cpu_backend.h"
#include "worker/server.h"

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i)
        if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
            std::puts("usage: kforge-worker\n\n"
                      "Evaluates kernel candidates for a kforge worker pool. Speaks kforge worker protocol v1:\n"
                      "one JSON request per line on stdin, one JSON reply per line on stdout.\n"
                      "Requests: hello, evaluate, shutdown. Started by kforge and kforge-cli; start it by hand\n"
                      "only to debug the protocol.\n\n"
                      "environment:\n"
                      "  KFORGE_WORKER_THREADS  intra-op threads for the reference (default 1, matching candidates)\n"
                      "  KFORGE_CACHE_DIR       compiled-candidate cache (default ~/.cache/kforge)\n"
                      "  CXX                    compiler for cpu candidates (default c++)");
            return 0;
        }
    // Candidates run single-threaded; the reference must too, or the comparison measures thread counts.
    const char *threads = std::getenv("KFORGE_WORKER_THREADS");
    at::set_num_threads(threads ? std::max(1, std::atoi(threads)) : 1);
    kforge::worker::Server server;
    server.addBackend(kforge::worker::makeCpuBackend());
    return server.serve();
}
