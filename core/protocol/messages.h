#pragma once
// Worker protocol v1: one JSON object per line over the worker's stdin/stdout.
//
//   -> {"id":1,"type":"hello","protocol":1}
//   <- {"id":1,"type":"hello","ok":true,"protocol":1,"worker":"...","backends":[...],"devices":[...]}
//      (with "measure":true every device has "copy_bandwidth_gbs", a CPU's measured first, which takes it
//      a fraction of a second: a campaign's plan asks so, a search's pool does not)
//   -> {"id":2,"type":"evaluate","card":{...},"candidate":{...},"options":{...}}
//   <- {"id":2,"type":"result","ok":true,"verdict":{...}}
//   -> {"id":3,"type":"profile","card":{...},"candidate":{...}}        (cuda candidates, where ncu exists)
//   <- {"id":3,"type":"profile","ok":true,"profile":{"memory_throughput_pct":..,"top_stalls":[..],..}}
//   -> {"id":4,"type":"profile_workload","workload":{...},"dir":"..."}   (worker/profile/workload_profiler.h)
//   <- {"id":4,"type":"workload_profile","ok":true,"workload":{<with calls, cards, skipped, samples>}}
//   -> {"id":5,"type":"build_model","model":"decoder","options":{...},"path":"..."}   (worker/profile/builtin_model.h)
//   <- {"id":5,"type":"model_built","ok":true,"path":"...","parameters":N,"bytes":N,"summary":"..."}
//   -> {"id":6,"type":"run_pack","workload":{...},"dir":"...","pack":"...","iters":N}   (worker/profile/pack_run.h)
//   <- {"id":6,"type":"pack_run","ok":true,"report":{"without":{..},"with":{..},"outputs_match":..,"counters":{..}}}
//   -> {"type":"prepare","candidate":{...}}   (no id, no reply: a hint to compile ahead; sent only to a
//                                             worker whose hello lists the backend under "prepares",
//                                             for at most its hello's "prepare_threads" queued ones)
//   -> {"id":3,"type":"shutdown"}
//   <- {"id":3,"type":"bye","ok":true}
//
// A result may carry "exiting":true: the worker answered for a candidate it could only stop by exiting
// (a CUDA kernel past its deadline), and the pool starts a fresh one.
//
// A line that is not valid JSON, or a request the worker cannot carry out, gets
// {"id":<id or null>,"type":"error","ok":false,"error":"..."} and the worker keeps serving.
#include <string>

#include <nlohmann/json.hpp>

#include "ops/operator_card.h"

namespace kforge {

inline constexpr int kProtocolVersion = 1;

struct Candidate {
    std::string backend = "cpu"; // "cpu" (C++ shared object) or "cuda" (device code + launch plan)
    std::string source; // any bytes: JSON carries it as "source" when it is UTF-8, else as "source_b64"
    nlohmann::json launch = nlohmann::json::object(); // the CUDA launch plan; empty for cpu
};

struct EvalOptions {
    int benchSamples = 30;   // timed runs of the candidate, interleaved with as many of the baseline
    int warmup = 3;
    int deadlineMs = 60000;  // the pool kills the worker if no answer comes by then
    bool benchmark = true;   // false: verify only
    uint64_t inputSeed = 0;  // not 0: the worker seeds its generator with it before drawing inputs (a re-verification)
};

void to_json(nlohmann::json &j, const Candidate &c);
void from_json(const nlohmann::json &j, Candidate &c);
void to_json(nlohmann::json &j, const EvalOptions &o);
void from_json(const nlohmann::json &j, EvalOptions &o);

nlohmann::json helloRequest(bool measure = false);
// The hello's device for `backend` (the first element of its "devices" with that backend), or null.
nlohmann::json helloDevice(const nlohmann::json &hello, const std::string &backend);
// A device in one line, the way a verdict names where it ran: "cuda:1 NVIDIA H200 (sm_90)", "cpu Intel
// Xeon ..."; "" for null. A pool with one worker per GPU tells its verdicts apart by it.
std::string deviceLabel(const nlohmann::json &device);
nlohmann::json evaluateRequest(const OperatorCard &card, const Candidate &candidate, const EvalOptions &options);
nlohmann::json shutdownRequest();
nlohmann::json prepareRequest(const Candidate &candidate);
nlohmann::json profileRequest(const OperatorCard &card, const Candidate &candidate);
nlohmann::json errorReply(const nlohmann::json &id, const std::string &message);

} // namespace kforge
