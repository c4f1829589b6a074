// cpu.layer_norm.rows: two-pass mean and variance per row, then scale and shift.
extern "C" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs)
{
    ROWS_PROLOGUE(3)
    const float *w = (const float *)inputs[1].data, *b = (const float *)inputs[2].data;
    float *y = (float *)outputs[0].data;
    for (int64_t r = 0; r < rows; ++r) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        const float mean = (float)(row_sum(xr, cols) / (ACC)cols);
        ACC part[ACCUMULATORS] = {};
        int64_t c = 0;
        for (; c + ACCUMULATORS <= cols; c += ACCUMULATORS)
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
        for (c = 0; c < cols; ++c)
            yr[c] = (xr[c] - mean) * rstd * w[c] + b[c];
    }
    return 0;
}
