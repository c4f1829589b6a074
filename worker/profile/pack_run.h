#pragma once
// The worker's `run_pack` request (kforge-cli run --compare): the workload's TorchScript model run in
// this process without and with a kernel pack, the runs interleaved (the pack loaded with the runtime
// library before each run with it, unloaded after), the outputs compared by the guard's numerics against
// the model run in float64, and the runtime's per-operator counters of the runs with the pack.
//
//   -> {"id":6,"type":"run_pack","workload":{<workload file>},"dir":"/abs/folder","pack":"/abs/pack","iters":10,
//       "device":"auto"}
//   <- {"id":6,"type":"pack_run","ok":true,"report":{"device":"cpu","clock":"host","iters":10,
//       "without":{"median_ms":..,"min_ms":..,"max_ms":..,"samples_ms":[..]},"with":{..},"speedup":1.02,
//       "outputs_match":true,"outputs_note":"...","outputs":[{"name":"out0","pack_units":..,"aten_units":..,..}],
//       "counters":{"aten::_softmax":{"taken":10,"fell_back":0,"why":{},"example":{}}},"pack_summary":"..."}}
#include <nlohmann/json.hpp>

namespace kforge::worker {

nlohmann::json runPackReply(const nlohmann::json &id, const nlohmann::json &request);

} // namespace kforge::worker
