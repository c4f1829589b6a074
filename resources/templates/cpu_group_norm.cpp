// cpu.group_norm.rows: per (sample, group) mean and variance over channels x spatial, per-channel affine.
extern "C" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs)
{
    if (n_inputs != 3 || inputs[0].ndim != 3 || inputs[0].dtype != KF_F32)
        return 1;
    const int64_t n = inputs[0].sizes[0], ch = inputs[0].sizes[1], hw = inputs[0].sizes[2];
    const float *x = (const float *)inputs[0].data, *w = (const float *)inputs[1].data, *b = (const float *)inputs[2].data;
    float *y = (float *)outputs[0].data;
    // The group count is a shape symbol, not a tensor: ask the worker for this call's value.
    const int64_t groups = kforge_symbol("groups");
    if (groups <= 0 || ch % groups != 0)
        return 3;
    const int64_t per = ch / groups * hw;
    for (int64_t s = 0; s < n; ++s)
        for (int64_t g = 0; g < groups; ++g) {
            const float *xg = x + (s * ch + g * (ch / groups)) * hw;
            float *yg = y + (s * ch + g * (ch / groups)) * hw;
            const float mean = (float)(row_sum(xg, per) / (ACC)per);
            ACC var = 0;
            for (int64_t i = 0; i < per; ++i) {
                const ACC d = xg[i] - mean;
                var += d * d;
            }
            const float rstd = (float)(1.0 / std::sqrt((double)(var / (ACC)per) + EPS));
            for (int64_t c = 0; c < ch / groups; ++c) {
                const int64_t chan = g * (ch / groups) + c;
                for (int64_t i = 0; i < hw; ++i)
                    yg[c * hw + i] = (xg[c * hw + i] - mean) * rstd * w[chan] + b[chan];
            }
        }
    return 0;
}
