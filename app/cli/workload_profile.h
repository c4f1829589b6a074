#pragma once
// A workload profiled through a worker: what `kforge-cli profile` and `kforge-cli fastp` share
// (app/cli/workload_commands.cpp).
#include <map>
#include <string>
#include <vector>

#include "pool/worker_pool.h"
#include "workload/workload_file.h"

namespace kforge::cli {

struct ProfileRequest {
    int runs = 1, warmup = 1;
    std::string device = "auto"; // cpu, cuda, or auto (cuda where the worker has one)
    bool writeSamples = true;    // WORKLOAD.samples.pt beside the file
    std::string pack;            // a kernel pack folder: profile with its kernels registered (calls only)
};

struct ProfiledWorkload {
    WorkloadFile workload; // with its calls, cards, skipped calls and samples
    std::string device, timing; // "cuda:0", "device events" / "cpu", "host clock"
    double seconds = 0;         // the worker's round trip
    nlohmann::json pack;        // with a pack: {"summary": .., "counters": {op: {"taken", "fell_back", ..}}}
};

// Throws Error with the worker's reason when the workload was not profiled. `path` is the workload file's.
ProfiledWorkload profileThroughWorker(WorkerPool &pool, const WorkloadFile &w, const std::string &path, const ProfileRequest &r);

// A Python that imports torch: `given`, else $KFORGE_PYTHON, else python3 and /usr/bin/python3; "" if none.
std::string findTorchPython(const std::string &given);
// Runs argv with stdout and stderr sent to /dev/null and waits; the exit status (127: not started).
int runProgramQuietly(const std::vector<std::string> &argv);

// Writes the built-in model NAME (options as the words after it, --OPTION=VALUE) through the worker as
// OUT.pt beside the workload file OUT.json, and that file; returns the workload. app/cli/model_commands.cpp.
WorkloadFile writeBuiltinWorkload(WorkerPool &pool, const std::string &name, const std::map<std::string, std::string> &options,
                                  const std::string &out);

} // namespace kforge::cli
