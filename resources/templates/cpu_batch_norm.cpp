// cpu.<batch_norm|batch_norm_affine|batch_norm_eval>.channels: per channel of [n, c, hw], MODE 0/1 the
// batch's mean and biased variance over n and hw in two passes with ACCUMULATORS partial sums in ACC
// precision, MODE 2 the running statistics; then (x - mean) * rstd [* w + b].
// The second pass is the corrected two-pass: it sums d = x - mean, as the float the output subtracts,
// besides d * d, so r = sum(d) / count carries what rounding the mean to a float lost. A channel of a
// few values near each other far from zero (two values, hw 2, n 1) otherwise gets x - mean wrong by that
// rounding, which is large next to the values' spread.
static void channel_sums(const float *x, int64_t n, int64_t c, int64_t hw, int64_t ch, float shift, bool withSquares, ACC &sum, ACC &squares)
{
    ACC part[ACCUMULATORS] = {}, sq[ACCUMULATORS] = {};
    for (int64_t s = 0; s < n; ++s) {
        const float *xr = x + (s * c + ch) * hw;
        int64_t i = 0;
        for (; i + ACCUMULATORS <= hw; i += ACCUMULATORS)
            for (int a = 0; a < ACCUMULATORS; ++a) {
                const ACC d = (ACC)xr[i + a] - (ACC)shift;
                part[a] += d;
                if (withSquares)
                    sq[a] += d * d;
            }
        for (; i < hw; ++i) {
            const ACC d = (ACC)xr[i] - (ACC)shift;
            part[0] += d;
            if (withSquares)
                sq[0] += d * d;
        }
    }
    sum = 0;
    squares = 0;
    for (int a = 0; a < ACCUMULATORS; ++a) {
        sum += part[a];
        squares += sq[a];
    }
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
        float mean, rest = 0.f, rstd;
        if (MODE == 2) {
            mean = ((const float *)inputs[3].data)[ch];
            rstd = (float)(1.0 / std::sqrt((double)((const float *)inputs[4].data)[ch] + EPS));
        } else {
            if (count == 0)
                continue;
            ACC sum, squares;
            channel_sums(x, n, c, hw, ch, 0.f, false, sum, squares);
            mean = (float)(sum / (ACC)count);
            channel_sums(x, n, c, hw, ch, mean, true, sum, squares);
            const ACC r = sum / (ACC)count, var = squares / (ACC)count - r * r;
            rest = (float)r;
            rstd = (float)(1.0 / std::sqrt((double)(var > 0 ? var : 0) + EPS));
        }
        const float a = MODE >= 1 ? rstd * w[ch] : rstd, sh = MODE >= 1 ? b[ch] : 0.f;
        for (int64_t s = 0; s < n; ++s) {
            const float *xr = x + (s * c + ch) * hw;
            float *yr = y + (s * c + ch) * hw;
            for (int64_t i = 0; i < hw; ++i)
                yr[i] = ((xr[i] - mean) - rest) * a + sh;
        }
    }
    return 0;
}
