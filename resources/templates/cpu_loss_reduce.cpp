// cpu.<loss family>.rows: the sum of KF_EXPR(v) over every element, v the KF_NIN inputs' values (the
// card's expression, defined before this file), divided by KF_DEN_MODE's count (0: every element, 1:
// nothing, 2: the rows). Input k is a [rows, cols] tensor, or where KF_MODE(k) is 1 a [cols] row
// broadcast over the rows; KF_FULL is an input of the full shape. Each row is added with ACCUMULATORS
// independent ACC partial sums, the rows into a double. Follows cpu_rows.h.
static inline float kf_max(float a, float b) { return (a > b || a != a) ? a : b; } // NaN wins, as torch.maximum
static inline float kf_min(float a, float b) { return (a < b || a != a) ? a : b; }

extern "C" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs)
{
    if (n_inputs != KF_NIN || n_outputs != 1 || inputs[KF_FULL].ndim < 1 || outputs[0].dtype != KF_F32)
        return 1;
    const kf_tensor &full = inputs[KF_FULL];
    const int64_t cols = full.sizes[full.ndim - 1], rows = leading(full);
    const float *in[KF_NIN];
    for (int k = 0; k < KF_NIN; ++k) {
        const int64_t numel = leading(inputs[k]) * (inputs[k].ndim ? inputs[k].sizes[inputs[k].ndim - 1] : 1);
        if (inputs[k].dtype != KF_F32 || numel != (KF_MODE(k) ? cols : rows * cols))
            return 3;
        if (!contiguous(inputs[k]))
            return 2;
        in[k] = (const float *)inputs[k].data;
    }
    double total = 0;
    for (int64_t r = 0; r < rows; ++r) {
        ACC part[ACCUMULATORS] = {};
        int64_t c = 0;
        for (; c + ACCUMULATORS <= cols; c += ACCUMULATORS)
            for (int a = 0; a < ACCUMULATORS; ++a) {
                float v[KF_NIN];
                for (int k = 0; k < KF_NIN; ++k)
                    v[k] = in[k][KF_MODE(k) ? c + a : r * cols + c + a];
                part[a] += KF_EXPR(v);
            }
        for (; c < cols; ++c) {
            float v[KF_NIN];
            for (int k = 0; k < KF_NIN; ++k)
                v[k] = in[k][KF_MODE(k) ? c : r * cols + c];
            part[0] += KF_EXPR(v);
        }
        ACC s = 0;
        for (int a = 0; a < ACCUMULATORS; ++a)
            s += part[a];
        total += (double)s;
    }
    const double den = KF_DEN_MODE == 0 ? (double)(rows * cols) : KF_DEN_MODE == 2 ? (double)rows : 1.0;
    *(float *)outputs[0].data = (float)(total / den);
    return 0;
}
