// cpu.rotary_embedding.rows: Llama's rotary embedding of x [b, s, h, D] (contiguous) into y [b, h, s, D]:
// y[j] = x[j] cos[j] - x[j + HALF] sin[j], y[j + HALF] = x[j + HALF] cos[j + HALF] + x[j] sin[j + HALF],
// cos and sin [s, D] (with TABLE_BATCH [b, 1, s, D]); HALF = D / 2 is the card's. UNROLL pairs at a time.
extern "C" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs)
{
    const int tableDims = TABLE_BATCH ? 4 : 2;
    if (n_inputs != 3 || n_outputs != 1 || inputs[0].ndim != 4 || inputs[1].ndim != tableDims || inputs[2].ndim != tableDims || outputs[0].ndim != 4)
        return 1;
    for (int i = 0; i < 3; ++i)
        if (inputs[i].dtype != KF_F32 || !contiguous(inputs[i]))
            return 2;
    if (outputs[0].dtype != KF_F32 || !contiguous(outputs[0]))
        return 2;
    const int64_t b = inputs[0].sizes[0], s = inputs[0].sizes[1], h = inputs[0].sizes[2], d = inputs[0].sizes[3];
    for (int i = 1; i < 3; ++i) {
        const int64_t *ts = inputs[i].sizes;
        if (TABLE_BATCH ? ts[0] != b || ts[1] != 1 || ts[2] != s || ts[3] != d : ts[0] != s || ts[1] != d)
            return 3;
    }
    if (d != 2 * HALF)
        return 3;
    const float *x = (const float *)inputs[0].data, *cs = (const float *)inputs[1].data, *sn = (const float *)inputs[2].data;
    float *y = (float *)outputs[0].data;
    for (int64_t bi = 0; bi < b; ++bi)
        for (int64_t si = 0; si < s; ++si)
            for (int64_t hi = 0; hi < h; ++hi) {
                const int64_t trow = TABLE_BATCH ? bi * s + si : si;
                const float *xr = x + ((bi * s + si) * h + hi) * d, *cr = cs + trow * d, *sr = sn + trow * d;
                float *yr = y + ((bi * h + hi) * s + si) * d;
                int64_t j = 0;
                for (; j + UNROLL <= HALF; j += UNROLL)
                    for (int u = 0; u < UNROLL; ++u) {
                        const float a = xr[j + u], c = xr[j + u + HALF];
                        yr[j + u] = a * cr[j + u] - c * sr[j + u];
                        yr[j + u + HALF] = c * cr[j + u + HALF] + a * sr[j + u + HALF];
                    }
                for (; j < HALF; ++j) {
                    const float a = xr[j], c = xr[j + HALF];
                    yr[j] = a * cr[j] - c * sr[j];
                    yr[j + HALF] = c * cr[j + HALF] + a * sr[j + HALF];
                }
            }
    return 0;
}
