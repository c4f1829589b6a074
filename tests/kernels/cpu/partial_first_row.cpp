// Wrong: computes only the first row and leaves the rest of the output as it found it.
#include <cmath>
extern "C" int kforge_entry(const kf_tensor *in, int, kf_tensor *out, int)
{
    const int64_t cols = in[0].sizes[1];
    const float *x = (const float *)in[0].data;
    float *y = (float *)out[0].data;
    float m = -INFINITY;
    for (int64_t c = 0; c < cols; ++c)
        m = std::fmax(m, x[c]);
    double s = 0;
    for (int64_t c = 0; c < cols; ++c)
        s += std::exp(x[c] - m);
    for (int64_t c = 0; c < cols; ++c)
        y[c] = float(std::exp(x[c] - m) / s);
    return 0;
}
