// cpu.softmax.three_pass (continues cpu_softmax_entry.h): max, exp and sum writing the output, scale.
    for (int64_t r = 0; r < rows; ++r) {
        const float *xr = x + r * inputs[0].strides[0];
        float *yr = y + r * outputs[0].strides[0];
        float pm[UNROLL];
        for (int u = 0; u < UNROLL; ++u)
            pm[u] = -INFINITY;
        int64_t c = 0;
        for (; c + UNROLL <= cols; c += UNROLL)
            for (int u = 0; u < UNROLL; ++u)
                pm[u] = pm[u] > xr[c + u] ? pm[u] : xr[c + u];
        for (; c < cols; ++c)
            pm[0] = pm[0] > xr[c] ? pm[0] : xr[c];
        float m = pm[0];
        for (int u = 1; u < UNROLL; ++u)
            m = m > pm[u] ? m : pm[u];

        ACC ps[UNROLL] = {};
        for (c = 0; c + UNROLL <= cols; c += UNROLL)
            for (int u = 0; u < UNROLL; ++u) {
                const float e = kf_exp(xr[c + u] - m);
                yr[c + u] = e;
                ps[u] += e;
            }
        for (; c < cols; ++c) {
            const float e = kf_exp(xr[c] - m);
            yr[c] = e;
            ps[0] += e;
        }
        ACC sum = 0;
        for (int u = 0; u < UNROLL; ++u)
            sum += ps[u];
        const float inv = (float)(1.0 / (double)sum);
        for (c = 0; c < cols; ++c)
            yr[c] *= inv;
    }
    return 0;
}
