// cpu.scaled_softmax.rows and cpu.scaled_masked_softmax.rows: y = softmax(x * SCALE [+ mask], -1) per
// row in float32, the mask [mrows, cols] broadcast over the rows as core/ops/mask_rows.h says (the card's
// symbols minner, mstep and mblock).
// UNROLL independent partial sums per row.
#include <cmath>

extern "C" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs)
{
    if (n_inputs != 1 + MASK || n_outputs != 1 || inputs[0].dtype != KF_F32 || inputs[0].ndim != 2)
        return 1;
    for (int i = 0; i < n_inputs; ++i)
        if (inputs[i].strides[inputs[i].ndim - 1] != 1 || inputs[i].strides[0] != inputs[i].sizes[1])
            return 2;
    const int64_t rows = inputs[0].sizes[0], cols = inputs[0].sizes[1];
    const int64_t mrows = MASK ? inputs[1].sizes[0] : 1;
    const int64_t minner = MASK ? kforge_symbol("minner") : 1, mstep = MASK ? kforge_symbol("mstep") : 1,
                  mblock = MASK ? kforge_symbol("mblock") : 1;
    if (MASK && (inputs[1].ndim != 2 || inputs[1].sizes[1] != cols || mrows < 1 || minner < 1 || mrows % minner != 0 || mstep < 1 || mblock < 1))
        return 3;
    const float *x = (const float *)inputs[0].data;
    const float *mask = MASK ? (const float *)inputs[1].data : nullptr;
    float *y = (float *)outputs[0].data;
    const float scale = SCALE;
    for (int64_t r = 0; r < rows; ++r) {
        const float *xr = x + r * cols;
        const float *mr = MASK ? mask + (((r / mblock) % (mrows / minner)) * minner + (r / mstep) % minner) * cols : nullptr;
        float *yr = y + r * cols;
        float m = -INFINITY;
        for (int64_t c = 0; c < cols; ++c) {
            yr[c] = xr[c] * scale + (MASK ? mr[c] : 0.f);
            m = yr[c] > m ? yr[c] : m;
        }
        float part[UNROLL] = {};
        int64_t c = 0;
        for (; c + UNROLL <= cols; c += UNROLL)
            for (int u = 0; u < UNROLL; ++u) {
                yr[c + u] = expf(yr[c + u] - m);
                part[u] += yr[c + u];
            }
        for (; c < cols; ++c) {
            yr[c] = expf(yr[c] - m);
            part[0] += yr[c];
        }
        float s = 0.f;
        for (int u = 0; u < UNROLL; ++u)
            s += part[u];
        const float inv = 1.f / s;
        for (c = 0; c < cols; ++c)
            yr[c] *= inv;
    }
    return 0;
}
