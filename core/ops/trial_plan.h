#pragma once
// The verification trials every backend runs for a card: the captured shape at each input scale, each
// kind of special input at scale 8, the workload's own inputs where the card has them, then each
// held-out shape at scale 1.
#include <string>
#include <vector>

#include "ops/operator_card.h"

namespace kforge {

struct TrialSpec {
    std::string label;
    ShapeBindings shape;
    double scale = 1.0;
    std::string special; // one of the card's specialInputs, kCapturedInputs, or empty
};

// The trial on the workload's own inputs (OperatorCard::capturedFile), after the scales and specials.
inline constexpr const char *kCapturedInputs = "captured";

std::vector<TrialSpec> trialPlan(const OperatorCard &card);

} // namespace kforge
