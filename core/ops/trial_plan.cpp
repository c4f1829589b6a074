#include "ops/trial_plan.h"

#include <cstdio>

namespace kforge {

std::vector<TrialSpec> trialPlan(const OperatorCard &card)
{
    std::vector<TrialSpec> plan;
    for (double s : card.inputScales) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "scale %g", s);
        plan.push_back({buf, card.shape, s, {}});
    }
    for (const auto &kind : card.specialInputs)
        plan.push_back({"special: " + kind, card.shape, 8.0, kind});
    if (!card.capturedFile.empty())
        plan.push_back({"captured inputs", card.shape, 1.0, kCapturedInputs});
    for (const auto &shape : card.heldOutShapes) {
        std::string label = "held-out";
        for (const auto &[k, v] : shape)
            label += " " + k + "=" + std::to_string(v);
        plan.push_back({label, shape, 1.0, {}});
    }
    return plan;
}

} // namespace kforge
