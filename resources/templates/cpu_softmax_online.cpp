// cpu.softmax.online (continues cpu_softmax_entry.h): running max and rescaled sum per lane, then a
// write pass.
    for (int64_t r = 0; r < rows; ++r) {
        const float *xr = x + r * inputs[0].strides[0];
        float *yr = y + r * outputs[0].strides[0];
        // Per lane: running max and the sum of exp(x - running max), rescaled when the max grows.
        float lm[LANES], ls[LANES];
        for (int l = 0; l < LANES; ++l) {
            lm[l] = -INFINITY;
            ls[l] = 0.0f;
        }
        int64_t c = 0;
        for (; c + LANES <= cols; c += LANES)
            for (int l = 0; l < LANES; ++l) {
                const float v = xr[c + l];
                const float nm = lm[l] > v ? lm[l] : v;
                // -inf (a masked entry) contributes nothing; -inf - -inf would be NaN.
                const float keep = lm[l] == -INFINITY ? 0.0f : kf_exp(lm[l] - nm);
                ls[l] = ls[l] * keep + (v == -INFINITY ? 0.0f : kf_exp(v - nm));
                lm[l] = nm;
            }
        for (; c < cols; ++c) {
            const float v = xr[c];
            const float nm = lm[0] > v ? lm[0] : v;
            const float keep = lm[0] == -INFINITY ? 0.0f : kf_exp(lm[0] - nm);
            ls[0] = ls[0] * keep + (v == -INFINITY ? 0.0f : kf_exp(v - nm));
            lm[0] = nm;
        }
        float m = lm[0];
        for (int l = 1; l < LANES; ++l)
            m = m > lm[l] ? m : lm[l];
        float sum = 0.0f;
        for (int l = 0; l < LANES; ++l)
            if (ls[l] > 0.0f)
                sum += ls[l] * kf_exp(lm[l] - m);
        const float inv = 1.0f / sum;
        for (c = 0; c < cols; ++c)
            yr[c] = kf_exp(xr[c] - m) * inv;
    }
    return 0;
}
