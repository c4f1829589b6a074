// cpu.add_gelu.rows: gelu(x + residual), erf form, in one pass.
extern "C" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs)
{
    ROWS_PROLOGUE(2)
    const float *res = (const float *)inputs[1].data;
    float *y = (float *)outputs[0].data;
    const int64_t n = rows * cols;
#define G(v) (0.5f * (v) * (1.0f + erff((v) * 0.70710678118654752f)))
    int64_t i = 0;
    for (; i + UNROLL <= n; i += UNROLL)
        for (int u = 0; u < UNROLL; ++u)
            y[i + u] = G(x[i + u] + res[i + u]);
    for (; i < n; ++i)
        y[i] = G(x[i] + res[i]);
    return 0;
}
