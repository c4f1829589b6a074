// cpu.triplet_margin_loss.rows: per row the sums of (a - p + eps)^2 and (a - n + eps)^2 with
// ACCUMULATORS independent ACC partial sums, then KF_EXPR of the two distances (the card's expression,
// max(margin + d_ap - d_an, 0)); the mean over rows in double. Follows cpu_rows.h.
static inline float kf_max(float a, float b) { return (a > b || a != a) ? a : b; } // NaN wins, as torch.maximum
static inline float kf_min(float a, float b) { return (a < b || a != a) ? a : b; }

extern "C" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs)
{
    ROWS_PROLOGUE(3)
    for (int k = 1; k < 3; ++k)
        if (inputs[k].dtype != KF_F32 || leading(inputs[k]) * inputs[k].sizes[inputs[k].ndim - 1] != rows * cols)
            return 3;
    const float *p = (const float *)inputs[1].data, *n = (const float *)inputs[2].data;
    const float eps = (float)KF_EPS;
    double total = 0;
    for (int64_t r = 0; r < rows; ++r) {
        const float *ar = x + r * cols, *pr = p + r * cols, *nr = n + r * cols;
        ACC sp[ACCUMULATORS] = {}, sn[ACCUMULATORS] = {};
        int64_t c = 0;
        for (; c + ACCUMULATORS <= cols; c += ACCUMULATORS)
            for (int a = 0; a < ACCUMULATORS; ++a) {
                const float dp = ar[c + a] - pr[c + a] + eps, dn = ar[c + a] - nr[c + a] + eps;
                sp[a] += dp * dp;
                sn[a] += dn * dn;
            }
        for (; c < cols; ++c) {
            const float dp = ar[c] - pr[c] + eps, dn = ar[c] - nr[c] + eps;
            sp[0] += dp * dp;
            sn[0] += dn * dn;
        }
        ACC tp = 0, tn = 0;
        for (int a = 0; a < ACCUMULATORS; ++a) {
            tp += sp[a];
            tn += sn[a];
        }
        const float v[2] = {(float)std::sqrt(tp), (float)std::sqrt(tn)};
        total += (double)(KF_EXPR(v));
    }
    *(float *)outputs[0].data = (float)(total / (double)rows);
    return 0;
}
