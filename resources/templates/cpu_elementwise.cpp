// cpu.<activation>.rows: y = F(x) over all elements, UNROLL at a time; F is defined before this file.
extern "C" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs)
{
    ROWS_PROLOGUE(1)
    float *y = (float *)outputs[0].data;
    const int64_t n = rows * cols;
    int64_t i = 0;
    for (; i + UNROLL <= n; i += UNROLL)
        for (int u = 0; u < UNROLL; ++u)
            y[i + u] = F(x[i + u]);
    for (; i < n; ++i)
        y[i] = F(x[i]);
    return 0;
}
