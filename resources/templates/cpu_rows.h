// Prologue of the CPU row-wise templates: contiguity checks and ROWS_PROLOGUE, which views input 0 as
// rows x cols of fp32.
#include <cmath>
#include <cstring>

static bool contiguous(const kf_tensor &t)
{
    int64_t expect = 1;
    for (int d = t.ndim - 1; d >= 0; --d) {
        if (t.sizes[d] != 1 && t.strides[d] != expect)
            return false;
        expect *= t.sizes[d];
    }
    return true;
}

static int64_t leading(const kf_tensor &t)
{
    int64_t n = 1;
    for (int d = 0; d + 1 < t.ndim; ++d)
        n *= t.sizes[d];
    return n;
}

#define ROWS_PROLOGUE(NIN)                                                                          \
    if (n_inputs != NIN || n_outputs != 1 || inputs[0].dtype != KF_F32 || inputs[0].ndim < 1)      \
        return 1;                                                                                  \
    for (int i = 0; i < n_inputs; ++i)                                                             \
        if (!contiguous(inputs[i]))                                                                \
            return 2;                                                                              \
    if (!contiguous(outputs[0]))                                                                   \
        return 2;                                                                                  \
    const int64_t cols = inputs[0].sizes[inputs[0].ndim - 1];                                      \
    const int64_t rows = leading(inputs[0]);                                                       \
    const float *x = (const float *)inputs[0].data;                                                \
    (void)rows;                                                                                    \
    (void)cols;                                                                                    \
    (void)x;

