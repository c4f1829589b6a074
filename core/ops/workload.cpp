#include "ops/workload.h"

namespace kforge {

Workload demoWorkload(int64_t rows, int64_t cols)
{
    Workload w;
    w.name = "demo-attention";
    w.description = "built-in attention block: scores = q @ k^T, softmax over the last dimension, @ v";
    OperatorCard softmax = makeSoftmaxCard(rows, cols, DType::F32);
    softmax.calls = 12; // one per layer of a 12-layer model
    w.operators.push_back(softmax);
    return w;
}

} // namespace kforge
