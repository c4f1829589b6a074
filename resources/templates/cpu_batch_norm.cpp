// cpu.<batch_norm|batch_norm_affine|batch_norm_eval>.channels: per channel of [n, c, hw], MODE 0/1 the
// batch's mean and biased variance over n and hw in two passes with ACCUMULATORS partial sums in ACC
// precision, MODE 2 the running statistics; then (x - mean) * rstd [* w + b].
static ACC channel_sum(const float *x, int64_t n, int64_t c, int64_t hw, int64_t ch, ACC shift, bool squares)
{
    ACC part[ACCUMULATORS] = {};
    for (int64_t s = 0; s < n; ++s) {
        const float *xr = x + (s * c + ch) * hw;
        int64_t i = 0;
        for (; i + ACCUMULATORS <= hw; i += ACCUMULATORS)
            for (int a = 0; a < ACCUMULATORS; ++a) {
                const ACC d = xr[i + a] - shift;
                part[a] += squares ? d * d : d;
            }
        for (; i < hw; ++i) {
            const ACC d = xr[i] - shift;
            part[0] += squares ? d * d : d;
        }
    }
    ACC total = 0;
    for (int a = 0; a < ACCUMULATORS; ++a)
        total += part[a];
    return total;
}

extern "C" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs)
{
    const int expected = MODE == 0 ? 1 : MODE == 1 ? 3 : 5;
    if (n_inputs != expected || n_outputs != 1 || inputs[0].dtype != KF_F32 || inputs[0].ndim != 3)
        return 1;
    for (int i = 0; i < n_inputs; ++i)
        if (!dense(inputs[i]))
            return 2;
    if (!dense(outputs[0]))
        return 2;
    const int64_t n = inputs[0].sizes[0], c = inputs[0].sizes[1], hw = inputs[0].sizes[2];
    const float *x = (const float *)inputs[0].data;
    const float *w = MODE >= 1 ? (const float *)inputs[1].data : nullptr, *b = MODE >= 1 ? (const float *)inputs[2].data : nullptr;
    float *y = (float *)outputs[0].data;
    const int64_t count = n * hw;
    for (int64_t ch = 0; ch < c; ++ch) {
        float mean, rstd;
        if (MODE == 2) {
            mean = ((const float *)inputs[3].data)[ch];
            rstd = (float)(1.0 / std::sqrt((double)((const float *)inputs[4].data)[ch] + EPS));
        } else {
            if (count == 0)
                continue;
            const ACC m = channel_sum(x, n, c, hw, ch, 0, false) / (ACC)count;
            const ACC var = channel_sum(x, n, c, hw, ch, m, true) / (ACC)count;
            mean = (float)m;
            rstd = (float)(1.0 / std::sqrt((double)var + EPS));
        }
        const float a = MODE >= 1 ? rstd * w[ch] : rstd, sh = MODE >= 1 ? b[ch] : 0.f;
        for (int64_t s = 0; s < n; ++s) {
            const float *xr = x + (s * c + ch) * hw;
            float *yr = y + (s * c + ch) * hw;
            for (int64_t i = 0; i < hw; ++i)
                yr[i] = (xr[i] - mean) * a + sh;
        }
    }
    return 0;
}
