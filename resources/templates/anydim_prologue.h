// Prologue of the CPU templates over a middle dimension: input 0 is a dense fp32 [outer, dim, inner]
// view (the card's three symbols), output 0 dense as the card gives it.
#include <cmath>
#include <cstring>

static bool dense(const kf_tensor &t)
{
    int64_t expect = 1;
    for (int d = t.ndim - 1; d >= 0; --d) {
        if (t.sizes[d] != 1 && t.strides[d] != expect)
            return false;
        expect *= t.sizes[d];
    }
    return true;
}

#define DIM_PROLOGUE()                                                                              \
    if (n_inputs != 1 || n_outputs != 1 || inputs[0].dtype != KF_F32 || inputs[0].ndim != 3)       \
        return 1;                                                                                  \
    if (!dense(inputs[0]) || !dense(outputs[0]))                                                   \
        return 2;                                                                                  \
    const int64_t outer = inputs[0].sizes[0], dim = inputs[0].sizes[1], inner = inputs[0].sizes[2]; \
    const float *x = (const float *)inputs[0].data;

