// cpu.log_softmax.rows: max and log-sum-exp per row, then (x - max) - log(sum).
extern "C" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs)
{
    ROWS_PROLOGUE(1)
    float *y = (float *)outputs[0].data;
    for (int64_t r = 0; r < rows; ++r) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        float m, logs;
        row_max_logsum(xr, cols, m, logs);
        // Subtract the max first, then log(sum), as ATen does: adding them first loses the low bits.
        for (int64_t c = 0; c < cols; ++c)
            yr[c] = (xr[c] - m) - logs;
    }
    return 0;
}
