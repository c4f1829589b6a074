#pragma once
// The verification trials every backend runs for a card: the captured shape at each input scale, each
// kind of special input at scale 8, then each held-out shape at scale 1.
#include <string>
#include <vector>

#include "ops/operator_card.h"

namespace kforge {

struct TrialSpec {
    std::string label;
    ShapeBindings shape;
    double scale = 1.0;
    std::string special; // one of the card's specialInputs, or empty
};

std::vector<TrialSpec> trialPlan(const OperatorCard &card);

} // namespace kforge
