#pragma once
// The worker's `profile_workload` request: runs a workload's TorchScript model with inputs made from the
// workload file, records every ATen call (worker/profile/call_recorder.h), groups the calls by pattern,
// and makes an operator card for each pattern (core/workload/call_cards.h) whose outputs come from
// running its reference once. A workload captured in Python (python/kforge_capture.py) already has its
// calls: with "calls_only" the worker only makes the cards.
//
// The model runs on "device" (cpu, cuda, or auto: cuda where there is one); on CUDA each call is timed
// with device events. With "problem" the workload is a KernelBench-style problem and also gets problem
// cards (core/workload/problem_cards.h): its whole forward offered to every template family that fits.
//
//   -> {"id":4,"type":"profile_workload","workload":{<workload file>},"dir":"/abs/folder",
//       "warmup":1,"runs":1,"calls_only":false,"samples_path":"/abs/folder/w.samples.pt","device":"auto",
//       "problem":false}
//   <- {"id":4,"type":"workload_profile","ok":true,"workload":{<the file with calls, cards, skipped, samples>},
//       "device":"cuda:0","timing":"device events"}
#include <nlohmann/json.hpp>

namespace kforge::worker {

nlohmann::json profileWorkloadReply(const nlohmann::json &id, const nlohmann::json &request);

} // namespace kforge::worker
