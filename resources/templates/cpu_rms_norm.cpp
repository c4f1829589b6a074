// cpu.rms_norm.rows and cpu.rms_norm_cast.rows: sum of squares per row, then x * rsqrt(mean + EPS) * weight (in
// float32 the chain's cast back to x's dtype before the weight is no cast at all); cpu.rms_norm_offset.rows
// times (1 + weight), Gemma's.
extern "C" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs)
{
    ROWS_PROLOGUE(2)
    const float *w = (const float *)inputs[1].data;
    float *y = (float *)outputs[0].data;
    for (int64_t r = 0; r < rows; ++r) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        ACC part[ACCUMULATORS] = {};
        int64_t c = 0;
        for (; c + ACCUMULATORS <= cols; c += ACCUMULATORS)
            for (int a = 0; a < ACCUMULATORS; ++a)
                part[a] += (ACC)xr[c + a] * xr[c + a];
        for (; c < cols; ++c)
            part[0] += (ACC)xr[c] * xr[c];
        ACC ss = 0;
        for (int a = 0; a < ACCUMULATORS; ++a)
            ss += part[a];
        const float scale = (float)(1.0 / std::sqrt((double)(ss / (ACC)cols) + EPS));
#ifdef WEIGHT_OFFSET
        for (c = 0; c < cols; ++c)
            yr[c] = xr[c] * scale * (1.f + w[c]);
#else
        for (c = 0; c < cols; ++c)
            yr[c] = xr[c] * scale * w[c];
#endif
    }
    return 0;
}
