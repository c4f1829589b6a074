// cpu.sum.rows: each row's sum with independent partial sums.
extern "C" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs)
{
    ROWS_PROLOGUE(1)
    float *y = (float *)outputs[0].data;
    for (int64_t r = 0; r < rows; ++r)
        y[r] = (float)row_sum(x + r * cols, cols);
    return 0;
}
