// cpu.max.rows: each row's maximum with independent partial maxima, NaN propagating.
extern "C" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs)
{
    ROWS_PROLOGUE(1)
    float *y = (float *)outputs[0].data;
    for (int64_t r = 0; r < rows; ++r) {
        const float *xr = x + r * cols;
        float part[ACCUMULATORS];
        for (int a = 0; a < ACCUMULATORS; ++a)
            part[a] = -INFINITY;
        bool nan = false;
        int64_t c = 0;
        for (; c + ACCUMULATORS <= cols; c += ACCUMULATORS)
            for (int a = 0; a < ACCUMULATORS; ++a) {
                nan |= xr[c + a] != xr[c + a];
                part[a] = part[a] > xr[c + a] ? part[a] : xr[c + a];
            }
        for (; c < cols; ++c) {
            nan |= xr[c] != xr[c];
            part[0] = part[0] > xr[c] ? part[0] : xr[c];
        }
        float m = part[0];
        for (int a = 1; a < ACCUMULATORS; ++a)
            m = m > part[a] ? m : part[a];
        y[r] = nan ? NAN : m;
    }
    return 0;
}
