#pragma once
// The worker's `profile_workload` request: runs a workload's TorchScript model with inputs made from the
// workload file, records every ATen call (worker/profile/call_recorder.h), groups the calls by pattern,
// and makes an operator card for each pattern (core/workload/call_cards.h) whose outputs come from
// running its reference once. A workload captured in Python (python/kforge_capture.py) already has its
// calls: with "calls_only" the worker only makes the cards.
//
//   -> {"id":4,"type":"profile_workload","workload":{<workload file>},"dir":"/abs/folder",
//       "warmup":1,"runs":1,"calls_only":false,"samples_path":"/abs/folder/w.samples.pt"}
//   <- {"id":4,"type":"workload_profile","ok":true,"workload":{<the file with calls, cards, skipped, samples>}}
#include <nlohmann/json.hpp>

namespace kforge::worker {

nlohmann::json profileWorkloadReply(const nlohmann::json &id, const nlohmann::json &request);

} // namespace kforge::worker
