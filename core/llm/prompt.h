#pragma once
// The prompt for one expansion: what the operator is (schema, shapes, dtypes, error model), the contract
// a candidate must keep (the CPU kforge_entry ABI, or the CUDA launch plan and the template prelude),
// and, from a parent, its code, the lineage of improvements and regressions that led to it, approaches
// that already failed, and its feedback (compile log capped, ptxas registers and spills, failed trials
// summarized, timings as a fraction of the roofline, the Nsight Compute summary when it was profiled);
// the target device's profile and passages retrieved from the knowledge base. Pure text in, text out:
// no store, no network.
#include <cstdint>
#include <string>
#include <vector>

#include "knowledge/knowledge_base.h"
#include "llm/client.h"
#include "ops/operator_card.h"
#include "store/session_store.h"

namespace kforge::llm {

struct LineageStep {
    int64_t nodeId = 0;
    std::string expansion; // "root", "improve", "repair"
    std::string status;
    double speedup = 0;
    std::string change; // the proposal's rationale
};

struct FailedApproach {
    int64_t nodeId = 0;
    std::string change;
    std::string status;
    std::string reason;
};

struct PromptInput {
    const OperatorCard *card = nullptr;
    std::string backend = "cpu";
    const NodeDetail *parent = nullptr;  // null: a first attempt
    std::vector<LineageStep> lineage;    // the root first, the parent last
    std::vector<FailedApproach> failed;  // other failed nodes of this operator, newest last
    size_t compileLogCap = 6000;         // bytes of the parent's compile log that go in
    int maxFailedTrials = 4;
    std::string device;                  // the target device's profile (describeDevice); "" unknown
    std::vector<knowledge::Passage> passages; // retrieved notes and lessons, best first
    size_t knowledgeCap = 6000;          // bytes of passages that go in, at most half of it per passage
};

// "first", "improve" or "repair" (the parent failed).
std::string promptMode(const PromptInput &in);
ChatRequest buildPrompt(const PromptInput &in);

// Pieces, for tests and the UI.
std::string describeCard(const OperatorCard &card);
std::string candidateContract(const OperatorCard &card, const std::string &backend);
std::string describeFeedback(const NodeDetail &parent, size_t compileLogCap, int maxFailedTrials);
// What the worker reported of its device (a hello's device: name, SMs, memory, L2, measured copy
// bandwidth) and the hardware note for its architecture when there is one.
std::string describeDevice(const nlohmann::json &device, const knowledge::Note *hardware);
// ptxas's registers, shared memory and spills per kernel, from a compile log; "" when it has none.
std::string describeResources(const std::string &compileLog);
// An Nsight Compute report as stored on a node (throughputs, occupancy, top stalls); "" for null.
std::string describeProfile(const nlohmann::json &profile);
// The passages as they go in the prompt, within `cap` bytes, saying what was left out.
std::string describePassages(const std::vector<knowledge::Passage> &passages, size_t cap);
// The head of a compile log with its first error lines, at most `cap` bytes, saying how much was left out.
std::string capCompileLog(const std::string &log, size_t cap);

} // namespace kforge::llm
