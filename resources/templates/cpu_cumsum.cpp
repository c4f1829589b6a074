// cpu.cumsum.rows: inclusive scan of each row in ACC precision.
extern "C" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs)
{
    ROWS_PROLOGUE(1)
    float *y = (float *)outputs[0].data;
    for (int64_t r = 0; r < rows; ++r) {
        ACC run = 0;
        for (int64_t c = 0; c < cols; ++c)
            y[r * cols + c] = (float)(run += x[r * cols + c]);
    }
    return 0;
}
