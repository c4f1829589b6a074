// Wrong: counts its calls in a static and stops working once verification should be over (eight runs:
// three of the first trial, one per other trial), leaving its output as it found it. The outputs of
// randomly chosen timed runs, and of a last run after the benchmark, are checked like a trial's.
#include <cmath>
static int calls = 0;
extern "C" int kforge_entry(const kf_tensor *in, int, kf_tensor *out, int)
{
    if (++calls > 8)
        return 0;
    const int64_t rows = in[0].sizes[0], cols = in[0].sizes[1];
    for (int64_t r = 0; r < rows; ++r) {
        const float *x = (const float *)in[0].data + r * in[0].strides[0];
        float *y = (float *)out[0].data + r * out[0].strides[0];
        float m = -INFINITY;
        for (int64_t c = 0; c < cols; ++c)
            m = std::fmax(m, x[c]);
        double s = 0;
        for (int64_t c = 0; c < cols; ++c)
            s += std::exp(x[c] - m);
        for (int64_t c = 0; c < cols; ++c)
            y[c] = float(std::exp(x[c] - m) / s);
    }
    return 0;
}
