// cpu.<pointwise family>.rows: y = KF_EXPR(v) over all elements, UNROLL at a time, v the KF_NIN inputs'
// values (the card's expression, defined before this file). Follows cpu_rows.h.
static inline float kf_max(float a, float b) { return (a > b || a != a) ? a : b; } // NaN wins, as torch.maximum
static inline float kf_min(float a, float b) { return (a < b || a != a) ? a : b; }

extern "C" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs)
{
    ROWS_PROLOGUE(KF_NIN)
    const float *in[KF_NIN];
    for (int k = 0; k < KF_NIN; ++k) {
        if (inputs[k].dtype != KF_F32 || leading(inputs[k]) * inputs[k].sizes[inputs[k].ndim - 1] != rows * cols)
            return 3;
        in[k] = (const float *)inputs[k].data;
    }
    float *y = (float *)outputs[0].data;
    const int64_t n = rows * cols;
    int64_t i = 0;
    for (; i + UNROLL <= n; i += UNROLL)
        for (int u = 0; u < UNROLL; ++u) {
            float v[KF_NIN];
            for (int k = 0; k < KF_NIN; ++k)
                v[k] = in[k][i + u];
            y[i + u] = KF_EXPR(v);
        }
    for (; i < n; ++i) {
        float v[KF_NIN];
        for (int k = 0; k < KF_NIN; ++k)
            v[k] = in[k][i];
        y[i] = KF_EXPR(v);
    }
    return 0;
}
