// Wrong: a correct softmax that also writes one float past the end of its output and one before it.
#include <cmath>
extern "C" int kforge_entry(const kf_tensor *in, int, kf_tensor *out, int)
{
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
    float *y = (float *)out[0].data;
    y[rows * cols] = 0.5f;
    y[-1] = 0.5f;
    return 0;
}
