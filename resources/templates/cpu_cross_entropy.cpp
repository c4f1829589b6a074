// cpu.cross_entropy.rows: per row log-sum-exp minus the target logit, mean over the rows whose target is
// not the ignore index (-100), in double.
extern "C" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs)
{
    if (n_inputs != 2 || inputs[0].ndim != 2 || inputs[0].dtype != KF_F32 || inputs[1].dtype != KF_I64)
        return 1;
    const int64_t rows = inputs[0].sizes[0], cols = inputs[0].sizes[1];
    const float *x = (const float *)inputs[0].data;
    const int64_t *target = (const int64_t *)inputs[1].data;
    double total = 0;
    int64_t counted = 0;
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t t = target[r];
        if (t == -100) // the ignore index: neither added nor counted, as ATen
            continue;
        ++counted;
        if (t < 0 || t >= cols) { // ATen raises; the loss is NaN, never a read outside the row
            total = NAN;
            continue;
        }
        const float *xr = x + r * cols;
        float m, logs;
        row_max_logsum(xr, cols, m, logs);
        total += (double)m + (double)logs - (double)xr[t];
    }
    *(float *)outputs[0].data = (float)(total / (double)counted); // all ignored: 0 / 0, NaN
    return 0;
}
