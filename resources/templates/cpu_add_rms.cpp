// cpu.add_rms_norm_cast.rows (and cpu.add_rms_norm_offset.rows, times one plus the weight): h = x + residual, then y = weight * (h * rsqrt(mean(h^2) + EPS)) per row, in
// float32 (the chain's casts are no-ops there). UNROLL independent partial sums of squares per row.
extern "C" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs)
{
    if (n_inputs != 3 || n_outputs != 2 || inputs[0].ndim < 1)
        return 1;
    for (int i = 0; i < 3; ++i)
        if (inputs[i].dtype != KF_F32 || !contiguous(inputs[i]))
            return 2;
    for (int i = 0; i < 2; ++i)
        if (outputs[i].dtype != KF_F32 || !contiguous(outputs[i]))
            return 2;
    const int64_t cols = inputs[0].sizes[inputs[0].ndim - 1], rows = leading(inputs[0]);
    if (leading(inputs[1]) * inputs[1].sizes[inputs[1].ndim - 1] != rows * cols || inputs[2].ndim != 1 || inputs[2].sizes[0] != cols)
        return 3;
    const float *x = (const float *)inputs[0].data, *r = (const float *)inputs[1].data, *w = (const float *)inputs[2].data;
    float *h = (float *)outputs[0].data, *y = (float *)outputs[1].data;
    for (int64_t row = 0; row < rows; ++row) {
        const float *xr = x + row * cols, *rr = r + row * cols;
        float *hr = h + row * cols, *yr = y + row * cols;
        float part[UNROLL] = {};
        int64_t c = 0;
        for (; c + UNROLL <= cols; c += UNROLL)
            for (int u = 0; u < UNROLL; ++u) {
                hr[c + u] = xr[c + u] + rr[c + u];
                part[u] += hr[c + u] * hr[c + u];
            }
        for (; c < cols; ++c) {
            hr[c] = xr[c] + rr[c];
            part[0] += hr[c] * hr[c];
        }
        float ss = 0.f;
        for (int u = 0; u < UNROLL; ++u)
            ss += part[u];
        const float rstd = 1.0f / std::sqrt(ss / (float)cols + (float)EPS);
#ifdef WEIGHT_OFFSET
        for (c = 0; c < cols; ++c)
            yr[c] = (hr[c] * rstd) * (1.f + w[c]); // Gemma's norm: one plus the weight
#else
        for (c = 0; c < cols; ++c)
            yr[c] = (hr[c] * rstd) * w[c];
#endif
    }
    return 0;
}
