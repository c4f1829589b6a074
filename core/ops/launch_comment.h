#pragma once
// A CUDA candidate's launch plan written in its own source, so one file is a whole candidate:
//
//   /* kforge-launch
//   {"kernels":[{"name":"k","grid":["rows"],"block":[256]}], "workspace":[]}
//   */
//
// The CLI's `eval` reads it when no --launch file is given; the guard's test kernels carry theirs so.
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kforge {

// The plan in `source`'s kforge-launch comment; nullopt when there is none. Throws Error when the
// comment is not closed or does not hold one JSON object.
std::optional<nlohmann::json> launchPlanFromComment(std::string_view source);

} // namespace kforge
