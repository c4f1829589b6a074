#pragma once
// Profiles one CUDA candidate with Nsight Compute. ncu must wrap a process, so the worker runs itself
// again under ncu in a one-shot mode (kforge-worker --evaluate-once FILE) that verifies the candidate
// once, with ncu limited to the plan's kernels; the raw metrics are read back from ncu's CSV report.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kforge::worker {

// ncu from $KFORGE_NCU, the PATH, or the CUDA toolkit; empty when there is none.
std::string findNcu();

// Returns {"tool":"ncu", "kernel":..., "memory_throughput_pct":..., "compute_throughput_pct":...,
// "achieved_occupancy_pct":..., "duration_us":..., "top_stalls":[{"reason","value"}...], "metrics":{...}}.
// Throws Error with ncu's own words when it fails.
nlohmann::json profileWithNcu(const std::string &ncu, const nlohmann::json &evaluateRequest,
                              const std::vector<std::string> &kernelNames, int timeoutSeconds);

// Parses ncu's "--page raw --csv" output: header row, units row, one row per profiled kernel.
nlohmann::json parseNcuRawCsv(const std::string &csv);

} // namespace kforge::worker
