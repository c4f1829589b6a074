// cpu.instance_norm.rows: per (sample, channel) of [n, c, hw], the mean and variance over hw in two
// passes with ACCUMULATORS partial sums, then (x - mean) * rstd; no affine, no running statistics.
extern "C" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs)
{
    if (n_inputs != 1 || n_outputs != 1 || inputs[0].dtype != KF_F32 || inputs[0].ndim != 3)
        return 1;
    if (!dense(inputs[0]) || !dense(outputs[0]))
        return 2;
    const int64_t rows = inputs[0].sizes[0] * inputs[0].sizes[1], cols = inputs[0].sizes[2];
    const float *x = (const float *)inputs[0].data;
    float *y = (float *)outputs[0].data;
    for (int64_t r = 0; r < rows; ++r) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        ACC part[ACCUMULATORS] = {};
        int64_t c = 0;
        for (; c + ACCUMULATORS <= cols; c += ACCUMULATORS)
            for (int a = 0; a < ACCUMULATORS; ++a)
                part[a] += xr[c + a];
        for (; c < cols; ++c)
            part[0] += xr[c];
        ACC sum = 0;
        for (int a = 0; a < ACCUMULATORS; ++a) {
            sum += part[a];
            part[a] = 0;
        }
        const ACC mean = sum / (ACC)cols;
        for (c = 0; c + ACCUMULATORS <= cols; c += ACCUMULATORS)
            for (int a = 0; a < ACCUMULATORS; ++a) {
                const ACC d = xr[c + a] - mean;
                part[a] += d * d;
            }
        for (; c < cols; ++c) {
            const ACC d = xr[c] - mean;
            part[0] += d * d;
        }
        ACC var = 0;
        for (int a = 0; a < ACCUMULATORS; ++a)
            var += part[a];
        const float rstd = (float)(1.0 / std::sqrt((double)(var / (ACC)cols) + EPS));
        const float mf = (float)mean;
        for (c = 0; c < cols; ++c)
            yr[c] = (xr[c] - mf) * rstd;
    }
    return 0;
}
