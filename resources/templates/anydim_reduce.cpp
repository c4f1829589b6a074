// cpu.<op>_dim.tiles: a reduction over the middle dimension of [outer, dim, inner]. For each outer index
// and TILE consecutive inner columns, one accumulator per column runs down dim, so every load is
// contiguous and the inner loop vectorizes. OP: 0 sum, 1 mean, 2 max, 3 min, 4 argmax, 5 argmin, 6 prod.
// max and min propagate NaN; argmax and argmin return the first index of the extreme, a NaN counting as
// the extreme, as ATen does.
#define ARG (OP == 4 || OP == 5)
#if ARG
typedef int64_t OUT;
#else
typedef float OUT;
#endif
#if OP >= 2 && OP <= 5
#undef ACC
#define ACC float
#endif

extern "C" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs)
{
    DIM_PROLOGUE()
#if ARG
    if (outputs[0].dtype != KF_I64)
        return 1;
#endif
    if (dim < 1)
        return 3;
    OUT *y = (OUT *)outputs[0].data;
    ACC acc[TILE];
    int64_t idx[TILE];
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i0 = 0; i0 < inner; i0 += TILE) {
            const int64_t n = inner - i0 < TILE ? inner - i0 : TILE;
            const float *first = x + o * dim * inner + i0;
            for (int64_t i = 0; i < n; ++i) {
                acc[i] = (ACC)first[i];
                idx[i] = 0;
            }
            for (int64_t d = 1; d < dim; ++d) {
                const float *xr = first + d * inner;
                for (int64_t i = 0; i < n; ++i) {
                    const ACC v = (ACC)xr[i];
#if OP <= 1
                    acc[i] += v;
#elif OP == 6
                    acc[i] *= v;
#elif OP == 2
                    acc[i] = (v > acc[i] || v != v) ? v : acc[i];
#elif OP == 3
                    acc[i] = (v < acc[i] || v != v) ? v : acc[i];
#else
#if OP == 4
                    const bool take = v > acc[i] || (v != v && acc[i] == acc[i]);
#else
                    const bool take = v < acc[i] || (v != v && acc[i] == acc[i]);
#endif
                    acc[i] = take ? v : acc[i];
                    idx[i] = take ? d : idx[i];
#endif
                }
            }
            OUT *yr = y + o * inner + i0;
            for (int64_t i = 0; i < n; ++i) {
#if ARG
                yr[i] = idx[i];
#elif OP == 1
                yr[i] = (float)(acc[i] / (ACC)dim);
#else
                yr[i] = (float)acc[i];
#endif
            }
        }
    return 0;
}
