#pragma once
// The fast_p report over a set of problems (KernelBench's measure): fast_p is the share of problems whose
// best kernel is correct and more than p times as fast as the baseline; fast_0 is the share that is
// correct at all. kforge reports it over eager PyTorch (the problem's forward as the worker times it,
// beside the candidate) and over torch.compile where a Python with torch.compile measured the problem.
// Pure: the rows come from searches (app/cli/model_commands.cpp); this turns them into the summary,
// Markdown and JSON.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kforge {

struct FastpRow {
    std::string problem;  // the workload's name
    std::string workload; // its file
    int cardsSearched = 0, nodes = 0;
    bool correct = false;   // some candidate passed every trial
    bool accepted = false;  // the guard accepted one of its kernels: faster than eager by more than the noise
    double speedupEager = 0; // of the best correct candidate: eager time / its time (0: none correct)
    // torch.compile's time over eager's, both measured by Python in one process: the speedup over
    // torch.compile is speedupEager / compileRatio, so the two harnesses' differences cancel.
    std::optional<double> compileRatio; // eager / compiled
    std::string bestCard, bestTemplate;
    int64_t bestNode = 0;
    std::string note; // why it is not correct, why torch.compile is not available, ...
    std::optional<double> speedupCompile() const;
};

struct FastpSummary {
    int problems = 0;
    double fast0 = 0, fast1 = 0, fast15 = 0; // over eager, of all problems
    int compileProblems = 0;                  // problems with a torch.compile measurement
    std::optional<double> compileFast0, compileFast1, compileFast15; // over torch.compile, of those
};

// Share of `rows` that are correct with a speedup above p (fast_0: correct at all).
double fastP(const std::vector<FastpRow> &rows, double p);
std::optional<double> fastPOverCompile(const std::vector<FastpRow> &rows, double p);
FastpSummary summarize(const std::vector<FastpRow> &rows);

struct FastpRun {
    std::string backend;
    int nodes = 0;
    std::string compileNote; // why torch.compile was not measured ("" when it was)
    std::vector<FastpRow> rows;
};
nlohmann::json fastpJson(const FastpRun &run);
std::string fastpMarkdown(const FastpRun &run);

} // namespace kforge
