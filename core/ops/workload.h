#pragma once
// A workload is the set of operator cards captured from one model run. The built-in demo is a small
// attention block whose softmax over attention scores is the hot operator; it needs no model file,
// so the demo and CI can search over something real anywhere.
#include <string>
#include <vector>

#include "ops/operator_card.h"

namespace kforge {

struct Workload {
    std::string name;
    std::string description;
    std::vector<OperatorCard> operators;
};

// rows x cols of the attention-score softmax; small by default so a CPU search stays interactive.
Workload demoWorkload(int64_t rows = 256, int64_t cols = 1024);

} // namespace kforge
