// cpu.<family>_dim.tiles: softmax, log-softmax, RMS norm and L2 normalization over the middle dimension
// of [outer, dim, inner]. For each outer index and TILE inner columns: the statistics of every column
// down dim (one accumulator per column, contiguous loads), then the outputs. FAMILY: 0 softmax,
// 1 log-softmax, 2 RMS norm (x / sqrt(mean(x^2) + EPS)), 3 L2 (x / max(||x||, EPS)), 4 L1 (x / mean(|x|)).
extern "C" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs)
{
    DIM_PROLOGUE()
    float *y = (float *)outputs[0].data;
    float m[TILE];
    ACC s[TILE];
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i0 = 0; i0 < inner; i0 += TILE) {
            const int64_t n = inner - i0 < TILE ? inner - i0 : TILE;
            const float *xo = x + o * dim * inner + i0;
            float *yo = y + o * dim * inner + i0;
            for (int64_t i = 0; i < n; ++i) {
                m[i] = -INFINITY;
                s[i] = 0;
            }
#if FAMILY <= 1
            for (int64_t d = 0; d < dim; ++d)
                for (int64_t i = 0; i < n; ++i)
                    m[i] = m[i] > xo[d * inner + i] ? m[i] : xo[d * inner + i];
            for (int64_t d = 0; d < dim; ++d)
                for (int64_t i = 0; i < n; ++i)
                    s[i] += (ACC)expf(xo[d * inner + i] - m[i]);
            for (int64_t i = 0; i < n; ++i)
                s[i] = FAMILY == 0 ? (ACC)1 / s[i] : (ACC)std::log((double)s[i]);
            for (int64_t d = 0; d < dim; ++d)
                for (int64_t i = 0; i < n; ++i) {
#if FAMILY == 0
                    yo[d * inner + i] = (float)((ACC)expf(xo[d * inner + i] - m[i]) * s[i]);
#else
                    // Subtract the max first, then log(sum), as ATen does.
                    yo[d * inner + i] = (xo[d * inner + i] - m[i]) - (float)s[i];
#endif
                }
#else
            for (int64_t d = 0; d < dim; ++d)
                for (int64_t i = 0; i < n; ++i)
#if FAMILY == 4
                    s[i] += (ACC)std::fabs(xo[d * inner + i]);
#else
                    s[i] += (ACC)xo[d * inner + i] * (ACC)xo[d * inner + i];
#endif
            for (int64_t i = 0; i < n; ++i) {
#if FAMILY == 2
                m[i] = (float)(1.0 / std::sqrt((double)(s[i] / (ACC)dim) + EPS));
#elif FAMILY == 3
                const double norm = std::sqrt((double)s[i]);
                m[i] = (float)(1.0 / (norm > EPS ? norm : EPS));
#else
                m[i] = (float)((double)dim / (double)s[i]);
#endif
            }
            for (int64_t d = 0; d < dim; ++d)
                for (int64_t i = 0; i < n; ++i)
                    yo[d * inner + i] = xo[d * inner + i] * m[i];
#endif
        }
    return 0;
}
