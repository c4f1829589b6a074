#pragma once
// The prompt for one expansion: what the operator is (schema, shapes, dtypes, error model), the contract
// a candidate must keep (the CPU kforge_entry ABI, or the CUDA launch plan and the template prelude),
// and, from a parent, its code, the lineage of improvements and regressions that led to it, approaches
// that already failed, and its feedback (compile log capped, failed trials summarized, timings as a
// fraction of the roofline). Pure text in, text out: no store, no network.
#include <cstdint>
#include <string>
#include <vector>

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
};

// "first", "improve" or "repair" (the parent failed).
std::string promptMode(const PromptInput &in);
ChatRequest buildPrompt(const PromptInput &in);

// Pieces, for tests and the UI.
std::string describeCard(const OperatorCard &card);
std::string candidateContract(const OperatorCard &card, const std::string &backend);
std::string describeFeedback(const NodeDetail &parent, size_t compileLogCap, int maxFailedTrials);
// The head of a compile log with its first error lines, at most `cap` bytes, saying how much was left out.
std::string capCompileLog(const std::string &log, size_t cap);

} // namespace kforge::llm
