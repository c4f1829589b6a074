#pragma once
// The worker's `build_model` request: a built-in model (core/workload/builtin_models.h) compiled by
// libtorch's TorchScript compiler onto a module whose parameters and buffers are filled from the seed,
// saved as a TorchScript file. Nothing is downloaded and no Python runs.
//
//   -> {"id":5,"type":"build_model","model":"decoder","options":{"preset":"h200"},"path":"/abs/decoder.pt"}
//   <- {"id":5,"type":"model_built","ok":true,"path":"/abs/decoder.pt","parameters":202383360,"bytes":404766720,
//       "summary":"decoder batch=8 ..."}
#include <nlohmann/json.hpp>

namespace kforge::worker {

nlohmann::json buildModelReply(const nlohmann::json &id, const nlohmann::json &request);

} // namespace kforge::worker
