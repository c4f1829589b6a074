// cpu.argmax.rows: the index of each row's first maximum, scanned in CHUNK-element chunks.
extern "C" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs)
{
    if (n_inputs != 1 || inputs[0].dtype != KF_F32 || outputs[0].dtype != KF_I64)
        return 1;
    const int64_t cols = inputs[0].sizes[inputs[0].ndim - 1], rows = leading(inputs[0]);
    const float *x = (const float *)inputs[0].data;
    int64_t *y = (int64_t *)outputs[0].data;
    for (int64_t r = 0; r < rows; ++r) {
        const float *xr = x + r * cols;
        int64_t best = 0;
        float bv = xr[0];
        // Scan in chunks: find each chunk's max without branches, then locate it only if it wins.
        for (int64_t c0 = 0; c0 < cols; c0 += CHUNK) {
            const int64_t end = c0 + CHUNK < cols ? c0 + CHUNK : cols;
            float cm = xr[c0];
            for (int64_t c = c0; c < end; ++c)
                cm = cm > xr[c] ? cm : xr[c];
            if (cm > bv)
                for (int64_t c = c0; c < end; ++c)
                    if (xr[c] == cm) {
                        bv = cm;
                        best = c;
                        break;
                    }
        }
        y[r] = best;
    }
    return 0;
}
