// cpu.softmax.vector (continues cpu_softmax_entry.h): three passes over VW-float vectors.
    for (int64_t r = 0; r < rows; ++r) {
        const float *xr = x + r * inputs[0].strides[0];
        float *yr = y + r * outputs[0].strides[0];
        const int64_t body = cols - cols % VW;
        vf vm = splat(-INFINITY);
        for (int64_t c = 0; c < body; c += VW) {
            const vf v = load(xr + c);
            vm = vm > v ? vm : v;
        }
        float m = -INFINITY;
        for (int i = 0; i < VW; ++i)
            m = m > vm[i] ? m : vm[i];
        for (int64_t c = body; c < cols; ++c)
            m = m > xr[c] ? m : xr[c];

        const vf vmax = splat(m);
        vf acc[SUM_ACCUMULATORS];
        for (int a = 0; a < SUM_ACCUMULATORS; ++a)
            acc[a] = splat(0.0f);
        int64_t c = 0;
        for (; c + SUM_ACCUMULATORS * VW <= body; c += SUM_ACCUMULATORS * VW)
            for (int a = 0; a < SUM_ACCUMULATORS; ++a) {
                const vf e = poly_exp(load(xr + c + a * VW) - vmax);
                store(yr + c + a * VW, e);
                acc[a] += e;
            }
        for (; c < body; c += VW) {
            const vf e = poly_exp(load(xr + c) - vmax);
            store(yr + c, e);
            acc[0] += e;
        }
        float sum = 0.0f;
        for (int a = 0; a < SUM_ACCUMULATORS; ++a)
            for (int i = 0; i < VW; ++i)
                sum += acc[a][i];
        for (; c < cols; ++c) {
            const float e = poly_exp(xr[c] - m);
            yr[c] = e;
            sum += e;
        }
        const vf inv = splat(1.0f / sum);
        for (c = 0; c < body; c += VW)
            store(yr + c, load(yr + c) * inv);
        for (; c < cols; ++c)
            yr[c] *= inv[0];
    }
    return 0;
}
