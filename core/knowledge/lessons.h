#pragma once
// What a search teaches the next one. When a search ends, its winning kernel for the operator's
// signature on the device's architecture becomes a lesson note in the user's knowledge folder
// (lessons/<arch>/<signature hash>.md, the faster kept when two sessions won the same); the next
// search of that signature on that architecture starts from it (SearchEngine's warm start) and the
// llm proposer's prompt carries it. Also the words retrieval keys on: signature, families, the
// device's architecture and a node's bottleneck.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "knowledge/note.h"
#include "knowledge/signature.h"
#include "ops/operator_card.h"
#include "protocol/messages.h"
#include "store/session_store.h"

namespace kforge::knowledge {

// The card's own family and the family group notes are written for (softmax, norm, elementwise,
// reduction, scan, matmul); a card of no known family is placed by its operator and error model.
std::vector<std::string> familiesOf(const OperatorCard &card);
// A worker's device (an element of its hello's "devices"): "sm_90" for CUDA, "cpu" for the CPU.
std::string deviceArch(const nlohmann::json &device);
// The first device of the pool's workers for `backend`, or null.
nlohmann::json targetDevice(const std::vector<nlohmann::json> &hellos, const std::string &backend);
// What held a node back, in the words notes are tagged with: register_spills (ptxas spilled),
// memory_bound, compute_bound, occupancy or latency (from its profile, else its roofline fraction);
// "" when nothing says (a failed node).
std::string bottleneckOf(const NodeDetail &node);

// The search's winner for the operator as a lesson: the node a pack would ship (pack::choosePackNodes:
// the fastest the guard accepted and no person rejected, or one a person accepted); nullopt when none.
std::optional<Note> lessonFromSearch(const SessionStore &store, int64_t sessionId, int64_t operatorId, const OperatorCard &card,
                                     const std::string &arch, const std::string &deviceName = {});
// Writes the lesson under `dir` and returns its path; "" when a lesson already there is as fast.
// Throws Error when the folder cannot be written.
std::string writeLesson(const Note &lesson, const std::string &dir);
// The lesson's kernel as a candidate (source, backend and the CUDA launch plan); nullopt when its
// body holds no code.
std::optional<Candidate> lessonCandidate(const Note &lesson);

} // namespace kforge::knowledge
